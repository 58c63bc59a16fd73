"""SDKServer: the sidecar in a cluster (Agones `pkg/sdkserver/sdkserver.go`).

Contract:
* RPCs answer at once; the GameServer changes they ask for are written later, as JSON patches that
  `test` the resourceVersion, one operation key per kind of change (`updateState`, `updateLabel`,
  ...) through the framework's `WorkerQueue` (`queue.UpdateQueue`), so rapid calls coalesce (rate
  limit 500 ms by default). Decisions read the typed `GameServer` (the state and deletion checks
  that every watch event and state write make read those two fields off the JSON); the JSON patch
  is the diff of the object as read and as changed (maps off the changed paths shared, not
  copied), so fields this version does not know are never dropped.
* Ready writes RequestReady, Allocate writes Allocated and `agones.dev/last-allocated`, Reserve
  writes Reserved with `status.reservedUntil` and returns to Ready by itself when it passes (the
  timer is restored from `reservedUntil` on start), Shutdown writes Shutdown. Nothing moves an
  Unhealthy GameServer, and nothing moves one being deleted or Shut down.
* SDK labels/annotations are written under `agones.dev/sdk-`; keys must be qualified names and
  label values valid label values (INVALID_ARGUMENT otherwise).
* Health: after the first `/gshealthz` probe (or `initialDelaySeconds` after start with
  `health_autostart`), every `periodSeconds` without a ping counts a failure; `failureThreshold`
  consecutive failures write Unhealthy, which sticks.
* WatchGameServer sends the GameServer now and after every change the store's watch reports.
* Player tracking (PlayerTracking gate) and counters/lists (CountsAndLists gate) follow Agones,
  pending changes batched per operation; counter/list errors carry the gRPC codes their proto
  documents (NOT_FOUND, OUT_OF_RANGE, ALREADY_EXISTS, INVALID_ARGUMENT).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import grpc
import msgspec
import structlog
from msgspec import UNSET, UnsetType

from ..apis.agones.v1.gameserver import GameServer, GameServerState, Health, PlayerStatus
from ..apis.meta.objectmeta import format_rfc3339_nano, format_time, parse_time
from ..apis.meta.validation import is_qualified_name, is_valid_label_value
from ..featuregates import Feature, FeatureGates
from ..jsonpatch import create_patch
from ..sdk.proto import sdk_pb2
from ..sdk.proto.alpha import alpha_pb2
from ..workqueue import Requeue
from .clock import Clock, RealClock, Timer
from .countslists import (
    UPDATE_COUNTERS,
    UPDATE_LISTS,
    CounterUpdate,
    CountsAndLists,
    ListUpdate,
    merge_remove_duplicates,
)
from .errors import SDKError, plain_error
from .events import EventRecorder, go_duration
from .queue import UpdateQueue
from .sdk import METADATA_PREFIX, convert
from .store import ConflictError, GameServerStore, SubscribableStore

log = structlog.get_logger("agones.sdkserver")

UPDATE_STATE = "updateState"
UPDATE_LABEL = "updateLabel"
UPDATE_ANNOTATION = "updateAnnotation"
UPDATE_PLAYER_CAPACITY = "updatePlayerCapacity"
UPDATE_CONNECTED_PLAYERS = "updateConnectedPlayers"
LAST_ALLOCATED = "agones.dev/last-allocated"


@dataclass(frozen=True)
class SDKServerOptions:
    """Knobs of the cluster-mode sidecar; defaults are Agones'."""

    request_rate_limit: float = 0.5
    """Seconds each write waits so that rapid calls coalesce."""
    first_write_immediately: bool = False
    """Write a change at once when its key was idle for a window; coalesce only what follows."""
    player_update_period: float = 1.0
    """Seconds player connects/disconnects wait before being written (Agones' updatePeriod)."""
    list_max_capacity: int = 1000
    """Largest List capacity UpdateList accepts (Helm `gameservers.lists.maxItems`)."""
    health_autostart: bool = False
    """Start health checking initialDelaySeconds after start instead of on the first probe."""
    flush_timeout: float = 5.0
    """Seconds `stop()` spends writing what is still queued (within the pod's grace period)."""


def rfc3339(ts: float, nanos: bool = False) -> str:
    """`metav1.Time` (whole seconds), or Go's RFC3339Nano text (`time.Time.MarshalText`)."""
    when = datetime.fromtimestamp(ts, UTC)
    return format_rfc3339_nano(when) if nanos else format_time(when)


def typed(gs: dict[str, Any]) -> GameServer:
    """The typed view of a GameServer as the API sent it (for reading; writes patch the dict)."""
    return msgspec.convert(gs, GameServer, strict=False)


def _or(value: int | UnsetType, default: int) -> int:
    return default if isinstance(value, UnsetType) or not value else value


def _state_of(gs: dict[str, Any]) -> GameServerState | None:
    """`status.state` of the GameServer JSON, as `typed(gs).state()` reads it."""
    state = (gs.get("status") or {}).get("state")
    try:
        return GameServerState(state) if state else None
    except ValueError:
        return None


def _being_deleted(gs: dict[str, Any]) -> bool:
    """`typed(gs).is_being_deleted()` read off the JSON: a deletionTimestamp, or Shutdown (every
    watch event asks, so the typed view is built only when a write needs it)."""
    deleting = (gs.get("metadata") or {}).get("deletionTimestamp") is not None
    return deleting or _state_of(gs) == GameServerState.SHUTDOWN


def _resource_version(gs: dict[str, Any]) -> int:
    try:
        return int((gs.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


class SDKServer(CountsAndLists):
    """The cluster-mode SDK backend (implements `backend.SDKBackend`)."""

    def __init__(
        self,
        store: GameServerStore,
        gates: FeatureGates,
        *,
        clock: Clock | None = None,
        options: SDKServerOptions | None = None,
        recorder: EventRecorder | None = None,
    ) -> None:
        self.store = store
        self.recorder = recorder
        self.gates = gates
        self.clock = clock or RealClock()
        self.options = options or SDKServerOptions()
        self.queue = UpdateQueue(
            self.sync_game_server,
            self.clock,
            self.options.request_rate_limit,
            first_immediately=self.options.first_write_immediately,
        )
        self._gs: dict[str, Any] = {}
        self._synced = asyncio.Event()
        self._watchers: set[asyncio.Queue[dict[str, Any] | None]] = set()
        self._watch_task: asyncio.Task[None] | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self.gs_state: GameServerState | None = None
        self.gs_labels: dict[str, str] = {}
        self.gs_annotations: dict[str, str] = {}
        self.reserve_duration: float | None = None
        self._reserve_timer: Timer | None = None
        self.player_capacity = 0
        self.connected_players: list[str] = []
        self.list_max_capacity = self.options.list_max_capacity
        self.counter_updates: dict[str, CounterUpdate] = {}
        self.list_updates: dict[str, ListUpdate] = {}
        self.counters_lock = asyncio.Lock()
        self.lists_lock = asyncio.Lock()
        self.health_disabled = False
        self.health_period = 5.0
        self.health_threshold = 3
        self.health_initial_delay = 0.0
        self.health_last_updated = 0.0
        self.health_failure_count = 0
        self._health_timer: Timer | None = None
        self._autostart: Timer | None = None
        self.shutdown_seen = asyncio.Event()

    # -- lifecycle -----------------------------------------------------------------------------

    async def run(self) -> None:
        """Read the GameServer, start the watch and the write queue; returns once synced."""
        self._set_cache(await self.store.get())
        if isinstance(self.store, SubscribableStore):
            self._unsubscribe = self.store.subscribe(self._observe)
        else:
            self._watch_task = asyncio.create_task(self._watch())
        self._synced.set()
        gs = typed(self._gs)
        health = gs.gs_spec.health
        if health is UNSET:
            health = Health()
        self.health_disabled = health.disabled is True
        self.health_period = float(_or(health.period_seconds, 5))
        self.health_threshold = int(_or(health.failure_threshold, 3))
        self.health_initial_delay = float(_or(health.initial_delay_seconds, 0))
        self.touch_health_last_updated()
        status = gs.gs_status
        if gs.state() == GameServerState.RESERVED and isinstance(status.reserved_until, str):
            until = parse_time(status.reserved_until).timestamp()
            self._reset_reserve_after(until - self.clock.now())
        players = status.players
        if self.gates.enabled(Feature.PLAYER_TRACKING) and isinstance(players, PlayerStatus):
            self.player_capacity = int(_or(players.capacity, 0))
            self.connected_players = list(players.ids or [])
        self.queue.start()
        if self.options.health_autostart and not self.health_disabled:
            self._autostart = self.clock.call_later(
                self.health_initial_delay, self.ensure_health_checks_running
            )

    async def stop(self) -> None:
        """Flush the queued writes (for up to `flush_timeout`), then stop every task."""
        if self._synced.is_set():
            await self.queue.flush(self.options.flush_timeout)
        await self.queue.stop()
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._watch_task is not None:
            self._watch_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch_task
        for timer in (self._reserve_timer, self._autostart, self._health_timer):
            if timer is not None:
                timer.cancel()
        for queue in self._watchers:
            queue.put_nowait(None)

    def _set_cache(self, gs: dict[str, Any]) -> None:
        if not self._gs or _resource_version(gs) >= _resource_version(self._gs):
            self._gs = gs
        if _being_deleted(gs):
            self.shutdown_seen.set()

    async def _watch(self) -> None:
        async for gs in self.store.watch():
            self._observe(gs)

    def _observe(self, gs: dict[str, Any]) -> None:
        """A version of the GameServer from the store's watch (or its subscription)."""
        self._set_cache(gs)
        for queue in self._watchers:
            queue.put_nowait(gs)

    async def game_server(self) -> dict[str, Any]:
        await self._synced.wait()
        return self._gs

    async def _patch(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        patch = create_patch(old, new)
        if not patch:
            return old
        try:
            result = await self.store.patch(patch)
        except ConflictError as err:
            # Our copy is stale (the `test` op's 422, or a 409): an expected outcome, not an error
            # to log (Go's patchGameServer makes it a trace-level error). Read again; the queue
            # retries the operation through its rate limiter.
            self._set_cache(await self.store.get())
            raise Requeue(f"the GameServer changed since it was read: {err}") from err
        self._set_cache(result)
        return result

    async def wait_for_shutdown(self) -> None:
        """Graceful termination: return once the GameServer is Shutdown or being deleted."""
        if not self.gs_state:
            log.info("SDK server state never updated by game server, not waiting")
            return
        log.info("SDK server shutdown requested, waiting for game server shutdown")
        await self.shutdown_seen.wait()

    # -- the write queue -------------------------------------------------------------------------

    async def sync_game_server(self, key: str) -> None:
        handlers = {
            UPDATE_STATE: self.update_state,
            UPDATE_LABEL: self.update_labels,
            UPDATE_ANNOTATION: self.update_annotations,
            UPDATE_PLAYER_CAPACITY: self.update_player_capacity,
            UPDATE_CONNECTED_PLAYERS: self.update_connected_players,
            UPDATE_COUNTERS: self.update_counters,
            UPDATE_LISTS: self.update_lists,
        }
        if key not in handlers:
            raise ValueError(f"could not sync game server key: {key}")
        await handlers[key]()

    async def update_state(self) -> None:
        state = self.gs_state
        if state is None:
            raise ValueError("could not update GameServer to empty state")
        gs = await self.game_server()
        if _being_deleted(gs):
            # there is no escaping Shutdown or a deletion
            if state == GameServerState.SHUTDOWN:
                self.shutdown_seen.set()
            return
        if _state_of(gs) == GameServerState.UNHEALTHY:
            return
        result = await self._patch(gs, self._with_state(gs, state))
        if result is gs:
            return  # nothing to write, so no state change to report
        written = _state_of(result)
        type_, message = "Normal", "SDK state change"
        if written == GameServerState.UNHEALTHY:
            type_, message = "Warning", "Health check failure"
        elif written == GameServerState.RESERVED and self.reserve_duration is not None:
            message += f", for {go_duration(self.reserve_duration)}"
            self._reset_reserve_after(self.reserve_duration)
        self.event(result, type_, str(written), message)

    def _with_state(self, gs: dict[str, Any], state: GameServerState) -> dict[str, Any]:
        """A copy of `gs` in `state`: `reservedUntil` for a Reserve with a duration (else none),
        and `agones.dev/last-allocated` for Allocated. Only the maps on the changed paths are
        copied: the rest is shared with `gs` (read-only), so the diff skips it."""
        status = {**(gs.get("status") or {}), "state": str(state)}
        new = {**gs, "status": status}
        duration = self.reserve_duration
        if state == GameServerState.RESERVED and duration is not None:
            status["reservedUntil"] = rfc3339(self.clock.now() + duration)
        else:
            status["reservedUntil"] = None
        if state == GameServerState.ALLOCATED:
            meta = dict(gs.get("metadata") or {})
            annotations = {**(meta.get("annotations") or {})}
            annotations[LAST_ALLOCATED] = rfc3339(self.clock.now(), nanos=True)
            meta["annotations"] = annotations
            new["metadata"] = meta
        return new

    def event(self, gs: dict[str, Any], type_: str, reason: str, message: str) -> None:
        if self.recorder is not None:
            self.recorder.record_event(gs, type_, reason, message)

    async def _update_metadata(self, kind: str, values: dict[str, str]) -> None:
        gs = await self.game_server()
        new = copy.deepcopy(gs)
        target = new.setdefault("metadata", {}).setdefault(kind, {})
        if target is None:
            target = new["metadata"][kind] = {}
        for key, value in values.items():
            target[METADATA_PREFIX + key] = value
        await self._patch(gs, new)

    async def update_labels(self) -> None:
        await self._update_metadata("labels", dict(self.gs_labels))

    async def update_annotations(self) -> None:
        await self._update_metadata("annotations", dict(self.gs_annotations))

    async def update_player_capacity(self) -> None:
        gs = await self.game_server()
        new = copy.deepcopy(gs)
        players = new.setdefault("status", {}).setdefault("players", {}) or {}
        new["status"]["players"] = players
        players["capacity"] = self.player_capacity
        result = await self._patch(gs, new)
        self.event(result, "Normal", "PlayerCapacity", f"Set to {self.player_capacity}")

    async def update_connected_players(self) -> None:
        gs = await self.game_server()
        new = copy.deepcopy(gs)
        players = new.setdefault("status", {}).setdefault("players", {}) or {}
        new["status"]["players"] = players
        if list(players.get("ids") or []) == self.connected_players:
            return
        players["ids"] = list(self.connected_players)
        players["count"] = len(self.connected_players)
        result = await self._patch(gs, new)
        self.event(result, "Normal", "PlayerCount", f"Set to {players['count']}")

    async def update_counters(self) -> None:
        # The batch stays pending, and counter RPCs wait, until the write is done (Go holds its
        # update lock over the patch): a failed write keeps every change for the retry.
        async with self.counters_lock:
            gs = await self.game_server()
            new = copy.deepcopy(gs)
            counters = (new.get("status") or {}).get("counters") or {}
            for name, update in self.counter_updates.items():
                if name not in counters:
                    continue
                counter = counters[name]
                if update.capacity_set is not None:
                    counter["capacity"] = update.capacity_set
                if update.count_set is not None:
                    counter["count"] = update.count_set
                count = int(counter.get("count") or 0) + update.diff
                counter["count"] = max(0, min(count, int(counter.get("capacity") or 0)))
            result = await self._patch(gs, new)
            written, self.counter_updates = self.counter_updates, {}
        for name in written:
            if name in counters:
                message = (
                    f"Counter {name} updated to Count:{counters[name]['count']} "
                    f"Capacity:{counters[name].get('capacity', 0)}"
                )
                self.event(result, "Normal", "UpdateCounter", message)

    async def update_lists(self) -> None:
        async with self.lists_lock:  # as update_counters
            gs = await self.game_server()
            new = copy.deepcopy(gs)
            lists = (new.get("status") or {}).get("lists") or {}
            for name, update in self.list_updates.items():
                if name not in lists:
                    continue
                lst = lists[name]
                if update.capacity_set is not None:
                    lst["capacity"] = update.capacity_set
                values = [v for v in lst.get("values") or [] if v not in update.to_delete]
                values = merge_remove_duplicates(values, update.to_append)
                lst["values"] = values[: int(lst.get("capacity") or 0)]
            result = await self._patch(gs, new)
            written, self.list_updates = self.list_updates, {}
        for name in written:
            if name in lists:
                self.event(result, "Normal", "UpdateList", f"List {name} updated")

    # -- state RPCs ------------------------------------------------------------------------------

    def enqueue_state(self, state: GameServerState) -> None:
        if self.gs_state != GameServerState.UNHEALTHY:
            self.gs_state = state
        self.queue.enqueue(UPDATE_STATE)

    def _stop_reserve_timer(self) -> None:
        if self._reserve_timer is not None:
            self._reserve_timer.cancel()
            self._reserve_timer = None
        self.reserve_duration = None

    def _reset_reserve_after(self, seconds: float) -> None:
        if self._reserve_timer is not None:
            self._reserve_timer.cancel()

        def expired() -> None:
            self._reserve_timer = None
            self._stop_reserve_timer()
            self.enqueue_state(GameServerState.REQUEST_READY)

        self._reserve_timer = self.clock.call_later(max(seconds, 0.0), expired)

    async def ready(self, request: sdk_pb2.Empty) -> sdk_pb2.Empty:
        self._stop_reserve_timer()
        self.enqueue_state(GameServerState.REQUEST_READY)
        return sdk_pb2.Empty()

    async def allocate(self, request: sdk_pb2.Empty) -> sdk_pb2.Empty:
        self._stop_reserve_timer()
        self.enqueue_state(GameServerState.ALLOCATED)
        return sdk_pb2.Empty()

    async def shutdown(self, request: sdk_pb2.Empty) -> sdk_pb2.Empty:
        self._stop_reserve_timer()
        self.enqueue_state(GameServerState.SHUTDOWN)
        return sdk_pb2.Empty()

    async def reserve(self, request: sdk_pb2.Duration) -> sdk_pb2.Empty:
        self._stop_reserve_timer()
        if request.seconds > 0:
            self.reserve_duration = float(request.seconds)
        self.enqueue_state(GameServerState.RESERVED)
        return sdk_pb2.Empty()

    async def health(self, requests: AsyncIterator[sdk_pb2.Empty]) -> sdk_pb2.Empty:
        async for _ in requests:
            self.touch_health_last_updated()
        return sdk_pb2.Empty()

    async def get_game_server(self, request: sdk_pb2.Empty) -> sdk_pb2.GameServer:
        return convert(await self.game_server(), self.gates)

    async def watch_game_server(self, request: sdk_pb2.Empty) -> AsyncIterator[sdk_pb2.GameServer]:
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        current = await self.game_server()
        self._watchers.add(queue)
        try:
            yield convert(current, self.gates)
            sent = _resource_version(current)
            while (gs := await queue.get()) is not None:
                # a relist (start, 410 Gone, reconnect) repeats versions already sent
                if _resource_version(gs) != sent:
                    sent = _resource_version(gs)
                    yield convert(gs, self.gates)
        finally:
            self._watchers.discard(queue)

    async def set_label(self, request: sdk_pb2.KeyValue) -> sdk_pb2.Empty:
        if errors := is_qualified_name(request.key):
            raise SDKError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f'invalid label key "{request.key}": {", ".join(errors)}',
            )
        if errors := is_valid_label_value(request.value):
            raise SDKError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f'invalid label value "{request.value}" for key "{request.key}": '
                + ", ".join(errors),
            )
        self.gs_labels[request.key] = request.value
        self.queue.enqueue(UPDATE_LABEL)
        return sdk_pb2.Empty()

    async def set_annotation(self, request: sdk_pb2.KeyValue) -> sdk_pb2.Empty:
        if errors := is_qualified_name(request.key):
            raise SDKError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f'invalid annotation key "{request.key}": {", ".join(errors)}',
            )
        self.gs_annotations[request.key] = request.value
        self.queue.enqueue(UPDATE_ANNOTATION)
        return sdk_pb2.Empty()

    # -- health ----------------------------------------------------------------------------------

    def touch_health_last_updated(self) -> None:
        self.health_last_updated = self.clock.monotonic()
        self.health_failure_count = 0

    def ensure_health_checks_running(self) -> None:
        if self.health_disabled or self._health_timer is not None:
            return
        log.debug("Starting GameServer health checking")
        self._health_tick()

    def _health_tick(self) -> None:
        # Go's wait.Until: the first check runs at once, then one every period (a timer, not a
        # task: a node runs a thousand sidecars)
        self.check_health()
        if not self.healthy():
            log.warning("GameServer has failed health check")
            self.enqueue_state(GameServerState.UNHEALTHY)
        self._health_timer = self.clock.call_later(self.health_period, self._health_tick)

    def check_health(self) -> None:
        if self.health_last_updated + self.health_period < self.clock.monotonic():
            self.health_failure_count += 1
            log.warning("GameServer Health Check failed", failure_count=self.health_failure_count)

    def healthy(self) -> bool:
        return self.health_disabled or self.health_failure_count < self.health_threshold

    # -- alpha: player tracking ------------------------------------------------------------------

    def _require(self, feature: Feature) -> None:
        if not self.gates.enabled(feature):
            raise plain_error(f"{feature.value} not enabled")

    async def player_connect(self, request: alpha_pb2.PlayerID) -> alpha_pb2.Bool:
        self._require(Feature.PLAYER_TRACKING)
        if request.playerID in self.connected_players:
            return alpha_pb2.Bool(bool=False)
        if len(self.connected_players) >= self.player_capacity:
            raise plain_error("players are already at capacity")
        self.connected_players.append(request.playerID)
        self.queue.enqueue_after(UPDATE_CONNECTED_PLAYERS, self.options.player_update_period)
        return alpha_pb2.Bool(bool=True)

    async def player_disconnect(self, request: alpha_pb2.PlayerID) -> alpha_pb2.Bool:
        self._require(Feature.PLAYER_TRACKING)
        if request.playerID not in self.connected_players:
            return alpha_pb2.Bool(bool=False)
        self.connected_players.remove(request.playerID)
        self.queue.enqueue_after(UPDATE_CONNECTED_PLAYERS, self.options.player_update_period)
        return alpha_pb2.Bool(bool=True)

    async def is_player_connected(self, request: alpha_pb2.PlayerID) -> alpha_pb2.Bool:
        self._require(Feature.PLAYER_TRACKING)
        return alpha_pb2.Bool(bool=request.playerID in self.connected_players)

    async def get_connected_players(self, request: alpha_pb2.Empty) -> alpha_pb2.PlayerIDList:
        self._require(Feature.PLAYER_TRACKING)
        return alpha_pb2.PlayerIDList(list=list(self.connected_players))

    async def get_player_count(self, request: alpha_pb2.Empty) -> alpha_pb2.Count:
        self._require(Feature.PLAYER_TRACKING)
        return alpha_pb2.Count(count=len(self.connected_players))

    async def set_player_capacity(self, request: alpha_pb2.Count) -> alpha_pb2.Empty:
        self._require(Feature.PLAYER_TRACKING)
        self.player_capacity = request.count
        self.queue.enqueue(UPDATE_PLAYER_CAPACITY)
        return alpha_pb2.Empty()

    async def get_player_capacity(self, request: alpha_pb2.Empty) -> alpha_pb2.Count:
        self._require(Feature.PLAYER_TRACKING)
        return alpha_pb2.Count(count=self.player_capacity)
