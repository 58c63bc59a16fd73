"""Checks on CustomResourceDefinitions, for tests and for anyone loading `crds/`.

* `check_crd(crd)` lists what would make the apiserver refuse an apiextensions.k8s.io/v1 CRD: the
  envelope (names, one storage version, subresource paths, printer column types) and a *structural*
  `openAPIV3Schema`: every node typed unless it is int-or-string or preserves unknown fields; no
  `$ref`; `properties` and `additionalProperties` not together; `anyOf` only in the int-or-string
  form; root `metadata` at most `type: object`; `x-kubernetes-list-type: set` only over scalars;
  `required` naming declared properties; only known keywords; every `default` valid for its node.
* `validate(value, schema)` walks a JSON value through a schema as the apiserver would after
  defaulting: types, `nullable`, enums, ranges, lengths, patterns, item and property counts, set
  uniqueness, required fields. With `strict=True` a field the schema does not declare (one the
  apiserver would prune) is reported too. Errors are `(path, message)` pairs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

Error = tuple[str, str]

_KEYWORDS = frozenset(
    {
        "type",
        "format",
        "description",
        "title",
        "default",
        "nullable",
        "enum",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "uniqueItems",
        "minProperties",
        "maxProperties",
        "required",
        "properties",
        "additionalProperties",
        "items",
        "anyOf",
        "allOf",
        "oneOf",
        "not",
        "example",
        "x-kubernetes-int-or-string",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-map-type",
        "x-kubernetes-validations",
    }
)
_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean"})
_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]
_COLUMN_TYPES = frozenset({"integer", "number", "string", "boolean", "date"})


def check_crd(crd: Mapping[str, Any]) -> list[Error]:
    errs: list[Error] = []
    if crd.get("apiVersion") != "apiextensions.k8s.io/v1":
        errs.append(("apiVersion", "must be apiextensions.k8s.io/v1"))
    if crd.get("kind") != "CustomResourceDefinition":
        errs.append(("kind", "must be CustomResourceDefinition"))
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    for key in ("kind", "plural"):
        if not names.get(key):
            errs.append((f"spec.names.{key}", "required"))
    expected = f"{names.get('plural')}.{spec.get('group')}"
    if (crd.get("metadata") or {}).get("name") != expected:
        errs.append(("metadata.name", f"must be {expected}"))
    if spec.get("scope") not in ("Namespaced", "Cluster"):
        errs.append(("spec.scope", "must be Namespaced or Cluster"))
    versions = spec.get("versions") or []
    if sum(1 for v in versions if v.get("storage")) != 1:
        errs.append(("spec.versions", "exactly one version must be the storage version"))
    for i, v in enumerate(versions):
        path = f"spec.versions[{i}]"
        for j, col in enumerate(v.get("additionalPrinterColumns") or []):
            if col.get("type") not in _COLUMN_TYPES:
                errs.append((f"{path}.additionalPrinterColumns[{j}].type", "unsupported type"))
            if not str(col.get("jsonPath", "")).startswith("."):
                errs.append((f"{path}.additionalPrinterColumns[{j}].jsonPath", "must start with ."))
        scale = (v.get("subresources") or {}).get("scale")
        if scale is not None:
            for key, prefix in (
                ("specReplicasPath", ".spec."),
                ("statusReplicasPath", ".status."),
                ("labelSelectorPath", ".status."),
            ):
                value = scale.get(key)
                if value is None and key == "labelSelectorPath":
                    continue
                if not str(value).startswith(prefix):
                    errs.append((f"{path}.subresources.scale.{key}", f"must start with {prefix}"))
        schema = (v.get("schema") or {}).get("openAPIV3Schema")
        if not isinstance(schema, Mapping):
            errs.append((f"{path}.schema.openAPIV3Schema", "required"))
            continue
        errs += check_structural(schema, f"{path}.schema.openAPIV3Schema")
    return errs


def check_structural(schema: Mapping[str, Any], path: str = "") -> list[Error]:
    errs: list[Error] = []
    if schema.get("type") != "object":
        errs.append((path, "the root must be of type object"))
    _node(schema, path, errs, root=True)
    metadata = (schema.get("properties") or {}).get("metadata")
    if metadata is not None and set(metadata) - {"type"}:
        errs.append((f"{path}.properties.metadata", "root metadata may only be `type: object`"))
    return errs


def _node(s: Mapping[str, Any], path: str, errs: list[Error], root: bool = False) -> None:
    for key in s:
        if key == "$ref" or key == "definitions":
            errs.append((path, f"{key} is not allowed"))
        elif key not in _KEYWORDS:
            errs.append((path, f"unknown keyword {key}"))
    int_or_string = s.get("x-kubernetes-int-or-string") is True
    preserve = s.get("x-kubernetes-preserve-unknown-fields") is True
    t = s.get("type")
    if int_or_string:
        if "type" in s:
            errs.append((path, "an int-or-string node must not set type"))
        if "anyOf" in s and s["anyOf"] != _INT_OR_STRING_ANY_OF:
            errs.append((path, "anyOf of an int-or-string node must be [integer, string]"))
    elif t is None and not preserve:
        errs.append((path, "type is required (structural schema)"))
    elif t is not None and t not in _TYPES:
        errs.append((path, f"unknown type {t}"))
    for combinator in ("anyOf", "allOf", "oneOf", "not"):
        if combinator in s and not (int_or_string and combinator == "anyOf"):
            errs.append((path, f"{combinator} is not supported by this generator's schemas"))
    if "properties" in s and "additionalProperties" in s:
        errs.append((path, "properties and additionalProperties are mutually exclusive"))
    if ("properties" in s or "additionalProperties" in s) and t != "object":
        errs.append((path, "properties need type object"))
    if "items" in s and t != "array":
        errs.append((path, "items need type array"))
    if t == "array" and not isinstance(s.get("items"), Mapping):
        errs.append((path, "an array needs an items schema"))
    for name in s.get("required") or []:
        if name not in (s.get("properties") or {}):
            errs.append((path, f"required field {name} is not a declared property"))
    list_type = s.get("x-kubernetes-list-type")
    if list_type is not None:
        if list_type not in ("atomic", "set", "map"):
            errs.append((path, f"unknown list type {list_type}"))
        items = s.get("items") or {}
        if list_type == "set" and items.get("type") in ("object", "array"):
            errs.append((path, "a set's items must be scalars"))
    if "x-kubernetes-list-map-keys" in s and list_type != "map":
        errs.append((path, "list-map-keys need x-kubernetes-list-type map"))
    if "additionalProperties" in s and not isinstance(s["additionalProperties"], Mapping):
        errs.append((path, "additionalProperties must be a schema"))
    for name, sub in (s.get("properties") or {}).items():
        _node(sub, f"{path}.properties.{name}", errs)
    if isinstance(s.get("items"), Mapping):
        _node(s["items"], f"{path}.items", errs)
    if isinstance(s.get("additionalProperties"), Mapping):
        _node(s["additionalProperties"], f"{path}.additionalProperties", errs)
    if "default" in s:
        if root:
            errs.append((path, "the root must not have a default"))
        for p, msg in validate(s["default"], s, f"{path}.default"):
            errs.append((p, f"default is invalid: {msg}"))


# ---------------------------------------------------------------------------------------------
# Walking values through a schema


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def validate(
    value: Any, schema: Mapping[str, Any], path: str = "", *, strict: bool = False
) -> list[Error]:
    errs: list[Error] = []
    _walk(value, schema, path, errs, strict)
    return errs


def _type_ok(value: Any, t: str) -> bool:
    actual = _json_type(value)
    return actual == t or (t == "number" and actual == "integer")


def _walk(value: Any, s: Mapping[str, Any], path: str, errs: list[Error], strict: bool) -> None:
    if value is None:
        if not s.get("nullable") and not s.get("x-kubernetes-preserve-unknown-fields"):
            errs.append((path, "null is not allowed"))
        return
    if s.get("x-kubernetes-int-or-string"):
        if _json_type(value) not in ("integer", "string"):
            errs.append((path, f"must be an integer or a string, not {_json_type(value)}"))
            return
    elif "type" in s and not _type_ok(value, s["type"]):
        errs.append((path, f"must be of type {s['type']}, not {_json_type(value)}"))
        return
    if "enum" in s and value not in s["enum"]:
        errs.append((path, f"unsupported value {value!r}: supported values {s['enum']}"))
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in s and value < s["minimum"]:
            errs.append((path, f"should be greater than or equal to {s['minimum']}"))
        if "maximum" in s and value > s["maximum"]:
            errs.append((path, f"should be less than or equal to {s['maximum']}"))
    if isinstance(value, str):
        if "minLength" in s and len(value) < s["minLength"]:
            errs.append((path, f"should be at least {s['minLength']} chars long"))
        if "maxLength" in s and len(value) > s["maxLength"]:
            errs.append((path, f"may not be longer than {s['maxLength']}"))
        if "pattern" in s and re.search(s["pattern"], value) is None:
            errs.append((path, f"should match {s['pattern']!r}"))
    if isinstance(value, list):
        if "minItems" in s and len(value) < s["minItems"]:
            errs.append((path, f"should have at least {s['minItems']} items"))
        if "maxItems" in s and len(value) > s["maxItems"]:
            errs.append((path, f"must have at most {s['maxItems']} items"))
        if s.get("x-kubernetes-list-type") == "set":
            seen: set[str] = set()
            for i, v in enumerate(value):
                key = json.dumps(v, sort_keys=True)
                if key in seen:
                    errs.append((f"{path}[{i}]", f"duplicate value {v!r}"))
                seen.add(key)
        items = s.get("items")
        if isinstance(items, Mapping):
            for i, v in enumerate(value):
                _walk(v, items, f"{path}[{i}]", errs, strict)
    if isinstance(value, dict):
        if "maxProperties" in s and len(value) > s["maxProperties"]:
            errs.append((path, f"must have at most {s['maxProperties']} properties"))
        for name in s.get("required") or []:
            if name not in value:
                errs.append((f"{path}.{name}".lstrip("."), "required value"))
        props = s.get("properties")
        extra = s.get("additionalProperties")
        for k, v in value.items():
            child = f"{path}.{k}".lstrip(".")
            if path == "" and k == "metadata":
                continue  # the apiserver validates the root metadata itself
            if props is not None and k in props:
                _walk(v, props[k], child, errs, strict)
            elif isinstance(extra, Mapping):
                _walk(v, extra, child, errs, strict)
            elif strict and not s.get("x-kubernetes-preserve-unknown-fields"):
                errs.append((child, "unknown field (the apiserver would prune it)"))
