"""Structural OpenAPI v3 schemas of CustomResourceDefinitions: defaulting, pruning, validation.

Follows apiextensions-apiserver: defaults are applied first (top-down, including to non-nullable
nulls), unknown fields are pruned (except under `x-kubernetes-preserve-unknown-fields`, and the
root's apiVersion/kind/metadata), then the object is validated. Validation errors are `FieldError`s
worded as the apiserver words them, e.g. `spec.replicas: Invalid value: 0: spec.replicas in body
should be greater than or equal to 1`. CEL rules (`x-kubernetes-validations`) are not evaluated.

Also here: the checks a CRD's schema must pass to be accepted (`structural_errors`), and the JSON
shapes any object must have to be decoded at all (`shape_error`, answered 400 as Go's decoder does).
"""

from __future__ import annotations

import base64
import binascii
import copy
import functools
import re
from typing import Any

from ...apis import field
from ...apis.field import ErrorType, FieldError
from ...apis.meta.schema import json_type

Schema = dict[str, Any]


def _is_int(v: Any) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or (
        isinstance(v, float) and v.is_integer()
    )


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _type_ok(kind: str, v: Any) -> bool:
    if kind == "object":
        return isinstance(v, dict)
    if kind == "array":
        return isinstance(v, list)
    if kind == "string":
        return isinstance(v, str)
    if kind == "integer":
        return _is_int(v)
    if kind == "number":
        return _is_num(v)
    if kind == "boolean":
        return isinstance(v, bool)
    return True


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


def apply_defaults(value: Any, schema: Schema) -> Any:
    """Fill absent (and non-nullable null) properties from `default`, recursively; returns value.

    Only subtrees of the schema that declare defaults are walked, so large schemas with few
    defaults (a pod template) cost little.
    """
    if not _has_defaults(schema):
        return value
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for name, sub in props.items():
            if "default" in sub and (
                name not in value or (value[name] is None and not sub.get("nullable"))
            ):
                value[name] = copy.deepcopy(sub["default"])
            if name in value and _has_defaults(sub):
                value[name] = apply_defaults(value[name], sub)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and _has_defaults(extra):
            for k in list(value):
                if k not in props:
                    value[k] = apply_defaults(value[k], extra)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            value[i] = apply_defaults(item, schema["items"])
    return value


# --- pruning ---


def prune(value: Any, schema: Schema, root: bool = False) -> list[str]:
    """Drop fields the schema does not know, in place; returns the pruned paths (for strict mode)."""
    dropped: list[str] = []
    _prune(value, schema, "", root, dropped)
    return dropped


def _prune(value: Any, schema: Schema, path: str, root: bool, dropped: list[str]) -> None:
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
        embedded = schema.get("x-kubernetes-embedded-resource") is True
        for k in list(value):
            sub_path = f"{path}.{k}" if path else k
            if (root or embedded) and k in ("apiVersion", "kind", "metadata"):
                if k == "metadata" and embedded and isinstance(value[k], dict):
                    _prune_meta(value[k])
                continue
            if k in props:
                _prune(value[k], props[k], sub_path, False, dropped)
            elif isinstance(extra, dict):
                _prune(value[k], extra, sub_path, False, dropped)
            elif extra is True or preserve:
                continue
            else:
                del value[k]
                dropped.append(sub_path)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            _prune(item, schema["items"], f"{path}[{i}]", False, dropped)


_META_FIELDS = {
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


def _prune_meta(meta: dict[str, Any]) -> None:
    for k in list(meta):
        if k not in _META_FIELDS:
            del meta[k]


def prune_object_meta(meta: dict[str, Any]) -> list[str]:
    """ObjectMeta decoding drops unknown metadata fields; returns them."""
    dropped = [f"metadata.{k}" for k in meta if k not in _META_FIELDS]
    _prune_meta(meta)
    return dropped


# --- validation ---


def validate(value: Any, schema: Schema, path: str = "") -> list[FieldError]:
    errs: list[FieldError] = []
    _validate(value, schema, path, errs)
    return errs


def _type_error(path: str, value: Any, kind: str) -> FieldError:
    shown = json_type(value)
    return FieldError(
        ErrorType.TYPE_INVALID, path, shown, f'{path} in body must be of type {kind}: "{shown}"'
    )


def _validate(value: Any, schema: Schema, path: str, errs: list[FieldError]) -> None:
    if value is None:
        if schema.get("nullable") or (
            schema.get("x-kubernetes-preserve-unknown-fields") and not schema.get("type")
        ):
            return
        kind = schema.get("type")
        if kind:
            errs.append(_type_error(path, value, kind))
        return
    if schema.get("x-kubernetes-int-or-string"):
        if not (_is_int(value) or isinstance(value, str)):
            errs.append(
                FieldError(
                    ErrorType.TYPE_INVALID,
                    path,
                    json_type(value),
                    f'{path} in body must be of type integer,string: "{json_type(value)}"',
                )
            )
            return
    else:
        kind = schema.get("type")
        if kind and not _type_ok(kind, value):
            errs.append(_type_error(path, value, kind))
            return
    enum = schema.get("enum")
    if enum is not None and value not in enum:
        errs.append(
            field.not_supported(
                path, value, [str(e) if not isinstance(e, str) else e for e in enum]
            )
        )
    if _is_num(value):
        _numeric(value, schema, path, errs)
    if isinstance(value, str):
        _string(value, schema, path, errs)
    if isinstance(value, list):
        _array(value, schema, path, errs)
    if isinstance(value, dict):
        _object(value, schema, path, errs)
    for sub in schema.get("allOf") or []:
        _validate(value, sub, path, errs)
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if options:
            passing = sum(1 for sub in options if not validate(value, sub, path))
            if (key == "anyOf" and passing == 0) or (key == "oneOf" and passing != 1):
                errs.append(
                    field.invalid(
                        path,
                        value,
                        f"{path} in body must validate {'one and only one' if key == 'oneOf' else 'at least one'} schema ({key})",
                    )
                )
    if "not" in schema and not validate(value, schema["not"], path):
        errs.append(
            field.invalid(path, value, f"{path} in body must not validate the schema (not)")
        )


def _fmt(n: Any) -> str:
    return str(int(n)) if isinstance(n, float) and n.is_integer() else str(n)


def _numeric(value: Any, schema: Schema, path: str, errs: list[FieldError]) -> None:
    lo, hi = schema.get("minimum"), schema.get("maximum")
    if lo is not None:
        if schema.get("exclusiveMinimum") and value <= lo:
            errs.append(
                field.invalid(path, value, f"{path} in body should be greater than {_fmt(lo)}")
            )
        elif value < lo:
            errs.append(
                field.invalid(
                    path, value, f"{path} in body should be greater than or equal to {_fmt(lo)}"
                )
            )
    if hi is not None:
        if schema.get("exclusiveMaximum") and value >= hi:
            errs.append(
                field.invalid(path, value, f"{path} in body should be less than {_fmt(hi)}")
            )
        elif value > hi:
            errs.append(
                field.invalid(
                    path, value, f"{path} in body should be less than or equal to {_fmt(hi)}"
                )
            )
    mult = schema.get("multipleOf")
    if mult and value % mult != 0:
        errs.append(
            field.invalid(path, value, f"{path} in body should be a multiple of {_fmt(mult)}")
        )


def _string(value: str, schema: Schema, path: str, errs: list[FieldError]) -> None:
    max_len, min_len = schema.get("maxLength"), schema.get("minLength")
    if max_len is not None and len(value) > max_len:
        errs.append(field.too_long(path, max_len))
    if min_len is not None and len(value) < min_len:
        errs.append(
            field.invalid(path, value, f"{path} in body should be at least {min_len} chars long")
        )
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and pattern:
        try:
            compiled = go_regexp(pattern)
        except re.error:
            return  # refused when the CRD was written; one stored before is not checked
        if compiled.search(value) is None:
            errs.append(field.invalid(path, value, f"{path} in body should match '{pattern}'"))


@functools.lru_cache(maxsize=1024)
def go_regexp(pattern: str) -> re.Pattern[str]:
    """`pattern` compiled with the meaning Go's regexp gives `$`: the very end of the text (Python's
    `$` also matches before a final newline). Raises `re.error` when it does not compile."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            j = i + 1 + (pattern[i + 1 : i + 2] == "^")
            j += pattern[j : j + 1] == "]"  # a ']' first in a class is literal
            out.append(pattern[i:j])
            i = j
            continue
        elif c == "$":
            c = r"\Z"
        out.append(c)
        i += 1
    return re.compile("".join(out))


def _array(value: list[Any], schema: Schema, path: str, errs: list[FieldError]) -> None:
    max_items, min_items = schema.get("maxItems"), schema.get("minItems")
    if max_items is not None and len(value) > max_items:
        errs.append(field.too_many(path, len(value), max_items))
    if min_items is not None and len(value) < min_items:
        errs.append(
            field.invalid(
                path, len(value), f"{path} in body should have at least {min_items} items"
            )
        )
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            _validate(item, items, f"{path}[{i}]", errs)


_LIST_TYPES_BELOW: dict[int, tuple[Schema, bool]] = {}


def _has_list_types(schema: Schema) -> bool:
    """Whether a schema node or any node under it declares x-kubernetes-list-type (remembered per
    node: CRD schemas live as long as their CRD, and most subtrees have none)."""
    cached = _LIST_TYPES_BELOW.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    subs = [*(schema.get("properties") or {}).values()]
    subs += [
        schema[k] for k in ("items", "additionalProperties") if isinstance(schema.get(k), dict)
    ]
    found = "x-kubernetes-list-type" in schema or any(
        _has_list_types(s) for s in subs if isinstance(s, dict)
    )
    _LIST_TYPES_BELOW[id(schema)] = (schema, found)
    return found


def list_type_errors(value: Any, schema: Schema, path: str = "") -> list[FieldError]:
    """listtype.ValidateListSetsAndMaps: duplicates in `set` and `map` lists, a pass of its own
    after the schema's, whose paths name map entries by key (`spec.lists[players].values[1]`)."""
    errs: list[FieldError] = []
    if not _has_list_types(schema):
        return errs
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for k in sorted(value):
            if isinstance(extra, dict):
                errs += list_type_errors(value[k], extra, f"{path}[{k}]")
            if k in props:
                errs += list_type_errors(value[k], props[k], f"{path}.{k}" if path else k)
    elif isinstance(value, list):
        _list_duplicates(value, schema, path, errs)
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                errs += list_type_errors(item, items, f"{path}[{i}]")
    return errs


def _list_duplicates(value: list[Any], schema: Schema, path: str, errs: list[FieldError]) -> None:
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "set":
        seen: list[Any] = []
        for i, item in enumerate(value):
            if item in seen:
                errs.append(field.duplicate(f"{path}[{i}]", item))
            else:
                seen.append(item)
    elif list_type == "map":
        keys = schema.get("x-kubernetes-list-map-keys") or []
        seen_keys: list[tuple[Any, ...]] = []
        for i, item in enumerate(value):
            if isinstance(item, dict):
                k = tuple(item.get(n) for n in keys)
                if k in seen_keys:
                    shown = {n: item.get(n) for n in keys}
                    errs.append(
                        FieldError(
                            ErrorType.DUPLICATE, f"{path}[{i}]", field.GoValue(_go_map(shown))
                        )
                    )
                else:
                    seen_keys.append(k)


def _go_map(m: dict[str, Any]) -> str:
    inner = ", ".join(
        f'"{k}":{v!r}' if not isinstance(v, str) else f'"{k}":"{v}"' for k, v in m.items()
    )
    return "map[string]interface {}{" + inner + "}"


def _object(value: dict[str, Any], schema: Schema, path: str, errs: list[FieldError]) -> None:
    for name in schema.get("required") or []:
        if name not in value:
            errs.append(field.required(f"{path}.{name}" if path else name, ""))
    props = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    for k in sorted(value):
        sub_path = f"{path}.{k}" if path else k
        if k in props:
            _validate(value[k], props[k], sub_path, errs)
        elif isinstance(extra, dict):
            _validate(value[k], extra, sub_path, errs)
    max_props, min_props = schema.get("maxProperties"), schema.get("minProperties")
    if max_props is not None and len(value) > max_props:
        errs.append(field.too_many(path, len(value), max_props))
    if min_props is not None and len(value) < min_props:
        errs.append(
            field.invalid(
                path, len(value), f"{path} in body should have at least {min_props} properties"
            )
        )


def validate_custom_resource(obj: dict[str, Any], schema: Schema) -> list[FieldError]:
    """Validate everything but apiVersion/kind/metadata of a custom resource against its schema."""
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    root = {k: v for k, v in schema.items() if k != "required"}
    errs = validate(body, root)
    for name in schema.get("required") or []:
        if name not in obj:
            errs.append(field.required(name, ""))
    return errs + list_type_errors(body, root)


# --- structural schema checks (what apiextensions requires of a v1 CRD's schema) ---


_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]


def structural_errors(
    node: Any, path: str, root: bool = True, obj_path: str = ""
) -> list[FieldError]:
    """Why `node` is not a structural schema, with the apiserver's paths and wording: every node
    has a known type (unless int-or-string or preserve-unknown-fields), arrays have items,
    properties and additionalProperties exclude each other, the root's metadata is left alone,
    no unsupported keyword ($ref, definitions, ...) or ill-fitting list extension is used, and
    a typed anyOf appears only as int-or-string's [integer, string]."""
    errs: list[FieldError] = []
    if not isinstance(node, dict):
        return [field.invalid(path, str(node), "must be an object")]
    errs.extend(_unsupported_errors(node, path))
    int_or_string = node.get("x-kubernetes-int-or-string") is True
    preserve = node.get("x-kubernetes-preserve-unknown-fields") is True
    kind = node.get("type", "")
    if int_or_string and kind:
        errs.append(
            field.forbidden(f"{path}.type", "must be empty if x-kubernetes-int-or-string is true")
        )
    if not kind and not int_or_string and not preserve:
        errs.append(
            field.required(
                f"{path}.type",
                "must not be empty for specified object fields"
                if not root
                else "must not be empty at the root",
            )
        )
    if "default" in node and not root:
        default = copy.deepcopy(node["default"])
        found = validate(default, node, obj_path) + list_type_errors(default, node, obj_path)
        for err in found:
            errs.append(
                field.invalid(
                    f"{path}.default",
                    node["default"],
                    f"{err.field}: {err.body()}" if err.field else err.body(),
                )
            )
    if kind == "array" and "items" not in node:
        errs.append(field.required(f"{path}.items", "must be specified"))
    props = node.get("properties")
    extra = node.get("additionalProperties")
    if props and extra not in (None, False):
        errs.append(
            field.forbidden(
                f"{path}.additionalProperties",
                "additionalProperties and properties are mutual exclusive",
            )
        )
    if isinstance(props, dict):
        for name, sub in props.items():
            sub_path = f"{path}.properties[{name}]"
            if root and name == "metadata":
                if isinstance(sub, dict) and set(sub.get("properties") or {}) - {
                    "name",
                    "generateName",
                }:
                    errs.append(
                        field.forbidden(
                            sub_path,
                            "must not specify anything other than name and generateName, but metadata is implicitly specified",
                        )
                    )
                continue
            errs.extend(
                structural_errors(sub, sub_path, False, f"{obj_path}.{name}" if obj_path else name)
            )
    if isinstance(extra, dict):
        errs.extend(
            structural_errors(extra, f"{path}.additionalProperties", False, f"{obj_path}[*]")
        )
    items = node.get("items")
    if isinstance(items, dict):
        errs.extend(structural_errors(items, f"{path}.items", False, f"{obj_path}[*]"))
    for key in ("allOf", "anyOf", "oneOf"):
        if key == "anyOf" and int_or_string and node.get(key) == _INT_OR_STRING_ANY_OF:
            continue  # the IntOrString pattern apiextensions allows (isIntOrStringAnyOfPattern)
        for i, sub in enumerate(node.get(key) or []):
            if isinstance(sub, dict) and ("type" in sub or "default" in sub):
                errs.append(
                    field.forbidden(
                        f"{path}.{key}[{i}].{'type' if 'type' in sub else 'default'}",
                        "must be empty to be structural",
                    )
                )
    return errs


_OPENAPI_V3_TYPES = ["array", "boolean", "integer", "number", "object", "string"]
_UNSUPPORTED_KEYWORDS = (
    "id",
    "additionalItems",
    "patternProperties",
    "definitions",
    "dependencies",
    "$ref",
)
_LIST_TYPES = ["atomic", "set", "map"]


def _unsupported_errors(node: Schema, path: str) -> list[FieldError]:
    """What apiextensions refuses in any node of a v1 schema, structural or not: JSON-Schema
    keywords it does not support, unknown types, and list extensions that do not fit the node."""
    errs: list[FieldError] = []
    kind = node.get("type", "")
    if kind == "null":
        errs.append(
            field.forbidden(
                f"{path}.type", "type cannot be set to null, use nullable as an alternative"
            )
        )
    elif kind and kind not in _OPENAPI_V3_TYPES:
        errs.append(field.not_supported(f"{path}.type", kind, _OPENAPI_V3_TYPES))
    for key in _UNSUPPORTED_KEYWORDS:
        if node.get(key) not in (None, "", {}):
            errs.append(field.forbidden(f"{path}.{key}", f"{key} is not supported"))
    pattern = node.get("pattern")
    if isinstance(pattern, str) and pattern:
        try:
            go_regexp(pattern)
        except re.error as err:
            errs.append(
                field.invalid(
                    f"{path}.pattern",
                    pattern,
                    f"must be a valid regular expression, but isn't: {err}",
                )
            )
    if node.get("uniqueItems") is True:
        errs.append(
            field.forbidden(
                f"{path}.uniqueItems",
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    list_type = node.get("x-kubernetes-list-type")
    items = node.get("items")
    if list_type is not None and kind != "array":
        detail = "must be array if x-kubernetes-list-type is specified"
        errs.append(
            field.invalid(f"{path}.type", kind, detail)
            if kind
            else field.required(f"{path}.type", detail)
        )
    elif list_type == "set" and isinstance(items, dict):
        # Set items are compared whole, so they must merge atomically.
        atomic = "must be atomic as item of a list with x-kubernetes-list-type=set"
        item_list_type = items.get("x-kubernetes-list-type")
        if items.get("type") == "array" and item_list_type not in (None, "atomic"):
            errs.append(
                field.invalid(f"{path}.items.x-kubernetes-list-type", item_list_type, atomic)
            )
        if items.get("type") == "object" and items.get("x-kubernetes-map-type") != "atomic":
            errs.append(
                field.invalid(
                    f"{path}.items.x-kubernetes-map-type",
                    items.get("x-kubernetes-map-type", ""),
                    atomic,
                )
            )
    if list_type is not None and list_type not in _LIST_TYPES:
        errs.append(field.not_supported(f"{path}.x-kubernetes-list-type", list_type, _LIST_TYPES))
    if node.get("x-kubernetes-list-map-keys") and list_type != "map":
        detail = "must be map if x-kubernetes-list-map-keys is non-empty"
        errs.append(
            field.required(f"{path}.x-kubernetes-list-type", detail)
            if list_type is None
            else field.invalid(f"{path}.x-kubernetes-list-type", list_type, detail)
        )
    return errs


# The JSON fields of apiextensions.k8s.io/v1 JSONSchemaProps; decoding a CRD drops any other
# (or, with fieldValidation=Strict, refuses it).
JSON_SCHEMA_PROPS_FIELDS = frozenset(
    {
        "id",
        "$schema",
        "$ref",
        "description",
        "type",
        "format",
        "title",
        "default",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "multipleOf",
        "enum",
        "maxProperties",
        "minProperties",
        "required",
        "items",
        "allOf",
        "oneOf",
        "anyOf",
        "not",
        "properties",
        "additionalProperties",
        "patternProperties",
        "dependencies",
        "additionalItems",
        "definitions",
        "externalDocs",
        "example",
        "nullable",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-list-type",
        "x-kubernetes-map-type",
        "x-kubernetes-validations",
    }
)
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "dependencies")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")


def prune_schema_fields(node: Any, path: str) -> list[str]:
    """Drop, in place, what JSONSchemaProps has no field for, at any depth of a schema; returns
    the dropped fields' paths (dotted, as Go's strict decoder names them)."""
    dropped: list[str] = []
    if not isinstance(node, dict):
        return dropped
    for key in list(node):
        if key not in JSON_SCHEMA_PROPS_FIELDS:
            dropped.append(f"{path}.{key}")
            del node[key]
    for key in _SCHEMA_MAPS:
        subs = node.get(key)
        if isinstance(subs, dict):
            for name, sub in subs.items():
                dropped += prune_schema_fields(sub, f"{path}.{key}.{name}")
    for key in _SCHEMA_LISTS:
        for i, sub in enumerate(node.get(key) or []):
            dropped += prune_schema_fields(sub, f"{path}.{key}[{i}]")
    items = node.get("items")
    if isinstance(items, list):
        for i, sub in enumerate(items):
            dropped += prune_schema_fields(sub, f"{path}.items[{i}]")
    else:
        dropped += prune_schema_fields(items, f"{path}.items")
    for key in ("additionalProperties", "additionalItems", "not"):
        dropped += prune_schema_fields(node.get(key), f"{path}.{key}")
    return dropped


def prune_crd_schema_fields(crd: dict[str, Any]) -> list[str]:
    """`prune_schema_fields` over every version's openAPIV3Schema of a CRD."""
    dropped: list[str] = []
    spec = crd.get("spec")
    versions = spec.get("versions") if isinstance(spec, dict) else None
    for i, version in enumerate(versions if isinstance(versions, list) else []):
        schema = version.get("schema") if isinstance(version, dict) else None
        if isinstance(schema, dict):
            path = f"spec.versions[{i}].schema.openAPIV3Schema"
            dropped += prune_schema_fields(schema.get("openAPIV3Schema"), path)
    return dropped


# --- JSON shapes every decoder insists on ---

_META_TYPES: dict[str, type] = {
    "name": str,
    "generateName": str,
    "namespace": str,
    "uid": str,
    "resourceVersion": str,
    "labels": dict,
    "annotations": dict,
    "finalizers": list,
    "ownerReferences": list,
    "managedFields": list,
}
# Top-level fields of built-in kinds and their JSON type.
_BUILTIN_TYPES: dict[str, type] = {
    "spec": dict,
    "status": dict,
    "data": dict,
    "stringData": dict,
    "binaryData": dict,
    "roleRef": dict,
    "involvedObject": dict,
    "source": dict,
    "series": dict,
    "aggregationRule": dict,
    "webhooks": list,
    "subsets": list,
    "secrets": list,
    "imagePullSecrets": list,
    "rules": list,
    "subjects": list,
    "type": str,
}
_JSON_NAMES: dict[type, str] = {dict: "object", list: "array", str: "string"}


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return _JSON_NAMES.get(type(value), "value")


def shape_error(obj: dict[str, Any], builtin: bool) -> str:
    """Why `obj` could not be decoded into a Kubernetes object ('' when it could), in the words of
    Go's JSON decoder: metadata fields, and a built-in kind's top-level fields, of the wrong type."""
    md = obj.get("metadata") or {}
    for key, typ in _META_TYPES.items():
        value = md.get(key)
        if value is not None and not isinstance(value, typ):
            return f"json: cannot unmarshal {_json_type(value)} into Go struct field ObjectMeta.metadata.{key} of type {_JSON_NAMES.get(typ, typ.__name__)}"
    for i, ref in enumerate(md.get("ownerReferences") or []):
        if not isinstance(ref, dict):
            return f"json: cannot unmarshal {_json_type(ref)} into Go struct field ObjectMeta.metadata.ownerReferences[{i}] of type object"
    for i, entry in enumerate(md.get("managedFields") or []):
        if not isinstance(entry, dict):
            return f"json: cannot unmarshal {_json_type(entry)} into Go struct field ObjectMeta.metadata.managedFields[{i}] of type object"
    for i, fin in enumerate(md.get("finalizers") or []):
        if not isinstance(fin, str):
            return f"json: cannot unmarshal {_json_type(fin)} into Go struct field ObjectMeta.metadata.finalizers[{i}] of type string"
    if builtin:
        for key, typ in _BUILTIN_TYPES.items():
            value = obj.get(key)
            if value is not None and not isinstance(value, typ):
                return f"json: cannot unmarshal {_json_type(value)} into Go struct field .{key} of type {_JSON_NAMES[typ]}"
    return ""


_BASE64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def _base64_values(kind: str, obj: dict[str, Any]) -> list[Any]:
    """The values a built-in kind holds as Go `[]byte` (base64 in JSON), Secrets aside (their
    registry strategy reports them as 422)."""
    if kind == "ConfigMap":
        data = obj.get("binaryData")
        return list(data.values()) if isinstance(data, dict) else []
    configs: list[Any] = []
    spec = obj.get("spec")
    if kind == "APIService" and isinstance(spec, dict):
        configs = [spec]
    elif kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        hooks = obj.get("webhooks")
        configs = (
            [h.get("clientConfig") for h in hooks if isinstance(h, dict)]
            if isinstance(hooks, list)
            else []
        )
    elif kind == "CustomResourceDefinition" and isinstance(spec, dict):
        conversion = spec.get("conversion")
        webhook = conversion.get("webhook") if isinstance(conversion, dict) else None
        configs = [webhook.get("clientConfig")] if isinstance(webhook, dict) else []
    return [c["caBundle"] for c in configs if isinstance(c, dict) and c.get("caBundle")]


def base64_error(kind: str, obj: dict[str, Any]) -> str:
    """Why a `[]byte` field of a built-in kind does not decode ('' when they all do), in the words
    of Go's base64 decoder."""
    for value in _base64_values(kind, obj):
        if not isinstance(value, str):
            return f"json: cannot unmarshal {_json_type(value)} into Go value of type []uint8"
        try:
            base64.b64decode(value, validate=True)
        except binascii.Error:
            bad = next((i for i, c in enumerate(value) if c not in _BASE64_ALPHABET), None)
            return (
                f"illegal base64 data at input byte {len(value) // 4 * 4 if bad is None else bad}"
            )
    return ""
