"""Server-side apply, reduced to what clients observe: field ownership per applying manager.

Each apply by a field manager records the fields its configuration sets (in `managedFields`, as
FieldsV1, operation Apply). Applying again removes the fields that manager set before and no longer
sets (unless another applier also owns them), then merges the new configuration in: maps merge,
lists with merge keys merge by key (built-in kinds' strategic keys; `x-kubernetes-list-type: map`
with one key, or `set`, for custom resources), other lists are replaced. Setting a field another
applier owns to a different value is a 409 conflict unless forced (which takes the field over).
Not modelled: ownership by non-apply writers (PUT, PATCH), so they never conflict with an apply.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from ...apis import field
from ...jsonpatch import PatchError
from . import errors, meta
from .decoding import cannot_handle
from .patch import PRIMITIVE_MERGE, PatchMeta, apply_strategic_merge_patch, key_values
from .registryops import RegistryOps
from .resources import ResourceInfo
from .schema import shape_error
from .store import Entry, copy_of

# Attempts at a write that keeps losing races with concurrent writers (patch, apply).
PATCH_RETRIES = 5

Obj = dict[str, Any]
Path = tuple[str, ...]

# Metadata an apply configuration owns; the rest of metadata is the server's.
_META_FIELDS = ("labels", "annotations", "finalizers", "ownerReferences")


APPLY_KEYS = {"containerPort": "containerPort,protocol", "port": "port,protocol"}
"""Where server-side apply keys a built-in list by more fields than strategic merge does: ports
(a container's, a Service's) are list maps keyed by number and protocol, so 8080/TCP and 8080/UDP
are two items (strategic merge patch keys them by number alone)."""


def apply_patch_meta(meta: PatchMeta) -> dict[tuple[str, ...], str]:
    """A built-in kind's strategic merge keys, with server-side apply's keys for its ports."""
    return {
        path: APPLY_KEYS.get(key, key) if path and path[-1] == "ports" else key
        for path, key in meta.items()
    }


def patch_meta_from_schema(schema: Mapping[str, Any] | None) -> dict[tuple[str, ...], str]:
    """Merge keys of a CRD schema's lists: single-key `map` lists and `set` lists."""
    out: dict[tuple[str, ...], str] = {}

    def walk(node: Any, path: tuple[str, ...]) -> None:
        if not isinstance(node, Mapping):
            return
        kind = node.get("x-kubernetes-list-type")
        keys = node.get("x-kubernetes-list-map-keys") or []
        if kind == "map" and len(keys) == 1:
            out[path] = keys[0]
        elif kind == "set":
            out[path] = PRIMITIVE_MERGE
        for name, sub in (node.get("properties") or {}).items():
            walk(sub, (*path, name))
        for k in ("items", "additionalProperties"):
            if isinstance(node.get(k), Mapping):
                walk(node[k], path)

    walk(schema, ())
    return out


def _config_body(config: Obj, sub: str) -> Obj:
    if sub == "status":
        return {"status": config["status"]} if "status" in config else {}
    body = {
        k: v for k, v in config.items() if k not in ("apiVersion", "kind", "metadata", "status")
    }
    md = config.get("metadata") or {}
    meta = {k: md[k] for k in _META_FIELDS if k in md}
    if meta:
        body["metadata"] = meta
    return body


def field_set(
    value: Any, meta: PatchMeta, names: tuple[str, ...] = (), path: Path = ()
) -> set[Path]:
    """The leaf field paths a configuration sets, in FieldsV1 tokens (`f:`, `k:`, `v:`)."""
    out: set[Path] = set()
    if isinstance(value, dict) and value:
        for k, v in value.items():
            out |= field_set(v, meta, (*names, k), (*path, f"f:{k}"))
        return out
    if isinstance(value, list) and names in meta:
        key = meta[names]
        for item in value:
            if key == PRIMITIVE_MERGE:
                out.add((*path, "v:" + json.dumps(item, separators=(",", ":"))))
            elif (values := key_values(item, key)) is not None:
                item_path = (*path, "k:" + json.dumps(values, separators=(",", ":")))
                out.add((*item_path, "."))
                out |= field_set({k: v for k, v in item.items()}, meta, names, item_path)
        return out
    out.add(path)
    return out


def to_fields_v1(paths: set[Path]) -> Obj:
    root: Obj = {}
    for p in sorted(paths):
        node = root
        for token in p:
            node = node.setdefault(token, {})
    return root


def from_fields_v1(fields: Mapping[str, Any], prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    for token, sub in fields.items():
        path = (*prefix, token)
        if isinstance(sub, Mapping) and sub:
            out |= from_fields_v1(sub, path)
        else:
            out.add(path)
    return out


def _find_item(items: list[Any], token: str) -> int:
    kind, _, raw = token.partition(":")
    want = json.loads(raw)
    for i, item in enumerate(items):
        if kind == "v" and item == want:
            return i
        if kind == "k" and isinstance(want, dict) and key_values(item, ",".join(want)) == want:
            return i
    return -1


def remove_path(obj: Any, path: Path) -> None:
    """Remove the field (or list item, for a path ending in its `.` marker) at `path`, if present."""
    if path and path[-1] == ".":
        path = path[:-1]
    cur = obj
    for i, token in enumerate(path):
        last = i == len(path) - 1
        if token.startswith("f:") and isinstance(cur, dict):
            name = token[2:]
            if name not in cur:
                return
            if last:
                del cur[name]
                return
            cur = cur[name]
        elif isinstance(cur, list):
            idx = _find_item(cur, token)
            if idx < 0:
                return
            if last:
                cur.pop(idx)
                return
            cur = cur[idx]
        else:
            return


def _prune_empty(obj: Any) -> None:
    if isinstance(obj, dict):
        for k in list(obj):
            _prune_empty(obj[k])
            if obj[k] == {} and k in ("labels", "annotations"):
                del obj[k]


class ApplyConflict(Exception):
    """Fields the configuration sets to other values than appliers that own them."""

    def __init__(self, conflicts: list[tuple[str, str]]) -> None:
        super().__init__(conflicts)
        self.conflicts = conflicts  # (manager, field path such as .spec.replicas)


_MISSING = object()


def value_at(obj: Any, path: Path) -> Any:
    """The value a field path points at in `obj` (`_MISSING` when absent)."""
    cur = obj
    for token in path:
        if token == ".":
            continue
        if token.startswith("f:") and isinstance(cur, dict):
            if token[2:] not in cur:
                return _MISSING
            cur = cur[token[2:]]
        elif isinstance(cur, list):
            idx = _find_item(cur, token)
            if idx < 0:
                return _MISSING
            cur = cur[idx]
        else:
            return _MISSING
    return cur


def _dotted(path: Path) -> str:
    out = ""
    for token in path:
        if token.startswith("f:"):
            out += "." + token[2:]
        elif token != ".":
            out += "[" + token[2:] + "]"
    return out


def server_side_apply(
    live: Obj,
    config: Obj,
    manager: str,
    meta: PatchMeta,
    now: str,
    sub: str = "",
    force: bool = False,
) -> Obj:
    """The object after `manager` applies `config` to `live` (both in the served version).

    Setting a field another applier owns to a different value raises `ApplyConflict`, unless
    `force`, which takes the field over from it.
    """
    body = _config_body(config, sub)
    new_fields = field_set(body, meta)
    managed = [copy.deepcopy(m) for m in live.get("metadata", {}).get("managedFields") or []]

    def applies(m: Obj) -> bool:
        return m.get("operation") == "Apply" and m.get("subresource", "") == sub

    mine = next((m for m in managed if m.get("manager") == manager and applies(m)), None)
    owned = {
        id(m): from_fields_v1(m.get("fieldsV1") or {})
        for m in managed
        if m is not mine and applies(m)
    }
    conflicts = []
    for m in managed:
        if id(m) not in owned:
            continue
        for path in sorted(owned[id(m)] & new_fields):
            if path[-1] != "." and value_at(live, path) != value_at(body, path):
                conflicts.append((str(m.get("manager", "")), path))
    if conflicts and not force:
        raise ApplyConflict([(who, _dotted(path)) for who, path in conflicts])
    for who_path in conflicts:
        for m in managed:
            if m.get("manager") == who_path[0] and id(m) in owned:
                owned[id(m)].discard(who_path[1])
                m["fieldsV1"] = to_fields_v1(owned[id(m)])
    others: set[Path] = set().union(*owned.values()) if owned else set()
    out = copy.deepcopy(live)
    if mine is not None:
        dropped = from_fields_v1(mine.get("fieldsV1") or {}) - new_fields - others
        # deepest first, an item before its own key fields (it is found by them)
        for path in sorted(dropped, key=lambda p: len(p) + (p[-1] == "."), reverse=True):
            remove_path(out, path)
        _prune_empty(out.get("metadata"))
    out = apply_strategic_merge_patch(out, body, meta, patch_order=False)
    if not isinstance(out, dict):  # a top-level `$patch: delete` leaves no object
        raise PatchError("an apply configuration must describe an object, not delete it")
    entry = {
        "manager": manager,
        "operation": "Apply",
        "apiVersion": config.get("apiVersion", live.get("apiVersion", "")),
        "time": now,
        "fieldsType": "FieldsV1",
        "fieldsV1": to_fields_v1(new_fields),
    }
    if sub:
        entry["subresource"] = sub
    kept = [m for m in managed if m is not mine and (m.get("fieldsV1") or not applies(m))]
    out.setdefault("metadata", {})["managedFields"] = [*kept, entry]
    return out


def conflict_error(info: ResourceInfo, name: str, err: ApplyConflict) -> errors.StatusError:
    """The 409 kube-apiserver answers an apply with conflicts."""
    n = len(err.conflicts)
    lines = "\n".join(f'- conflict with "{who}": {path}' for who, path in err.conflicts)
    message = f"Apply failed with {n} conflict{'s' if n > 1 else ''}: " + (
        f'conflict with "{err.conflicts[0][0]}": {err.conflicts[0][1]}' if n == 1 else f"\n{lines}"
    )
    details = {
        "name": name,
        "kind": info.resource,
        "causes": [
            {"reason": "FieldManagerConflict", "message": f'conflict with "{who}"', "field": path}
            for who, path in err.conflicts
        ],
    }
    if info.group:
        details["group"] = info.group
    return errors.StatusError(409, "Conflict", message, details)


def check_apply_identity(info: ResourceInfo, config: Obj) -> None:
    """The 400 fieldmanager's versionCheckManager gives a configuration of another group, version
    or kind than the endpoint's; then structuredMergeManager's for one carrying managedFields."""
    version, kind = config.get("apiVersion"), config.get("kind")
    group_version = version if isinstance(version, str) else ""
    parts = group_version.split("/")
    if len(parts) > 2:
        group, ver, kind_name = "", "", ""  # not a group/version: Go's empty GroupVersionKind
    else:
        group, ver = (parts[0], parts[1]) if len(parts) == 2 else ("", parts[0])
        kind_name = kind if isinstance(kind, str) else ""
    if (group, ver, kind_name) != (info.group, info.version, info.kind):
        raise errors.bad_request(f"invalid object type: {group}/{ver}, Kind={kind_name}")
    if config["metadata"].get("managedFields") is not None:
        raise errors.bad_request("metadata.managedFields must be nil")


async def apply_request(
    reg: RegistryOps,
    info: ResourceInfo,
    ns: str,
    name: str,
    config: Obj,
    manager: str,
    sub: str = "",
    dry_run: bool = False,
    strict: bool = False,
    force: bool = False,
) -> tuple[Entry, bool]:
    """The apply verb: create when absent, else merge with field ownership (409 on conflicts
    with other appliers unless `force`). Returns (object, whether it was created)."""
    if not manager:
        raise errors.invalid(
            info.group,
            info.kind,
            name,
            [field.required("fieldManager", "is required for apply patch")],
        )
    await reg.faults.before_write(info.group, info.resource, name)
    if info.patch_meta is None:
        meta_keys = patch_meta_from_schema(info.custom.schema if info.custom is not None else None)
    else:
        meta_keys = apply_patch_meta(info.patch_meta)
    config = copy.deepcopy(config)
    if not isinstance(config.setdefault("metadata", {}), dict):
        raise errors.bad_request("the apply configuration's metadata must be an object")
    check_apply_identity(info, config)
    shape = shape_error(config, info.top_fields is not None)
    if shape:
        raise cannot_handle(info, shape)
    config["metadata"].pop("resourceVersion", None)
    for attempt in range(PATCH_RETRIES):
        current = reg.store.get(info.key, ns, name)
        now = meta.now_rfc3339()
        if current is None:
            if sub:
                raise errors.not_found(info.group, info.resource, name)
            seed = {"metadata": {**config["metadata"], "name": name}}
            try:
                body = server_side_apply(seed, config, manager, meta_keys, now)
            except PatchError as err:
                raise errors.StatusError(422, "Invalid", str(err)) from None
            return await reg.create(info, ns, body, dry_run, system=True, strict=strict), True
        live = copy_of(current)
        if info.from_storage is not None:
            live = info.from_storage(live)
        try:
            merged = server_side_apply(live, config, manager, meta_keys, now, sub, force)
        except PatchError as err:
            raise errors.StatusError(422, "Invalid", str(err)) from None
        except ApplyConflict as err:
            raise conflict_error(info, name, err) from None
        merged["metadata"]["resourceVersion"] = current.obj["metadata"]["resourceVersion"]
        obj = reg.coerce(info, merged, ns)
        try:
            return await reg.update_checked(
                info, ns, name, obj, sub, dry_run, "UPDATE", strict
            ), False
        except errors.StatusError as err:
            if err.reason != "Conflict" or attempt == PATCH_RETRIES - 1:
                raise
    raise AssertionError("unreachable")
