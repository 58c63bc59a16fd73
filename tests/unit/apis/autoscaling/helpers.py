"""Build FleetAutoscalers from JSON-like dicts and run Agones' admission steps on them."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import msgspec

from agones.apis.autoscaling.v1 import FleetAutoscaler, apply_defaults
from agones.apis.autoscaling.v1.validation import validate
from agones.apis.field import FieldError
from agones.apis.meta import schema
from agones.featuregates import DEFAULT_GATES, FeatureGates

NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)


def fas(spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling.agones.dev/v1",
        "kind": "FleetAutoscaler",
        "metadata": {"name": "fas"},
        "spec": copy.deepcopy(spec),
    }


def buffer_spec(**buffer: Any) -> dict[str, Any]:
    policy = {"bufferSize": 5, "minReplicas": 10, "maxReplicas": 20}
    policy.update(buffer)
    return {"fleetName": "fleet", "policy": {"type": "Buffer", "buffer": policy}}


def decode(raw: dict[str, Any]) -> FleetAutoscaler:
    cleaned, errs = schema.check_types(raw, FleetAutoscaler)
    assert not errs, errs
    return msgspec.convert(cleaned, FleetAutoscaler)


def defaulted(raw: dict[str, Any], gates: FeatureGates = DEFAULT_GATES) -> FleetAutoscaler:
    obj = decode(raw)
    apply_defaults(obj, gates)
    return obj


def admit(
    raw: dict[str, Any], gates: FeatureGates = DEFAULT_GATES, now: dt.datetime = NOW
) -> list[FieldError]:
    """Structural checks, then defaults and validation: every error the apiserver would give."""
    _, errs = schema.check_types(raw, FleetAutoscaler)
    if errs:
        return errs
    return validate(defaulted(raw, gates), gates, now)


def causes(errs: list[FieldError]) -> list[tuple[str, str, str]]:
    return [(e.field, e.reason, e.body()) for e in errs]
