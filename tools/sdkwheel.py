"""`python -m tools.sdkwheel [--out DIR]`: build the `agones-sdk` wheel from the repository's sources.

The wheel holds the import closure of `agones.sdk` inside `src/` and nothing else:
`src/sdk/` (with its generated protos) as `agones.sdk`, `src/apis/meta/goduration.py` (Go durations,
used by `agones.sdk.duration`) and `src/featuregates.py` (Go's `strconv.ParseBool`, used by the example
game server's flags). `agones` and `agones.apis[.meta]` are namespace packages there (no `__init__`),
so the SDK can sit beside agones-py's own tree. Its only dependencies are `DEPENDENCIES`; its version is
the Agones release agones-py ports (`agones.version.VERSION` without the `-py` suffix), as Agones
versions every SDK with its own release.

The sources are copied into a staging folder with a generated `pyproject.toml` and built there with
`python -m build --wheel --no-isolation` (setuptools from the current environment; no download).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
PACKAGING = ROOT / "packaging" / "agones-sdk"
DIST_NAME = "agones-sdk"
DEPENDENCIES = ("grpcio>=1.60", "protobuf>=5", "googleapis-common-protos>=1.60")
# (source under src/, destination under the wheel's agones/)
FILES = (
    ("sdk", "sdk"),
    ("apis/meta/goduration.py", "apis/meta/goduration.py"),
    ("featuregates.py", "featuregates.py"),
)


def sdk_version() -> str:
    """The Agones release of `src/version.py` (`1.57.0-py` → `1.57.0`)."""
    text = (SRC / "version.py").read_text()
    match = re.search(r'VERSION = "(\d+\.\d+\.\d+)', text)
    if match is None:
        raise ValueError('src/version.py holds no VERSION = "X.Y.Z..."')
    return match.group(1)


def pyproject() -> str:
    deps = ", ".join(f'"{d}"' for d in DEPENDENCIES)
    return (
        "[build-system]\n"
        'requires = ["setuptools>=64"]\n'
        'build-backend = "setuptools.build_meta"\n\n'
        "[project]\n"
        f'name = "{DIST_NAME}"\n'
        f'version = "{sdk_version()}"\n'
        'description = "The Agones game-server SDK for Python (agones-py)"\n'
        'readme = "README.md"\n'
        'requires-python = ">=3.11"\n'
        'license = "Apache-2.0"\n'
        f"dependencies = [{deps}]\n\n"
        "[tool.setuptools.packages.find]\n"
        'include = ["agones*"]\n'
        "namespaces = true\n\n"
        "[tool.setuptools.package-data]\n"
        '"*" = ["*.pyi", "py.typed"]\n'
    )


def stage(into: Path) -> None:
    """Lay out the wheel's project: generated pyproject, README, and the copied sources."""
    (into / "pyproject.toml").write_text(pyproject())
    shutil.copy(PACKAGING / "README.md", into / "README.md")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for source, dest in FILES:
        src, dst = SRC / source, into / "agones" / dest
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, ignore=ignore)
        else:
            shutil.copy(src, dst)


def build(out: Path) -> Path:
    """Build the wheel into `out`; returns its path."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="agones-sdk-") as tmp:
        stage(Path(tmp))
        subprocess.run(
            [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), tmp],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    (wheel,) = out.glob(f"agones_sdk-{sdk_version()}-*.whl")
    return wheel


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.sdkwheel")
    parser.add_argument("--out", default=str(ROOT / "dist"), help="folder for the wheel")
    args = parser.parse_args(argv)
    print(build(Path(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
