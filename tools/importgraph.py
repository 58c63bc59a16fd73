"""`python -m tools.importgraph [--dot]`: the import graph of `src/`, its cycles and layer breaches.

The graph is read statically from every relative import in `src/`, including the ones under
`if TYPE_CHECKING:` and inside functions (a late import hides a cycle, it does not remove it).
Importing `a.b.c` also runs `a/__init__.py` and `a/b/__init__.py`, so each import is an edge to
the module and to every package above it (outside the importer's own packages).

Two checks, both of which must find nothing (exit 1 otherwise):

* **cycles** between modules, and between subpackages (`localcluster.apply` ↔
  `localcluster.registry`, `cmd.sdkserver` ↔ `sdkserver.cluster`): what is imported by a module
  must not import it back, at either granularity;
* **layers**: `FORBIDDEN` lists (importer, imported) package prefixes that would invert the
  architecture, e.g. the admission webhooks reaching into the SDK sidecar.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

FORBIDDEN: tuple[tuple[str, str, str], ...] = (
    ("apis", "client", "the API types are pure: no I/O layer below them"),
    ("apis", "informers", "the API types are pure"),
    ("client", "controllers", "clients know nothing of controllers"),
    ("informers", "controllers", "the framework knows nothing of controllers"),
    ("workqueue", "controllers", "the framework knows nothing of controllers"),
    ("record", "leaderelection", "events and leader election are siblings"),
    ("extensions", "sdkserver", "the webhooks do not reach into the SDK sidecar"),
    ("sdkserver", "cmd", "commands bind flags onto components, never the reverse"),
    ("controllers", "cmd", "commands bind flags onto components, never the reverse"),
    ("controllers", "localcluster", "controllers run on any cluster"),
    ("sdkserver", "localcluster", "the sidecar runs on any cluster"),
)


def module_names(src: Path = SRC) -> dict[str, Path]:
    """Dotted module name (relative to src/, "" for src/__init__.py) → file."""
    names: dict[str, Path] = {}
    for path in sorted(src.rglob("*.py")):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _resolve(importer: str, is_package: bool, level: int, module: str | None) -> str:
    base = importer.split(".") if importer else []
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, *([module] if module else [])])


def _parents(name: str) -> Iterable[str]:
    parts = name.split(".")
    for n in range(1, len(parts)):
        yield ".".join(parts[:n])


def import_graph(src: Path = SRC) -> dict[str, set[str]]:
    """Module → the modules (and packages) importing it runs."""
    modules = module_names(src)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom) or not node.level:
                continue
            target = _resolve(name, is_package, node.level, node.module)
            for alias in node.names:
                full = f"{target}.{alias.name}" if target else alias.name
                deps.add(full if full in modules else target)
        for dep in list(deps):
            deps.update(p for p in _parents(dep) if p in modules)
        own = {name, *_parents(name)}
        graph[name] = {d for d in deps if d in modules and d not in own}
    return graph


def collapse(graph: dict[str, set[str]], depth: int) -> dict[str, set[str]]:
    """The graph between names cut to their first `depth` parts (subpackages for depth 2)."""

    def cut(name: str) -> str:
        return ".".join(name.split(".")[:depth])

    out: dict[str, set[str]] = {}
    for name, deps in graph.items():
        edges = out.setdefault(cut(name), set())
        edges.update(cut(d) for d in deps if cut(d) != cut(name))
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def layer_breaches(graph: dict[str, set[str]]) -> list[str]:
    def within(name: str, prefix: str) -> bool:
        return name == prefix or name.startswith(prefix + ".")

    breaches = []
    for name, deps in sorted(graph.items()):
        for dep in sorted(deps):
            for importer, imported, why in FORBIDDEN:
                if within(name, importer) and within(dep, imported):
                    breaches.append(f"{name} imports {dep}: {why}")
    return breaches


def problems(src: Path = SRC) -> list[str]:
    graph = import_graph(src)
    found = [f"import cycle: {' <-> '.join(c)}" for c in cycles(graph)]
    found += [
        f"subpackage import cycle: {' <-> '.join(c)}"
        for c in cycles(collapse(graph, 2))
        if c not in cycles(graph)
    ]
    return found + layer_breaches(graph)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.importgraph")
    parser.add_argument("--dot", action="store_true", help="print the subpackage graph as dot")
    args = parser.parse_args(argv)
    if args.dot:
        print("digraph src {")
        for name, deps in sorted(collapse(import_graph(), 2).items()):
            for dep in sorted(deps):
                print(f'  "{name}" -> "{dep}";')
        print("}")
        return 0
    found = problems()
    for line in found:
        print(line)
    print(f"{len(found)} problem(s) in the import graph of {SRC.name}/")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
