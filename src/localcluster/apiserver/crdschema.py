"""The checks a CustomResourceDefinition's schema must pass to be accepted (`structural_errors`),
and the fields JSONSchemaProps has (`prune_schema_fields`): what apiextensions requires of a v1
CRD's openAPIV3Schema before it serves the resource.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from ...apis import field
from ...apis.field import FieldError
from ...apis.structural.types import Schema
from ...apis.structural.validation import go_regexp, list_type_errors, validate

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
        errs.extend(_default_errors(node, path, obj_path))
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
        errs.extend(_property_errors(props, path, root, obj_path))
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


def _default_errors(node: dict[str, Any], path: str, obj_path: str) -> list[FieldError]:
    """A default must itself pass the node's schema (reported under `<path>.default`)."""
    default = copy.deepcopy(node["default"])
    found = validate(default, node, obj_path) + list_type_errors(default, node, obj_path)
    return [
        field.invalid(
            f"{path}.default",
            node["default"],
            f"{err.field}: {err.body()}" if err.field else err.body(),
        )
        for err in found
    ]


def _property_errors(
    props: dict[str, Any], path: str, root: bool, obj_path: str
) -> list[FieldError]:
    """The properties' own structural errors; the root's metadata may name only name and
    generateName."""
    errs: list[FieldError] = []
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
    return errs


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
