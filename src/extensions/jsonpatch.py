"""RFC 6902 JSON patches between two JSON documents (what `gomodules.xyz/jsonpatch` gives Agones).

`create_patch(old, new)` returns operations that turn `old` into `new`: objects are compared key by
key (removed keys first, then replaced and added ones, in sorted order so output is stable); lists
of equal length element by element; lists of different lengths and values of different types are
replaced whole. Path tokens are escaped (`~` → `~0`, `/` → `~1`), as annotation keys need.
`apply_patch(doc, ops)` applies add/remove/replace operations (enough to check a patch in tests and
for the local API server); it raises `PatchError` on a path that does not resolve.
"""

from __future__ import annotations

import copy
from typing import Any


class PatchError(ValueError):
    pass


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _diff(old: Any, new: Any, path: str, ops: list[dict[str, Any]]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() - new.keys()):
            ops.append({"op": "remove", "path": f"{path}/{escape(key)}"})
        for key in sorted(new):
            child = f"{path}/{escape(key)}"
            if key not in old:
                ops.append({"op": "add", "path": child, "value": new[key]})
            else:
                _diff(old[key], new[key], child, ops)
        return
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _diff(a, b, f"{path}/{i}", ops)
        return
    if type(old) is not type(new) or old != new:
        ops.append({"op": "replace", "path": path, "value": new})


def create_patch(old: Any, new: Any) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    _diff(old, new, "", ops)
    return ops


def _parent(doc: Any, path: str) -> tuple[Any, str]:
    if not path.startswith("/"):
        raise PatchError(f"invalid path {path!r}")
    tokens = [unescape(t) for t in path[1:].split("/")]
    target = doc
    for token in tokens[:-1]:
        try:
            target = target[int(token)] if isinstance(target, list) else target[token]
        except (KeyError, IndexError, ValueError, TypeError):
            raise PatchError(f"path {path!r} does not resolve") from None
    return target, tokens[-1]


def apply_patch(doc: Any, ops: list[dict[str, Any]]) -> Any:
    doc = copy.deepcopy(doc)
    for op in ops:
        path = op["path"]
        if path == "":
            if op["op"] in ("add", "replace"):
                doc = copy.deepcopy(op["value"])
                continue
            raise PatchError("cannot remove the whole document")
        parent, last = _parent(doc, path)
        try:
            if isinstance(parent, list):
                index = len(parent) if last == "-" else int(last)
                if op["op"] == "add":
                    parent.insert(index, copy.deepcopy(op["value"]))
                elif op["op"] == "replace":
                    parent[index] = copy.deepcopy(op["value"])
                elif op["op"] == "remove":
                    del parent[index]
                else:
                    raise PatchError(f"unsupported op {op['op']!r}")
            elif isinstance(parent, dict):
                if op["op"] in ("add", "replace"):
                    if op["op"] == "replace" and last not in parent:
                        raise PatchError(f"path {path!r} does not exist")
                    parent[last] = copy.deepcopy(op["value"])
                elif op["op"] == "remove":
                    del parent[last]
                else:
                    raise PatchError(f"unsupported op {op['op']!r}")
            else:
                raise PatchError(f"path {path!r} does not resolve")
        except (KeyError, IndexError, ValueError):
            raise PatchError(f"path {path!r} does not resolve") from None
    return doc
