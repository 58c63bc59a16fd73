"""Defaulting and pruning of a JSON object against a structural OpenAPI v3 schema.

As apiextensions-apiserver does while decoding a custom resource: `apply_defaults` fills absent
(and non-nullable null) properties from `default`, top-down; `prune` then drops every field the
schema does not know (except under `x-kubernetes-preserve-unknown-fields` and the root's
apiVersion/kind/metadata); `prune_object_meta` drops what ObjectMeta has no field for.
"""

from __future__ import annotations

import copy
from typing import Any

from .types import Schema, same_value

# --- defaulting ---


def _has_defaults(schema: Schema) -> bool:
    """Whether a default is declared anywhere in this schema (memoised per schema object)."""
    key = id(schema)
    cached = _DEFAULTS_CACHE.get(key)
    if cached is not None and cached[0] is schema:
        return cached[1]
    found = "default" in schema
    if not found:
        subs = list((schema.get("properties") or {}).values())
        for k in ("items", "additionalProperties"):
            if isinstance(schema.get(k), dict):
                subs.append(schema[k])
        found = any(_has_defaults(sub) for sub in subs if isinstance(sub, dict))
    if len(_DEFAULTS_CACHE) > 100_000:
        # Schemas of replaced CRD versions would otherwise stay pinned here.
        _DEFAULTS_CACHE.clear()
    _DEFAULTS_CACHE[key] = (schema, found)
    return found


# id(schema) -> (schema, has defaults); the schema is kept so a reused id cannot match.
_DEFAULTS_CACHE: dict[int, tuple[Schema, bool]] = {}


def apply_defaults(value: Any, schema: Schema, old: Any = None) -> Any:
    """Fill absent (and non-nullable null) properties from `default`, recursively; returns value.

    Only subtrees of the schema that declare defaults are walked, so large schemas with few
    defaults (a pod template) cost little. `old`, when given, is the stored value at the same
    place, already defaulted and pruned by this very schema: properties equal to its are skipped
    (defaulting again would change nothing).
    """
    if not _has_defaults(schema):
        return value
    if isinstance(value, dict):
        before = old if isinstance(old, dict) else None
        props = schema.get("properties") or {}
        for name, sub in props.items():
            if "default" in sub and (
                name not in value or (value[name] is None and not sub.get("nullable"))
            ):
                value[name] = copy.deepcopy(sub["default"])
            if name in value and _has_defaults(sub):
                prev = _unchanged(value[name], before, name)
                if prev is not _SAME:
                    value[name] = apply_defaults(value[name], sub, prev)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and _has_defaults(extra):
            for k in list(value):
                if k not in props:
                    prev = _unchanged(value[k], before, k)
                    if prev is not _SAME:
                        value[k] = apply_defaults(value[k], extra, prev)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            value[i] = apply_defaults(item, schema["items"])
    return value


_SAME = object()


def _unchanged(child: Any, old: dict[str, Any] | None, key: str) -> Any:
    """`_SAME` when `old` (a stored value the schema passes left as they found it) holds the very
    JSON value `child` is under `key`, so the passes may skip it; else what it holds there (None
    when nothing), for the walk below."""
    if old is None or key not in old:
        return None
    prev = old[key]
    return _SAME if same_value(child, prev) else prev


# --- pruning ---


def prune(value: Any, schema: Schema, root: bool = False, old: Any = None) -> list[str]:
    """Drop fields the schema does not know, in place; returns the pruned paths (for strict mode).
    `old`, as for `apply_defaults`: children equal to the stored value's are not walked."""
    dropped: list[str] = []
    _prune(value, schema, "", root, dropped, old)
    return dropped


def _prune(
    value: Any, schema: Schema, path: str, root: bool, dropped: list[str], old: Any = None
) -> None:
    if isinstance(value, dict):
        before = old if isinstance(old, dict) else None
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
        embedded = schema.get("x-kubernetes-embedded-resource") is True
        for k in list(value):
            if (root or embedded) and k in ("apiVersion", "kind", "metadata"):
                if k == "metadata" and embedded and isinstance(value[k], dict):
                    _prune_meta(value[k])
                continue
            sub = props.get(k)
            if sub is None and isinstance(extra, dict):
                sub = extra
            if sub is not None:
                child = value[k]
                if isinstance(child, (dict, list)):  # a scalar has nothing to prune
                    prev = _unchanged(child, before, k)
                    if prev is not _SAME:
                        _prune(child, sub, f"{path}.{k}" if path else k, False, dropped, prev)
            elif extra is True or preserve:
                continue
            else:
                del value[k]
                dropped.append(f"{path}.{k}" if path else k)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _prune(item, schema["items"], f"{path}[{i}]", False, dropped)


_META_FIELDS = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
        "selfLink",
    }
)


def _prune_meta(meta: dict[str, Any]) -> None:
    for k in list(meta):
        if k not in _META_FIELDS:
            del meta[k]


def prune_object_meta(meta: dict[str, Any]) -> list[str]:
    """ObjectMeta decoding drops unknown metadata fields; returns them."""
    if meta.keys() <= _META_FIELDS:
        return []
    dropped = [f"metadata.{k}" for k in meta if k not in _META_FIELDS]
    _prune_meta(meta)
    return dropped
