"""`python -m tools.helmchart [--check]`: write `install/yaml/install.yaml`, or fail when it is stale."""

from __future__ import annotations

import argparse
import sys

from tools.helmchart import INSTALL_YAML, ROOT, install_yaml, normalise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.helmchart")
    parser.add_argument("--check", action="store_true", help="fail if install.yaml is stale")
    args = parser.parse_args(argv)
    fresh = install_yaml()
    rel = INSTALL_YAML.relative_to(ROOT)
    current = INSTALL_YAML.read_text() if INSTALL_YAML.exists() else None
    if args.check:
        if current is None or normalise(current) != normalise(fresh):
            print(f"{rel} is stale (run `python -m tools.helmchart`)", file=sys.stderr)
            return 1
        return 0
    if current is None or normalise(current) != normalise(fresh):
        INSTALL_YAML.parent.mkdir(parents=True, exist_ok=True)
        INSTALL_YAML.write_text(fresh)
        print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
