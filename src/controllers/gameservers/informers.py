"""The informers the GameServer controllers share, and the API surface they write through.

Every controller of this package gets its informers here so they are shared: GameServers decoded
into typed `GameServer` structs, GameServer pods (label `agones.dev/role=gameserver`) and Nodes as raw
JSON. Other packages that want GameServers from the same factory must use `game_servers()` too: the
factory keys informers by resource and selectors, not by decoder, so the first registration decides
the type every handler receives.
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec

from ...apis.agones.v1.gameserver import GAME_SERVER_LABEL_ROLE, ROLE_LABEL, GameServer
from ...client.rest import Resource
from ...informers import GenericInformer, SharedInformerFactory, StructDecoder
from .gameservers import GAME_SERVERS, NODES, PODS

GAME_SERVER_POD_SELECTOR = f"{ROLE_LABEL}={GAME_SERVER_LABEL_ROLE}"


def game_servers(factory: SharedInformerFactory) -> GenericInformer:
    return factory.for_resource(GAME_SERVERS, decoder=StructDecoder(GameServer))


def game_server_pods(factory: SharedInformerFactory) -> GenericInformer:
    return factory.for_resource(PODS, label_selector=GAME_SERVER_POD_SELECTOR)


def nodes(factory: SharedInformerFactory) -> GenericInformer:
    return factory.for_resource(NODES)


class Client(Protocol):
    """The verbs of `RESTClient` the controllers write with (a fake implements the same)."""

    async def create(
        self, res: Resource, body: Any, namespace: str | None = None
    ) -> dict[str, Any]: ...

    async def update(
        self, res: Resource, body: Any, namespace: str | None = None, subresource: str | None = None
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
