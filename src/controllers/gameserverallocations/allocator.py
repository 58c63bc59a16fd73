"""The allocator (Agones `pkg/gameserverallocations/allocator.go`), shared by the Kubernetes API
path of `agones extensions` and by the allocator service.

`await Allocator.allocate(gsa)` defaults and validates the GameServerAllocation (invalid:
`GameServerAllocationInvalid` carrying the field errors, for a 422 `Status` or INVALID_ARGUMENT),
converts deprecated `required`/`preferred` into `selectors`, and returns the same object with its
status: `Allocated` (name, address, addresses, ports, node, source `local`, the GameServer's
metadata, counters and lists after the actions), `UnAllocated` (nothing matched) or `Contention`
(every attempt lost its candidate to another allocation). Other failures (API errors that outlast
the retries) are raised, after asking the cache to resync. With `multiClusterSetting.enabled` and a
`multi_cluster` hook, the hook decides (it gets `allocate_from_local_cluster` for the policies that
point at this cluster); without a hook allocation is local.

Batching: requests queue (100 deep) to one loop that serves them one after the other from the
cache's candidates, which the cache keeps in Agones' order as they change (see
`allocation_cache.py`), so a request never waits for a sort of the whole cache: where Agones sorts
once per batch and serves the batch from that list, each request here walks the order of the
moment (Agones' order for a batch of one). With `batch_wait_time` 0 (the default here) an idle
loop waits for the next request and serves it at once: a lone request never waits. With
`batch_wait_time` > 0 the loop sleeps that long whenever the queue is empty, as Agones does (its
default is 0.5 s). Chosen candidates leave the cache and are written Allocated by up to 100
concurrent updates; a write that fails other than with a conflict puts the candidate back.
Attempts: 5, 10 ms apart with 10% jitter.

Several replicas: `settings.partition` (see `partition.py`) gives each a preferred share of the
candidates, so they do not all reach for the same first server.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import structlog
from prometheus_client import CollectorRegistry

from ...apis.agones.v1.gameserver import GameServer, GameServerState
from ...apis.allocation.v1.gameserverallocation import (
    GameServerAllocation,
    GameServerAllocationSpec,
    GameServerAllocationState,
    GameServerAllocationStatus,
    GameServerMetadata,
    MetaPatch,
    MultiClusterSetting,
    apply_defaults,
    converter,
)
from ...apis.allocation.v1.validation import validate
from ...apis.field import FieldError
from ...apis.meta.objectmeta import ObjectMeta, format_rfc3339_nano
from ...client.errors import is_conflict
from ...clock import Clock, RealClock
from ...featuregates import Feature, FeatureGates
from ...informers import SharedInformerFactory
from ...record import EventBroadcaster, EventType
from ..gameservers import informers
from ..gameservers.gameservers import deep_copy
from ..gameservers.pernodecounter import PerNodeCounter
from .allocation_cache import AllocationCache, ConflictInGameServerSelection
from .metrics import AllocationMetrics, families
from .partition import Partition

LAST_ALLOCATED_ANNOTATION_KEY = "agones.dev/last-allocated"
LOCAL_ALLOCATION_SOURCE = "local"
MAX_BATCH_QUEUE = 100

LocalAllocate = Callable[[GameServerAllocation], Awaitable[GameServerAllocation]]
MultiClusterAllocate = Callable[
    [GameServerAllocation, LocalAllocate], Awaitable[GameServerAllocation]
]
"""The multi-cluster hook: `(gsa, allocate_from_local_cluster) -> gsa with status`."""


class GameServerAllocationInvalid(Exception):
    """The request failed validation; `errors` are Agones' field errors."""

    def __init__(self, name: str, errors: list[FieldError]) -> None:
        super().__init__("; ".join(str(e) for e in errors))
        self.name = name
        self.errors = errors


class NoGameServer(Exception):
    """Nothing matched (Go `ErrNoGameServer`)."""

    def __init__(self) -> None:
        super().__init__("Could not find an Allocatable GameServer")


@dataclass
class AllocatorSettings:
    batch_wait_time: float = 0.0
    """Seconds the idle batch loop sleeps (Agones 0.5); 0 serves a lone request at once."""
    update_workers: int = MAX_BATCH_QUEUE
    """Concurrent allocation writes."""
    retry_steps: int = 5
    """Attempts per allocation."""
    retry_interval: float = 0.01
    """Seconds between attempts (before jitter)."""
    retry_jitter: float = 0.1
    """Up to this fraction of the interval is added at random."""
    partition: Partition = field(default_factory=Partition)
    """This replica's preferred share of the candidates."""


@dataclass
class _Request:
    gsa: GameServerAllocation
    future: asyncio.Future[GameServer]


def last_allocated_timestamp(now: float) -> str:
    """Go's `time.Now().MarshalText()` (RFC 3339 with nanoseconds, zeros trimmed)."""
    return format_rfc3339_nano(datetime.fromtimestamp(now, UTC))


def apply_allocation_to_game_server(
    gs: GameServer, gsa: GameServerAllocation, now: float, gates: FeatureGates
) -> tuple[list[str], list[str]]:
    """Mutate `gs` (a private copy) into its allocated form; (counter errors, list errors)."""
    spec = (
        gsa.spec if isinstance(gsa.spec, GameServerAllocationSpec) else GameServerAllocationSpec()
    )
    patch = spec.metadata if isinstance(spec.metadata, MetaPatch) else MetaPatch()
    for key, value in (patch.labels or {}).items():
        gs.meta.set_label(key, value)
    for key, value in (patch.annotations or {}).items():
        gs.meta.set_annotation(key, value)
    gs.meta.set_annotation(LAST_ALLOCATED_ANNOTATION_KEY, last_allocated_timestamp(now))
    gs.gs_status.state = GameServerState.ALLOCATED
    counter_errors: list[str] = []
    list_errors: list[str] = []
    if gates.enabled(Feature.COUNTS_AND_LISTS):
        for name, counter_action in (spec.counters or {}).items():
            counter_errors += counter_action.counter_actions(name, gs)
        for name, list_action in (spec.lists or {}).items():
            list_errors += list_action.list_actions(name, gs)
    return counter_errors, list_errors


def allocated_status(gsa: GameServerAllocation, gs: GameServer) -> None:
    """Fill the GSA from the allocated GameServer (Go `allocateFromLocalCluster`)."""
    if not isinstance(gsa.metadata, ObjectMeta):
        gsa.metadata = ObjectMeta()
    gsa.metadata.name = gs.meta.get_name()
    status = gs.gs_status
    gsa.status = GameServerAllocationStatus(
        state=GameServerAllocationState.ALLOCATED,
        game_server_name=gs.meta.get_name(),
        ports=status.ports,
        address=status.address,
        addresses=status.addresses,
        node_name=status.node_name,
        source=LOCAL_ALLOCATION_SOURCE,
        metadata=GameServerMetadata(
            labels=gs.meta.labels if isinstance(gs.meta.labels, dict) else None,
            annotations=gs.meta.annotations if isinstance(gs.meta.annotations, dict) else None,
        ),
        counters=status.counters,
        lists=status.lists,
    )


def _state_only(gsa: GameServerAllocation, state: GameServerAllocationState) -> None:
    gsa.status = GameServerAllocationStatus(state=state, game_server_name="", source="")


class Allocator:
    def __init__(
        self,
        client: informers.Client,
        factory: SharedInformerFactory,
        events: EventBroadcaster,
        gates: FeatureGates,
        settings: AllocatorSettings | None = None,
        *,
        counter: PerNodeCounter | None = None,
        multi_cluster: MultiClusterAllocate | None = None,
        registry: CollectorRegistry | None = None,
        clock: Clock | None = None,
        logger: Any = None,
    ) -> None:
        self.client = client
        self.gates = gates
        self.settings = settings or AllocatorSettings()
        self.multi_cluster = multi_cluster
        self.clock = clock or RealClock()
        self.log = (logger or structlog.get_logger()).bind(component="allocator")
        self.recorder = events.new_recorder("GameServerAllocation-Allocator")
        self.counter = counter or PerNodeCounter(factory)
        self.allocation_cache = AllocationCache(factory, self.counter, gates, self.log)
        self.latency, self.retries = families(registry)
        self._pending: asyncio.Queue[_Request] = asyncio.Queue(MAX_BATCH_QUEUE)
        self._updates = asyncio.Semaphore(self.settings.update_workers)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._started = False

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self) -> None:
        """Wait for the GameServer informer, build the cache, start the cache and batch loops.

        The caller starts the informer factory (before or after this call)."""
        if self._started:
            return
        await self.allocation_cache.informer.wait_for_sync()
        self.allocation_cache.sync_cache()
        self._spawn(self.allocation_cache.workerqueue.run(1))
        self._spawn(self.listen_and_allocate())
        self._started = True

    async def stop(self) -> None:
        tasks, self._tasks = list(self._tasks), set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._started = False

    async def run(self) -> None:
        """`start`, then serve until cancelled, then `stop`."""
        try:
            await self.start()
            await asyncio.Event().wait()
        finally:
            await self.stop()

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- the public call --------------------------------------------------------------------

    async def allocate(self, gsa: GameServerAllocation) -> GameServerAllocation:
        """Allocate for `gsa` (changed in place and returned with its status)."""
        metrics = AllocationMetrics(self.latency, self.retries, self.clock.monotonic())
        attempts = 0
        try:
            apply_defaults(gsa, self.gates)
            metrics.set_request(gsa)
            errs = validate(gsa, self.gates)
            if errs:
                name = gsa.metadata.get_name() if isinstance(gsa.metadata, ObjectMeta) else ""
                raise GameServerAllocationInvalid(name, errs)
            converter(gsa)
            spec = gsa.spec
            assert isinstance(spec, GameServerAllocationSpec)
            mc = spec.multi_cluster_setting
            if isinstance(mc, MultiClusterSetting) and mc.enabled and self.multi_cluster:
                out = await self.multi_cluster(gsa, self.allocate_from_local_cluster)
            else:
                out, attempts = await self._allocate_locally(gsa)
        except GameServerAllocationInvalid:
            metrics.set_error()
            raise
        except Exception:
            metrics.set_error()
            metrics.record(self.clock.monotonic(), attempts)
            raise
        metrics.set_response(out)
        metrics.record(self.clock.monotonic(), attempts)
        return out

    async def allocate_from_local_cluster(self, gsa: GameServerAllocation) -> GameServerAllocation:
        """Allocate in this cluster (validated, converted GSA), with Agones' retries."""
        out, _ = await self._allocate_locally(gsa)
        return out

    async def _allocate_locally(
        self, gsa: GameServerAllocation
    ) -> tuple[GameServerAllocation, int]:
        last: Exception | None = None
        s = self.settings
        for attempt in range(1, s.retry_steps + 1):
            try:
                gs = await self._enqueue(gsa)
            except NoGameServer:
                _state_only(gsa, GameServerAllocationState.UN_ALLOCATED)
                return gsa, attempt
            except Exception as err:
                last = err
                self.log.debug("failed to allocate, retrying", error=str(err), attempt=attempt)
                if attempt < s.retry_steps:
                    jitter = 1 + s.retry_jitter * random.random()
                    await self.clock.sleep(s.retry_interval * jitter)
                continue
            allocated_status(gsa, gs)
            return gsa, attempt
        if isinstance(last, ConflictInGameServerSelection):
            _state_only(gsa, GameServerAllocationState.CONTENTION)
            return gsa, s.retry_steps
        self.allocation_cache.resync()
        assert last is not None
        raise last

    async def _enqueue(self, gsa: GameServerAllocation) -> GameServer:
        future: asyncio.Future[GameServer] = asyncio.get_running_loop().create_future()
        await self._pending.put(_Request(gsa, future))
        return await future

    # -- the batch loop ---------------------------------------------------------------------

    async def listen_and_allocate(self) -> None:
        """The batching loop (Go `ListenAndAllocate`); runs until cancelled."""
        while True:
            if self._pending.empty():
                if self.settings.batch_wait_time > 0:
                    await self.clock.sleep(self.settings.batch_wait_time)
                    continue
                request = await self._pending.get()
            else:
                request = self._pending.get_nowait()
            if request.future.done():  # the caller went away
                continue
            try:
                self._serve(request)
            except Exception as err:  # never let one request stop the loop for all others
                self.log.error("allocation batch failed", error=str(err), exc_info=err)
                if not request.future.done():
                    request.future.set_exception(err)

    def _serve(self, request: _Request) -> None:
        """Choose the request's GameServer, take it out of the cache, start its write."""
        cache = self.allocation_cache
        try:
            gs = cache.find_game_server(request.gsa, self.settings.partition.owned())
        except ValueError as err:
            request.future.set_exception(err)
            return
        if gs is None:
            request.future.set_exception(NoGameServer())
            return
        try:
            cache.remove_game_server(gs)
        except ConflictInGameServerSelection as err:
            request.future.set_exception(err)
            return
        self._start_update(request, gs)

    def _start_update(self, request: _Request, gs: GameServer) -> None:
        self._spawn(self._update(request, gs))

    async def _update(self, request: _Request, cached: GameServer) -> None:
        async with self._updates:
            try:
                updated = await self._apply_and_write(deep_copy(cached), request.gsa)
            except Exception as err:
                if is_conflict(err):
                    self.allocation_cache.release(cached)
                else:
                    self.allocation_cache.add_game_server(cached)
                if not request.future.done():
                    request.future.set_exception(err)
                return
        self.allocation_cache.written(updated)
        if not request.future.done():
            request.future.set_result(updated)

    async def _apply_and_write(self, gs: GameServer, gsa: GameServerAllocation) -> GameServer:
        """Apply the allocation to `gs`, write it, record the events (Go
        `applyAllocationToGameServer`)."""
        counter_errors, list_errors = apply_allocation_to_game_server(
            gs, gsa, self.clock.now(), self.gates
        )
        updated = await informers.update_game_server(self.client, gs)
        if counter_errors:
            self.recorder.event(
                updated, EventType.WARNING, "CounterActionError", "\n".join(counter_errors)
            )
        if list_errors:
            self.recorder.event(
                updated, EventType.WARNING, "ListActionError", "\n".join(list_errors)
            )
        self.recorder.event(updated, EventType.NORMAL, str(updated.state() or ""), "Allocated")
        return updated
