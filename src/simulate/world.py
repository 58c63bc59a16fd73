"""The simulated world around the controllers: game servers that start and end, and an allocator.

`SimulatedGameServers` plays the GameServer controller, the kubelet and the game process at once,
on a WorkerQueue of its own: a GameServer it has not seen Ready becomes Ready `startup` seconds
(of the simulation clock) after it first appears; one in Shutdown is deleted; one whose session
ended is moved to Shutdown. `Allocator.allocate()` does what an allocation does: picks a Ready
GameServer of the Fleet from the cache (by name: which one does not change the counts) and writes
it Allocated with its resourceVersion; a conflict tries the next candidate; none left is a failed
allocation. `release(key)` ends the session (the game calls SDK Shutdown).

`Activity` counts what happens (informer events, API requests in flight) so the simulation can
tell when the system has settled before it moves the clock: nothing in flight, every queue empty
and idle, and no new activity for a number of event-loop turns.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog
from aiohttp import web

from ..apis.agones.v1.gameserver import GameServer, GameServerState
from ..client.errors import ApiError, NotFoundError, is_conflict
from ..client.informers.externalversions.factory import SharedInformerFactory as TypedFactory
from ..client.versioned import Clientset
from ..clock import FakeClock
from ..informers import SharedInformerFactory, split_meta_namespace_key
from ..informers.labels import selector_from_set
from ..informers.shared_informer import ResourceEventHandlerFuncs
from ..localcluster.apiserver.server import LocalAPIServer
from ..workqueue import WorkerQueue

FLEET_NAME_LABEL = "agones.dev/fleet"
BEFORE_READY = {
    None,
    GameServerState.PORT_ALLOCATION,
    GameServerState.CREATING,
    GameServerState.STARTING,
    GameServerState.SCHEDULED,
    GameServerState.REQUEST_READY,
}


@dataclass
class Activity:
    """What the settle loop watches."""

    events: int = 0
    in_flight: int = 0
    writes: int = 0
    queues: list[WorkerQueue] = field(default_factory=list)

    def bump(self, *_: Any) -> None:
        self.events += 1

    def watch(self, informers: Sequence[Any]) -> None:
        for informer in informers:
            informer.add_event_handler(
                ResourceEventHandlerFuncs(
                    add_func=self.bump, update_func=self.bump, delete_func=self.bump
                )
            )

    def install(self, server: LocalAPIServer) -> None:
        inner = server.handler.handle

        async def counting(request: web.Request, target: Any) -> web.StreamResponse:
            watching = request.query.get("watch") in ("true", "1")
            if not watching:
                self.in_flight += 1
                if request.method not in ("GET", "HEAD"):
                    self.writes += 1
            try:
                return await inner(request, target)
            finally:
                if not watching:
                    self.in_flight -= 1
                    self.events += 1

        server.handler.handle = counting  # type: ignore[method-assign]

    def busy(self) -> bool:
        if self.in_flight:
            return True
        return any(len(q.queue) or q.queue.processing() for q in self.queues)

    async def settle(self, quiet_turns: int = 12) -> None:
        """Return once nothing has happened for `quiet_turns` event-loop turns.

        Timer callbacks only enqueue (synchronously), so right after the clock moved an idle
        system shows it at once: not busy and no new activity after a couple of turns."""
        quiet, seen = 0, self.events
        while quiet < quiet_turns:
            await asyncio.sleep(0)
            if self.busy() or self.events != seen:
                quiet, seen = 0, self.events
            else:
                quiet += 1


class SimulatedGameServers:
    """GameServers that become Ready after `startup` seconds and go away when shut down."""

    def __init__(
        self,
        clientset: Clientset,
        factory: SharedInformerFactory,
        clock: FakeClock,
        startup: float,
    ) -> None:
        self.clientset = clientset
        self.clock = clock
        self.startup = startup
        informer = TypedFactory.from_generic(factory).agones().v1().game_servers()
        self.lister = informer.lister()
        self.queue = WorkerQueue(
            self.sync, structlog.get_logger(), "gameserver", "simulated-game-servers", clock=clock
        )
        self._ready_at: dict[str, float] = {}
        self.ending: set[str] = set()
        informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self.queue.enqueue_immediately,
                update_func=lambda _old, new: self.queue.enqueue_immediately(new),
                delete_func=self._forget,
            )
        )

    def _forget(self, obj: Any) -> None:
        gs = getattr(obj, "obj", obj)
        if isinstance(gs, GameServer):
            key = f"{gs.meta.get_namespace()}/{gs.meta.get_name()}"
            self._ready_at.pop(key, None)
            self.ending.discard(key)

    def end_session(self, key: str) -> None:
        self.ending.add(key)
        self.queue.enqueue_immediately(key)

    async def sync(self, key: str) -> None:
        namespace, name = split_meta_namespace_key(key)
        try:
            gs = self.lister.game_servers(namespace).get(name)
        except NotFoundError:
            return
        if gs.meta.is_being_deleted():
            return
        client = self.clientset.agones_v1().game_servers(namespace)
        state = gs.state()
        if state == GameServerState.SHUTDOWN:
            with contextlib.suppress(NotFoundError):
                await client.delete(name)
            return
        if state in BEFORE_READY:
            ready_at = self._ready_at.setdefault(key, self.clock.now() + self.startup)
            if self.clock.now() < ready_at:
                self.queue.enqueue_after(key, ready_at - self.clock.now())
                return
            await self._write_state(client, gs, GameServerState.READY)
            return
        if state == GameServerState.ALLOCATED and key in self.ending:
            await self._write_state(client, gs, GameServerState.SHUTDOWN)

    @staticmethod
    async def _write_state(client: Any, gs: GameServer, state: GameServerState) -> None:
        updated = copy.deepcopy(gs)
        updated.gs_status.state = state
        await client.update(updated)


class Allocator:
    """Allocates Ready GameServers of one Fleet by writing them Allocated."""

    def __init__(self, clientset: Clientset, sim: SimulatedGameServers, namespace: str, fleet: str):
        self.clientset = clientset
        self.sim = sim
        self.namespace = namespace
        self.selector = selector_from_set({FLEET_NAME_LABEL: fleet})
        self._taken: set[str] = set()

    def candidates(self) -> list[GameServer]:
        listed = self.sim.lister.game_servers(self.namespace).list(self.selector)
        return [
            gs
            for gs in listed
            if gs.state() == GameServerState.READY
            and not gs.meta.is_being_deleted()
            and gs.meta.get_name() not in self._taken
        ]

    async def allocate(self) -> str | None:
        """The allocated GameServer's key, or None when no Ready GameServer could be had."""
        client = self.clientset.agones_v1().game_servers(self.namespace)
        for gs in sorted(self.candidates(), key=lambda g: g.meta.get_name()):
            updated = copy.deepcopy(gs)
            updated.gs_status.state = GameServerState.ALLOCATED
            try:
                await client.update(updated)
            except ApiError as err:
                if is_conflict(err) or isinstance(err, NotFoundError):
                    continue
                raise
            self._taken.add(gs.meta.get_name())
            return f"{self.namespace}/{gs.meta.get_name()}"
        return None

    def release(self, key: str) -> None:
        self._taken.discard(split_meta_namespace_key(key)[1])
        self.sim.end_session(key)
