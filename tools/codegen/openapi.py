"""Structural OpenAPI v3 schemas (as CRDs need them) from the msgspec types of `agones.apis`.

`SchemaBuilder(rules, gates).struct(cls)` walks a Struct's fields with their `crd(...)` metadata
(`agones.apis.meta.schema.struct_fields`) and returns a plain-dict schema with every node typed,
no `$ref`, int-or-string as `x-kubernetes-int-or-string`, raw JSON as
`x-kubernetes-preserve-unknown-fields`, `nullable` where the type admits `None`, and the CRD props
(`default`, `minimum`, `pattern`, `maxItems`, `x-kubernetes-list-type`, `maxProperties`, `required`).

What the types cannot say is in `Rules`, keyed by class and JSON field name so that the types stay
the only source of fields:
* `external`: fields (or whole classes) whose schema is a Kubernetes definition from
  `data/k8s-schemas.json` (the Pod template, ObjectMeta), inlined;
* `nested`: how a struct is cut down where it appears under a given field (a CRD cannot recurse:
  a Schedule's inner policy may be neither Schedule nor Chain);
* `gated_fields` / `gated_enum_values`: parts that exist only while a feature gate is on.
A struct met a third time on one path is an error: it needs a `nested` rule.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec
import msgspec.inspect as mi

from agones.apis.meta.schema import TypeSpec, struct_fields, unwrap
from agones.featuregates import Feature, FeatureGates

Schema = dict[str, Any]


@dataclass(frozen=True)
class Cut:
    """A struct as it appears under one field: some fields dropped, some enum values excluded."""

    drop: frozenset[str] = frozenset()
    exclude_enum: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Rules:
    external: Mapping[tuple[str, str], str] = field(default_factory=dict)
    external_classes: Mapping[str, str] = field(default_factory=dict)
    nested: Mapping[tuple[str, str], Cut] = field(default_factory=dict)
    gated_fields: Mapping[tuple[str, str], Feature] = field(default_factory=dict)
    gated_enum_values: Mapping[tuple[str, str], Feature] = field(default_factory=dict)


def _class_names(cls: type) -> set[str]:
    """The class and its bases: a rule on a base class applies to subclasses."""
    return {c.__name__ for c in cls.__mro__}


class SchemaBuilder:
    def __init__(
        self, rules: Rules, gates: FeatureGates, definitions: Mapping[str, Any] | None = None
    ) -> None:
        self.rules = rules
        self.gates = gates
        self.definitions = definitions or {}

    # -- Kubernetes definitions from the data file --------------------------------------------

    def definition(self, name: str, stack: tuple[str, ...] = ()) -> Schema:
        if name in stack:
            raise RecursionError(f"definition {name} is recursive: {' -> '.join(stack)}")
        d = self.definitions[name]
        props = {k: self._data_type(v, (*stack, name)) for k, v in d["properties"].items()}
        out: Schema = {"type": "object", "properties": props}
        if d.get("required"):
            out["required"] = list(d["required"])
        return out

    def _data_type(self, t: Mapping[str, Any], stack: tuple[str, ...]) -> Schema:
        if "ref" in t:
            out = self.definition(t["ref"], stack)
        elif t.get("intOrString") or t.get("quantity"):
            out = _int_or_string()
            if t.get("quantity"):
                out["pattern"] = QUANTITY_PATTERN
        elif t.get("type") == "array":
            out = {"type": "array", "items": self._data_type(t["items"], stack)}
        elif t.get("type") == "object":
            out = {"type": "object"}
            if "additionalProperties" in t:
                out["additionalProperties"] = self._data_type(t["additionalProperties"], stack)
            if t.get("preserveUnknown"):
                out["x-kubernetes-preserve-unknown-fields"] = True
        else:
            out = {"type": t["type"]}
            if "format" in t:
                out["format"] = t["format"]
        if t.get("nullable"):
            out["nullable"] = True
        return out

    # -- msgspec types --------------------------------------------------------------------------

    def struct(
        self, cls: type[msgspec.Struct], cut: Cut = Cut(), stack: tuple[type, ...] = ()
    ) -> Schema:
        if stack.count(cls) >= 2:
            path = " -> ".join(c.__name__ for c in (*stack, cls))
            raise RecursionError(f"{path}: add a `nested` rule to cut the recursion")
        stack = (*stack, cls)
        names = _class_names(cls)
        props: Schema = {}
        required: list[str] = []
        for f in struct_fields(cls):
            if f.json_name in cut.drop or self._gated_off(names, f.json_name):
                continue
            external = self._external(names, f.json_name)
            if external is not None:
                sub = self.definition(external)
                if f.spec.nullable:
                    sub["nullable"] = True
            else:
                child_cut = self._nested(names, f.json_name)
                sub = self.schema_for(f.spec, child_cut, stack)
                if cut.exclude_enum and "enum" in sub:
                    sub["enum"] = [v for v in sub["enum"] if v not in cut.exclude_enum]
            props[f.json_name] = sub
            if f.spec.props.get("required"):
                required.append(f.json_name)
        out: Schema = {"type": "object", "properties": props}
        if required:
            out["required"] = required
        return out

    def schema_for(self, spec: TypeSpec, cut: Cut = Cut(), stack: tuple[type, ...] = ()) -> Schema:
        t, props = spec.type, spec.props
        out: Schema
        if props.get("int_or_string"):
            out = _int_or_string()
        elif isinstance(t, mi.StructType):
            ext = self._external_class(t.cls)
            out = self.definition(ext) if ext is not None else self.struct(t.cls, cut, stack)
        elif isinstance(t, mi.ListType):
            out = {"type": "array", "items": self.schema_for(unwrap(t.item_type), cut, stack)}
        elif isinstance(t, mi.DictType):
            value = unwrap(t.value_type)
            out = {"type": "object"}
            if isinstance(value.type, mi.AnyType):
                out["x-kubernetes-preserve-unknown-fields"] = True
            else:
                out["additionalProperties"] = self.schema_for(value, cut, stack)
        elif isinstance(t, mi.AnyType):
            out = {"x-kubernetes-preserve-unknown-fields": True}
        elif isinstance(t, mi.IntType):
            out = {"type": "integer"}
        elif isinstance(t, mi.FloatType):
            out = {"type": "number"}
        elif isinstance(t, mi.BoolType):
            out = {"type": "boolean"}
        elif isinstance(t, mi.StrType):
            out = {"type": "string"}
        elif isinstance(t, mi.EnumType):
            out = {"type": "string", "enum": self._enum_values(t.cls)}
        elif isinstance(t, mi.LiteralType):
            out = {"type": "string", "enum": [str(v) for v in t.values]}
        elif isinstance(t, mi.UnionType) and _is_int_or_str(t):
            out = _int_or_string()
        else:
            raise TypeError(f"no CRD schema for {t!r}")
        if props.get("preserve_unknown") and out.get("type") == "object":
            out["x-kubernetes-preserve-unknown-fields"] = True
        if spec.nullable:
            out["nullable"] = True
        _add_props(out, props)
        return out

    # -- rules ----------------------------------------------------------------------------------

    def _gated_off(self, names: set[str], json_name: str) -> bool:
        for name in names:
            gate = self.rules.gated_fields.get((name, json_name))
            if gate is not None and not self.gates.enabled(gate):
                return True
        return False

    def _external(self, names: set[str], json_name: str) -> str | None:
        for name in sorted(names):
            ext = self.rules.external.get((name, json_name))
            if ext is not None:
                return ext
        return None

    def _external_class(self, cls: type) -> str | None:
        return self.rules.external_classes.get(cls.__name__)

    def _nested(self, names: set[str], json_name: str) -> Cut:
        for name in sorted(names):
            cut = self.rules.nested.get((name, json_name))
            if cut is not None:
                return cut
        return Cut()

    def _enum_values(self, cls: type[enum.Enum]) -> list[str]:
        values = []
        for member in cls:
            gate = self.rules.gated_enum_values.get((cls.__name__, str(member.value)))
            if gate is None or self.gates.enabled(gate):
                values.append(str(member.value))
        return values


# The pattern Kubernetes' OpenAPI puts on `resource.Quantity`.
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)

_PROP_KEYS = (
    ("format", "format"),
    ("minimum", "minimum"),
    ("maximum", "maximum"),
    ("min_length", "minLength"),
    ("max_length", "maxLength"),
    ("pattern", "pattern"),
    ("min_items", "minItems"),
    ("max_items", "maxItems"),
    ("list_type", "x-kubernetes-list-type"),
    ("max_properties", "maxProperties"),
    ("default", "default"),
    ("description", "description"),
)


def _add_props(out: Schema, props: Mapping[str, Any]) -> None:
    for key, name in _PROP_KEYS:
        if key in props:
            out[name] = props[key]
    if props.get("nullable"):
        out["nullable"] = True


def _int_or_string() -> Schema:
    return {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}


def _is_int_or_str(t: mi.UnionType) -> bool:
    kinds = {type(m) for m in t.types}
    return kinds == {mi.IntType, mi.StrType}
