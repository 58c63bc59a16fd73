"""Field ownership recorded by writes that are not applies: managedFields entries of operation
`Update`, as apimachinery's `managedfields` package records them for create, update and patch.

The fields a write sets are the comparison of the object before it (on create, the empty object of
the kind) with the decoded request body, before mutating admission, as structured-merge-diff's
`TypedValue.Compare` sees them:
- every leaf added or changed, and every map, list or list item the write adds, is the writer's;
- a field another manager owned that this write changes is taken from it (updates always force);
- a field the write removes is nobody's any more; a manager left owning nothing disappears.
Server-owned metadata (name, uid, resourceVersion, ...) is never recorded; neither is `status` on a
resource with a status subresource (nor `spec` when writing that subresource), as the strategies'
reset fields exclude them. The writer's entry gets the request's apiVersion and the current time
whenever it gains fields. Lists merge by key as `apply.field_set` spells them; other lists are atomic.
Not modelled: the nested Go structs a built-in kind's empty object serialises (so a built-in
`spec.template` added by a create gets a `.` entry that the real server leaves out).

Every write pays for this, so two short cuts give the general path's answer cheaper: a create's
subtrees come from a per-kind memo (`TreeCache`), and an update that only changes leaves its
manager alone owns moves that entry's time without building path sets (`update_in_place`; None
sends the caller to `compare` + `record_update`).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from .patch import PRIMITIVE_MERGE, PatchMeta, key_values

Obj = dict[str, Any]
Path = tuple[str, ...]

# Metadata the strip-meta manager never records (stripmeta.go), plus metadata itself.
_STRIPPED_META = frozenset(
    (
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    )
)
_encode = msgspec.json.Encoder().encode
_NOTHING: frozenset[str] = frozenset()
_TOP_SKIP = frozenset(("apiVersion", "kind", "metadata"))
_MISSING: Any = object()
MAX_MANAGER_LENGTH = 128


def manager_or_user_agent(manager: str, user_agent: str) -> str:
    """The field manager of a non-apply write: the `fieldManager` parameter, else the user agent's
    first `/`-separated part (its product name), at most 128 bytes, as `managerOrUserAgent`."""
    if manager:
        return manager
    return user_agent.split("/")[0][:MAX_MANAGER_LENGTH]


class Comparison:
    """Paths (FieldsV1 tokens) added, modified and removed between two objects."""

    __slots__ = ("added", "modified", "removed")

    def __init__(self) -> None:
        self.added: set[Path] = set()
        self.modified: set[Path] = set()
        self.removed: set[Path] = set()


def _item_token(item: Any, key: str) -> str | None:
    if key == PRIMITIVE_MERGE:
        return "v:" + json.dumps(item, separators=(",", ":"))
    values = key_values(item, key)
    return None if values is None else "k:" + json.dumps(values, separators=(",", ":"))


def _keyed(items: Any, key: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(items, list):
        for item in items:
            token = _item_token(item, key)
            if token is not None:
                out.setdefault(token, item)
    return out


def _node(c: Comparison, lhs: Any, rhs: Any, path: Path) -> None:
    if lhs is _MISSING:
        c.added.add(path)
    elif rhs is _MISSING:
        c.removed.add(path)


def _walk_children(
    left: Obj, right: Obj, meta: PatchMeta, names: Path, path: Path, c: Comparison, skip: Any = ()
) -> None:
    """Walk the keys of two maps that differ (equal children are skipped before any path is
    built: most writes change a few leaves of a large object). Equal means of one type too:
    1, 1.0 and True are different values."""
    for k, lhs in left.items():
        rhs = right.get(k, _MISSING)
        if lhs is rhs or (type(lhs) is type(rhs) and lhs == rhs) or k in skip:
            continue
        _walk(lhs, rhs, meta, (*names, k), (*path, f"f:{k}"), c)
    if not right.keys() <= left.keys():
        for k in right.keys() - left.keys():
            if k not in skip:
                _walk(_MISSING, right[k], meta, (*names, k), (*path, f"f:{k}"), c)


def _walk(lhs: Any, rhs: Any, meta: PatchMeta, names: Path, path: Path, c: Comparison) -> None:
    if lhs is not _MISSING and rhs is not _MISSING and type(lhs) is type(rhs) and lhs == rhs:
        return  # equal subtrees (compared in C) hold no changes
    left_map = isinstance(lhs, dict) or lhs is _MISSING
    right_map = isinstance(rhs, dict) or rhs is _MISSING
    if left_map and right_map and (lhs or rhs):
        left = lhs if lhs is not _MISSING else {}
        right = rhs if rhs is not _MISSING else {}
        _walk_children(left, right, meta, names, path, c)
        _node(c, lhs, rhs, path)
        return
    key = meta.get(names)
    is_list = isinstance(lhs, list) or isinstance(rhs, list)
    if (
        key is not None
        and is_list
        and all(v is _MISSING or isinstance(v, list) for v in (lhs, rhs))
    ):
        left_items, right_items = _keyed(lhs, key), _keyed(rhs, key)
        for token in {**left_items, **right_items}:
            a, b = left_items.get(token, _MISSING), right_items.get(token, _MISSING)
            item_path = (*path, token)
            if key != PRIMITIVE_MERGE:
                _walk(a, b, meta, names, item_path, c)
            else:
                _node(c, a, b, item_path)
        _node(c, lhs, rhs, path)
        return
    if lhs is _MISSING:
        c.added.add(path)
    elif rhs is _MISSING:
        c.removed.add(path)
    elif lhs != rhs:
        c.modified.add(path)


MAX_CACHED_VALUE = 8192
"""The largest value (JSON bytes) whose tree `TreeCache` keeps: a kind's memo stays under ~2 MB."""


class TreeCache:
    """A bounded memo of the FieldsV1 subtree a create records for a top-level field's value, for
    one kind's merge keys, keyed by the value's JSON encoding (objects of one kind often share a
    spec's or labels' shape: a Fleet's GameServers, a benchmark's objects). Values are decoded JSON
    (only the HTTP handlers name a manager), whose encoding identifies them. Trees are shared
    between objects and never mutated: stored objects are read-only."""

    __slots__ = ("_trees", "meta", "size")

    def __init__(self, meta: PatchMeta, size: int = 256) -> None:
        self.meta = meta
        self.size = size
        self._trees: dict[tuple[Path, bytes], Obj] = {}

    def added_tree(self, value: Any, names: Path) -> Obj:
        if not value or (type(value) is not dict and type(value) is not list):
            return _added_tree(value, self.meta, names)
        try:
            encoded = _encode(value)
        except (TypeError, ValueError, OverflowError):
            return _added_tree(value, self.meta, names)
        if len(encoded) > MAX_CACHED_VALUE:
            return _added_tree(value, self.meta, names)
        key = (names, encoded)
        tree = self._trees.get(key)
        if tree is None:
            tree = _added_tree(value, self.meta, names)
            if len(self._trees) >= self.size:
                del self._trees[next(iter(self._trees))]  # the oldest
            self._trees[key] = tree
        return tree


def created_fields(
    empty: Obj, new: Obj, meta: PatchMeta, ignored: tuple[str, ...], cache: TreeCache | None = None
) -> Obj:
    """The FieldsV1 a create records (what `compare(empty, new)` then `encode_fields_v1` give),
    built in one pass over the new object: the common write needs no path sets. `cache` (for
    `meta`) memoises the subtrees of top-level and metadata fields."""
    added = cache.added_tree if cache is not None else lambda v, names: _added_tree(v, meta, names)
    out: Obj = {}
    md = new.get("metadata")
    if isinstance(md, dict):
        meta_fields = {
            f"f:{k}": added(v, ("metadata", k)) for k, v in md.items() if k not in _STRIPPED_META
        }
        if meta_fields:
            out["f:metadata"] = dict(sorted(meta_fields.items()))
    for k, v in new.items():
        if k in _TOP_SKIP or k in ignored or empty.get(k, _MISSING) == v:
            continue
        tree = added(v, (k,))
        if k in empty and isinstance(v, dict):
            # present, as an empty struct, in the object compared with
            tree = {token: sub for token, sub in tree.items() if token != "."}
        out[f"f:{k}"] = tree
    return dict(sorted(out.items()))


def _added_tree(value: Any, meta: PatchMeta, names: Path) -> Obj:
    if isinstance(value, dict) and value:
        children = {f"f:{k}": _added_tree(v, meta, (*names, k)) for k, v in value.items()}
        return {".": {}, **dict(sorted(children.items()))}
    key = meta.get(names)
    if isinstance(value, list) and key is not None:
        items: Obj = {}
        for item in value:
            token = _item_token(item, key)
            if token is None or token in items:
                continue
            if key == PRIMITIVE_MERGE:
                items[token] = {}
            else:
                children = {f"f:{k}": _added_tree(v, meta, (*names, k)) for k, v in item.items()}
                items[token] = {".": {}, **dict(sorted(children.items()))}
        return {".": {}, **dict(sorted(items.items()))} if items else {}
    return {}


def compare(old: Obj, new: Obj, meta: PatchMeta, ignored: tuple[str, ...] = ()) -> Comparison:
    """What changes from `old` to `new`, without server-owned metadata and `ignored` top fields."""
    c = Comparison()
    skip = _TOP_SKIP.union(ignored) if ignored else _TOP_SKIP
    _walk_children(old, new, meta, (), (), c, skip)
    old_md, new_md = old.get("metadata"), new.get("metadata")
    left = old_md if isinstance(old_md, dict) else {}
    right = new_md if isinstance(new_md, dict) else {}
    _walk_children(left, right, meta, ("metadata",), ("f:metadata",), c, _STRIPPED_META)
    return c


def empty_object(builtin: bool, has_spec: bool, has_status: bool) -> Obj:
    """The live object a create compares against: Go's zero value of the kind as JSON (a built-in
    type always serialises its struct fields; a custom resource's is empty)."""
    if not builtin:
        return {}
    out: Obj = {"metadata": {}}
    if has_spec:
        out["spec"] = {}
    if has_status:
        out["status"] = {}
    return out


def parse_fields_v1(fields: Any, prefix: Path = ()) -> set[Path]:
    """FieldsV1 as a set of paths; a node that is itself a member (its `.` entry, or no children)
    is its own path."""
    out: set[Path] = set()
    if not isinstance(fields, dict):
        return out
    for token, sub in fields.items():
        if token == ".":
            out.add(prefix)
            continue
        path = (*prefix, token)
        if isinstance(sub, dict) and sub:
            out |= parse_fields_v1(sub, path)
        else:
            out.add(path)
    return out


def encode_fields_v1(paths: set[Path]) -> Obj:
    """The FieldsV1 JSON of a set of paths: a member that also has children gets a `.` entry,
    listed first as Go lists it."""
    tree: Obj = {}
    for path in paths:
        node = tree
        for token in path:
            node = node.setdefault(token, {})
    return _ordered(tree, paths, ())


def _ordered(node: Obj, paths: set[Path], prefix: Path) -> Obj:
    out: Obj = {}
    if prefix and node and prefix in paths:
        out["."] = {}
    for token in sorted(node):
        out[token] = _ordered(node[token], paths, (*prefix, token))
    return out


def _owns(fields: Any, path: Path) -> bool:
    """Whether the FieldsV1 tree has `path` as a member (a leaf, or a node with `.`)."""
    node = fields
    for token in path:
        node = node.get(token) if isinstance(node, dict) else None
        if node is None:
            return False
    return isinstance(node, dict) and (not node or "." in node)


def _identity(entry: Obj) -> tuple[str, str, str]:
    return (
        str(entry.get("manager", "")),
        str(entry.get("operation", "")),
        str(entry.get("subresource", "")),
    )


def _sort_key(entry: Obj) -> tuple[str, str, str, str, str]:
    # managedfields' sortEncodedManagedFields: operation, time (seconds), manager, apiVersion,
    # subresource. RFC 3339 times of one format order as their instants do.
    return (
        str(entry.get("operation", "")),
        str(entry.get("time") or ""),
        str(entry.get("manager", "")),
        str(entry.get("apiVersion", "")),
        str(entry.get("subresource", "")),
    )


def record_update(
    managed: list[Obj],
    change: Comparison,
    manager: str,
    api_version: str,
    subresource: str,
    now: str,
) -> list[Obj]:
    """The managedFields after `manager` wrote `change` with an Update operation."""
    taken = change.added | change.modified
    touched = taken | change.removed
    me = (manager, "Update", subresource)
    out: list[Obj] = []
    mine: set[Path] = set()
    mine_fields: Obj | None = None
    previous: Obj | None = None
    for item in managed:
        fields = item.get("fieldsV1") or {}
        # Membership is looked up in the FieldsV1 tree; a set is decoded only when it changes.
        owned = {p for p in touched if _owns(fields, p)}
        if _identity(item) == me:
            previous = item
            if taken <= owned and not owned & change.removed:
                mine_fields = fields  # the write changed only what this manager owns
            else:
                mine = parse_fields_v1(fields) - change.removed
            continue
        if not owned:
            out.append(item)
            continue
        kept = parse_fields_v1(fields) - owned
        if kept:
            out.append({**item, "fieldsV1": encode_fields_v1(kept)})
    if mine_fields is None:
        mine |= taken
    if mine or mine_fields:
        fresh = taken or previous is None
        out.append(
            entry(
                manager,
                api_version if fresh or previous is None else previous["apiVersion"],
                subresource,
                now if fresh or previous is None else previous.get("time", ""),
                mine_fields if mine_fields is not None else encode_fields_v1(mine),
            )
        )
    return sorted(out, key=_sort_key) if len(out) > 1 else out


def entry(manager: str, api_version: str, subresource: str, time: str, fields: Obj) -> Obj:
    """A managedFields entry of operation Update."""
    out: Obj = {
        "manager": manager,
        "operation": "Update",
        "apiVersion": api_version,
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }
    if subresource:
        out["subresource"] = subresource
    return out


def update_in_place(
    managed: list[Obj],
    old: Obj,
    new: Obj,
    meta: PatchMeta,
    ignored: tuple[str, ...],
    manager: str,
    api_version: str,
    subresource: str,
    now: str,
) -> list[Obj] | None:
    """`record_update(managed, compare(old, new, ...), ...)` for the common update, without the
    path sets: one walk over what differs, which must be only leaves changed in place (no field
    added or removed, no keyed list changed) that `manager`'s one Update entry owns and no other
    entry does. Then only that entry's time and apiVersion move. None when the write is any other
    (the caller takes the general path)."""
    mine_entry: Obj | None = None
    me = (manager, "Update", subresource)
    for item in managed:
        if _identity(item) == me:
            if mine_entry is not None:
                return None
            mine_entry = item
    if mine_entry is None or "apiVersion" not in mine_entry:
        return None
    mine = mine_entry.get("fieldsV1")
    if not mine or not isinstance(mine, dict):
        return None
    others = [
        f for m in managed if m is not mine_entry and isinstance(f := m.get("fieldsV1"), dict)
    ]  # the FieldsV1 of the other entries
    old_md, new_md = old.get("metadata"), new.get("metadata")
    if not isinstance(old_md, dict) or not isinstance(new_md, dict):
        return None
    skip = _TOP_SKIP.union(ignored) if ignored else _TOP_SKIP
    changed = _leaves_changed(old, new, mine, others, meta, (), skip)
    if changed >= 0:
        meta_changed = _leaves_changed(
            old_md,
            new_md,
            mine.get("f:metadata"),
            _children(others, "f:metadata") if others else others,
            meta,
            ("metadata",),
            _STRIPPED_META,
        )
        changed = -1 if meta_changed < 0 else changed + meta_changed
    if changed < 0:
        return None
    fresh = entry(
        manager,
        api_version if changed else mine_entry["apiVersion"],
        subresource,
        now if changed else mine_entry.get("time", ""),
        mine,
    )
    out = [fresh if m is mine_entry else m for m in managed]
    return sorted(out, key=_sort_key) if len(out) > 1 else out


def _children(nodes: list[Any], token: str) -> list[Any]:
    return [sub for n in nodes if isinstance(n, dict) and isinstance(sub := n.get(token), dict)]


def _leaves_changed(
    lhs: Obj, rhs: Obj, mine: Any, others: list[Any], meta: PatchMeta, names: Path, skip: Any
) -> int:
    """How many leaves differ between two maps with the same fields (besides `skip`), when each
    is owned by `mine` and none of `others` (the FieldsV1 nodes of this map); -1 otherwise."""
    keys = lhs.keys()
    if keys != rhs.keys() and (keys ^ rhs.keys()) - skip:
        return -1  # a field added or removed
    changed = 0
    for k, a in lhs.items():
        if k in skip:
            continue
        b = rhs[k]
        if a is b or (type(a) is type(b) and a == b):
            continue
        node = mine.get(f"f:{k}") if isinstance(mine, dict) else None
        if type(a) is dict and type(b) is dict:
            token = f"f:{k}"
            nodes = _children(others, token) if others else others
            sub = _leaves_changed(a, b, node, nodes, meta, (*names, k), _NOTHING)
            if sub < 0:
                return -1
            changed += sub
        elif (
            isinstance(a, dict)
            or isinstance(b, dict)
            or ((isinstance(a, list) or isinstance(b, list)) and meta.get((*names, k)) is not None)
        ):
            return -1  # a map replaced, or a keyed list changed
        elif a != b:  # 1 and 1.0 are equal leaves: no change, as compare has it
            if not (isinstance(node, dict) and (not node or "." in node)):
                return -1
            if others and any(_member(n.get(f"f:{k}")) for n in others):
                return -1
            changed += 1
    return changed


def _member(node: Any) -> bool:
    """Whether a FieldsV1 node is itself owned (a leaf, or a node with `.`): `_owns`' last step."""
    return isinstance(node, dict) and (not node or "." in node)
