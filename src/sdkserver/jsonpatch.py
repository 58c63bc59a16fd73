"""RFC 6902 JSON patches: create one from two documents, apply one to a document.

`create_patch(old, new)` is what Agones' `GameServer.Patch` sends: a `test` of
`/metadata/resourceVersion` first (optimistic concurrency: the write fails if the object changed
since `old` was read), then add/replace/remove operations turning `old` into `new` (objects are
diffed key by key, lists and scalars are replaced whole). `apply_patch` is the server side, used by
the in-memory store; a failed `test` raises `PatchTestFailed`.
"""

from __future__ import annotations

import copy
from typing import Any

Patch = list[dict[str, Any]]


class PatchError(ValueError):
    """The patch cannot be applied (bad path or operation)."""


class PatchTestFailed(PatchError):
    """A `test` operation did not match: the document changed."""


def escape(key: str) -> str:
    """A key as one JSON pointer segment (`agones.dev/sdk-x` → `agones.dev~1sdk-x`)."""
    return key.replace("~", "~0").replace("/", "~1")


def unescape(segment: str) -> str:
    return segment.replace("~1", "/").replace("~0", "~")


def diff(old: Any, new: Any, path: str = "") -> Patch:
    """Operations turning `old` into `new` (no test op)."""
    if isinstance(old, dict) and isinstance(new, dict):
        ops: Patch = []
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": f"{path}/{escape(key)}"})
        for key, value in new.items():
            child = f"{path}/{escape(key)}"
            if key not in old:
                ops.append({"op": "add", "path": child, "value": copy.deepcopy(value)})
            else:
                ops.extend(diff(old[key], value, child))
        return ops
    if old == new and type(old) is type(new):
        return []
    return [{"op": "replace", "path": path, "value": copy.deepcopy(new)}]


def create_patch(old: dict[str, Any], new: dict[str, Any]) -> Patch:
    """The changes from `old` to `new`, guarded by a test of old's resourceVersion.

    Empty when nothing changed (then there is nothing to write).
    """
    ops = diff(old, new)
    if not ops:
        return []
    version = (old.get("metadata") or {}).get("resourceVersion", "")
    return [{"op": "test", "path": "/metadata/resourceVersion", "value": version}, *ops]


def _parent(doc: Any, path: str) -> tuple[Any, str]:
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}")
    segments = [unescape(s) for s in path[1:].split("/")]
    target = doc
    for segment in segments[:-1]:
        if isinstance(target, dict) and segment in target:
            target = target[segment]
        elif isinstance(target, list) and segment.isdigit() and int(segment) < len(target):
            target = target[int(segment)]
        else:
            raise PatchError(f"path {path!r} does not exist")
    return target, segments[-1]


def apply_patch(doc: dict[str, Any], patch: Patch) -> dict[str, Any]:
    """A patched copy of `doc`; `doc` itself is left alone."""
    result = copy.deepcopy(doc)
    for op in patch:
        kind, path = op.get("op"), op.get("path", "")
        parent, key = _parent(result, path)
        if isinstance(parent, list):
            index = len(parent) if key == "-" else int(key)
            if kind == "add":
                parent.insert(index, copy.deepcopy(op["value"]))
            elif kind == "replace":
                parent[index] = copy.deepcopy(op["value"])
            elif kind == "remove":
                del parent[index]
            elif kind == "test":
                if parent[index] != op["value"]:
                    raise PatchTestFailed(f"test failed at {path}")
            else:
                raise PatchError(f"unsupported op {kind!r}")
            continue
        if not isinstance(parent, dict):
            raise PatchError(f"path {path!r} does not exist")
        if kind == "add":
            parent[key] = copy.deepcopy(op["value"])
        elif kind == "replace":
            if key not in parent:
                raise PatchError(f"replace of missing path {path!r}")
            parent[key] = copy.deepcopy(op["value"])
        elif kind == "remove":
            if key not in parent:
                raise PatchError(f"remove of missing path {path!r}")
            del parent[key]
        elif kind == "test":
            if parent.get(key) != op.get("value"):
                raise PatchTestFailed(f"test failed at {path}")
        else:
            raise PatchError(f"unsupported op {kind!r}")
    return result
