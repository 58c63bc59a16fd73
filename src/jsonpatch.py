"""RFC 6902 JSON patches, the one module for them: make one from two documents, apply one.

* `diff(old, new)` returns operations that turn `old` into `new`, as `gomodules.xyz/jsonpatch`
  (what Agones patches with) does in effect: objects key by key (removed keys first, then added and
  changed ones, each in sorted order so the output is stable), lists of equal length element by
  element, anything else (lists of different lengths, values of different types) replaced whole;
  a subtree `new` shares with `old` (the same object) is unchanged and not walked.
* `create_patch(old, new)` is what Agones' `GameServer.Patch` sends: `diff` guarded by a `test` of
  `/metadata/resourceVersion` (the write fails if the object changed since `old` was read); empty
  when nothing changed.
* `apply_patch(doc, ops)` is the server side, with kube-apiserver's semantics and texts: returns a
  new document (inputs are never modified); an invalid patch raises `PatchError`, a failed `test`
  raises `PatchTestFailed` (a `PatchError`). `apply_patch_in_place(doc, ops)` is the same on a
  document the caller owns and discards when it raises (no copy of it is made).
Path tokens are escaped (`~` → `~0`, `/` → `~1`), as annotation and label keys need.
"""

from __future__ import annotations

import copy
from typing import Any

Patch = list[dict[str, Any]]


class PatchError(ValueError):
    """The patch cannot be applied (bad pointer, missing path or malformed operation)."""


class PatchTestFailed(PatchError):
    """A `test` operation did not match: the document changed."""


def escape(key: str) -> str:
    """A key as one JSON pointer segment (`agones.dev/sdk-x` → `agones.dev~1sdk-x`)."""
    return key.replace("~", "~0").replace("/", "~1")


def unescape(segment: str) -> str:
    return segment.replace("~1", "/").replace("~0", "~")


# --- making a patch ---------------------------------------------------------------------------


def _diff(old: Any, new: Any, path: str, ops: Patch) -> None:
    if old is new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(old.keys() - new.keys()):
            ops.append({"op": "remove", "path": f"{path}/{escape(key)}"})
        for key in sorted(new):
            child = f"{path}/{escape(key)}"
            if key not in old:
                ops.append({"op": "add", "path": child, "value": copy.deepcopy(new[key])})
            else:
                _diff(old[key], new[key], child, ops)
        return
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            _diff(a, b, f"{path}/{i}", ops)
        return
    if type(old) is not type(new) or old != new:
        ops.append({"op": "replace", "path": path, "value": copy.deepcopy(new)})


def diff(old: Any, new: Any) -> Patch:
    """Operations turning `old` into `new` (no test op)."""
    ops: Patch = []
    _diff(old, new, "", ops)
    return ops


def create_patch(old: dict[str, Any], new: dict[str, Any]) -> Patch:
    """The changes from `old` to `new`, guarded by a test of old's resourceVersion."""
    ops = diff(old, new)
    if not ops:
        return []
    version = (old.get("metadata") or {}).get("resourceVersion", "")
    return [{"op": "test", "path": "/metadata/resourceVersion", "value": version}, *ops]


# --- applying a patch -------------------------------------------------------------------------


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"JSON pointer must start with '/': {path!r}")
    return [unescape(p) for p in path[1:].split("/")]


def _index(container: list[Any], token: str, allow_end: bool) -> int:
    if token == "-" and allow_end:
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchError(f"invalid array index: {token!r}")
    i = int(token)
    if i > len(container) or (i == len(container) and not allow_end):
        raise PatchError(f"array index out of bounds: {i}")
    return i


def _parent(doc: Any, tokens: list[str], path: str) -> Any:
    cur = doc
    for tok in tokens[:-1]:
        if isinstance(cur, dict):
            if tok not in cur:
                raise PatchError(f"doc is missing path: {path!r}")
            cur = cur[tok]
        elif isinstance(cur, list):
            cur = cur[_index(cur, tok, False)]
        else:
            raise PatchError(f"doc is missing path: {path!r}")
    return cur


def _get(doc: Any, path: str) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return doc
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"doc is missing path: {path!r}")
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, False)]
    raise PatchError(f"doc is missing path: {path!r}")


def _add(doc: Any, path: str, value: Any) -> Any:
    tokens = _pointer(path)
    if not tokens:
        return value
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, True), value)
    else:
        raise PatchError(f"doc is missing path: {path!r}")
    return doc


def _remove(doc: Any, path: str) -> tuple[Any, Any]:
    tokens = _pointer(path)
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent = _parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"Unable to remove nonexistent key: {last}: missing value")
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, last, False))
    raise PatchError(f"doc is missing path: {path!r}")


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _apply_op(doc: Any, op: Any) -> Any:
    if not isinstance(op, dict) or "op" not in op:
        raise PatchError("invalid JSON patch operation: missing 'op'")
    kind, path = op["op"], op.get("path")
    if not isinstance(path, str):
        raise PatchError(f"operation {kind!r} is missing 'path'")
    if kind in ("add", "replace", "test") and "value" not in op:
        raise PatchError(f"operation {kind!r} is missing 'value'")
    if kind == "add":
        return _add(doc, path, copy.deepcopy(op["value"]))
    if kind == "remove":
        return _remove(doc, path)[0]
    if kind == "replace":
        _get(doc, path)
        doc, _ = _remove(doc, path) if _pointer(path) else (doc, None)
        return _add(doc, path, copy.deepcopy(op["value"]))
    if kind in ("move", "copy"):
        src = op.get("from")
        if not isinstance(src, str):
            raise PatchError(f"operation {kind!r} is missing 'from'")
        if kind == "move":
            doc, value = _remove(doc, src)
        else:
            value = copy.deepcopy(_get(doc, src))
        return _add(doc, path, value)
    if kind == "test":
        have, want = _get(doc, path), op["value"]
        same_type = type(have) is type(want) or (_is_num(have) and _is_num(want))
        if have != want or not same_type:
            raise PatchTestFailed(f"testing value {path} failed: test failed")
        return doc
    raise PatchError(f"Unexpected kind: {kind}")


def apply_patch(doc: Any, ops: Any) -> Any:
    """Apply an RFC 6902 operation list to a copy of `doc`."""
    if not isinstance(ops, list):
        raise PatchError("json patch must be a list of operations")
    return apply_patch_in_place(copy.deepcopy(doc), ops)


def apply_patch_in_place(doc: Any, ops: Any) -> Any:
    """`apply_patch` changing `doc` itself (the result may still be a new value, when an operation
    replaces the root); after a `PatchError` `doc` is left part-patched, for the caller to drop."""
    if not isinstance(ops, list):
        raise PatchError("json patch must be a list of operations")
    for op in ops:
        doc = _apply_op(doc, op)
    return doc
