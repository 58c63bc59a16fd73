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
conflict, fail the request, and trigger the next resync.

`find_game_server(gsa, owned)` is Agones' sort plus `findGameServerForAllocation` without the sort:
the candidates are also kept in order, as they change, in a `candidates.CandidateIndex` per sort
key (scheduling and priorities; the 16 most recently used are kept and updated), so a request walks
the current Packed (or Distributed) order of the cache as `find.sort_packed` would sort it, with
the per-node counts of that moment. With a partition a second index per sort key holds only this
replica's share: its first match of the first selector is the answer when there is one, found
without walking past the candidates other replicas took a moment ago (the watch has not told this
one yet; under load these were most of the walk). `list_sorted_game_servers(gsa)` /
`list_sorted_game_servers_priorities(gsa)` still return a freshly sorted list (see `find.py`).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import structlog

from ...apis.agones.v1.gameserver import GameServer, GameServerState
from ...apis.allocation.v1.gameserverallocation import (
    SCHEDULING_DISTRIBUTED,
    SCHEDULING_PACKED,
    GameServerAllocation,
    GameServerAllocationSpec,
    SortKey,
    sort_key,
)
from ...apis.meta.objectmeta import ObjectMeta
from ...featuregates import Feature, FeatureGates
from ...informers import ExplicitKey, SharedInformerFactory
from ...informers.shared_informer import ResourceEventHandlerFuncs
from ...informers.store import DeletedFinalStateUnknown
from ...workqueue import WorkerQueue
from ..gameservers import informers
from ..gameservers.pernodecounter import PerNodeCounter
from .candidates import CandidateIndex
from .find import (
    Owned,
    distributed_key,
    find_game_server_for_allocation,
    find_in_order,
    first_match,
    packed_within_key,
    selector_states,
    sort_distributed,
    sort_packed,
)

RESYNC_KEY = "allocation-cache-resync"
MAX_INDEXES = 16
"""Indexes kept (per sort key: one of every candidate and, with a partition, one of this
replica's share)."""


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
        self._indexes: OrderedDict[tuple[SortKey, Owned | None], CandidateIndex] = OrderedDict()
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

    def _put(self, key: str, gs: GameServer) -> None:
        self.cache[key] = gs
        for index in self._indexes.values():
            index.put(key, gs)

    def _pop(self, key: str) -> GameServer | None:
        gs = self.cache.pop(key, None)
        if gs is not None:
            for index in self._indexes.values():
                index.discard(key)
        return gs

    def _on_add(self, gs: GameServer) -> None:
        if _allocatable(gs):
            self._put(_key(gs), gs)

    def _on_update(self, old: GameServer, new: GameServer) -> None:
        key = _key(new)
        if new.is_being_deleted():
            self._pop(key)
        elif _allocatable(new):
            self._put(key, new)
        elif _allocatable(old):
            self._pop(key)

    def _on_delete(self, obj: Any) -> None:
        gs = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if isinstance(gs, GameServer):
            self._pop(_key(gs))
        elif isinstance(obj, DeletedFinalStateUnknown):
            self._pop(obj.key)

    def remove_game_server(self, gs: GameServer) -> None:
        key = _key(gs)
        if self._pop(key) is None:
            raise ConflictInGameServerSelection()
        self.in_flight.add(key)

    def add_game_server(self, gs: GameServer) -> None:
        key = _key(gs)
        self.in_flight.discard(key)
        self._put(key, gs)

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

    def find_game_server(
        self, gsa: GameServerAllocation, owned: Owned | None = None
    ) -> GameServer | None:
        """The candidate `gsa` gets (validated, converted), in Agones' order; None: no match.
        `owned`: this replica's share (`partition.py`), None when it owns everything.

        `ValueError` for a scheduling strategy other than Packed and Distributed."""
        spec = gsa.spec if isinstance(gsa.spec, GameServerAllocationSpec) else None
        scheduling = spec.scheduling if spec is not None else SCHEDULING_PACKED
        with_priorities = self.gates.enabled(Feature.COUNTS_AND_LISTS)
        if scheduling == SCHEDULING_DISTRIBUTED and not with_priorities:
            # Agones walks the candidates in a random order: no order to keep.
            found = find_game_server_for_allocation(
                gsa, list(self.cache.values()), self.gates, owned
            )
            return found[0] if found else None
        if scheduling not in (SCHEDULING_PACKED, SCHEDULING_DISTRIBUTED):
            raise ValueError(f"scheduling strategy of '{scheduling}' is not supported")
        namespace = gsa.metadata.get_namespace() if isinstance(gsa.metadata, ObjectMeta) else ""
        counts = self.counter.counts()
        states = selector_states(gsa)
        if owned is not None:
            # The first selector's first owned match is the answer when there is one; the
            # owned index reaches it without walking past other replicas' recent picks.
            mine = self._index(gsa, owned).ordered(namespace, counts, states)
            first = first_match(gsa, mine, self.gates)
            if first is not None:
                return first
        walk = self._index(gsa).ordered(namespace, counts, states)
        chosen = find_in_order(gsa, ((gs, None) for gs in walk), self.gates, owned)
        return chosen[0] if chosen else None

    def _index(self, gsa: GameServerAllocation, owned: Owned | None = None) -> CandidateIndex:
        """The index of the GSA's sort key (of the candidates `owned` admits, when given), built
        on first use, least recently used dropped."""
        with_priorities = self.gates.enabled(Feature.COUNTS_AND_LISTS)
        sort: SortKey = sort_key(gsa) if with_priorities else (SCHEDULING_PACKED, ())
        key = (sort, owned)
        index = self._indexes.get(key)
        if index is not None:
            self._indexes.move_to_end(key)
            return index
        spec = gsa.spec if isinstance(gsa.spec, GameServerAllocationSpec) else None
        priorities = list(spec.priorities or []) if spec is not None and with_priorities else []
        if sort[0] == SCHEDULING_DISTRIBUTED:
            index = CandidateIndex(distributed_key(priorities), grouped=False, admit=owned)
        else:
            index = CandidateIndex(packed_within_key(priorities, self.gates), admit=owned)
        for cached_key, gs in self.cache.items():
            index.put(cached_key, gs)
        self._indexes[key] = index
        if len(self._indexes) > MAX_INDEXES:
            self._indexes.popitem(last=False)
        return index

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
            self._pop(key)
        for key, gs in current.items():
            cached = self.cache.get(key)
            if cached is None or cached.meta.resource_version != gs.meta.resource_version:
                self._put(key, gs)

    async def run(self) -> None:
        """Wait for the informer, build the cache, then serve `resync()` until cancelled."""
        await self.informer.wait_for_sync()
        self.sync_cache()
        await self.workerqueue.run(1)
