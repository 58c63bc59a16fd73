"""The informers the GameServer controllers share, and the API surface they write through.

Every controller of this package gets its informers here so they are shared: GameServers decoded
into typed `GameServer` structs, GameServer pods (label `agones.dev/role=gameserver`) and Nodes as raw
JSON. Other packages that want GameServers from the same factory must use `game_servers()` too: the
factory keys informers by resource and selectors, not by decoder, so the first registration decides
the type every handler receives — and the transform each cache applies (`informers.transform`):
GameServers lose `managedFields`; pods keep their metadata (without `managedFields`),
`spec.nodeName` and `status`; nodes their metadata, `spec.unschedulable` and `status.addresses`.
That is all any controller here reads; the one pod write is a merge patch, so nothing is written back
from a trimmed object.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import msgspec

from ...apis.agones.v1.gameserver import GAME_SERVER_LABEL_ROLE, ROLE_LABEL, GameServer
from ...client.rest import PatchType, Resource
from ...informers import GenericInformer, SharedInformerFactory, StructDecoder
from ...informers.shared_informer import ensure_transform
from ...informers.transform import (
    TransformFunc,
    transform_strip_managed_fields,
)
from .gameservers import GAME_SERVERS, NODES, PODS

GAME_SERVER_POD_SELECTOR = f"{ROLE_LABEL}={GAME_SERVER_LABEL_ROLE}"


def _metadata(obj: Mapping[str, Any]) -> dict[str, Any]:
    meta = obj.get("metadata")
    if not isinstance(meta, Mapping):
        return {}
    return {k: v for k, v in meta.items() if k != "managedFields"}


def _kept(obj: Mapping[str, Any], part: str, fields: tuple[str, ...]) -> dict[str, Any] | None:
    value = obj.get(part)
    if not isinstance(value, Mapping):
        return None
    return {k: value[k] for k in fields if k in value}


def transform_game_server_pod(pod: Any) -> Any:
    """What the GameServer controllers read of a pod: metadata, node name, status."""
    if not isinstance(pod, Mapping):
        return pod
    kept: dict[str, Any] = {k: pod[k] for k in ("apiVersion", "kind") if k in pod}
    kept["metadata"] = _metadata(pod)
    spec = _kept(pod, "spec", ("nodeName",))
    if spec is not None:
        kept["spec"] = spec
    if "status" in pod:
        kept["status"] = pod["status"]
    return kept


def transform_node(node: Any) -> Any:
    """What the controllers read of a node: metadata, schedulability, addresses."""
    if not isinstance(node, Mapping):
        return node
    kept: dict[str, Any] = {k: node[k] for k in ("apiVersion", "kind") if k in node}
    kept["metadata"] = _metadata(node)
    for part, fields in (("spec", ("unschedulable",)), ("status", ("addresses",))):
        value = _kept(node, part, fields)
        if value is not None:
            kept[part] = value
    return kept


def _transformed(informer: GenericInformer, transform: TransformFunc) -> GenericInformer:
    ensure_transform(informer.informer(), transform)
    return informer


def game_servers(factory: SharedInformerFactory) -> GenericInformer:
    informer = factory.for_resource(GAME_SERVERS, decoder=StructDecoder(GameServer))
    return _transformed(informer, transform_strip_managed_fields)


def game_server_pods(factory: SharedInformerFactory) -> GenericInformer:
    informer = factory.for_resource(PODS, label_selector=GAME_SERVER_POD_SELECTOR)
    return _transformed(informer, transform_game_server_pod)


def nodes(factory: SharedInformerFactory) -> GenericInformer:
    return _transformed(factory.for_resource(NODES), transform_node)


class Client(Protocol):
    """The verbs of `RESTClient` the controllers write with (a fake implements the same)."""

    async def create(
        self, res: Resource, body: Any, namespace: str | None = None
    ) -> dict[str, Any]: ...

    async def update(
        self, res: Resource, body: Any, namespace: str | None = None, subresource: str | None = None
    ) -> dict[str, Any]: ...

    async def patch(
        self,
        res: Resource,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType = "merge",
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool = False,
    ) -> dict[str, Any]: ...

    async def delete(
        self,
        res: Resource,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Any = None,
    ) -> dict[str, Any]: ...


async def update_game_server(client: Client, gs: GameServer) -> GameServer:
    """PUT the GameServer; return what the API stored (decoded)."""
    stored = await client.update(GAME_SERVERS, gs, gs.meta.get_namespace())
    return msgspec.convert(stored, GameServer)
