"""FleetAutoscaler (`autoscaling.agones.dev/v1`) types and defaults (Go `fleetautoscaler.go`).

Types are presence-preserving msgspec Structs: a field absent on the wire stays `UNSET`, so a
decode → encode round trip loses nothing. Each field carries what the CRD schema says about it
(`crd(...)`) and how Go's `encoding/json` writes it (`go=`), which `apply_defaults` uses to
reproduce what Agones' mutating webhook returns:

* the webhook decodes the object into Go structs and re-encodes it, so non-`omitempty` fields the
  user left out appear with Go zero values (`key: ""`, `minReplicas: 0`) and empty `omitempty`
  ones vanish;
* `sync` defaults to `{type: FixedInterval, fixedInterval: {seconds: 30}}`, and `seconds: 0` is
  replaced by 30;
* `schedule.between.start` / `end` are re-serialised as RFC 3339 in UTC;
* then the apiserver applies the CRD defaults (`wasm.function: scale`).

An object Go cannot decode (a `between` time that does not parse, a `caBundle` that is not base64,
an int32 overflow) is left untouched, as the webhook leaves it; `validate` then reports the schema
errors, or else the decode error.
`status` is not touched: the status subresource resets it on create.
"""

from __future__ import annotations

import base64
import binascii
import builtins
import enum
from typing import Annotated, Any

from msgspec import UNSET, Struct, UnsetType, field

from ....featuregates import FeatureGates
from ...meta import schema
from ...meta.gotime import TimeParseError, normalize_rfc3339
from ...meta.intstr import IntOrStr
from ...meta.objectmeta import ObjectMeta, Time
from ...meta.schema import crd

GROUP = "autoscaling.agones.dev"
VERSION = "v1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "FleetAutoscaler"

DEFAULT_INTERVAL_SYNC_SECONDS = 30
DEFAULT_WASM_FUNCTION = "scale"

FLEET_NAME_PATTERN = r"^[a-z0-9]([-\.a-z0-9]*[a-z0-9])?$"
WASM_HASH_PATTERN = r"^[a-fA-F0-9]{64}$"


class FleetAutoscalerPolicyType(enum.StrEnum):
    """Policy types, in the order of the CRD's enum (Schedule and Chain: gate ScheduledAutoscaler)."""

    BUFFER = "Buffer"
    WEBHOOK = "Webhook"
    COUNTER = "Counter"
    LIST = "List"
    WASM = "Wasm"
    SCHEDULE = "Schedule"
    CHAIN = "Chain"


class ScheduledPolicyType(enum.StrEnum):
    """The types a Schedule may apply (the CRD nests no Schedule or Chain inside a Schedule)."""

    BUFFER = "Buffer"
    WEBHOOK = "Webhook"
    COUNTER = "Counter"
    LIST = "List"
    WASM = "Wasm"


class ChainEntryPolicyType(enum.StrEnum):
    """The types a Chain entry may have (the CRD nests no Chain inside a Chain)."""

    BUFFER = "Buffer"
    WEBHOOK = "Webhook"
    COUNTER = "Counter"
    LIST = "List"
    WASM = "Wasm"
    SCHEDULE = "Schedule"


class FleetAutoscalerSyncType(enum.StrEnum):
    FIXED_INTERVAL = "FixedInterval"


class ServiceReference(Struct, rename="camel", omit_defaults=True):
    """Go `admissionregistration/v1.ServiceReference`: an in-cluster service to call."""

    namespace: Annotated[str, crd(required=True, go="always")] | UnsetType = UNSET
    name: Annotated[str, crd(required=True, go="always")] | UnsetType = UNSET
    path: Annotated[str, crd(go="ptr")] | UnsetType = UNSET
    port: Annotated[int, crd(go="ptr")] | UnsetType = UNSET


class URLConfiguration(Struct, rename="camel", omit_defaults=True):
    """Go `URLConfiguration` (= `admissionregistration/v1.WebhookClientConfig`): `url` or `service`.

    `caBundle` stays base64 text as on the wire (the CRD's `format: byte`).
    """

    url: Annotated[str, crd(go="ptr")] | UnsetType = UNSET
    service: Annotated[ServiceReference, crd(go="ptr")] | UnsetType = UNSET
    ca_bundle: Annotated[str, crd(format="byte")] | UnsetType = UNSET


class BufferPolicy(Struct, rename="camel", omit_defaults=True):
    """Keep `bufferSize` (count or percentage) GameServers Ready, within [minReplicas, maxReplicas]."""

    max_replicas: Annotated[int, crd(required=True, minimum=1, go="always")] | UnsetType = UNSET
    min_replicas: Annotated[int, crd(minimum=0, go="always")] | UnsetType = UNSET
    buffer_size: Annotated[IntOrStr, crd(go="always")] | UnsetType = UNSET


class CounterPolicy(Struct, rename="camel", omit_defaults=True):
    """Keep `bufferSize` of a Counter's capacity available across the Fleet (gate CountsAndLists)."""

    key: Annotated[str, crd(required=True, go="always")] | UnsetType = UNSET
    max_capacity: Annotated[int, crd(required=True, minimum=1, go="always")] | UnsetType = UNSET
    min_capacity: Annotated[int, crd(minimum=0, go="always")] | UnsetType = UNSET
    buffer_size: Annotated[IntOrStr, crd(required=True, go="always")] | UnsetType = UNSET


class ListPolicy(Struct, rename="camel", omit_defaults=True):
    """Keep `bufferSize` of a List's capacity available across the Fleet (gate CountsAndLists)."""

    key: Annotated[str, crd(required=True, go="always")] | UnsetType = UNSET
    max_capacity: Annotated[int, crd(required=True, minimum=1, go="always")] | UnsetType = UNSET
    min_capacity: Annotated[int, crd(minimum=0, go="always")] | UnsetType = UNSET
    buffer_size: Annotated[IntOrStr, crd(required=True, go="always")] | UnsetType = UNSET


class Between(Struct, rename="camel", omit_defaults=True):
    """When a Schedule policy is eligible: RFC 3339 `start` and `end` (each optional)."""

    # RFC 3339 times that Agones' CRD types as plain strings (no `format: date-time`): a bad one
    # is the webhook's to refuse.
    start: Annotated[str, crd(go="ptr")] | UnsetType | None = UNSET
    end: Annotated[str, crd(go="ptr")] | UnsetType | None = UNSET


class ActivePeriod(Struct, rename="camel", omit_defaults=True):
    """When, inside `between`, a Schedule policy applies: a cron start, a Go duration, a zone."""

    timezone: Annotated[str, crd(go="always")] | UnsetType = UNSET
    start_cron: Annotated[str, crd(go="always")] | UnsetType = UNSET
    duration: Annotated[str, crd(go="always")] | UnsetType = UNSET


class WasmFrom(Struct, rename="camel", omit_defaults=True):
    url: Annotated[URLConfiguration, crd(required=True, go="always")] | UnsetType | None = UNSET


class WasmPolicy(Struct, rename="camel", omit_defaults=True):
    """Run a WebAssembly module's `function` to compute the replicas (gate WasmAutoscaler)."""

    function: Annotated[str, crd(default=DEFAULT_WASM_FUNCTION)] | UnsetType = UNSET
    config: dict[str, str] | UnsetType = UNSET
    from_: Annotated[WasmFrom, crd(required=True, go="value")] | UnsetType = field(
        default=UNSET, name="from"
    )
    hash: Annotated[str, crd(pattern=WASM_HASH_PATTERN)] | UnsetType = UNSET


class PolicyFields(Struct, rename="camel", omit_defaults=True):
    """What every policy level has: `type` plus the matching sub-object (Go `FleetAutoscalerPolicy`).

    Go uses one recursive type; the CRD nests it three times, each level with fewer choices, so
    here each level is its own type: `FleetAutoscalerPolicy` (top), `ChainEntry` (no Chain) and
    `ScheduledPolicy` (no Schedule, no Chain). Their schema is finite, as a CRD's must be. Each
    level narrows `type` to its own enum.
    """

    type: Annotated[str, crd(required=True, go="always")] | UnsetType = UNSET
    buffer: Annotated[BufferPolicy, crd(go="ptr")] | UnsetType | None = UNSET
    webhook: Annotated[URLConfiguration, crd(go="ptr")] | UnsetType | None = UNSET
    counter: Annotated[CounterPolicy, crd(go="ptr")] | UnsetType | None = UNSET
    list: Annotated[ListPolicy, crd(go="ptr")] | UnsetType | None = UNSET
    wasm: Annotated[WasmPolicy, crd(go="ptr")] | UnsetType | None = UNSET

    @property
    def schedule_policy(self) -> SchedulePolicy | None:
        """The Schedule sub-object, on the levels that can have one."""
        return None

    @property
    def chain_policy(self) -> builtins.list[ChainEntry] | None:
        """The Chain entries, on the level that can have them."""
        return None


class ScheduledPolicy(PolicyFields, rename="camel", omit_defaults=True):
    """The policy a Schedule applies while active."""

    type: Annotated[ScheduledPolicyType, crd(required=True, go="always")] | UnsetType = UNSET


class SchedulePolicy(Struct, rename="camel", omit_defaults=True):
    """Apply `policy` only between `between.start` and `end`, during `activePeriod`."""

    between: Annotated[Between, crd(go="value")] | UnsetType | None = UNSET
    active_period: Annotated[ActivePeriod, crd(go="value")] | UnsetType | None = UNSET
    policy: Annotated[ScheduledPolicy, crd(required=True, go="value")] | UnsetType = UNSET


class ChainEntry(PolicyFields, rename="camel", omit_defaults=True):
    """One entry of a Chain policy: an `id` plus an inline policy (first applicable one wins)."""

    type: Annotated[ChainEntryPolicyType, crd(required=True, go="always")] | UnsetType = UNSET
    schedule: Annotated[SchedulePolicy, crd(go="ptr")] | UnsetType | None = UNSET
    id: Annotated[str, crd(go="always")] | UnsetType = UNSET

    @property
    def schedule_policy(self) -> SchedulePolicy | None:
        return self.schedule if isinstance(self.schedule, SchedulePolicy) else None


class FleetAutoscalerPolicy(PolicyFields, rename="camel", omit_defaults=True):
    """Which policy scales the Fleet: `type` plus the one matching sub-object."""

    type: Annotated[FleetAutoscalerPolicyType, crd(required=True, go="always")] | UnsetType = UNSET
    schedule: Annotated[SchedulePolicy, crd(go="ptr")] | UnsetType | None = UNSET
    chain: Annotated[builtins.list[ChainEntry], crd(go="omitempty")] | UnsetType | None = UNSET

    @property
    def schedule_policy(self) -> SchedulePolicy | None:
        return self.schedule if isinstance(self.schedule, SchedulePolicy) else None

    @property
    def chain_policy(self) -> builtins.list[ChainEntry] | None:
        return self.chain if isinstance(self.chain, builtins.list) else None


class FixedIntervalSync(Struct, rename="camel", omit_defaults=True):
    # Minimum 0 as in Agones' CRD: the webhook replaces 0 by the 30 s default.
    seconds: Annotated[int, crd(required=True, minimum=0, go="always")] | UnsetType = UNSET


class FleetAutoscalerSync(Struct, rename="camel", omit_defaults=True):
    """How often the autoscaler runs."""

    type: Annotated[FleetAutoscalerSyncType, crd(required=True, go="always")] | UnsetType = UNSET
    fixed_interval: Annotated[FixedIntervalSync, crd(go="value")] | UnsetType | None = UNSET


class FleetAutoscalerSpec(Struct, rename="camel", omit_defaults=True):
    fleet_name: (
        Annotated[
            str,
            crd(
                required=True, min_length=1, max_length=63, pattern=FLEET_NAME_PATTERN, go="always"
            ),
        ]
        | UnsetType
    ) = UNSET
    policy: Annotated[FleetAutoscalerPolicy, crd(required=True, go="value")] | UnsetType = UNSET
    sync: Annotated[FleetAutoscalerSync, crd(go="ptr")] | UnsetType | None = UNSET


class FleetAutoscalerStatus(Struct, rename="camel", omit_defaults=True):
    """What the autoscaler last saw and did."""

    current_replicas: Annotated[int, crd(go="always")] | UnsetType = UNSET
    desired_replicas: Annotated[int, crd(go="always")] | UnsetType = UNSET
    last_scale_time: Annotated[Time, crd(go="always")] | UnsetType | None = UNSET
    able_to_scale: Annotated[bool, crd(go="always")] | UnsetType = UNSET
    scaling_limited: Annotated[bool, crd(go="always")] | UnsetType = UNSET
    # The policy type last applied, or `Chain:<id>:<type>` for a chain entry.
    last_applied_policy: Annotated[str, crd(default="", go="always")] | UnsetType = UNSET


class FleetAutoscaler(Struct, rename="camel", omit_defaults=True):
    api_version: str | UnsetType = UNSET
    kind: str | UnsetType = UNSET
    metadata: ObjectMeta | UnsetType = UNSET
    spec: Annotated[FleetAutoscalerSpec, crd()] | UnsetType = UNSET
    status: FleetAutoscalerStatus | UnsetType = UNSET


class FleetAutoscalerList(Struct, rename="camel", omit_defaults=True):
    api_version: str | UnsetType = UNSET
    kind: str | UnsetType = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET
    items: list[FleetAutoscaler] | UnsetType = UNSET


# ------------------------------------------------------------------------------------------------
# Go decoding: what makes Agones' webhook fail to unmarshal the object.


def _policy_go_errors(policy: PolicyFields | UnsetType | None) -> str | None:
    if not isinstance(policy, PolicyFields):
        return None
    for sub in (policy.buffer,):
        if isinstance(sub, BufferPolicy):
            for value, name in (
                (sub.max_replicas, "maxReplicas"),
                (sub.min_replicas, "minReplicas"),
            ):
                if isinstance(value, int) and not -(2**31) <= value < 2**31:
                    return _int32_error(value, "BufferPolicy", f"buffer.{name}")
    for conf in (policy.webhook, _wasm_url(policy.wasm)):
        if isinstance(conf, URLConfiguration) and isinstance(conf.ca_bundle, str):
            try:
                base64.b64decode(conf.ca_bundle, validate=True)
            except (binascii.Error, ValueError):
                return "illegal base64 data in caBundle"
    schedule = policy.schedule_policy
    if schedule is not None:
        between = schedule.between
        if isinstance(between, Between):
            for when in (between.start, between.end):
                if isinstance(when, str):
                    try:
                        normalize_rfc3339(when)
                    except TimeParseError as err:
                        return str(err)
        nested = _policy_go_errors(schedule.policy)
        if nested:
            return nested
    for entry in policy.chain_policy or []:
        nested = _policy_go_errors(entry)
        if nested:
            return nested
    return None


def _wasm_url(wasm: WasmPolicy | UnsetType | None) -> URLConfiguration | None:
    if isinstance(wasm, WasmPolicy) and isinstance(wasm.from_, WasmFrom):
        url = wasm.from_.url
        return url if isinstance(url, URLConfiguration) else None
    return None


def _int32_error(value: int, struct: str, path: str) -> str:
    return (
        f"json: cannot unmarshal number {value} into Go struct field {struct}.spec.policy.{path} "
        "of type int32"
    )


def go_decode_error(fas: FleetAutoscaler) -> str | None:
    """The error Go's JSON decoding of this object would give Agones' webhook, or None."""
    spec = fas.spec
    if not isinstance(spec, FleetAutoscalerSpec):
        return None
    sync = spec.sync
    if isinstance(sync, FleetAutoscalerSync) and isinstance(sync.fixed_interval, FixedIntervalSync):
        seconds = sync.fixed_interval.seconds
        if isinstance(seconds, int) and not -(2**31) <= seconds < 2**31:
            return (
                f"json: cannot unmarshal number {seconds} into Go struct field "
                "FixedIntervalSync.spec.sync.fixedInterval.seconds of type int32"
            )
    return _policy_go_errors(spec.policy)


# ------------------------------------------------------------------------------------------------
# Defaults


def _normalize_between(policy: PolicyFields | UnsetType | None) -> None:
    if not isinstance(policy, PolicyFields):
        return
    schedule = policy.schedule_policy
    if schedule is not None:
        between = schedule.between
        if isinstance(between, Between):
            if isinstance(between.start, str):
                between.start = normalize_rfc3339(between.start)
            elif between.start is None:
                between.start = UNSET  # Go writes null for a zero time; the apiserver prunes it
            if isinstance(between.end, str):
                between.end = normalize_rfc3339(between.end)
            elif between.end is None:
                between.end = UNSET
        _normalize_between(schedule.policy)
    for entry in policy.chain_policy or []:
        _normalize_between(entry)


def _go_zero_types(policy: PolicyFields | UnsetType | None) -> None:
    """Go writes an unset policy `type` as `""` (no omitempty); the CRD enum then refuses it."""
    if not isinstance(policy, PolicyFields):
        return
    if policy.type is UNSET:
        policy.type = ""
    schedule = policy.schedule_policy
    if schedule is not None:
        _go_zero_types(schedule.policy)
    for entry in policy.chain_policy or []:
        _go_zero_types(entry)


def apply_defaults(fas: FleetAutoscaler, gates: FeatureGates) -> None:
    """What Agones' mutating webhook and the CRD defaults do to a new FleetAutoscaler, in place."""
    del gates  # no gate changes a FleetAutoscaler default
    if go_decode_error(fas) is None:
        if fas.spec is UNSET:
            fas.spec = FleetAutoscalerSpec()
        spec = fas.spec
        assert isinstance(spec, FleetAutoscalerSpec)
        schema.go_roundtrip(spec)
        if not isinstance(spec.sync, FleetAutoscalerSync):
            spec.sync = FleetAutoscalerSync()
        sync = spec.sync
        if sync.type is UNSET:
            sync.type = FleetAutoscalerSyncType.FIXED_INTERVAL
        if not isinstance(sync.fixed_interval, FixedIntervalSync):
            sync.fixed_interval = FixedIntervalSync()
        if sync.fixed_interval.seconds in (UNSET, 0):
            sync.fixed_interval.seconds = DEFAULT_INTERVAL_SYNC_SECONDS
        _normalize_between(spec.policy)
        _go_zero_types(spec.policy)
    schema.apply_schema_defaults(fas.spec)
