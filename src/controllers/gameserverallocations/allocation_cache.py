"""The GameServers that could be allocated (Agones `allocation_cache.go`).

`AllocationCache` holds the Ready and Allocated GameServers, not being deleted, keyed
`namespace/name`, as they came from the shared GameServer informer (shared objects: never mutate
them). It is fed by the informer's events (adds too, so a GameServer created Ready is a candidate
without waiting for a resync; Agones only listens to updates and deletes) and rebuilt from the
lister by `run()` at start and by `resync()` after an unexpected allocation error, through a
WorkerQueue with one worker so rebuilds never overlap.

`remove_game_server(gs)` takes a candidate out for the duration of an allocation attempt and
raises `ConflictInGameServerSelection` when it was no longer there (another attempt took it);
until `written(gs)` (the write succeeded: the returned object goes to the informer's shared
MutationCache) or `add_game_server(gs)` / `release(gs)` (it failed) the candidate is in flight, and
a rebuild does not bring it back from a lister that has not seen the write yet; a rebuild also
reads each GameServer through the MutationCache, so it never restores a version older than one
this process wrote. Without these a resync under load re-adds stale Ready copies, whose writes
conflict, fail the request, and trigger the next resync. `list_sorted_game_servers(gsa)` /
`list_sorted_game_servers_priorities(gsa)` return a fresh sorted list (see `find.py`).
"""

from __future__ import annotations

from typing import Any

import structlog

from ...apis.agones.v1.gameserver import GameServer, GameServerState
from ...apis.allocation.v1.gameserverallocation import GameServerAllocation
from ...featuregates import FeatureGates
from ...informers import ExplicitKey, SharedInformerFactory
from ...informers.shared_informer import ResourceEventHandlerFuncs
from ...informers.store import DeletedFinalStateUnknown
from ...workqueue import WorkerQueue
from ..gameservers import informers
from ..gameservers.pernodecounter import PerNodeCounter
from .find import sort_distributed, sort_packed

RESYNC_KEY = "allocation-cache-resync"


class ConflictInGameServerSelection(Exception):
    """The candidate was already taken by another allocation (Go `ErrConflictInGameServerSelection`)."""

    def __init__(self) -> None:
        super().__init__("The Gameserver was already allocated")


def _allocatable(gs: GameServer) -> bool:
    """Ready or Allocated, and not being deleted (Go `readyOrAllocatedGameServerMatcher`)."""
    return not gs.is_being_deleted() and gs.state() in (
        GameServerState.READY,
        GameServerState.ALLOCATED,
    )


def _key(gs: GameServer) -> str:
    return f"{gs.meta.get_namespace()}/{gs.meta.get_name()}"


class AllocationCache:
    def __init__(
        self,
        factory: SharedInformerFactory,
        counter: PerNodeCounter,
        gates: FeatureGates,
        logger: Any = None,
    ) -> None:
        self.counter = counter
        self.gates = gates
        self.log = (logger or structlog.get_logger()).bind(component="allocation-cache")
        self.cache: dict[str, GameServer] = {}
        self.in_flight: set[str] = set()
        informer = informers.game_servers(factory)
        self.informer = informer.informer()
        self.mutations = self.informer.mutation_cache()
        self.game_server_lister = informer.lister()
        self.informer.add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._on_add, update_func=self._on_update, delete_func=self._on_delete
            )
        )
        self.workerqueue = WorkerQueue(
            self.sync_game_servers,
            self.log,
            "gameServerKey",
            "agones.dev.AllocationCache",
        )

    def _on_add(self, gs: GameServer) -> None:
        if _allocatable(gs):
            self.cache[_key(gs)] = gs

    def _on_update(self, old: GameServer, new: GameServer) -> None:
        key = _key(new)
        if new.is_being_deleted():
            self.cache.pop(key, None)
        elif _allocatable(new):
            self.cache[key] = new
        elif _allocatable(old):
            self.cache.pop(key, None)

    def _on_delete(self, obj: Any) -> None:
        gs = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if isinstance(gs, GameServer):
            self.cache.pop(_key(gs), None)
        elif isinstance(obj, DeletedFinalStateUnknown):
            self.cache.pop(obj.key, None)

    def remove_game_server(self, gs: GameServer) -> None:
        key = _key(gs)
        if self.cache.pop(key, None) is None:
            raise ConflictInGameServerSelection()
        self.in_flight.add(key)

    def add_game_server(self, gs: GameServer) -> None:
        key = _key(gs)
        self.in_flight.discard(key)
        self.cache[key] = gs

    def release(self, gs: GameServer) -> None:
        """The write failed with a conflict: leave it to the informer to bring the newer one."""
        self.in_flight.discard(_key(gs))

    def written(self, gs: GameServer) -> None:
        """The allocation write succeeded and returned `gs`."""
        self.mutations.mutation(gs)
        self.in_flight.discard(_key(gs))

    def __len__(self) -> int:
        return len(self.cache)

    def list_sorted_game_servers(self, gsa: GameServerAllocation | None) -> list[GameServer]:
        """Packed order (Go `ListSortedGameServers`)."""
        return sort_packed(list(self.cache.values()), gsa, self.counter.counts(), self.gates)

    def list_sorted_game_servers_priorities(
        self, gsa: GameServerAllocation | None
    ) -> list[GameServer]:
        """Priorities, then name (Go `ListSortedGameServersPriorities`)."""
        return sort_distributed(list(self.cache.values()), gsa, self.gates)

    def resync(self) -> None:
        """Rebuild soon from the lister (the cache may have missed something)."""
        self.workerqueue.enqueue_immediately(ExplicitKey(RESYNC_KEY))

    async def sync_game_servers(self, key: str) -> None:
        self.log.debug("refreshing allocation cache", key=key)
        self.sync_cache()

    def sync_cache(self) -> None:
        """Make the cache equal to the allocatable GameServers of the lister."""
        current: dict[str, GameServer] = {}
        for listed in self.game_server_lister.list():
            key = _key(listed)
            gs = self.mutations.get_by_key(key) or listed
            if key not in self.in_flight and _allocatable(gs):
                current[key] = gs
        for key in [k for k in self.cache if k not in current]:
            del self.cache[key]
        for key, gs in current.items():
            cached = self.cache.get(key)
            if cached is None or cached.meta.resource_version != gs.meta.resource_version:
                self.cache[key] = gs

    async def run(self) -> None:
        """Wait for the informer, build the cache, then serve `resync()` until cancelled."""
        await self.informer.wait_for_sync()
        self.sync_cache()
        await self.workerqueue.run(1)
