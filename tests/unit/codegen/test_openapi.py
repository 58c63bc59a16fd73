"""SchemaBuilder rules on small synthetic types: recursion cuts, gated fields and enum values,
external definitions, int-or-string and nullability."""

from __future__ import annotations

import enum
from typing import Annotated, Any

import msgspec
import pytest
from msgspec import UNSET, Struct, UnsetType

from agones.apis.meta.intstr import IntOrStr
from agones.apis.meta.schema import crd
from agones.featuregates import Feature, FeatureGates
from agones.localcluster.apiserver.crdschema import structural_errors
from tools.codegen.openapi import Cut, Rules, SchemaBuilder


class PolicyType(enum.StrEnum):
    PLAIN = "Plain"
    NESTED = "Nested"


class Policy(Struct, rename="camel", omit_defaults=True):
    type: Annotated[PolicyType, crd(required=True)] | UnsetType = UNSET
    size: IntOrStr | UnsetType = UNSET
    nested: Annotated[Wrapper, crd()] | UnsetType | None = UNSET


class Wrapper(Struct, rename="camel", omit_defaults=True):
    policy: Policy | UnsetType = UNSET
    raw: dict[str, Any] | UnsetType = UNSET


class Root(Struct, rename="camel", omit_defaults=True):
    policy: Policy | UnsetType = UNSET


CUT = Cut(drop=frozenset({"nested"}), exclude_enum=frozenset({"Nested"}))


def builder(rules: Rules, gates: FeatureGates | None = None) -> SchemaBuilder:
    definitions = {
        "Ext": {
            "properties": {"x": {"intOrString": True}, "q": {"quantity": True}},
            "required": ["x"],
        }
    }
    return SchemaBuilder(rules, gates or FeatureGates(), definitions)


def test_recursion_without_a_rule_is_an_error() -> None:
    with pytest.raises(RecursionError, match="nested"):
        builder(Rules()).struct(Root)


def test_nested_rule_cuts_the_recursion() -> None:
    schema = builder(Rules(nested={("Wrapper", "policy"): CUT})).struct(Root)
    outer = schema["properties"]["policy"]
    inner = outer["properties"]["nested"]["properties"]["policy"]
    assert outer["properties"]["type"]["enum"] == ["Plain", "Nested"]
    assert inner["properties"]["type"]["enum"] == ["Plain"]
    assert "nested" not in inner["properties"]
    assert outer["required"] == ["type"]
    assert outer["properties"]["nested"]["nullable"] is True
    assert outer["properties"]["size"] == {
        "x-kubernetes-int-or-string": True,
        "anyOf": [{"type": "integer"}, {"type": "string"}],
    }
    assert outer["properties"]["nested"]["properties"]["raw"] == {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
    }
    assert schema["type"] == "object"
    assert structural_errors(schema, "openAPIV3Schema") == []


@pytest.mark.parametrize(
    ("enabled", "has_nested"), [(True, True), (False, False)], ids=["gate-on", "gate-off"]
)
def test_gated_fields_and_enum_values(enabled: bool, has_nested: bool) -> None:
    rules = Rules(
        nested={("Wrapper", "policy"): CUT},
        gated_fields={("Policy", "nested"): Feature.SCHEDULED_AUTOSCALER},
        gated_enum_values={("PolicyType", "Nested"): Feature.SCHEDULED_AUTOSCALER},
    )
    gates = FeatureGates({Feature.SCHEDULED_AUTOSCALER: enabled})
    policy = builder(rules, gates).struct(Root)["properties"]["policy"]
    assert ("nested" in policy["properties"]) is has_nested
    assert ("Nested" in policy["properties"]["type"]["enum"]) is has_nested


def test_external_definitions_are_inlined() -> None:
    rules = Rules(external={("Wrapper", "raw"): "Ext"}, nested={("Wrapper", "policy"): CUT})
    raw = builder(rules).struct(Wrapper)["properties"]["raw"]
    assert raw["required"] == ["x"]
    assert raw["properties"]["x"]["x-kubernetes-int-or-string"] is True
    assert raw["properties"]["q"]["pattern"].startswith("^(\\+|-)?")


def test_unsupported_types_are_refused() -> None:
    class Odd(Struct):
        when: msgspec.Raw | UnsetType = UNSET

    with pytest.raises(TypeError, match="no CRD schema"):
        builder(Rules()).struct(Odd)
