"""Validation of a JSON object against a structural OpenAPI v3 schema, as apiextensions-apiserver
words it: e.g. `spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or
equal to 1`. Types, enums, ranges, lengths, patterns (Go's meaning of `$`), sizes, required fields
and `x-kubernetes-list-type` uniqueness; CEL rules (`x-kubernetes-validations`) are not evaluated.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from .. import field
from ..field import ErrorType, FieldError
from ..meta.schema import json_type
from .types import Schema, is_int, is_num, same_value, type_ok

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


_SCALAR_TYPES = ("string", "integer", "number", "boolean")


class _Plan:
    """What one schema node asks of a value, read once per node: validation runs for every write,
    and most nodes say little (a type, a few properties)."""

    __slots__ = (
        "array",
        "combinators",
        "enum",
        "int_or_string",
        "kind",
        "null_ok",
        "numeric",
        "scalar_only",
        "schema",
        "string",
    )

    def __init__(self, schema: Schema) -> None:
        self.schema = schema
        self.kind: str | None = schema.get("type") or None
        self.null_ok = bool(
            schema.get("nullable")
            or (schema.get("x-kubernetes-preserve-unknown-fields") and not self.kind)
        )
        self.int_or_string = bool(schema.get("x-kubernetes-int-or-string"))
        self.enum: list[Any] | None = schema.get("enum")
        self.numeric = any(k in schema for k in ("minimum", "maximum", "multipleOf"))
        self.string = any(k in schema for k in ("maxLength", "minLength", "pattern"))
        self.array = any(k in schema for k in ("maxItems", "minItems", "items"))
        self.combinators = any(k in schema for k in ("allOf", "anyOf", "oneOf", "not"))
        # The scalar type when the type is all this node checks (most leaves of a CRD's schema).
        plain = not (
            self.enum is not None
            or self.numeric
            or self.string
            or self.array
            or self.combinators
            or self.int_or_string
        )
        self.scalar_only = self.kind if plain and self.kind in _SCALAR_TYPES else ""


_PLANS: dict[int, _Plan] = {}


def _plan(schema: Schema) -> _Plan:
    plan = _PLANS.get(id(schema))
    if plan is None or plan.schema is not schema:
        if len(_PLANS) > 100_000:
            _PLANS.clear()  # as `_root`'s
        plan = _PLANS[id(schema)] = _Plan(schema)
    return plan


def _validate(
    value: Any,
    schema: Schema,
    path: str,
    errs: list[FieldError],
    plan: _Plan | None = None,
    old: dict[str, Any] | None = None,
) -> None:
    """Check `value` against `schema` (whose plan the caller may have read already); `old` as for
    `validate_custom_resource`."""
    if plan is None:
        plan = _plan(schema)
    if value is None:
        if not plan.null_ok and plan.kind:
            errs.append(_type_error(path, value, plan.kind))
        return
    if plan.int_or_string:
        if not (is_int(value) or isinstance(value, str)):
            errs.append(
                FieldError(
                    ErrorType.TYPE_INVALID,
                    path,
                    json_type(value),
                    f'{path} in body must be of type integer,string: "{json_type(value)}"',
                )
            )
            return
    elif plan.kind and not type_ok(plan.kind, value):
        errs.append(_type_error(path, value, plan.kind))
        if plan.enum is not None:  # kube-openapi runs the enum check beside the type check
            errs.append(_enum_error(path, value, plan.enum))
        return
    enum = plan.enum
    if enum is not None and value not in enum:
        errs.append(_enum_error(path, value, enum))
    if isinstance(value, dict):
        _object(value, schema, path, errs, old)
    elif isinstance(value, str):
        if plan.string:
            _string(value, schema, path, errs)
    elif isinstance(value, list):
        if plan.array:
            _array(value, schema, path, errs)
    elif plan.numeric and is_num(value):
        _numeric(value, schema, path, errs)
    if plan.combinators:
        _combinators(value, schema, path, errs)


def _enum_error(path: str, value: Any, enum: list[Any]) -> FieldError:
    shown = field.GoValue(field.go_syntax(value)) if isinstance(value, dict | list) else value
    return field.not_supported(path, shown, [e if isinstance(e, str) else str(e) for e in enum])


def _combinators(value: Any, schema: Schema, path: str, errs: list[FieldError]) -> None:
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
    if len(_LIST_TYPES_BELOW) > 100_000:
        _LIST_TYPES_BELOW.clear()  # as `_root`'s
    _LIST_TYPES_BELOW[id(schema)] = (schema, found)
    return found


def list_type_errors(
    value: Any, schema: Schema, path: str = "", old: dict[str, Any] | None = None
) -> list[FieldError]:
    """listtype.ValidateListSetsAndMaps: duplicates in `set` and `map` lists, a pass of its own
    after the schema's, whose paths name map entries by key (`spec.lists[players].values[1]`).
    `old` as for `validate_custom_resource`."""
    errs: list[FieldError] = []
    if not _has_list_types(schema):
        return errs
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for k in sorted(value):
            prev = old.get(k) if old is not None and k in old else _ABSENT
            if prev is not _ABSENT and same_value(value[k], prev):
                continue
            old_child = _dict_or_none(prev)
            if isinstance(extra, dict):
                errs += list_type_errors(value[k], extra, f"{path}[{k}]", old_child)
            if k in props:
                name = f"{path}.{k}" if path else k
                errs += list_type_errors(value[k], props[k], name, old_child)
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


def _object(
    value: dict[str, Any],
    schema: Schema,
    path: str,
    errs: list[FieldError],
    old: dict[str, Any] | None = None,
) -> None:
    for name in schema.get("required") or []:
        if name not in value:
            errs.append(field.required(f"{path}.{name}" if path else name, ""))
    props = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    for k in sorted(value):
        sub = props.get(k)
        if sub is None:
            if not isinstance(extra, dict):
                continue
            sub = extra
        child = value[k]
        plan = _plan(sub)
        if plan.scalar_only and child is not None and type_ok(plan.scalar_only, child):
            continue  # a scalar of its declared type, with nothing else to check
        prev = old.get(k) if old is not None and k in old else _ABSENT
        if prev is not _ABSENT and same_value(child, prev):
            continue  # as the stored object has it, which passed this very schema
        _validate(child, sub, f"{path}.{k}" if path else k, errs, plan, _dict_or_none(prev))
    max_props, min_props = schema.get("maxProperties"), schema.get("minProperties")
    if max_props is not None and len(value) > max_props:
        errs.append(field.too_many(path, len(value), max_props))
    if min_props is not None and len(value) < min_props:
        errs.append(
            field.invalid(
                path, len(value), f"{path} in body should have at least {min_props} properties"
            )
        )


_ABSENT = object()


def _dict_or_none(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


_ROOTS: dict[int, tuple[Schema, Schema]] = {}


def _root(schema: Schema) -> Schema:
    """The root schema without `required` (checked against the whole object instead), one per
    schema: the passes below remember facts per schema node, which a fresh copy would defeat."""
    cached = _ROOTS.get(id(schema))
    if cached is None or cached[0] is not schema:
        if len(_ROOTS) > 10_000:
            _ROOTS.clear()  # schemas of replaced CRD versions would otherwise stay pinned
        cached = (schema, {k: v for k, v in schema.items() if k != "required"})
        _ROOTS[id(schema)] = cached
    return cached[1]


def validate_custom_resource(
    obj: dict[str, Any], schema: Schema, old: dict[str, Any] | None = None
) -> list[FieldError]:
    """Validate everything but apiVersion/kind/metadata of a custom resource against its schema.

    `old`, when given, is the stored object, which passed this very schema with no error: a
    subtree equal to its (`same_value`) has no error to find and is not walked again."""
    body = obj.copy()
    for k in ("apiVersion", "kind", "metadata"):
        body.pop(k, None)
    root = _root(schema)
    errs: list[FieldError] = []
    _validate(body, root, "", errs, None, old)
    for name in schema.get("required") or []:
        if name not in obj:
            errs.append(field.required(name, ""))
    return errs + list_type_errors(body, root, "", old)
