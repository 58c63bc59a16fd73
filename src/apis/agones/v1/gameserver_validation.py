"""GameServer defaults and validation: what Agones' webhooks and CRD schema do on create.

`apply_defaults(gs, gates)` gives what the apiserver stores for a created GameServer: CRD schema
defaults, then the mutating webhook (`ApplyDefaults`: version annotation, finalizer, spec defaults,
the whole status), then Go's JSON re-encoding of the object (omitempty zeros dropped, non-omitempty
fields written), then schema defaults again. `validate(gs, gates)` gives the errors the apiserver
would return: CRD schema errors if any (the validating webhook only sees schema-valid objects),
otherwise the webhook's `Validate`. Both are pure apart from mutating the object passed to defaults.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from msgspec import UNSET

from ....featuregates import Feature, FeatureGates
from ....version import VERSION
from ...field import FieldError, Path, forbidden, invalid, required
from ...meta import schema
from ...meta.objectmeta import validate_create_metadata
from ...meta.quantity import QUANTITY_PATTERN, Quantity, QuantityError
from ...meta.validation import IS_NEGATIVE_ERROR_MSG
from ...scheduling import SchedulingStrategy
from . import common
from .gameserver import (
    DEFAULT_PORT_RANGE,
    DEV_ADDRESS_ANNOTATION,
    FINALIZER_NAME,
    POD_SAFE_TO_EVICT_ANNOTATION,
    CounterStatus,
    Eviction,
    EvictionSafe,
    GameServer,
    GameServerSpec,
    GameServerState,
    Health,
    ListStatus,
    PlayerStatus,
    PortPolicy,
    Protocol,
    SdkServer,
    SdkServerLogLevel,
)

DEFAULT_HEALTH_PERIOD_SECONDS = 5
DEFAULT_HEALTH_FAILURE_THRESHOLD = 3
DEFAULT_HEALTH_INITIAL_DELAY_SECONDS = 5
DEFAULT_SDK_GRPC_PORT = 9357
DEFAULT_SDK_HTTP_PORT = 9358


# ---------------------------------------------------------------------------------------------
# Defaults


def apply_spec_defaults(spec: GameServerSpec) -> None:
    """`GameServerSpec.ApplyDefaults`: container, ports, health, eviction, scheduling, sdkServer."""
    containers = spec.containers()
    if len(containers) == 1:
        name = containers[0].get("name")
        spec.container = name if isinstance(name, str) else ""
    container = spec.container if isinstance(spec.container, str) else ""
    for port in spec.ports or []:
        if port.port_policy is UNSET:
            port.port_policy = PortPolicy.DYNAMIC
        if not port.range:
            port.range = DEFAULT_PORT_RANGE
        if port.protocol is UNSET:
            port.protocol = Protocol.UDP
        if not port.container:
            port.container = container
    health = spec.health if isinstance(spec.health, Health) else Health()
    spec.health = health
    if not health.disabled:
        if not _positive(health.period_seconds):
            health.period_seconds = DEFAULT_HEALTH_PERIOD_SECONDS
        if not _positive(health.failure_threshold):
            health.failure_threshold = DEFAULT_HEALTH_FAILURE_THRESHOLD
        if not _positive(health.initial_delay_seconds):
            health.initial_delay_seconds = DEFAULT_HEALTH_INITIAL_DELAY_SECONDS
    if not isinstance(spec.eviction, Eviction):
        spec.eviction = Eviction()
    if spec.eviction.safe is UNSET:
        spec.eviction.safe = EvictionSafe.NEVER
    if spec.scheduling is UNSET:
        spec.scheduling = SchedulingStrategy.PACKED
    sdk = spec.sdk_server if isinstance(spec.sdk_server, SdkServer) else SdkServer()
    spec.sdk_server = sdk
    if sdk.log_level is UNSET:
        sdk.log_level = SdkServerLogLevel.INFO
    if not sdk.grpc_port:
        sdk.grpc_port = DEFAULT_SDK_GRPC_PORT
    if not sdk.http_port:
        sdk.http_port = DEFAULT_SDK_HTTP_PORT


def _positive(value: Any) -> bool:
    return isinstance(value, int) and value > 0


def _apply_status_defaults(gs: GameServer, gates: FeatureGates) -> None:
    spec, status = gs.gs_spec, gs.gs_status
    if status.state is UNSET:
        dynamic = gs.has_port_policy(PortPolicy.DYNAMIC) or gs.has_port_policy(
            PortPolicy.PASSTHROUGH
        )
        status.state = GameServerState.PORT_ALLOCATION if dynamic else GameServerState.CREATING
    if gates.enabled(Feature.PLAYER_TRACKING):
        if not isinstance(status.players, PlayerStatus):
            status.players = PlayerStatus()
        if spec.players is not UNSET and spec.players is not None:
            capacity = spec.players.initial_capacity
            status.players.capacity = capacity if isinstance(capacity, int) else 0
    status.eviction = (
        Eviction(safe=spec.eviction.safe) if isinstance(spec.eviction, Eviction) else UNSET
    )
    if spec.template_annotations().get(POD_SAFE_TO_EVICT_ANNOTATION) == "true":
        if not isinstance(status.eviction, Eviction):
            status.eviction = Eviction()
        status.eviction.safe = EvictionSafe.ALWAYS
    if gates.enabled(Feature.COUNTS_AND_LISTS):
        if spec.counters is not UNSET:
            status.counters = {
                k: CounterStatus(count=v.count, capacity=v.capacity)
                for k, v in spec.counters.items()
            }
        if spec.lists is not UNSET:
            status.lists = {
                k: ListStatus(
                    capacity=v.capacity,
                    values=list(v.values) if isinstance(v.values, list) else UNSET,
                )
                for k, v in spec.lists.items()
            }


def go_pod_template(template: Any) -> dict[str, Any]:
    """What Go writes for a pod template that lacks parts: `containers` is never omitted."""
    out = dict(template) if isinstance(template, dict) else {}
    pod_spec = out.get("spec")
    if pod_spec is None:
        out["spec"] = {"containers": None}
    elif isinstance(pod_spec, dict) and "containers" not in pod_spec:
        out["spec"] = {**pod_spec, "containers": None}
    return out


def apply_defaults(gs: GameServer, gates: FeatureGates) -> None:
    """The stored form of a created GameServer (mutating webhook + CRD defaults), in place."""
    schema.apply_schema_defaults(gs)
    meta = gs.meta
    meta.set_annotation(common.VERSION_ANNOTATION, VERSION)
    meta.finalizers = [*(meta.finalizers or []), FINALIZER_NAME]
    spec = gs.gs_spec
    spec.template = go_pod_template(spec.template)
    apply_spec_defaults(spec)
    _apply_status_defaults(gs, gates)
    schema.go_roundtrip(gs)
    schema.apply_schema_defaults(gs)


# ---------------------------------------------------------------------------------------------
# Schema-level checks of the raw pod template


def validate_pod_template_schema(template: Any, path: Path) -> list[FieldError]:
    """The parts of the PodTemplateSpec schema Agones' CRD enforces that matter here."""
    errs: list[FieldError] = []
    if not isinstance(template, dict):
        return errs
    meta = template.get("metadata")
    if isinstance(meta, dict):
        for key in ("labels", "annotations"):
            errs += _string_map(meta.get(key), path.child("metadata", key))
    elif meta is not None:
        errs.append(schema.type_error(path.child("metadata"), meta, "object"))
    pod_spec = template.get("spec")
    spec_path = path.child("spec")
    if pod_spec is None:
        return errs
    if not isinstance(pod_spec, dict):
        return [*errs, schema.type_error(spec_path, pod_spec, "object")]
    for key in ("containers", "initContainers"):
        items = pod_spec.get(key)
        p = spec_path.child(key)
        if key == "containers" and key not in pod_spec:
            errs.append(required(p))
            continue
        if items is None and key == "initContainers":
            continue
        if not isinstance(items, list):
            errs.append(schema.type_error(p, items, "array"))
            continue
        for i, c in enumerate(items):
            errs += _validate_container_schema(c, p.index(i))
    return errs


def _string_map(value: Any, path: Path) -> list[FieldError]:
    if value is None:
        return []
    if not isinstance(value, dict):
        return [schema.type_error(path, value, "object")]
    return [
        schema.type_error(path.child(k), v, "string")
        for k, v in value.items()
        if not isinstance(v, str)
    ]


def _validate_container_schema(c: Any, path: Path) -> list[FieldError]:
    if not isinstance(c, dict):
        return [schema.type_error(path, c, "object")]
    errs: list[FieldError] = []
    if "name" not in c:
        errs.append(required(path.child("name")))
    elif not isinstance(c["name"], str):
        errs.append(schema.type_error(path.child("name"), c["name"], "string"))
    resources = c.get("resources")
    if resources is None:
        return errs
    if not isinstance(resources, dict):
        return [*errs, schema.type_error(path.child("resources"), resources, "object")]
    for key in ("limits", "requests"):
        amounts = resources.get(key)
        p = path.child("resources", key)
        if amounts is None:
            continue
        if not isinstance(amounts, dict):
            errs.append(schema.type_error(p, amounts, "object"))
            continue
        for name, raw in amounts.items():
            try:
                if isinstance(raw, bool) or not isinstance(raw, int | float | str):
                    raise QuantityError("not a quantity")
                Quantity.parse(raw)
            except QuantityError:
                q = p.child(name)
                errs.append(invalid(q, raw, f"{q} in body should match '{QUANTITY_PATTERN}'"))
    return errs


def validate_resource_requirements(resources: Any, path: Path) -> list[FieldError]:
    """Limits and requests are non-negative and each request ≤ its limit (exact comparison)."""
    errs: list[FieldError] = []
    if not isinstance(resources, dict):
        return errs
    limits, requests = _quantities(resources.get("limits")), _quantities(resources.get("requests"))
    lim_path, req_path = path.child("limits"), path.child("requests")
    for name in sorted(limits):
        if limits[name].is_negative():
            errs.append(invalid(lim_path.key(name), str(limits[name]), IS_NEGATIVE_ERROR_MSG))
    for name in sorted(requests):
        q = requests[name]
        if q.is_negative():
            errs.append(invalid(req_path.key(name), str(q), IS_NEGATIVE_ERROR_MSG))
        limit = limits.get(name)
        if limit is not None and q.cmp(limit) > 0:
            errs.append(
                invalid(req_path, str(q), f"must be less than or equal to {name} limit of {limit}")
            )
    return errs


def _quantities(raw: Any) -> dict[str, Quantity]:
    out: dict[str, Quantity] = {}
    if isinstance(raw, dict):
        for name, value in raw.items():
            try:
                out[name] = Quantity.parse(value)
            except (QuantityError, TypeError):
                continue
    return out


def validate_schema(gs: GameServer) -> list[FieldError]:
    """The CRD schema's errors for a GameServer's spec (after defaulting).

    Status is not checked: on create the webhook has just written it from the spec.
    """
    errs = schema.validate_schema(gs.spec, Path("spec")) if gs.spec is not UNSET else []
    if gs.spec is not UNSET and isinstance(gs.spec.template, dict):
        errs += validate_pod_template_schema(gs.spec.template, Path("spec", "template"))
    return errs


# ---------------------------------------------------------------------------------------------
# Webhook validation


def _validate_feature_gates(
    spec: GameServerSpec, gates: FeatureGates, path: Path
) -> list[FieldError]:
    errs: list[FieldError] = []
    if not gates.enabled(Feature.PLAYER_TRACKING) and spec.players is not UNSET:
        errs.append(_gate_forbidden(path.child("players"), Feature.PLAYER_TRACKING))
    if not gates.enabled(Feature.COUNTS_AND_LISTS):
        if spec.counters is not UNSET:
            errs.append(_gate_forbidden(path.child("counters"), Feature.COUNTS_AND_LISTS))
        if spec.lists is not UNSET:
            errs.append(_gate_forbidden(path.child("lists"), Feature.COUNTS_AND_LISTS))
    for i, p in enumerate(spec.ports or []):
        if not gates.enabled(Feature.PORT_POLICY_NONE) and p.port_policy == PortPolicy.NONE:
            errs.append(
                forbidden(
                    path.child("ports").index(i).child("portPolicy"),
                    f"Value cannot be set to {PortPolicy.NONE} unless feature flag "
                    f"{Feature.PORT_POLICY_NONE} is enabled",
                )
            )
    return errs


def _gate_forbidden(path: Path, feature: Feature) -> FieldError:
    return forbidden(path, f"Value cannot be set unless feature flag {feature} is enabled")


def is_valid_ip(text: str) -> bool:
    """Go's `net.ParseIP`: dotted IPv4 (no leading zeros) or IPv6, no zone."""
    if "%" in text:
        return False
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def validate_spec(
    spec: GameServerSpec, gates: FeatureGates, dev_address: str, path: Path
) -> list[FieldError]:
    """`GameServerSpec.Validate`: the webhook rules for a (defaulted) GameServer spec."""
    errs = _validate_feature_gates(spec, gates, path)
    template = spec.template if isinstance(spec.template, dict) else {}
    raw_meta = template.get("metadata")
    template_meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    meta_errs = common.validate_object_meta(
        template_meta.get("labels"),
        template_meta.get("annotations"),
        path.child("template", "metadata"),
    )
    ports_path = path.child("ports")
    if dev_address:
        if not is_valid_ip(dev_address):
            errs.append(
                invalid(
                    Path("metadata", "annotations", DEV_ADDRESS_ANNOTATION),
                    dev_address,
                    "must be a valid IP address",
                )
            )
        for i, p in enumerate(spec.ports or []):
            if not p.host_port:
                errs.append(required(ports_path.index(i).child("hostPort"), DEV_ADDRESS_ANNOTATION))
            if p.port_policy != PortPolicy.STATIC:
                errs.append(
                    required(ports_path.index(i).child("portPolicy"), common.ERR_PORT_POLICY_STATIC)
                )
        return errs + meta_errs

    container = spec.container if isinstance(spec.container, str) else ""
    if not container and len(spec.containers()) > 1:
        errs.append(required(path.child("container"), common.ERR_CONTAINER_REQUIRED))
    try:
        spec.find_container(container)
    except ValueError as err:
        errs.append(invalid(path.child("container"), container, str(err)))

    for i, p in enumerate(spec.ports or []):
        pp = ports_path.index(i)
        container_port = p.container_port if isinstance(p.container_port, int) else 0
        host_port = p.host_port if isinstance(p.host_port, int) else 0
        if p.port_policy in (PortPolicy.DYNAMIC, PortPolicy.STATIC) and container_port <= 0:
            errs.append(required(pp.child("containerPort"), common.ERR_CONTAINER_PORT_REQUIRED))
        if p.port_policy == PortPolicy.PASSTHROUGH and container_port > 0:
            errs.append(required(pp.child("containerPort"), common.ERR_CONTAINER_PORT_PASSTHROUGH))
        if host_port > 0 and p.port_policy in (PortPolicy.DYNAMIC, PortPolicy.PASSTHROUGH):
            errs.append(forbidden(pp.child("hostPort"), common.ERR_HOST_PORT))
        if isinstance(p.container, str) and container:
            try:
                spec.find_container(p.container)
            except ValueError:
                if spec.find_sidecar_init_container(p.container) is None:
                    errs.append(
                        invalid(
                            pp.child("container"), p.container, common.ERR_CONTAINER_NAME_INVALID
                        )
                    )
    containers_path = path.child("template", "spec")
    for key, items in (
        ("containers", spec.containers()),
        ("initContainers", spec.init_containers()),
    ):
        for i, c in enumerate(items):
            errs += validate_resource_requirements(
                c.get("resources"), containers_path.child(key).index(i).child("resources")
            )
    return errs + meta_errs


def validate_schema_and_metadata(gs: GameServer, gates: FeatureGates) -> list[FieldError]:
    """What the apiserver itself checks (metadata and CRD schema), on create and update."""
    return validate_create_metadata(gs.metadata) + validate_schema(gs)


def validate_webhook(gs: GameServer, gates: FeatureGates) -> list[FieldError]:
    """The validating webhook's `GameServer.Validate` (run on CREATE only)."""
    name = gs.metadata.name if gs.metadata is not UNSET else None
    errs = common.validate_name(name, Path("metadata"))
    dev_address, _ = gs.get_dev_address()
    return errs + validate_spec(gs.gs_spec, gates, dev_address, Path("spec"))


def validate(gs: GameServer, gates: FeatureGates) -> list[FieldError]:
    """Every error the apiserver returns for creating this (defaulted) GameServer.

    Schema errors stop there: the validating webhook only sees schema-valid objects.
    """
    return validate_schema_and_metadata(gs, gates) or validate_webhook(gs, gates)
