"""The GameServerSet resource (Go `pkg/apis/agones/v1/gameserverset.go`).

A GameServerSet keeps `spec.replicas` GameServers made from `spec.template`. It has no mutating
webhook: `apply_defaults` gives only the CRD schema defaults. `validate` checks the schema (incl.
the scale subresource's replicas rule) and then the webhook rules: name length, the template's
GameServer spec (validated with GameServer defaults applied to a copy), template metadata, and
`priorities` only with CountsAndLists. `validate_update` adds: the template is immutable.
"""

from __future__ import annotations

import copy
from typing import Annotated

import msgspec
from msgspec import UNSET, Struct, UnsetType

from ....featuregates import Feature, FeatureGates
from ...field import FieldError, GoValue, Path, forbidden, invalid
from ...meta import schema
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
from .gameserver import GameServer, GameServerSpec, GameServerTemplateSpec

KIND = "GameServerSet"
GAME_SERVER_SET_GAME_SERVER_LABEL = "agones.dev/gameserverset"
FLEET_NAME_LABEL = "agones.dev/fleet"


class GameServerSetSpec(Struct, rename="camel", omit_defaults=True):
    replicas: Annotated[int, crd(go="always", required=True, minimum=0)] | UnsetType = UNSET
    allocation_overflow: Annotated[AllocationOverflow, crd(go="ptr")] | UnsetType | None = UNSET
    scheduling: SchedulingStrategy | UnsetType = UNSET
    priorities: list[Priority] | UnsetType = UNSET
    template: Annotated[GameServerTemplateSpec, crd(go="value", required=True)] | UnsetType = UNSET


class GameServerSetStatus(Struct, rename="camel", omit_defaults=True):
    replicas: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET
    ready_replicas: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET
    reserved_replicas: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET
    allocated_replicas: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET
    shutdown_replicas: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET
    players: Annotated[AggregatedPlayerStatus, crd(go="ptr")] | UnsetType | None = UNSET
    counters: (
        Annotated[dict[str, AggregatedCounterStatus], crd(max_properties=1000)] | UnsetType
    ) = UNSET
    lists: Annotated[dict[str, AggregatedListStatus], crd(max_properties=1000)] | UnsetType = UNSET


class GameServerSet(Struct, rename="camel", omit_defaults=True):
    api_version: str | UnsetType = UNSET
    kind: str | UnsetType = UNSET
    metadata: Annotated[ObjectMeta, crd(go="value")] | UnsetType = UNSET
    spec: Annotated[GameServerSetSpec, crd(go="value", required=True)] | UnsetType = UNSET
    # Status is a subresource: the apiserver ignores it on create and update of the main resource.
    status: Annotated[GameServerSetStatus, crd(go="ptr")] | UnsetType | None = UNSET

    def game_server(self) -> GameServer:
        """A new GameServer from the template: generated name, owner reference, set/fleet labels."""
        meta = self.metadata if isinstance(self.metadata, ObjectMeta) else ObjectMeta()
        spec = self.spec if isinstance(self.spec, GameServerSetSpec) else GameServerSetSpec()
        tmpl = spec.template if isinstance(spec.template, GameServerTemplateSpec) else None
        gs_meta = copy.deepcopy(tmpl.metadata) if tmpl is not None else UNSET
        gs_meta = gs_meta if isinstance(gs_meta, ObjectMeta) else ObjectMeta()
        gs_spec = copy.deepcopy(template_spec(spec.template))
        gs_spec.scheduling = spec.scheduling
        gs_meta.generate_name = f"{meta.get_name()}-"
        gs_meta.name = UNSET
        gs_meta.namespace = meta.namespace
        gs_meta.resource_version = UNSET
        gs_meta.uid = UNSET
        gs_meta.owner_references = [
            *(gs_meta.owner_references or []),
            new_controller_ref(common.API_VERSION, KIND, meta),
        ]
        gs_meta.set_label(GAME_SERVER_SET_GAME_SERVER_LABEL, meta.get_name())
        gs_meta.set_label(FLEET_NAME_LABEL, meta.get_labels().get(FLEET_NAME_LABEL, ""))
        return GameServer(
            api_version=common.API_VERSION, kind="GameServer", metadata=gs_meta, spec=gs_spec
        )


def template_spec(template: GameServerTemplateSpec | UnsetType) -> GameServerSpec:
    """The GameServer spec inside a template (empty when absent)."""
    if isinstance(template, GameServerTemplateSpec) and template.spec is not UNSET:
        return template.spec
    return GameServerSpec()


def apply_defaults(gss: GameServerSet, gates: FeatureGates) -> None:
    """GameServerSets have no mutating webhook: only CRD schema defaults apply."""
    schema.apply_schema_defaults(gss)


def validate_replicas_scale(replicas: object) -> list[FieldError]:
    """The scale subresource's check on `.spec.replicas` (its path keeps the leading dot)."""
    if isinstance(replicas, int) and replicas < 0:
        return [invalid(".spec.replicas", replicas, "should be a non-negative integer")]
    return []


def validate_template_schema(template: GameServerTemplateSpec | UnsetType) -> list[FieldError]:
    spec = template_spec(template)
    return gameserver_validation.validate_pod_template_schema(
        spec.template, Path("spec", "template", "spec", "template")
    )


def validate_gs_spec(
    template: GameServerTemplateSpec | UnsetType, gates: FeatureGates
) -> list[FieldError]:
    """`validateGSSpec`: the template's GameServer spec, validated with defaults on a copy."""
    spec = copy.deepcopy(template_spec(template))
    gameserver_validation.apply_spec_defaults(spec)
    errs = gameserver_validation.validate_spec(spec, gates, "", Path("spec", "template", "spec"))
    meta = template.metadata if isinstance(template, GameServerTemplateSpec) else UNSET
    if isinstance(meta, ObjectMeta):
        errs += common.validate_object_meta(
            meta.labels, meta.annotations, Path("spec", "template", "metadata")
        )
    return errs


def priorities_forbidden(priorities: object, gates: FeatureGates) -> list[FieldError]:
    if priorities is not UNSET and not gates.enabled(Feature.COUNTS_AND_LISTS):
        return [forbidden(Path("spec", "priorities"), "FeatureCountsAndLists is not enabled")]
    return []


def validate_schema_and_metadata(gss: GameServerSet, gates: FeatureGates) -> list[FieldError]:
    """What the apiserver itself checks: metadata, CRD schema, the scale subresource's replicas."""
    spec = gss.spec if isinstance(gss.spec, GameServerSetSpec) else GameServerSetSpec()
    errs = validate_create_metadata(gss.metadata)
    # Status belongs to the status subresource: the apiserver drops it from a create first.
    errs += schema.validate_schema(msgspec.structs.replace(gss, status=UNSET), Path())
    errs += validate_template_schema(spec.template)
    return errs + validate_replicas_scale(spec.replicas)


def validate_webhook(gss: GameServerSet, gates: FeatureGates) -> list[FieldError]:
    """The validating webhook's `GameServerSet.Validate` (CREATE)."""
    spec = gss.spec if isinstance(gss.spec, GameServerSetSpec) else GameServerSetSpec()
    meta = gss.metadata if isinstance(gss.metadata, ObjectMeta) else ObjectMeta()
    errs = common.validate_name(meta.name, Path("metadata"))
    errs += validate_gs_spec(spec.template, gates)
    return errs + priorities_forbidden(spec.priorities, gates)


def validate(gss: GameServerSet, gates: FeatureGates) -> list[FieldError]:
    """Every error the apiserver returns for creating this GameServerSet (schema, then webhook)."""
    return validate_schema_and_metadata(gss, gates) or validate_webhook(gss, gates)


def template_go_form(template: GameServerTemplateSpec | UnsetType) -> object:
    """The template as Go would see it after decoding (for semantic equality)."""
    if not isinstance(template, GameServerTemplateSpec):
        return None
    clone = copy.deepcopy(template)
    schema.go_roundtrip(clone)
    return msgspec.to_builtins(clone)


def validate_update(
    old: GameServerSet, new: GameServerSet, gates: FeatureGates
) -> list[FieldError]:
    """The webhook on UPDATE: the name rule, and the template must not change (compared as Go
    would see the two templates)."""
    meta = new.metadata if isinstance(new.metadata, ObjectMeta) else ObjectMeta()
    errs = common.validate_name(meta.name, Path("metadata"))
    old_t = old.spec.template if isinstance(old.spec, GameServerSetSpec) else UNSET
    new_t = new.spec.template if isinstance(new.spec, GameServerSetSpec) else UNSET
    if template_go_form(old_t) != template_go_form(new_t):
        errs.append(
            invalid(
                Path("spec", "template"),
                GoValue("v1.GameServerTemplateSpec{…}"),
                "GameServerSet template cannot be updated",
            )
        )
    return errs
