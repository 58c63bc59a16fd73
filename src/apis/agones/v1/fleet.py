"""The Fleet resource (Go `pkg/apis/agones/v1/fleet.go`).

The Fleet webhook defaults only `strategy` (RollingUpdate, 25%/25%), `scheduling` (Packed) and the
version annotation; the template is *not* defaulted (GameServer defaults are applied to a copy only
to validate it), but Go's re-encoding still shapes it (`health: {}`, omitempty zeros dropped).
`validate` checks the schema and the scale rule, then the webhook rules: name, rolling-update
bounds, the template's GameServer spec, template metadata, allocation overflow, priorities gate.
"""

from __future__ import annotations

import copy
import enum
from typing import Annotated

import msgspec
from msgspec import UNSET, Struct, UnsetType

from ....featuregates import Feature, FeatureGates
from ....version import VERSION
from ...field import FieldError, GoValue, Path, invalid, not_supported
from ...meta import schema
from ...meta.intstr import IntOrStr, IntOrString, get_value_from_int_or_percent
from ...meta.objectmeta import ObjectMeta, new_controller_ref, validate_create_metadata
from ...meta.schema import crd
from ...scheduling import SchedulingStrategy
from . import common, gameserver_validation
from .common import (
    AggregatedCounterStatus,
    AggregatedListStatus,
    AggregatedPlayerStatus,
    AllocationOverflow,
    Priority,
)
from .gameserver import GameServerTemplateSpec
from .gameserverset import (
    FLEET_NAME_LABEL,
    GameServerSet,
    GameServerSetSpec,
    priorities_forbidden,
    template_spec,
    validate_gs_spec,
    validate_replicas_scale,
    validate_template_schema,
)

KIND = "Fleet"
DEFAULT_MAX_SURGE = "25%"
DEFAULT_MAX_UNAVAILABLE = "25%"


class DeploymentStrategyType(enum.StrEnum):
    # In the order of Agones' CRD enum, which its "supported values" messages list.
    RECREATE = "Recreate"
    ROLLING_UPDATE = "RollingUpdate"


class RollingUpdateDeployment(Struct, rename="camel", omit_defaults=True):
    max_unavailable: Annotated[IntOrStr, crd(go="ptr")] | UnsetType = UNSET
    max_surge: Annotated[IntOrStr, crd(go="ptr")] | UnsetType = UNSET


class DeploymentStrategy(Struct, rename="camel", omit_defaults=True):
    type: DeploymentStrategyType | UnsetType = UNSET
    rolling_update: Annotated[RollingUpdateDeployment, crd(go="ptr")] | UnsetType | None = UNSET


class FleetSpec(Struct, rename="camel", omit_defaults=True):
    replicas: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET
    allocation_overflow: Annotated[AllocationOverflow, crd(go="ptr")] | UnsetType | None = UNSET
    strategy: Annotated[DeploymentStrategy, crd(go="value")] | UnsetType = UNSET
    scheduling: Annotated[SchedulingStrategy, crd(go="always")] | UnsetType = UNSET
    priorities: list[Priority] | UnsetType = UNSET
    template: Annotated[GameServerTemplateSpec, crd(go="value", required=True)] | UnsetType = UNSET


class FleetStatus(Struct, rename="camel", omit_defaults=True):
    replicas: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET
    ready_replicas: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET
    reserved_replicas: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET
    allocated_replicas: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET
    players: Annotated[AggregatedPlayerStatus, crd(go="ptr")] | UnsetType | None = UNSET
    counters: (
        Annotated[dict[str, AggregatedCounterStatus], crd(max_properties=1000)] | UnsetType
    ) = UNSET
    lists: Annotated[dict[str, AggregatedListStatus], crd(max_properties=1000)] | UnsetType = UNSET


class Fleet(Struct, rename="camel", omit_defaults=True):
    api_version: str | UnsetType = UNSET
    kind: str | UnsetType = UNSET
    metadata: Annotated[ObjectMeta, crd(go="value")] | UnsetType = UNSET
    spec: Annotated[FleetSpec, crd(go="value")] | UnsetType = UNSET
    # Status is a subresource: the apiserver ignores it on create and update of the main resource.
    status: Annotated[FleetStatus, crd(go="ptr")] | UnsetType | None = UNSET

    @property
    def fleet_spec(self) -> FleetSpec:
        if self.spec is UNSET:
            self.spec = FleetSpec()
        return self.spec

    def upper_bound_replicas(self, i: int) -> int:
        """The smaller of i and spec.replicas."""
        replicas = self.fleet_spec.replicas
        return min(i, replicas if isinstance(replicas, int) else 0)

    @staticmethod
    def lower_bound_replicas(i: int) -> int:
        return max(i, 0)

    def game_server_set(self, gates: FeatureGates) -> GameServerSet:
        """A new GameServerSet for this Fleet: template, scheduling, overflow, priorities (gated)."""
        meta = self.metadata if isinstance(self.metadata, ObjectMeta) else ObjectMeta()
        spec = self.fleet_spec
        tmpl = spec.template if isinstance(spec.template, GameServerTemplateSpec) else None
        gss_meta = copy.deepcopy(tmpl.metadata) if tmpl is not None else UNSET
        gss_meta = gss_meta if isinstance(gss_meta, ObjectMeta) else ObjectMeta()
        gss_meta.generate_name = f"{meta.get_name()}-"
        gss_meta.name = UNSET
        gss_meta.namespace = meta.namespace
        gss_meta.resource_version = UNSET
        gss_meta.uid = UNSET
        gss_meta.owner_references = [
            *(gss_meta.owner_references or []),
            new_controller_ref(common.API_VERSION, KIND, meta),
        ]
        gss_meta.set_label(FLEET_NAME_LABEL, meta.get_name())
        gss_spec = GameServerSetSpec(
            template=copy.deepcopy(spec.template),
            scheduling=spec.scheduling,
            allocation_overflow=copy.deepcopy(spec.allocation_overflow),
        )
        if gates.enabled(Feature.COUNTS_AND_LISTS) and spec.priorities is not UNSET:
            gss_spec.priorities = copy.deepcopy(spec.priorities)
        return GameServerSet(
            api_version=common.API_VERSION, kind="GameServerSet", metadata=gss_meta, spec=gss_spec
        )


def apply_defaults(fleet: Fleet, gates: FeatureGates) -> None:
    """The stored form of a created Fleet (mutating webhook + CRD defaults), in place."""
    schema.apply_schema_defaults(fleet)
    spec = fleet.fleet_spec
    strategy = (
        spec.strategy if isinstance(spec.strategy, DeploymentStrategy) else DeploymentStrategy()
    )
    spec.strategy = strategy
    if strategy.type is UNSET:
        strategy.type = DeploymentStrategyType.ROLLING_UPDATE
    if spec.scheduling is UNSET:
        spec.scheduling = SchedulingStrategy.PACKED
    if strategy.type == DeploymentStrategyType.ROLLING_UPDATE:
        if not isinstance(strategy.rolling_update, RollingUpdateDeployment):
            strategy.rolling_update = RollingUpdateDeployment()
        if strategy.rolling_update.max_surge is UNSET:
            strategy.rolling_update.max_surge = DEFAULT_MAX_SURGE
        if strategy.rolling_update.max_unavailable is UNSET:
            strategy.rolling_update.max_unavailable = DEFAULT_MAX_UNAVAILABLE
    if fleet.metadata is UNSET:
        fleet.metadata = ObjectMeta()
    fleet.metadata.set_annotation(common.VERSION_ANNOTATION, VERSION)
    template = spec.template if isinstance(spec.template, GameServerTemplateSpec) else None
    if template is not None:
        gs_spec = template_spec(template)
        gs_spec.template = gameserver_validation.go_pod_template(gs_spec.template)
        template.spec = gs_spec
    schema.go_roundtrip(fleet)
    schema.apply_schema_defaults(fleet)


def validate_rolling_update(value: IntOrStr | UnsetType, path: Path) -> list[FieldError]:
    """An int must be ≥ 1; a percentage must be 1%-99% (Go renders the value with `%#v`)."""
    if value is UNSET:
        return []
    v = IntOrString.parse(value)
    try:
        r: int | None = get_value_from_int_or_percent(v, 100, True)
    except ValueError:
        r = None
    shown = GoValue(v.go_repr())
    if isinstance(value, str):
        if r is None or r < 1 or r > 99:
            return [invalid(path, shown, "must be between 1% and 99%")]
    elif r is not None and r < 1:
        return [invalid(path, shown, "must be at least 1")]
    return []


def validate_schema_and_metadata(fleet: Fleet, gates: FeatureGates) -> list[FieldError]:
    """What the apiserver itself checks: metadata, CRD schema, the scale subresource's replicas."""
    spec = fleet.spec if isinstance(fleet.spec, FleetSpec) else FleetSpec()
    errs = validate_create_metadata(fleet.metadata)
    # Status belongs to the status subresource: the apiserver drops it from a create first.
    errs += schema.validate_schema(msgspec.structs.replace(fleet, status=UNSET), Path())
    errs += validate_template_schema(spec.template)
    return errs + validate_replicas_scale(spec.replicas)


def validate_webhook(fleet: Fleet, gates: FeatureGates) -> list[FieldError]:
    """The validating webhook's `Fleet.Validate` (CREATE and UPDATE)."""
    spec = fleet.spec if isinstance(fleet.spec, FleetSpec) else FleetSpec()
    meta = fleet.metadata if isinstance(fleet.metadata, ObjectMeta) else ObjectMeta()
    errs = common.validate_name(meta.name, Path("metadata"))
    strategy_path = Path("spec", "strategy")
    strategy = (
        spec.strategy if isinstance(spec.strategy, DeploymentStrategy) else DeploymentStrategy()
    )
    if strategy.type == DeploymentStrategyType.ROLLING_UPDATE:
        ru = strategy.rolling_update
        if isinstance(ru, RollingUpdateDeployment):
            rpath = strategy_path.child("rollingUpdate")
            errs += validate_rolling_update(ru.max_unavailable, rpath.child("maxUnavailable"))
            errs += validate_rolling_update(ru.max_surge, rpath.child("maxSurge"))
    elif strategy.type != DeploymentStrategyType.RECREATE:
        shown = strategy.type if isinstance(strategy.type, str) else ""
        errs.append(
            not_supported(strategy_path.child("type"), shown, ["Recreate", "RollingUpdate"])
        )
    errs += validate_gs_spec(spec.template, gates)
    if isinstance(spec.allocation_overflow, AllocationOverflow):
        errs += spec.allocation_overflow.validate(Path("spec", "allocationOverflow"))
    return errs + priorities_forbidden(spec.priorities, gates)


def validate(fleet: Fleet, gates: FeatureGates) -> list[FieldError]:
    """Every error the apiserver returns for this (defaulted) Fleet (schema first, then webhook)."""
    return validate_schema_and_metadata(fleet, gates) or validate_webhook(fleet, gates)


def validate_update(old: Fleet, new: Fleet, gates: FeatureGates) -> list[FieldError]:
    """The webhook validates a Fleet on UPDATE exactly as on CREATE."""
    return validate_webhook(new, gates)
