"""FleetAutoscaler validation: the CRD schema, then Agones' validating webhook (Go `Validate`).

`validate(fas, gates, now=...)` returns every error the apiserver would report, never raises:

1. the CRD schema checks (required fields, ranges, lengths, patterns, `format: byte`, and the
   policy `type` enum, which narrows at each nesting level, see `fleetautoscaler.PolicyFields`);
   if any fail, the webhook never runs;
2. otherwise a Go decode error (a `between` time Go cannot parse): one `InternalError`, as the
   webhook's 400 answer carries (Agones cannot even read the object);
3. otherwise Agones' rules with its exact texts and quirks: `bufferSize: 0` says "must be greater
   than or equal to 0", a bad `duration` shows the *startCron* as its value, a bad timezone
   message ends in a newline, Chain entries are validated under `chain[i].policy.<type>`, and the
   policy nested in a Schedule is not validated by the webhook at all.

`now` (for "end time must be after the current time") is injectable; it defaults to the clock.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
from collections.abc import Callable
from typing import TypeVar

from cryptography import x509
from msgspec import UNSET, UnsetType

from ....featuregates import Feature, FeatureGates
from ...field import (
    ErrorType,
    FieldError,
    GoValue,
    Path,
    duplicate,
    forbidden,
    go_quote,
    internal,
    invalid,
    not_supported,
    required,
)
from ...meta import schema
from ...meta.goduration import DurationError, parse_duration
from ...meta.gotime import (
    LocationError,
    TimeParseError,
    go_time_gostring,
    go_time_string,
    load_location,
    parse_rfc3339,
)
from ...meta.intstr import IntOrString, Type, get_scaled_value_from_int_or_percent
from ...meta.objectmeta import validate_create_metadata
from ...meta.validation import IS_NEGATIVE_ERROR_MSG
from .cron import CronError, parse_standard
from .fleetautoscaler import (
    Between,
    BufferPolicy,
    ChainEntry,
    ChainEntryPolicyType,
    CounterPolicy,
    FixedIntervalSync,
    FleetAutoscaler,
    FleetAutoscalerPolicy,
    FleetAutoscalerPolicyType,
    FleetAutoscalerSpec,
    FleetAutoscalerSync,
    ListPolicy,
    PolicyFields,
    ScheduledPolicy,
    ScheduledPolicyType,
    SchedulePolicy,
    URLConfiguration,
    WasmFrom,
    WasmPolicy,
    go_decode_error,
)
from .gourl import url_parse_error

PT = FleetAutoscalerPolicyType
T = TypeVar("T")

_PEM_BLOCK = re.compile(rb"-----BEGIN ([^\n-]*)-----\r?\n(.*?)-----END \1-----", re.DOTALL)


def go_bytes(data: bytes) -> str:
    """Go's `%#v` of a `[]byte`: `[]byte{0x6e, 0x6f}`."""
    return "[]byte{" + ", ".join(f"0x{b:x}" for b in data) + "}"


def go_between(between: Between) -> str:
    """Go's `%#v` of an autoscaling `v1.Between` (its times print as `time.Date(...)`)."""
    start = parse_rfc3339(between.start) if isinstance(between.start, str) else None
    end = parse_rfc3339(between.end) if isinstance(between.end, str) else None
    return f"v1.Between{{Start:{go_time_gostring(start)}, End:{go_time_gostring(end)}}}"


def append_certs_from_pem(data: bytes) -> bool:
    """Go's `x509.CertPool.AppendCertsFromPEM`: true if at least one certificate was read."""
    ok = False
    for match in _PEM_BLOCK.finditer(data):
        if match.group(1) != b"CERTIFICATE":
            continue
        body = match.group(2)
        if b":" in body.split(b"\n", 1)[0]:
            continue  # PEM headers: Go skips such blocks
        try:
            der = base64.b64decode(b"".join(body.split()), validate=True)
            x509.load_der_x509_certificate(der)
        except (binascii.Error, ValueError):
            continue
        ok = True
    return ok


# ------------------------------------------------------------------------------------------------
# Agones' webhook rules


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def _intstr(value: object) -> IntOrString:
    if isinstance(value, int | str):
        return IntOrString.parse(value)
    return IntOrString.from_int(0)


def validate_url_configuration(w: URLConfiguration | None, path: Path) -> list[FieldError]:
    """`ValidateURLConfiguration`: exactly one of url/service; a valid PEM caBundle; a parseable url."""
    if not isinstance(w, URLConfiguration):
        return [required(path, "webhook policy config params are missing")]
    errs: list[FieldError] = []
    has_url = isinstance(w.url, str)
    has_service = w.service is not None and w.service is not UNSET
    if not has_url and not has_service:
        errs.append(required(path, "url should be provided"))
    if has_url and has_service:
        errs.append(duplicate(path.child("url"), "service and url cannot be used simultaneously"))
    if isinstance(w.ca_bundle, str):
        try:
            bundle = base64.b64decode(w.ca_bundle, validate=True)
        except (binascii.Error, ValueError):
            bundle = w.ca_bundle.encode()
        if not append_certs_from_pem(bundle):
            errs.append(
                invalid(path.child("caBundle"), GoValue(go_bytes(bundle)), "CA Bundle is not valid")
            )
    if isinstance(w.url, str) and url_parse_error(w.url) is not None:
        errs.append(invalid(path.child("url"), w.url, "url is not valid"))
    return errs


def _validate_int_or_percent_buffer(
    buffer_size: IntOrString,
    max_value: int,
    min_value: int,
    path: Path,
    max_name: str,
    min_name: str,
    percent_min_error: Callable[[], FieldError],
) -> list[FieldError]:
    errs: list[FieldError] = []
    if buffer_size.type is Type.INT:
        size = buffer_size.int_val
        if size <= 0:
            errs.append(invalid(path.child("bufferSize"), size, IS_NEGATIVE_ERROR_MSG))
        if max_value < size:
            errs.append(
                invalid(
                    path.child(max_name),
                    max_value,
                    f"{max_name} should be bigger than or equal to bufferSize",
                )
            )
        if min_value != 0 and min_value < size:
            errs.append(
                invalid(
                    path.child(min_name),
                    min_value,
                    f"{min_name} should be bigger than or equal to bufferSize",
                )
            )
    else:
        try:
            r = get_scaled_value_from_int_or_percent(buffer_size, 100, True)
            bad = r < 1 or r > 99
        except ValueError:
            bad = True
        if bad:
            errs.append(
                invalid(
                    path.child("bufferSize"),
                    str(buffer_size),
                    "bufferSize should be between 1% and 99%",
                )
            )
        if min_value < 1:
            errs.append(percent_min_error())
    return errs


def validate_buffer_policy(b: BufferPolicy | None, path: Path) -> list[FieldError]:
    if not isinstance(b, BufferPolicy):
        return [required(path, "buffer policy config params are missing")]
    errs: list[FieldError] = []
    min_r, max_r = _int(b.min_replicas), _int(b.max_replicas)
    if min_r > max_r:
        errs.append(
            invalid(
                path.child("minReplicas"), min_r, "minReplicas should be smaller than maxReplicas"
            )
        )
    errs += _validate_int_or_percent_buffer(
        _intstr(b.buffer_size),
        max_r,
        min_r,
        path,
        "maxReplicas",
        "minReplicas",
        lambda: invalid(path.child("minReplicas"), min_r, IS_NEGATIVE_ERROR_MSG),
    )
    return errs


def _validate_capacity_policy(
    p: CounterPolicy | ListPolicy | None, path: Path, gates: FeatureGates, what: str
) -> list[FieldError]:
    if not gates.enabled(Feature.COUNTS_AND_LISTS):
        return [forbidden(path, "feature CountsAndLists must be enabled")]
    if not isinstance(p, CounterPolicy | ListPolicy):
        return [required(path, f"{what} policy config params are missing")]
    errs: list[FieldError] = []
    min_c, max_c = _int(p.min_capacity), _int(p.max_capacity)
    if min_c > max_c:
        errs.append(
            invalid(
                path.child("minCapacity"), min_c, "minCapacity should be smaller than maxCapacity"
            )
        )
    size = _intstr(p.buffer_size)
    errs += _validate_int_or_percent_buffer(
        size,
        max_c,
        min_c,
        path,
        "maxCapacity",
        "minCapacity",
        lambda: invalid(
            path.child("minCapacity"),
            str(size),
            " when bufferSize in percentage format is used, minCapacity should be more than 0",
        ),
    )
    return errs


def validate_schedule_policy(
    s: SchedulePolicy | None, path: Path, gates: FeatureGates, now: dt.datetime
) -> list[FieldError]:
    if not isinstance(s, SchedulePolicy):
        return [required(path, "schedule policy config params are missing")]
    if not gates.enabled(Feature.SCHEDULED_AUTOSCALER):
        return [forbidden(path, "feature ScheduledAutoscaler must be enabled")]
    errs: list[FieldError] = []
    period = s.active_period
    timezone = period.timezone if period and isinstance(period.timezone, str) else ""
    start_cron = period.start_cron if period and isinstance(period.start_cron, str) else ""
    duration = period.duration if period and isinstance(period.duration, str) else ""
    period_path = path.child("activePeriod")
    if timezone:
        try:
            load_location(timezone)
        except LocationError as err:
            errs.append(
                invalid(period_path.child("timezone"), timezone, f"Error parsing timezone: {err}\n")
            )
    between = s.between if isinstance(s.between, Between) else Between()
    if isinstance(between.end, str):
        end = parse_rfc3339(between.end)
        end_ok = True
        if end < now:
            errs.append(
                invalid(
                    path.child("between").child("end"),
                    GoValue(go_time_string(end)),
                    "end time must be after the current time",
                )
            )
            end_ok = False
        if isinstance(between.start, str) and end_ok and end < parse_rfc3339(between.start):
            errs.append(
                invalid(
                    path.child("between"),
                    GoValue(go_between(between)),
                    "start time must be before end time",
                )
            )
    if start_cron:
        try:
            parse_standard(start_cron)
        except CronError as err:
            errs.append(
                invalid(period_path.child("startCron"), start_cron, f"invalid startCron: {err}")
            )
        if "TZ" in start_cron:
            errs.append(
                invalid(
                    period_path.child("startCron"),
                    start_cron,
                    "CRON_TZ or TZ used in activePeriod is not supported, please use the .schedule.timezone field to specify a timezone",
                )
            )
    if duration:
        try:
            parse_duration(duration)
        except DurationError as err:
            # Agones reports the startCron as the bad value here.
            errs.append(
                invalid(period_path.child("duration"), start_cron, f"invalid duration: {err}")
            )
    return errs


def validate_chain_policy(
    chain: list[ChainEntry], path: Path, gates: FeatureGates, now: dt.datetime
) -> list[FieldError]:
    if not gates.enabled(Feature.SCHEDULED_AUTOSCALER):
        return [forbidden(path, "feature ScheduledAutoscaler must be enabled")]
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, entry in enumerate(chain):
        entry_id = entry.id if isinstance(entry.id, str) else ""
        if entry_id in seen:
            errs.append(invalid(path, entry_id, "id of chain entry must be unique"))
        else:
            seen.add(entry_id)
        has_policy = any(
            p is not None and p is not UNSET
            for p in (
                entry.buffer,
                entry.webhook,
                entry.counter,
                entry.list,
                entry.schedule,
                entry.wasm,
            )
        )
        if entry.type in (UNSET, "") or not has_policy:
            errs.append(required(path.index(i), "valid policy is missing"))
        errs += validate_policy(entry, path.index(i).child("policy"), gates, now)
    return errs


def validate_wasm_policy(w: WasmPolicy | None, path: Path, gates: FeatureGates) -> list[FieldError]:
    if not isinstance(w, WasmPolicy):
        return [required(path, "wasm policy config params are missing")]
    if not gates.enabled(Feature.WASM_AUTOSCALER):
        return [forbidden(path, "feature WasmAutoscaler must be enabled")]
    from_path = path.child("from")
    url = w.from_.url if not isinstance(w.from_, UnsetType) else None
    if not isinstance(url, URLConfiguration):
        return [required(from_path, "wasm from configuration is missing")]
    return validate_url_configuration(url, from_path.child("url"))


def _or_none(value: T | UnsetType | None) -> T | None:
    return None if isinstance(value, UnsetType) else value


def validate_policy(
    policy: PolicyFields, path: Path, gates: FeatureGates, now: dt.datetime
) -> list[FieldError]:
    """`ValidatePolicy`: dispatch on `type` to the matching sub-object's rules."""
    t = policy.type
    if t == PT.BUFFER:
        return validate_buffer_policy(_or_none(policy.buffer), path.child("buffer"))
    if t == PT.WEBHOOK:
        return validate_url_configuration(_or_none(policy.webhook), path.child("webhook"))
    if t == PT.COUNTER:
        return _validate_capacity_policy(
            _or_none(policy.counter), path.child("counter"), gates, "counter"
        )
    if t == PT.LIST:
        return _validate_capacity_policy(_or_none(policy.list), path.child("list"), gates, "list")
    if t == PT.SCHEDULE:
        return validate_schedule_policy(policy.schedule_policy, path.child("schedule"), gates, now)
    if t == PT.CHAIN:
        return validate_chain_policy(policy.chain_policy or [], path.child("chain"), gates, now)
    if t == PT.WASM:
        return validate_wasm_policy(_or_none(policy.wasm), path.child("wasm"), gates)
    return []


def validate_fixed_interval_sync(sync: FixedIntervalSync | None, path: Path) -> list[FieldError]:
    if not isinstance(sync, FixedIntervalSync):
        return [required(path, "fixedInterval sync config params are missing")]
    seconds = _int(sync.seconds)
    if seconds <= 0:
        return [invalid(path.child("seconds"), seconds, IS_NEGATIVE_ERROR_MSG)]
    return []


def validate_webhook_rules(
    fas: FleetAutoscaler, gates: FeatureGates, now: dt.datetime
) -> list[FieldError]:
    """Agones' `FleetAutoscaler.Validate()`: policy rules, then sync rules."""
    spec = fas.spec if isinstance(fas.spec, FleetAutoscalerSpec) else FleetAutoscalerSpec()
    policy = (
        spec.policy if isinstance(spec.policy, FleetAutoscalerPolicy) else FleetAutoscalerPolicy()
    )
    errs = validate_policy(policy, Path("spec", "policy"), gates, now)
    if isinstance(spec.sync, FleetAutoscalerSync):
        fixed = spec.sync.fixed_interval
        errs += validate_fixed_interval_sync(
            fixed if isinstance(fixed, FixedIntervalSync) else FixedIntervalSync(seconds=0),
            Path("spec", "sync", "fixedInterval"),
        )
    return errs


# ------------------------------------------------------------------------------------------------
# CRD schema


def _check_byte_formats(policy: PolicyFields, path: Path, errs: list[FieldError]) -> None:
    """`format: byte` on every caBundle and the enum on a `type` Go wrote as "", at every level."""
    if policy.type == "":
        levels: dict[type, list[str]] = {
            FleetAutoscalerPolicy: [str(t) for t in FleetAutoscalerPolicyType],
            ChainEntry: [str(t) for t in ChainEntryPolicyType],
            ScheduledPolicy: [str(t) for t in ScheduledPolicyType],
        }
        allowed = levels.get(type(policy), [])
        errs.append(not_supported(path.child("type"), "", allowed))
    if isinstance(policy.webhook, URLConfiguration):
        _check_byte_format(policy.webhook, path.child("webhook"), errs)
    if isinstance(policy.wasm, WasmPolicy) and isinstance(policy.wasm.from_, WasmFrom):
        url = policy.wasm.from_.url
        if isinstance(url, URLConfiguration):
            _check_byte_format(url, path.child("wasm", "from", "url"), errs)
    schedule = policy.schedule_policy
    if schedule is not None and isinstance(schedule.policy, PolicyFields):
        _check_byte_formats(schedule.policy, path.child("schedule", "policy"), errs)
    for i, entry in enumerate(policy.chain_policy or []):
        _check_byte_formats(entry, path.child("chain").index(i), errs)


def _check_byte_format(conf: URLConfiguration, path: Path, errs: list[FieldError]) -> None:
    if isinstance(conf.ca_bundle, str):
        try:
            base64.b64decode(conf.ca_bundle, validate=True)
        except (binascii.Error, ValueError):
            p = path.child("caBundle")
            errs.append(
                invalid(
                    p,
                    conf.ca_bundle,
                    f"{p} in body must be of type byte: {go_quote(conf.ca_bundle)}",
                )
            )


def _first_string_error_per_field(errs: list[FieldError]) -> list[FieldError]:
    """go-openapi stops at the first failing string check (maxLength, minLength, pattern)."""
    out: list[FieldError] = []
    seen: set[str] = set()
    for err in errs:
        is_string_check = err.type is ErrorType.TOO_LONG or any(
            marker in err.detail for marker in ("chars long", "should match")
        )
        if is_string_check:
            if err.field in seen:
                continue
            seen.add(err.field)
        out.append(err)
    return out


def _fix_exclusive_minimum(errs: list[FieldError]) -> list[FieldError]:
    # The CRD says `minimum: 0, exclusiveMinimum: true` for the sync interval.
    out = []
    for err in errs:
        if (
            err.field == "spec.sync.fixedInterval.seconds"
            and "greater than or equal to 1" in err.detail
        ):
            err = invalid(err.field, err.bad_value, f"{err.field} in body should be greater than 0")
        out.append(err)
    return out


def validate_schema(fas: FleetAutoscaler) -> list[FieldError]:
    """The CRD's structural rules on the (defaulted) object, with the apiserver's texts."""
    errs: list[FieldError] = []
    if not isinstance(fas.spec, FleetAutoscalerSpec):
        return [required(Path("spec"))]
    errs += schema.validate_schema(fas.spec, Path("spec"))
    if isinstance(fas.spec.policy, FleetAutoscalerPolicy):
        _check_byte_formats(fas.spec.policy, Path("spec", "policy"), errs)
    return _fix_exclusive_minimum(_first_string_error_per_field(errs))


def validate(
    fas: FleetAutoscaler, gates: FeatureGates, now: dt.datetime | None = None
) -> list[FieldError]:
    """Everything the apiserver says about creating this FleetAutoscaler (empty when accepted)."""
    errs = validate_create_metadata(fas.metadata) + validate_schema(fas)
    if errs:
        return errs
    decode_error = go_decode_error(fas)
    if decode_error is not None:
        return [
            internal(
                "",
                "error unmarshalling FleetAutoscaler json after schema validation: " + decode_error,
            )
        ]
    try:
        return validate_webhook_rules(fas, gates, now or dt.datetime.now(dt.UTC))
    except TimeParseError as err:  # unreachable after go_decode_error, kept for safety
        return [internal("", str(err))]
