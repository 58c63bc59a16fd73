"""`python -m tools.codegen [--check] [NAME ...]`: run the generators, or check their output."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tools.codegen.generators import GENERATORS, OWNED_DIRS

ROOT = Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.codegen")
    parser.add_argument("--check", action="store_true", help="fail if any output is stale")
    parser.add_argument(
        "names", nargs="*", help=f"generators to run (default all: {list(GENERATORS)})"
    )
    args = parser.parse_args(argv)
    names = args.names or list(GENERATORS)
    stale: list[str] = []
    for name in names:
        if name not in GENERATORS:
            parser.error(f"unknown generator {name!r}")
        outputs = GENERATORS[name](ROOT)
        for rel, content in sorted(outputs.items()):
            path = ROOT / rel
            current = path.read_text() if path.exists() else None
            if current == content:
                continue
            if args.check:
                stale.append(rel)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(content)
                print(f"wrote {rel}")
        for owned in OWNED_DIRS.get(name, ()):
            for path in sorted((ROOT / owned).rglob("*")):
                rel = str(path.relative_to(ROOT))
                if path.is_file() and rel not in outputs and "__pycache__" not in rel:
                    if args.check:
                        stale.append(rel + " (not generated)")
                    else:
                        path.unlink()
                        print(f"removed {rel}")
    if stale:
        print("stale generated files (run `python -m tools.codegen`):", file=sys.stderr)
        for rel in stale:
            print(f"  {rel}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
