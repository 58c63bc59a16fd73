"""`autoscaling.agones.dev/v1`: FleetAutoscaler and the autoscaler webhook's review wire format.

Importing this package registers FleetAutoscaler on `SCHEME` with its defaults and validation.
"""

from __future__ import annotations

from ....featuregates import FeatureGates
from ...field import FieldError
from ...scheme import SCHEME, Kind
from .fleetautoscaler import (
    API_VERSION,
    GROUP,
    KIND,
    VERSION,
    ActivePeriod,
    Between,
    BufferPolicy,
    ChainEntry,
    ChainEntryPolicyType,
    CounterPolicy,
    FixedIntervalSync,
    FleetAutoscaler,
    FleetAutoscalerList,
    FleetAutoscalerPolicy,
    FleetAutoscalerPolicyType,
    FleetAutoscalerSpec,
    FleetAutoscalerStatus,
    FleetAutoscalerSync,
    FleetAutoscalerSyncType,
    ListPolicy,
    PolicyFields,
    ScheduledPolicy,
    ScheduledPolicyType,
    SchedulePolicy,
    ServiceReference,
    URLConfiguration,
    WasmFrom,
    WasmPolicy,
    apply_defaults,
)
from .review import FleetAutoscaleRequest, FleetAutoscaleResponse, FleetAutoscaleReview
from .validation import validate


def _validate(fas: FleetAutoscaler, gates: FeatureGates) -> list[FieldError]:
    return validate(fas, gates)


SCHEME.register(
    Kind(
        group=GROUP,
        version=VERSION,
        kind=KIND,
        plural="fleetautoscalers",
        type=FleetAutoscaler,
        validate=_validate,
        apply_defaults=apply_defaults,
        short_names=("fas",),
    )
)

__all__ = [
    "API_VERSION",
    "GROUP",
    "KIND",
    "VERSION",
    "ActivePeriod",
    "Between",
    "BufferPolicy",
    "ChainEntry",
    "ChainEntryPolicyType",
    "CounterPolicy",
    "FixedIntervalSync",
    "FleetAutoscaleRequest",
    "FleetAutoscaleResponse",
    "FleetAutoscaleReview",
    "FleetAutoscaler",
    "FleetAutoscalerList",
    "FleetAutoscalerPolicy",
    "FleetAutoscalerPolicyType",
    "FleetAutoscalerSpec",
    "FleetAutoscalerStatus",
    "FleetAutoscalerSync",
    "FleetAutoscalerSyncType",
    "ListPolicy",
    "PolicyFields",
    "SchedulePolicy",
    "ScheduledPolicy",
    "ScheduledPolicyType",
    "ServiceReference",
    "URLConfiguration",
    "WasmFrom",
    "WasmPolicy",
    "apply_defaults",
    "validate",
]
