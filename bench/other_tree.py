"""Run `python -m agones ...` or a script from another source tree (e.g. `main`'s `src/`, extracted
with `git archive`), for A/B benchmarks against the installed editable tree.

    python bench/other_tree.py TREE -m agones localcluster apiserver --kubeconfig K
    python bench/other_tree.py TREE bench/registry_cpu.py

TREE is a directory holding the package as `agones/` (a symlink to the other tree's `src/`); `-`
runs the installed tree, so both sides start the same way.
"""

from __future__ import annotations

import runpy
import sys


def main() -> None:
    tree, *rest = sys.argv[1:]
    if tree != "-":
        # The editable install's finder comes first on sys.meta_path: drop it for the other tree.
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
        sys.path.insert(0, tree)
    import agones

    print(f"agones from {agones.__file__}", file=sys.stderr)
    if rest[0] == "-m":
        sys.argv = [rest[1], *rest[2:]]
        runpy.run_module(rest[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = rest
        runpy.run_path(rest[0], run_name="__main__")


if __name__ == "__main__":
    main()
