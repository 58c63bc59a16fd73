"""What the GameServer sub-controllers (health, migration, missing-pod, succeeded) share.

Each one watches pods or GameServers, keys its own worker queue by the GameServer's
namespace/name, reads both from the shared caches in its sync, and when its rule says so writes a
copy of the GameServer (new state, or re-applied address) then records one event about it. This
base holds that plumbing; the rules, and which informer events enqueue, stay in each subclass.
Reads go through the GameServer informer's shared MutationCache and writes are remembered in it,
so a sub-controller and the GameServer controller never act on each other's stale state.
A NotFound on read means nothing to do; write errors (Conflict included) propagate so the worker
queue re-queues the key with back-off.
"""

from __future__ import annotations

import abc
from typing import Any

import structlog

from ...apis.agones.v1.gameserver import GameServer, GameServerState
from ...apis.core.v1 import Pod
from ...client.errors import NotFoundError
from ...featuregates import FeatureGates
from ...informers import SharedInformerFactory
from ...record import EventBroadcaster
from ...workqueue import WorkerQueue, default_controller_rate_limiter
from . import informers
from .gameservers import deep_copy


class GameServerSubController(abc.ABC):
    """Listers, event recorder and worker queue of a sub-controller named `name` (e.g. "health":
    logs as controller=health, records as health-controller, queue agones.dev.<ClassName>)."""

    name = ""

    def __init__(
        self,
        client: informers.Client,
        factory: SharedInformerFactory,
        events: EventBroadcaster,
        gates: FeatureGates,
        *,
        logger: Any = None,
    ) -> None:
        self.client = client
        self.factory = factory
        self.gates = gates
        self.log = (logger or structlog.get_logger()).bind(controller=self.name)
        self.recorder = events.new_recorder(f"{self.name}-controller")
        self.game_servers = informers.game_servers(factory)
        self.game_server_lister = self.game_servers.lister()
        # shared with the GameServer controller: each sees the other's writes at once
        self.game_server_cache = self.game_servers.informer().mutation_cache()
        self.pods = informers.game_server_pods(factory)
        self.pod_lister = self.pods.lister()
        self.workerqueue = WorkerQueue(
            self.sync_game_server,
            self.log,
            "gameserver",
            f"agones.dev.{type(self).__name__}",
            default_controller_rate_limiter(),
        )

    @abc.abstractmethod
    async def sync_game_server(self, key: str) -> None:
        """Apply this sub-controller's rule to the GameServer `key` (namespace/name)."""

    def get_game_server(self, namespace: str, name: str) -> GameServer | None:
        """The newer of the cached GameServer and our last write of it, or None when it is gone."""
        gs: GameServer | None = self.game_server_cache.get_by_key(f"{namespace}/{name}")
        return gs

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        """The cached pod of that name, or None when it is gone."""
        try:
            pod: Pod = self.pod_lister.by_namespace(namespace).get(name)
            return pod
        except NotFoundError:
            return None

    async def update_with_event(
        self,
        gs: GameServer,
        gs_copy: GameServer,
        event_type: str,
        message: str,
        *,
        event_on_stored: bool = False,
    ) -> None:
        """Write `gs_copy`, then record an event with its state as the reason, about the cached
        `gs` or (`event_on_stored`, as Agones' missing and succeeded controllers do) the stored
        object the update returned."""
        stored = await informers.update_game_server(self.client, gs_copy)
        self.game_server_cache.mutation(stored)
        subject = stored if event_on_stored else gs
        self.recorder.event(subject, event_type, str(gs_copy.state() or ""), message)

    async def move_to_state(
        self,
        gs: GameServer,
        state: GameServerState,
        event_type: str,
        message: str,
        *,
        event_on_stored: bool = False,
    ) -> None:
        """Write a copy of `gs` in `state` and record the event (see `update_with_event`)."""
        gs_copy = deep_copy(gs)
        gs_copy.gs_status.state = state
        await self.update_with_event(
            gs, gs_copy, event_type, message, event_on_stored=event_on_stored
        )
