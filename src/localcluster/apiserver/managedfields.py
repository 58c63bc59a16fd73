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
"""

from __future__ import annotations

import json
from typing import Any

from .patch import PRIMITIVE_MERGE, PatchMeta

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
    if isinstance(item, dict) and key in item:
        return "k:" + json.dumps({key: item[key]}, separators=(",", ":"))
    return None


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


def _walk(lhs: Any, rhs: Any, meta: PatchMeta, names: Path, path: Path, c: Comparison) -> None:
    if lhs is not _MISSING and rhs is not _MISSING and type(lhs) is type(rhs) and lhs == rhs:
        return  # equal subtrees (compared in C) hold no changes
    left_map = isinstance(lhs, dict) or lhs is _MISSING
    right_map = isinstance(rhs, dict) or rhs is _MISSING
    if left_map and right_map and (lhs or rhs):
        left = lhs if lhs is not _MISSING else {}
        right = rhs if rhs is not _MISSING else {}
        for k in {**left, **right}:
            _walk(
                left.get(k, _MISSING),
                right.get(k, _MISSING),
                meta,
                (*names, k),
                (*path, f"f:{k}"),
                c,
            )
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


def created_fields(empty: Obj, new: Obj, meta: PatchMeta, ignored: tuple[str, ...]) -> Obj:
    """The FieldsV1 a create records (what `compare(empty, new)` then `encode_fields_v1` give),
    built in one pass over the new object: the common write needs no path sets."""
    out: Obj = {}
    md = new.get("metadata")
    if isinstance(md, dict):
        meta_fields = {
            f"f:{k}": _added_tree(v, meta, ("metadata", k))
            for k, v in md.items()
            if k not in _STRIPPED_META
        }
        if meta_fields:
            out["f:metadata"] = dict(sorted(meta_fields.items()))
    for k, v in new.items():
        if k in ("apiVersion", "kind", "metadata") or k in ignored or empty.get(k, _MISSING) == v:
            continue
        tree = _added_tree(v, meta, (k,))
        if k in empty and isinstance(v, dict):
            tree.pop(".", None)  # present, as an empty struct, in the object compared with
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
    skip = {"apiVersion", "kind", "metadata", *ignored}
    for k in {**old, **new}:
        if k not in skip:
            _walk(old.get(k, _MISSING), new.get(k, _MISSING), meta, (k,), (f"f:{k}",), c)
    old_md, new_md = old.get("metadata"), new.get("metadata")
    left = old_md if isinstance(old_md, dict) else {}
    right = new_md if isinstance(new_md, dict) else {}
    for k in {**left, **right}:
        if k not in _STRIPPED_META:
            names, path = ("metadata", k), ("f:metadata", f"f:{k}")
            _walk(left.get(k, _MISSING), right.get(k, _MISSING), meta, names, path, c)
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
    return sorted(out, key=_sort_key)


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
