"""Two of kube-apiserver's three patch formats: JSON merge patch (RFC 7386) and strategic merge
patch (the third, RFC 6902 JSON patch, is `agones.jsonpatch`, shared with the SDK server and webhooks).

All functions are pure: they return a new document and never modify their inputs. Failures raise
`PatchError` (the handler answers 422, or 400 for an undecodable patch). Strategic merge needs the
patch metadata of the kind: a `PatchMeta` maps a field path (names only, list indices skipped) to the
list's merge key, or to `PRIMITIVE_MERGE` for lists of scalars merged as sets (e.g. finalizers).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ...jsonpatch import PatchError

PRIMITIVE_MERGE = ""
PatchMeta = Mapping[tuple[str, ...], str]


# --- JSON merge patch ---


def apply_merge_patch(doc: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(doc) if isinstance(doc, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = apply_merge_patch(out.get(k), v)
    return out


# --- strategic merge patch ---


def apply_strategic_merge_patch(
    doc: Any, patch: Any, meta: PatchMeta, patch_order: bool = True
) -> Any:
    """Strategic merge: like a merge patch, but lists declared in `meta` merge by key.

    Understands the directives kubectl sends: `$patch` (replace/delete/merge), `$retainKeys`,
    `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>`. A merged list is ordered as
    the apimachinery `strategicpatch` orders it (`patch_order`): the patch's items in the patch's
    order, the live-only items placed before a patch item only where the live list had them before
    it. Without `patch_order`, live items keep their places and new ones are appended (the order
    server-side apply's merge gives).
    """
    if not isinstance(patch, dict):
        raise PatchError("strategic merge patch must be a JSON object")
    return _merge_map(doc if isinstance(doc, dict) else {}, patch, (), meta, patch_order)


def _merge_map(
    doc: dict[str, Any],
    patch: dict[str, Any],
    path: tuple[str, ...],
    meta: PatchMeta,
    patch_order: bool = True,
) -> Any:
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return None
    if directive not in (None, "merge"):
        raise PatchError(f"Unknown patch type: {directive}")
    out = dict(doc)
    orders: dict[str, list[Any]] = {}
    deletions: dict[str, list[Any]] = {}
    for k, v in patch.items():
        if k == "$patch":
            continue
        if k == "$retainKeys":
            if not isinstance(v, list):
                raise PatchError("$retainKeys must be a list")
            keep = set(v) | {kk for kk in patch if not kk.startswith("$")}
            out = {kk: vv for kk, vv in out.items() if kk in keep}
            continue
        if k.startswith("$setElementOrder/"):
            orders[k.split("/", 1)[1]] = v if isinstance(v, list) else []
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            deletions[k.split("/", 1)[1]] = v if isinstance(v, list) else []
            continue
        if v is None:
            out.pop(k, None)
            continue
        sub = (*path, k)
        cur = out.get(k)
        if isinstance(v, dict):
            merged = _merge_map(cur if isinstance(cur, dict) else {}, v, sub, meta, patch_order)
            if merged is None:
                out.pop(k, None)
            else:
                out[k] = merged
        elif isinstance(v, list) and sub in meta:
            merged_list = _merge_list(
                cur if isinstance(cur, list) else [], v, sub, meta, patch_order
            )
            out[k] = merged_list
        else:
            out[k] = copy.deepcopy(v)
    for k, values in deletions.items():
        if isinstance(out.get(k), list):
            out[k] = [x for x in out[k] if x not in values]
    for k, order in orders.items():
        if isinstance(out.get(k), list):
            out[k] = _reorder(out[k], order, meta.get((*path, k)))
    return out


def _merge_list(
    cur: list[Any], patch: list[Any], path: tuple[str, ...], meta: PatchMeta, patch_order: bool
) -> list[Any]:
    key = meta[path]
    for item in patch:
        if isinstance(item, dict) and item.get("$patch") == "replace":
            return [copy.deepcopy(i) for i in patch if not (isinstance(i, dict) and "$patch" in i)]
    if key == PRIMITIVE_MERGE:
        out = list(cur)
        for item in patch:
            if item not in out:
                out.append(copy.deepcopy(item))
        return _patch_items_first(out, patch, cur, None) if patch_order else out
    out = [copy.deepcopy(i) for i in cur]
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise PatchError(f"map: {item} does not contain declared merge key: {key}")
        pos = next(
            (i for i, x in enumerate(out) if isinstance(x, dict) and x.get(key) == item[key]), -1
        )
        if item.get("$patch") == "delete":
            if pos >= 0:
                out.pop(pos)
            continue
        if pos >= 0:
            out[pos] = _merge_map(out[pos], item, path, meta, patch_order)
        else:
            out.append(_merge_map({}, item, path, meta, patch_order))
    if not patch_order:
        return out
    kept = [i for i in patch if not (isinstance(i, dict) and i.get("$patch") == "delete")]
    return _patch_items_first(out, kept, cur, key)


def _patch_items_first(
    merged: list[Any], patch: list[Any], live: list[Any], key: str | None
) -> list[Any]:
    """strategicpatch's normalizeElementOrder without `$setElementOrder`: the patch's items in
    patch order, each live-only item inserted before the next patch item only when the live list
    has both and had it first (mergeSortedSlice)."""

    def ident(x: Any) -> Any:
        return x.get(key) if key and isinstance(x, dict) else x

    def index(items: list[Any], x: Any) -> int:
        want = ident(x)
        return next((i for i, y in enumerate(items) if ident(y) == want), -1)

    in_patch = [m for m in merged if index(patch, m) >= 0]
    in_patch.sort(key=lambda m: index(patch, m))
    server_only = [m for m in merged if index(patch, m) < 0]
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(in_patch):
        if j >= len(in_patch):
            out.append(server_only[i])
            i += 1
            continue
        if i < len(server_only):
            left, right = index(live, server_only[i]), index(live, in_patch[j])
            if left >= 0 and right >= 0 and left < right:
                out.append(server_only[i])
                i += 1
                continue
        out.append(in_patch[j])
        j += 1
    return out


def _reorder(items: list[Any], order: list[Any], key: str | None) -> list[Any]:
    def ident(x: Any) -> Any:
        return x.get(key) if key and isinstance(x, dict) else x

    wanted = [ident(o) for o in order]
    ranked = [i for i in items if ident(i) in wanted]
    ranked.sort(key=lambda i: wanted.index(ident(i)))
    rest = [i for i in items if ident(i) not in wanted]
    return ranked + rest
