"""Build GameServerAllocations from JSON-like dicts and run the allocation endpoint's steps."""

from __future__ import annotations

import copy
from typing import Any

import msgspec

from agones.apis.allocation.v1 import GameServerAllocation, apply_defaults, validate
from agones.apis.field import FieldError
from agones.apis.meta import schema
from agones.featuregates import DEFAULT_GATES, FeatureGates


def gsa(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "allocation.agones.dev/v1",
        "kind": "GameServerAllocation",
        "spec": copy.deepcopy(spec),
    }


def decode(raw: dict[str, Any]) -> GameServerAllocation:
    cleaned, errs = schema.check_types(raw, GameServerAllocation)
    assert not errs, errs
    return msgspec.convert(cleaned, GameServerAllocation)


def defaulted(raw: dict[str, Any], gates: FeatureGates = DEFAULT_GATES) -> GameServerAllocation:
    obj = decode(raw)
    apply_defaults(obj, gates)
    return obj


def admit(raw: dict[str, Any], gates: FeatureGates = DEFAULT_GATES) -> list[FieldError]:
    return validate(defaulted(raw, gates), gates)


def causes(errs: list[FieldError]) -> list[tuple[str, str, str]]:
    return [(e.field, e.reason, e.body()) for e in errs]
