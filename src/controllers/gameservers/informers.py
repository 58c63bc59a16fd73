"""The informers the GameServer controllers share, and the API surface they write through.

Every controller of this package gets its informers here so they are shared: GameServers decoded
into typed `GameServer` structs, GameServer pods (label `agones.dev/role=gameserver`) and Nodes into
the typed read models `apis.core.v1.Pod` / `Node`. Other packages that want these from the same
factory must use these functions too: the factory keys informers by resource and selectors, not by
decoder, so the first registration decides the type every handler receives — and the transform
each cache applies (`informers.transform`): every one loses `managedFields`. The read models keep
only what they declare: of a pod its metadata, `spec.nodeName` and the status fields health and
scheduling read; of a node its metadata, `spec.unschedulable` and `status.addresses`. That is all
any controller here reads; the one pod write is a merge patch, so nothing is written back from a
trimmed object.
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec

from ...apis.agones.v1.gameserver import GAME_SERVER_LABEL_ROLE, ROLE_LABEL, GameServer
from ...apis.core.v1 import Node, Pod
from ...client.rest import PatchType, Resource
from ...client.versioned.resources import GAME_SERVERS, NODES, PODS
from ...informers import GenericInformer, SharedInformerFactory, StructDecoder
from ...informers.shared_informer import ensure_transform
from ...informers.transform import (
    TransformFunc,
    transform_strip_managed_fields,
)

GAME_SERVER_POD_SELECTOR = f"{ROLE_LABEL}={GAME_SERVER_LABEL_ROLE}"


def _transformed(informer: GenericInformer, transform: TransformFunc) -> GenericInformer:
    ensure_transform(informer.informer(), transform)
    return informer


def game_servers(factory: SharedInformerFactory) -> GenericInformer:
    informer = factory.for_resource(GAME_SERVERS, decoder=StructDecoder(GameServer))
    return _transformed(informer, transform_strip_managed_fields)


def game_server_pods(factory: SharedInformerFactory) -> GenericInformer:
    informer = factory.for_resource(
        PODS, label_selector=GAME_SERVER_POD_SELECTOR, decoder=StructDecoder(Pod)
    )
    return _transformed(informer, transform_strip_managed_fields)


def nodes(factory: SharedInformerFactory) -> GenericInformer:
    informer = factory.for_resource(NODES, decoder=StructDecoder(Node))
    return _transformed(informer, transform_strip_managed_fields)


class Client(Protocol):
    """The verbs of `RESTClient` the controllers write with (a fake implements the same)."""

    async def create(
        self, res: Resource, body: Any, namespace: str | None = None
    ) -> dict[str, Any]: ...

    async def create_raw(self, res: Resource, body: Any, namespace: str | None = None) -> bytes: ...

    async def update(
        self, res: Resource, body: Any, namespace: str | None = None, subresource: str | None = None
    ) -> dict[str, Any]: ...

    async def update_raw(
        self, res: Resource, body: Any, namespace: str | None = None, subresource: str | None = None
    ) -> bytes: ...

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

    async def delete_raw(
        self,
        res: Resource,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Any = None,
    ) -> bytes: ...


_GAME_SERVER = msgspec.json.Decoder(GameServer)


async def update_game_server(client: Client, gs: GameServer) -> GameServer:
    """PUT the GameServer; return what the API stored, decoded (in one pass, straight from the
    answer's bytes) and trimmed as the informer's cache holds it (no `managedFields`), so copies
    of it and the next PUT stay small."""
    stored = await client.update_raw(GAME_SERVERS, gs, gs.meta.get_namespace())
    game_server: GameServer = transform_strip_managed_fields(_GAME_SERVER.decode(stored))
    return game_server
