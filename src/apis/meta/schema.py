"""CRD-style field metadata on msgspec types, and the generic passes that read it.

Typed resources are msgspec `Struct`s whose optional fields default to `UNSET`, so presence is kept:
a field given as `0`, `""` or `false` round-trips, an absent one stays absent. What a CRD schema would
say about a field rides on the type as `Annotated[T, crd(...)]` (introspectable, never enforced by
msgspec itself, because Kubernetes checks the schema only *after* mutating webhooks ran):

    crd(minimum=1, maximum=65535)      # ranges        crd(default=1000)      # schema default
    crd(pattern=..., min_length=...)   # strings       crd(required=True)     # required field
    crd(max_items=..., list_type="set")                crd(max_properties=1000)
    crd(preserve_unknown=True)         # raw JSON kept crd(go="value")        # Go JSON encoding

Enumerations are `enum.StrEnum` types. `None` in a field's type means the schema allows `null`.
`go=` says how Go's `encoding/json` writes the field, for `go_roundtrip`: `"omitempty"` (the default:
zero values dropped), `"ptr"` (a pointer with omitempty: only nil dropped), `"value"` (a struct value:
always written, `{}` when empty), `"always"` (no omitempty: zero values written), `"absent"` (the Go
type has no such field: a Go webhook drops it; e.g. CRD-only `immutableReplicas`).

Passes (all pure apart from the documented in-place ones):
* `check_types(raw, cls)`: the apiserver's structural checks on raw JSON before decoding: JSON types
  and enums, every error at once; `null` for non-nullable fields is pruned as the apiserver does.
* `apply_schema_defaults(obj)`: CRD `default`s, in place.
* `validate_schema(obj, path)`: ranges, lengths, patterns, sizes, set uniqueness, required fields,
  with the apiserver's message texts.
* `go_roundtrip(obj)`: what a Go webhook's decode/re-encode does to the object, in place.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec
import msgspec.inspect as mi
from msgspec import UNSET, Meta

from ..field import (
    ErrorType,
    FieldError,
    Path,
    duplicate,
    invalid,
    not_supported,
    required,
    too_long,
    too_many,
)
from .lazypath import LazyPath


@functools.lru_cache(maxsize=256)
def _go_regexp(pattern: str) -> re.Pattern[str]:
    """Compile a schema pattern with Go's (RE2) meaning of `$`: the end of the text.

    Python's `$` also matches before a trailing newline, which would let `"abc\n"` pass `^[a-z]+$`.
    """
    return re.compile(re.sub(r"(?<!\\)\$", r"\\Z", pattern))


_PROPS = frozenset(
    {
        "default",
        "minimum",
        "maximum",
        "min_length",
        "max_length",
        "pattern",
        "min_items",
        "max_items",
        "max_properties",
        "list_type",
        "preserve_unknown",
        "required",
        "go",
        "int_or_string",
        "description",
        "nullable",
        "format",
    }
)
_GO_KINDS = frozenset({"omitempty", "ptr", "value", "always", "absent"})
_INT64 = (-(2**63), 2**63 - 1)


def crd(**props: Any) -> Meta:
    """Field metadata for `Annotated[...]`; see the module docstring for the keys."""
    unknown = set(props) - _PROPS
    if unknown:
        raise TypeError(f"unknown crd() keys: {sorted(unknown)}")
    if "go" in props and props["go"] not in _GO_KINDS:
        raise TypeError(f"crd(go=...) must be one of {sorted(_GO_KINDS)}")
    return Meta(extra=props)


@dataclass(frozen=True)
class TypeSpec:
    """A field's type with `Annotated` metadata merged and `None` folded into `nullable`."""

    type: mi.Type
    props: Mapping[str, Any] = field(default_factory=dict)
    nullable: bool = False


@dataclass(frozen=True)
class FieldSpec:
    name: str
    json_name: str
    spec: TypeSpec


_TYPE_FACTS: dict[int, tuple[mi.Type, tuple[type, ...] | None, bool, TypeSpec | None]] = {}


def _type_facts(t: mi.Type) -> tuple[tuple[type, ...] | None, bool, TypeSpec | None]:
    """What `check_types` asks of a type, worked out once per type object (those of
    `struct_type_info` and `struct_fields` live as long as the process): the Python types a JSON
    value of it may have (None: any), whether a bool is one of them, and a list's or map's item
    type, unwrapped."""
    hit = _TYPE_FACTS.get(id(t))
    if hit is None or hit[0] is not t:
        accepted, bool_ok = _accepted(t)
        item = None
        if isinstance(t, mi.ListType):
            item = unwrap(t.item_type)
        elif isinstance(t, mi.DictType):
            item = unwrap(t.value_type)
        hit = _TYPE_FACTS[id(t)] = (t, accepted, bool_ok, item)
    return hit[1], hit[2], hit[3]


def _accepted(t: mi.Type) -> tuple[tuple[type, ...] | None, bool]:
    """The Python types a JSON value of `t` may be, and whether a bool is one (a bool is an int
    in Python, not in JSON); None accepts any value."""
    if isinstance(t, mi.IntType):
        return (int,), False
    if isinstance(t, mi.FloatType):
        return (int, float), False
    if isinstance(t, mi.BoolType):
        return (bool,), True
    if isinstance(t, mi.StrType | mi.EnumType | mi.LiteralType):
        return (str,), False
    if isinstance(t, mi.ListType):
        return (list,), False
    if isinstance(t, mi.DictType | mi.StructType):
        return (dict,), False
    if isinstance(t, mi.UnionType):
        types: list[type] = []
        bool_ok = False
        for member in t.types:
            sub, sub_bool = _accepted(member)
            if sub is None:
                return None, True
            types.extend(sub)
            bool_ok = bool_ok or sub_bool
        return tuple(types), bool_ok
    return None, True


def unwrap(t: mi.Type) -> TypeSpec:
    props: dict[str, Any] = {}
    nullable = False
    while True:
        if isinstance(t, mi.Metadata):
            props.update(t.extra or {})
            t = t.type
            continue
        if isinstance(t, mi.UnionType):
            rest = [m for m in t.types if not isinstance(m, mi.NoneType)]
            if len(rest) != len(t.types):
                nullable = nullable or any(isinstance(m, mi.NoneType) for m in t.types)
            if len(rest) == 1:
                t = rest[0]
                continue
            if len(rest) != len(t.types):
                t = mi.UnionType(types=tuple(rest))
        break
    nullable = nullable or bool(props.get("nullable"))
    return TypeSpec(t, props, nullable)


@functools.cache
def struct_fields(cls: type[msgspec.Struct]) -> tuple[FieldSpec, ...]:
    """The fields of a Struct with their JSON names and merged CRD metadata (for codegen too)."""
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    return tuple(FieldSpec(f.name, f.encode_name, unwrap(f.type)) for f in info.fields)


def json_type(value: Any) -> str:
    """The OpenAPI type name of a decoded JSON value, as the apiserver shows it in type errors."""
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


def _expected(t: mi.Type) -> str:
    if isinstance(t, mi.IntType):
        return "integer"
    if isinstance(t, mi.FloatType):
        return "number"
    if isinstance(t, mi.BoolType):
        return "boolean"
    if isinstance(t, mi.StrType | mi.EnumType | mi.LiteralType):
        return "string"
    if isinstance(t, mi.ListType):
        return "array"
    if isinstance(t, mi.UnionType):
        return ",".join(_expected(m) for m in t.types)
    return "object"


def type_error(path: Path, value: Any, expected: str) -> FieldError:
    """The apiserver's JSON-type error: `<path> in body must be of type <expected>: "<actual>"`."""
    actual = json_type(value)
    detail = f'{path} in body must be of type {expected}: "{actual}"'
    return FieldError(ErrorType.TYPE_INVALID, str(path), actual, detail)


def _type_error(path: Path, value: Any, t: mi.Type) -> FieldError:
    return type_error(path, value, _expected(t))


@functools.cache
def struct_type_info(cls: type[msgspec.Struct]) -> mi.Type:
    """`msgspec.inspect.type_info(cls)`, built once per class: it walks every nested annotation,
    which cost a quarter of the local stack's CPU when rebuilt for each admission review."""
    return mi.type_info(cls)


def check_types(
    raw: Any,
    cls: type[msgspec.Struct],
    path: Path | None = None,
    *,
    go_enums: bool = False,
) -> tuple[Any, list[FieldError]]:
    """Check raw JSON against a Struct's JSON types and enums; return it cleaned, with all errors.

    `go_enums`: read a struct's enum fields as a Go webhook decoding the object reads them: Go's
    enums are string types, so any string decodes. `""` is the zero value and is left out (unset,
    then defaulted); another string outside the enum is left out of the cleaned JSON too, for
    `keep_go_enums` to put back on the decoded object verbatim (the CRD schema rejects it later,
    after the webhook's defaults copied it wherever Go copies it, e.g. `status.eviction`).
    """
    errs: list[FieldError] = []
    checker = _Checker(errs, go_enums)
    cleaned = checker.check(raw, TypeSpec(struct_type_info(cls)), path or Path())
    return cleaned, errs


_STRING_CHECKED = (mi.EnumType, mi.LiteralType)


@dataclass
class _Checker:
    errs: list[FieldError]
    go_enums: bool

    def check(self, value: Any, spec: TypeSpec, path: Path) -> Any:
        t, errs = spec.type, self.errs
        accepted, bool_ok, item = _type_facts(t)
        if accepted is not None and (
            not isinstance(value, accepted) or (not bool_ok and isinstance(value, bool))
        ):
            errs.append(_type_error(path, value, t))
            return value
        if isinstance(value, str | bool | float) and not isinstance(t, _STRING_CHECKED):
            return value  # a scalar of its type, with no enum to check
        if isinstance(t, mi.IntType) and isinstance(value, int):
            if not _INT64[0] <= value <= _INT64[1]:
                errs.append(invalid(path, value, "must fit in a 64-bit integer"))
        elif isinstance(t, mi.EnumType):
            if value not in _enum_values(t.cls):
                errs.append(not_supported(path, value, [m.value for m in t.cls]))
        elif isinstance(t, mi.LiteralType):
            if value not in t.values:
                errs.append(not_supported(path, value, [str(v) for v in t.values]))
        elif isinstance(t, mi.ListType):
            assert item is not None
            return [self.member(v, item, LazyPath(path, i, True)) for i, v in enumerate(value)]
        elif isinstance(t, mi.DictType):
            assert item is not None
            return {k: self.member(v, item, LazyPath(path, k)) for k, v in value.items()}
        elif isinstance(t, mi.StructType):
            out: dict[str, Any] = {}
            for f in struct_fields(t.cls):
                if f.json_name not in value:
                    continue
                v = value[f.json_name]
                if v is None and not f.spec.nullable:
                    continue  # the apiserver prunes null for non-nullable fields
                if (
                    self.go_enums
                    and isinstance(v, str)
                    and isinstance(f.spec.type, mi.EnumType)
                    and v not in _enum_values(f.spec.type.cls)
                ):
                    continue  # `""` (no enum holds it) or a string `keep_go_enums` puts back
                out[f.json_name] = self.member(v, f.spec, LazyPath(path, f.json_name))
            return out
        return value

    def member(self, value: Any, spec: TypeSpec, path: Path) -> Any:
        if value is None:
            if not spec.nullable and not isinstance(spec.type, mi.AnyType):
                self.errs.append(_type_error(path, value, spec.type))
            return value
        return self.check(value, spec, path)


@functools.cache
def _enum_values(cls: type[enum.Enum]) -> frozenset[str]:
    return frozenset(m.value for m in cls)


def keep_go_enums(obj: msgspec.Struct, raw: Any) -> None:
    """Put back on `obj` (decoded from `check_types(raw, go_enums=True)`'s output) the strings
    outside their enum that the check left out, as plain `str`, in place: what Go's string-typed
    enum holds after decoding. Only struct fields are lenient, as in `check_types`."""
    _keep_go_enums(obj, raw, TypeSpec(struct_type_info(type(obj))))


def _keep_go_enums(target: Any, raw: Any, spec: TypeSpec) -> None:
    t = spec.type
    if isinstance(t, mi.StructType) and isinstance(raw, dict):
        for f in struct_fields(t.cls):
            v = raw.get(f.json_name)
            if v is None:
                continue
            if isinstance(f.spec.type, mi.EnumType) and isinstance(v, str):
                if v and v not in _enum_values(f.spec.type.cls):
                    setattr(target, f.name, v)
                continue
            _keep_go_enums(getattr(target, f.name, None), v, f.spec)
    elif isinstance(t, mi.ListType) and isinstance(raw, list) and isinstance(target, list):
        item = unwrap(t.item_type)
        for r, o in zip(raw, target, strict=False):
            _keep_go_enums(o, r, item)
    elif isinstance(t, mi.DictType) and isinstance(raw, dict) and isinstance(target, dict):
        item = unwrap(t.value_type)
        for k, r in raw.items():
            if k in target:
                _keep_go_enums(target[k], r, item)


# ---------------------------------------------------------------------------------------------
# Schema defaults


def _convert_default(default: Any, spec: TypeSpec) -> Any:
    # Build the typed default from its JSON form, e.g. 1000, [] or {"safe": "Never"}.
    target = _python_type(spec.type)
    return msgspec.convert(default, target) if target is not None else default


def _python_type(t: mi.Type) -> Any:
    if isinstance(t, mi.StructType):
        return t.cls
    if isinstance(t, mi.EnumType):
        return t.cls
    if isinstance(t, mi.ListType):
        inner = _python_type(unwrap(t.item_type).type)
        return list[inner] if inner is not None else list  # type: ignore[valid-type]
    if isinstance(t, mi.DictType):
        inner = _python_type(unwrap(t.value_type).type)
        return dict[str, inner] if inner is not None else dict  # type: ignore[valid-type]
    return None


_LEAVES = frozenset((str, int, float, bool, type(None), type(UNSET)))
"""The types of values the recursive passes below have nothing to do inside."""


def apply_schema_defaults(obj: Any) -> None:
    """Fill absent fields that carry a CRD `default`, recursively, in place."""
    if isinstance(obj, msgspec.Struct):
        for f in struct_fields(type(obj)):
            value = getattr(obj, f.name)
            if value is UNSET and "default" in f.spec.props:
                value = _convert_default(f.spec.props["default"], f.spec)
                setattr(obj, f.name, value)
            if type(value) not in _LEAVES:  # nothing to default inside a scalar
                apply_schema_defaults(value)
    elif isinstance(obj, list):
        for v in obj:
            apply_schema_defaults(v)
    elif isinstance(obj, dict):
        for v in obj.values():
            apply_schema_defaults(v)


# ---------------------------------------------------------------------------------------------
# Schema validation on typed objects


def validate_schema(obj: msgspec.Struct, path: Path) -> list[FieldError]:
    """Ranges, lengths, patterns, sizes and required fields of a typed object; then, as the
    apiserver's separate list-type pass, set uniqueness (map entries named by key:
    `spec.lists[players].values[1]`)."""
    errs: list[FieldError] = []
    _validate_struct(obj, path, errs)
    _list_sets(obj, TypeSpec(mi.AnyType()), path, errs)
    return errs


def _list_sets(value: Any, spec: TypeSpec, path: Path, errs: list[FieldError]) -> None:
    if isinstance(value, msgspec.Struct):
        for f in struct_fields(type(value)):
            sub = getattr(value, f.name)
            if sub is not UNSET and sub is not None:
                _list_sets(sub, f.spec, LazyPath(path, f.json_name), errs)
    elif isinstance(value, list):
        if spec.props.get("list_type") == "set":
            seen: set[Any] = set()
            for i, v in enumerate(value):
                key = msgspec.json.encode(v)
                if key in seen:
                    errs.append(duplicate(LazyPath(path, i, True), v))
                seen.add(key)
        if isinstance(spec.type, mi.ListType):
            item = unwrap(spec.type.item_type)
            for i, v in enumerate(value):
                _list_sets(v, item, LazyPath(path, i, True), errs)
    elif isinstance(value, dict) and isinstance(spec.type, mi.DictType):
        item = unwrap(spec.type.value_type)
        for k, v in value.items():
            _list_sets(v, item, LazyPath(path, k, True), errs)


def _validate_struct(obj: msgspec.Struct, path: Path, errs: list[FieldError]) -> None:
    for f in struct_fields(type(obj)):
        value = getattr(obj, f.name)
        p = LazyPath(path, f.json_name)
        if value is UNSET:
            if f.spec.props.get("required"):
                errs.append(required(p))
            continue
        _validate_value(value, f.spec, p, errs)


def _validate_value(value: Any, spec: TypeSpec, path: Path, errs: list[FieldError]) -> None:
    if value is None:
        return
    props = spec.props
    if isinstance(value, msgspec.Struct):
        _validate_struct(value, path, errs)
        return
    if isinstance(value, bool):
        return
    if isinstance(value, int | float) and not isinstance(value, enum.Enum):
        if "minimum" in props and value < props["minimum"]:
            errs.append(
                invalid(
                    path,
                    value,
                    f"{path} in body should be greater than or equal to {props['minimum']}",
                )
            )
        if "maximum" in props and value > props["maximum"]:
            errs.append(
                invalid(
                    path,
                    value,
                    f"{path} in body should be less than or equal to {props['maximum']}",
                )
            )
        return
    if isinstance(value, str) and not isinstance(value, enum.Enum):
        if "min_length" in props and len(value) < props["min_length"]:
            errs.append(
                invalid(
                    path,
                    value,
                    f"{path} in body should be at least {props['min_length']} chars long",
                )
            )
        if "max_length" in props and len(value) > props["max_length"]:
            errs.append(too_long(path, props["max_length"]))
        if "pattern" in props and _go_regexp(props["pattern"]).search(value) is None:
            errs.append(invalid(path, value, f"{path} in body should match '{props['pattern']}'"))
        return
    if isinstance(value, list):
        if "min_items" in props and len(value) < props["min_items"]:
            errs.append(
                invalid(
                    path,
                    len(value),
                    f"{path} in body should have at least {props['min_items']} items",
                )
            )
        if "max_items" in props and len(value) > props["max_items"]:
            errs.append(too_many(path, len(value), props["max_items"]))
        item = (
            unwrap(spec.type.item_type)
            if isinstance(spec.type, mi.ListType)
            else TypeSpec(mi.AnyType())
        )
        for i, v in enumerate(value):
            _validate_value(v, item, LazyPath(path, i, True), errs)
        return
    if isinstance(value, dict):
        if "max_properties" in props and len(value) > props["max_properties"]:
            errs.append(too_many(path, len(value), props["max_properties"]))
        if isinstance(spec.type, mi.DictType):
            item = unwrap(spec.type.value_type)
            for k, v in value.items():
                _validate_value(v, item, LazyPath(path, k), errs)


# ---------------------------------------------------------------------------------------------
# Go JSON round trip


def _is_zero(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, bool):
        return value is False
    if isinstance(value, int | float) and not isinstance(value, enum.Enum):
        return value == 0
    if isinstance(value, str):
        return value == ""
    if isinstance(value, list | dict):
        return len(value) == 0
    return False


def _go_zero(spec: TypeSpec) -> Any:
    t = spec.type
    if spec.nullable:  # a Go pointer, slice or map: nil
        return None
    if isinstance(t, mi.IntType):
        return 0
    if isinstance(t, mi.FloatType):
        return 0.0
    if isinstance(t, mi.BoolType):
        return False
    if isinstance(t, mi.StrType):
        return ""
    return UNSET


def go_roundtrip(obj: Any) -> None:
    """Re-encode as Go's `encoding/json` would after decoding: drop omitempty zeros, write the rest.

    Raw JSON fields (`preserve_unknown`) are left alone.
    """
    if isinstance(obj, msgspec.Struct):
        for f in struct_fields(type(obj)):
            value = getattr(obj, f.name)
            kind = f.spec.props.get("go", "omitempty")
            if f.spec.props.get("preserve_unknown"):
                continue
            if kind == "absent":
                value = UNSET
            elif kind == "omitempty":
                if value is not UNSET and _is_zero(value):
                    value = UNSET
            elif kind == "ptr":
                if value is None:
                    value = UNSET
            elif kind == "value":
                if value is UNSET or value is None:
                    t = f.spec.type
                    value = t.cls() if isinstance(t, mi.StructType) else UNSET
            elif value is UNSET:  # always
                value = _go_zero(f.spec)
            setattr(obj, f.name, value)
            if type(value) not in _LEAVES:
                go_roundtrip(value)
    elif isinstance(obj, list):
        for v in obj:
            go_roundtrip(v)
    elif isinstance(obj, dict):
        for v in obj.values():
            go_roundtrip(v)
