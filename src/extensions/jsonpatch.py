"""RFC 6902 JSON patches between two JSON documents (what `gomodules.xyz/jsonpatch` gives Agones).

`create_patch(old, new)` returns operations that turn `old` into `new`: objects are compared key by
key (removed keys first, then replaced and added ones, in sorted order so output is stable); lists
of equal length element by element; lists of different lengths and values of different types are
replaced whole. Path tokens are escaped (`~` → `~0`, `/` → `~1`), as annotation keys need.
`apply_patch` and `PatchError` are the SDK server's (`sdkserver.jsonpatch`), re-exported.
"""

from __future__ import annotations

from typing import Any

from ..sdkserver.jsonpatch import PatchError, apply_patch, escape

__all__ = ["PatchError", "apply_patch", "create_patch"]


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
