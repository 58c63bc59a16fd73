"""The GameServerSet controller (Agones `pkg/gameserversets/controller.go`).

A GameServerSet keeps `spec.replicas` GameServers up. `sync_game_server_set(key)` reads the set and
lists its GameServers (by an index on the set label) through the informers' shared MutationCaches,
so this process's own writes (status, Shutdown) and the GameServer controller's are seen at once;
it overlays its pending creations and deletions (`GameServerStateCache`, so a lagging cache never
makes it create twice), asks the pure
`compute_reconciliation_action` what to do, creates (`generateName: <set>-`, at most
`max_creation_parallelism` at a time) and deletes (by writing state Shutdown — the GameServer
controller then deletes; at most `max_deletion_parallelism` at a time), recording `SuccessfulCreate`
/ `SuccessfulDelete` on the set, and finally writes the set's status when it changed. When the
action was capped (batch sizes, pods pending) the key is re-enqueued at once; a failed creation or
deletion is raised after the status write, so the queue retries it with back-off.

Keys come from GameServerSet adds and replica changes (rate-limited) and from every add, update
(unless being deleted) and delete of a GameServer the set controls (immediately). The queue's rate
limiter is Agones' `FastRateLimiter(3 s)`: 200 ms for five retries, then 3 s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence, Sized
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

import msgspec
import structlog
from msgspec import UNSET

from ...apis.agones.v1.common import Priority
from ...apis.agones.v1.gameserver import (
    GAME_SERVER_ERRORED_AT_ANNOTATION,
    GameServer,
    GameServerState,
)
from ...apis.agones.v1.gameserverset import GameServerSet, GameServerSetStatus
from ...apis.meta.objectmeta import controller_of, parse_time
from ...client.errors import NotFoundError, is_conflict
from ...client.versioned import Clientset
from ...clock import Clock, RealClock
from ...featuregates import FeatureGates
from ...informers import DeletedFinalStateUnknown, SharedInformerFactory
from ...informers.shared_informer import ResourceEventHandlerFuncs
from ...record import EventBroadcaster, EventType
from ...workqueue import WorkerQueue, fast_rate_limiter
from ..gameservers import NodeCount, PerNodeCounter, informers
from ..gameservers.gameservers import with_own_status
from .allocation_overflow import AllocationOverflowController
from .gameserver_state_cache import GameServerStateCache
from .gameserversets import (
    ensure_game_server_set_index,
    game_server_sets_informer,
    list_game_servers_by_game_server_set_owner,
    priorities_for,
    scheduling_of,
    sort_game_servers_by_strategy,
)
from .metrics import CreationLatency, creation_duration
from .status import compute_status

GAME_SERVER_ERROR_DELETION_DELAY = 30.0
"""Seconds a GameServer stays in Error (from its `agones.dev/errored-at`) before it is deleted."""

T = TypeVar("T")


@dataclass
class GameServerSetSettings:
    """The GameServerSet controller's limits: Agones' controller flags of the same names
    (`--max-creation-parallelism` …) and their defaults."""

    max_creation_parallelism: int = 16
    """GameServers created at once."""
    max_game_server_creations_per_batch: int = 64
    """GameServers created per sync; more is left to an immediate re-sync."""
    max_deletion_parallelism: int = 64
    """GameServers moved to Shutdown at once."""
    max_game_server_deletions_per_batch: int = 64
    """GameServers deleted per sync."""
    max_pod_pending_count: int = 5000
    """GameServers of one set that may wait for a running pod before no more are created."""


class ReconciliationAction(NamedTuple):
    num_servers_to_add: int
    to_delete: list[GameServer]
    is_partial: bool


def should_delete_errored_game_server(gs: GameServer, now: float) -> bool:
    """An Error GameServer goes once its `errored-at` is 30 s old (at once if absent or bad)."""
    errored_at = gs.meta.get_annotations().get(GAME_SERVER_ERRORED_AT_ANNOTATION, "")
    if not errored_at:
        return True
    try:
        when = parse_time(errored_at).timestamp()
    except ValueError:
        return True
    return now - when >= GAME_SERVER_ERROR_DELETION_DELAY


_POD_PENDING = frozenset(
    {
        GameServerState.PORT_ALLOCATION,
        GameServerState.CREATING,
        GameServerState.STARTING,
        GameServerState.SCHEDULED,
    }
)


def compute_reconciliation_action(
    strategy: object,
    game_servers: Sequence[GameServer],
    counts: Mapping[str, NodeCount],
    target_replica_count: int,
    max_creations: int,
    max_deletions: int,
    max_pending: int,
    priorities: Sequence[Priority],
    now: float,
) -> ReconciliationAction:
    """How many GameServers to add, which to delete, and whether that is only part of the work.

    Allocated and Reserved servers (not being deleted) are never touched and count as up. Of the
    rest, those being deleted (deletion timestamp or Shutdown) are ignored; Unhealthy ones and Error
    ones past the delay are deleted, each such deletion cancelling one surplus deletion; every other
    state is up (before Ready ones, and Error ones inside the delay, also pending a pod) and, beyond
    the target, surplus: the surplus is taken from the front of the strategy's scale-down order.
    """
    up_count = delete_count = pod_pending_count = 0
    potential_deletions: list[GameServer] = []
    to_delete: list[GameServer] = []

    def handle_game_server_up(gs: GameServer) -> None:
        nonlocal up_count, delete_count
        if up_count >= target_replica_count:
            delete_count += 1
        else:
            up_count += 1
        potential_deletions.append(gs)

    up_count = sum(1 for gs in game_servers if not gs.is_deletable())
    for gs in game_servers:
        if not gs.is_deletable() or gs.is_being_deleted():
            continue
        state = gs.state()
        if state in _POD_PENDING:
            pod_pending_count += 1
            handle_game_server_up(gs)
        elif state == GameServerState.UNHEALTHY or (
            state == GameServerState.ERROR and should_delete_errored_game_server(gs, now)
        ):
            to_delete.append(gs)
            delete_count -= 1
        elif state == GameServerState.ERROR:
            # Count it as up and pending, so errors do not churn out ever more GameServers.
            pod_pending_count += 1
            handle_game_server_up(gs)
        else:
            handle_game_server_up(gs)

    partial = False
    num_servers_to_add = 0
    if up_count < target_replica_count:
        wanted = target_replica_count - up_count
        num_servers_to_add = min(wanted, max_creations)
        if num_servers_to_add + pod_pending_count > max_pending:
            num_servers_to_add = max(0, max_pending - pod_pending_count)
        partial = num_servers_to_add != wanted

    if delete_count > 0:
        ordered = sort_game_servers_by_strategy(strategy, potential_deletions, counts, priorities)
        to_delete.extend(ordered[:delete_count])
    if len(to_delete) > max_deletions:
        to_delete = to_delete[:max_deletions]
        partial = True
    return ReconciliationAction(num_servers_to_add, to_delete, partial)


async def parallelize(
    items: Iterable[T], parallelism: int, work: Callable[[T], Awaitable[None]]
) -> Exception | None:
    """Run `work` over `items` with `parallelism` workers; a worker stops at its first error, the
    others go on. Returns one of the errors, or None when every call succeeded."""
    pending = iter(items)
    errors: list[Exception] = []

    async def worker() -> None:
        for item in pending:
            try:
                await work(item)
            except Exception as err:
                errors.append(err)
                return

    # No more workers (each a task) than items: a batch of 3 needs 3, not `parallelism`.
    workers = min(parallelism, len(items)) if isinstance(items, Sized) else parallelism
    await asyncio.gather(*(worker() for _ in range(max(1, workers))))
    return errors[0] if errors else None


def _name(obj: GameServer | GameServerSet) -> str:
    return obj.metadata.get_name() if obj.metadata is not UNSET else ""


def _namespace(obj: GameServer | GameServerSet) -> str:
    return obj.metadata.get_namespace() if obj.metadata is not UNSET else ""


class Controller:
    """The GameServerSet controller, with its allocation-overflow sub-controller."""

    def __init__(
        self,
        clientset: Clientset,
        factory: SharedInformerFactory,
        counter: PerNodeCounter,
        events: EventBroadcaster,
        gates: FeatureGates,
        settings: GameServerSetSettings | None = None,
        *,
        clock: Clock | None = None,
        logger: Any = None,
        registry: Any = None,
    ) -> None:
        self.clientset = clientset
        self.counter = counter
        self.gates = gates
        self.settings = settings or GameServerSetSettings()
        self.clock = clock or RealClock()
        self.log = (logger or structlog.get_logger()).bind(controller="gameserverset")
        self.recorder = events.new_recorder("gameserverset-controller")
        self.creation_duration = creation_duration(registry)
        gs_informer = informers.game_servers(factory)  # shared: decoder and transform
        gss_informer = game_server_sets_informer(factory)
        ensure_game_server_set_index(gs_informer.informer())
        # Shared with the GameServer controllers: they see our Shutdown writes at once, and we
        # see theirs; the set's own cache holds our status writes.
        self.game_server_cache = gs_informer.informer().mutation_cache()
        self.game_server_set_cache = gss_informer.informer().mutation_cache()
        self.game_server_set_lister = gss_informer.lister()
        self.state_cache = GameServerStateCache(self.clock)
        self.workerqueue = WorkerQueue(
            self.sync_game_server_set,
            self.log,
            "gameserverset",
            "agones.dev.GameServerSetController",
            fast_rate_limiter(3.0),
            clock=clock,
        )
        self.allocation_controller = AllocationOverflowController(
            clientset, factory, counter, gates, clock=clock, logger=self.log
        )
        gss_informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self.workerqueue.enqueue,
                update_func=self._on_game_server_set_update,
                delete_func=self._on_game_server_set_delete,
            )
        )
        gs_informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self.game_server_event_handler,
                update_func=self._on_game_server_update,
                delete_func=self.game_server_event_handler,
            )
        )

    # -- runnable ---------------------------------------------------------------------------------

    async def run(self, workers: int) -> None:
        await asyncio.gather(
            self.workerqueue.run(workers), self.allocation_controller.workerqueue.run(1)
        )

    async def shut_down_with_drain(self) -> None:
        await asyncio.gather(
            self.workerqueue.shut_down_with_drain(),
            self.allocation_controller.workerqueue.shut_down_with_drain(),
        )

    def healthy(self) -> None:
        self.workerqueue.healthy()
        self.allocation_controller.workerqueue.healthy()

    # -- event handlers ---------------------------------------------------------------------------

    def _on_game_server_set_update(self, old: GameServerSet, new: GameServerSet) -> None:
        if _replicas(old) != _replicas(new):
            self.workerqueue.enqueue(new)

    def _on_game_server_set_delete(self, obj: Any) -> None:
        gss = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if isinstance(gss, GameServerSet):
            self.state_cache.delete_game_server_set(gss)
            meta = gss.metadata if gss.metadata is not UNSET else None
            if meta is not None:
                self.game_server_set_cache.forget(f"{meta.get_namespace()}/{meta.get_name()}")

    def _on_game_server_update(self, old: GameServer, new: GameServer) -> None:
        if new.metadata is UNSET or not new.meta.is_being_deleted():
            self.game_server_event_handler(new)

    def game_server_event_handler(self, obj: Any) -> None:
        gs = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if not isinstance(gs, GameServer) or gs.metadata is UNSET:
            return
        ref = controller_of(gs.meta)
        if ref is None or not isinstance(ref.name, str):
            return
        lister = self.game_server_set_lister.game_server_sets(gs.meta.get_namespace())
        try:
            gss = lister.get(ref.name)
        except NotFoundError:
            self.log.debug("owner GameServerSet no longer available for syncing", ref=ref.name)
            return
        self.workerqueue.enqueue_immediately(gss)

    # -- the sync ---------------------------------------------------------------------------------

    async def sync_game_server_set(self, key: str) -> None:
        """Bring the set `key` (namespace/name) to its replica count and write its status."""
        log = self.workerqueue.logger_for(key)
        gss: GameServerSet | None = self.game_server_set_cache.get_by_key(key)
        if gss is None:
            log.debug("GameServerSet is no longer available for syncing")
            return
        listed = list_game_servers_by_game_server_set_owner(self.game_server_cache, gss)
        game_servers = self.state_cache.for_game_server_set(gss).reconcile_with_updated_server_list(
            listed
        )
        action = compute_reconciliation_action(
            scheduling_of(gss),
            game_servers,
            self.counter.counts(),
            _replicas(gss),
            self.settings.max_game_server_creations_per_batch,
            self.settings.max_game_server_deletions_per_batch,
            self.settings.max_pod_pending_count,
            priorities_for(gss, self.gates),
            self.clock.now(),
        )
        deleting = gss.metadata is not UNSET and gss.metadata.is_being_deleted()
        to_add = 0 if deleting else action.num_servers_to_add
        log.debug(
            "reconciling GameServerSet",
            target_replica_count=_replicas(gss),
            num_servers_to_add=to_add,
            num_servers_to_delete=len(action.to_delete),
            is_partial=action.is_partial,
        )
        try:
            error = await self._reconcile(gss, to_add, action.to_delete)
            await self.sync_game_server_set_status(gss, game_servers)
        finally:
            if action.is_partial:
                self.workerqueue.enqueue_immediately(gss)
        if error is not None:
            raise error

    async def _reconcile(
        self, gss: GameServerSet, to_add: int, to_delete: list[GameServer]
    ) -> Exception | None:
        """Create and delete; log and return the first failure (the status is written anyway)."""
        added = deleted = None
        if to_add > 0:
            added = await self.add_more_game_servers(gss, to_add)
            self._log_failure("error adding game servers", gss, added)
        if to_delete:
            deleted = await self.delete_game_servers(gss, to_delete)
            self._log_failure("error deleting game servers (moving them to Shutdown)", gss, deleted)
        return added or deleted

    def _log_failure(self, what: str, gss: GameServerSet, error: Exception | None) -> None:
        if error is None:
            return
        log = self.log.debug if is_conflict(error) else self.log.warning
        log(what, gss=f"{_namespace(gss)}/{_name(gss)}", error=str(error))

    async def add_more_game_servers(self, gss: GameServerSet, count: int) -> Exception | None:
        latency = CreationLatency(self.creation_duration, self.clock)
        latency.set_request(count)
        client = self.clientset.agones_v1().game_servers(_namespace(gss))
        entry = self.state_cache.for_game_server_set(gss)

        async def create(_: int) -> None:
            stored = await client.create(gss.game_server())
            entry.created(stored)
            self.recorder.eventf(
                gss, EventType.NORMAL, "SuccessfulCreate", "Created gameserver: %s", _name(stored)
            )

        error = await parallelize(range(count), self.settings.max_creation_parallelism, create)
        if error is not None:
            latency.set_error("error")
        latency.record()
        return error

    async def delete_game_servers(
        self, gss: GameServerSet, to_delete: Sequence[GameServer]
    ) -> Exception | None:
        """Move each to Shutdown; the GameServer controller deletes it."""
        entry = self.state_cache.for_game_server_set(gss)

        async def shut_down(gs: GameServer) -> None:
            gs_copy = with_own_status(gs)
            gs_copy.gs_status.state = GameServerState.SHUTDOWN
            client = self.clientset.agones_v1().game_servers(_namespace(gs))
            stored = await client.update(gs_copy)
            self.game_server_cache.mutation(stored)
            entry.deleted(stored)
            self.recorder.eventf(
                gss,
                EventType.NORMAL,
                "SuccessfulDelete",
                "Deleted gameserver in state %s: %s",
                str(gs.state() or ""),
                _name(gs),
            )

        return await parallelize(to_delete, self.settings.max_deletion_parallelism, shut_down)

    async def sync_game_server_set_status(
        self, gss: GameServerSet, game_servers: Sequence[GameServer]
    ) -> None:
        await self.update_status_if_changed(gss, compute_status(game_servers, self.gates))

    async def update_status_if_changed(
        self, gss: GameServerSet, status: GameServerSetStatus
    ) -> None:
        current = gss.status if isinstance(gss.status, GameServerSetStatus) else None
        if current is not None and msgspec.to_builtins(current) == msgspec.to_builtins(status):
            return
        gss_copy = msgspec.structs.replace(gss, status=status)
        client = self.clientset.agones_v1().game_server_sets(_namespace(gss))
        self.game_server_set_cache.mutation(await client.update_status(gss_copy))


def _replicas(gss: GameServerSet) -> int:
    replicas = gss.spec.replicas if gss.spec is not UNSET else UNSET
    return replicas if isinstance(replicas, int) else 0
