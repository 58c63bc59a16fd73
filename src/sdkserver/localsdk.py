"""LocalSDKServer: the SDK without Kubernetes, for local development and conformance tests.

Mirrors Agones `pkg/sdkserver/localsdk.go`. The GameServer lives in memory (seeded with the
default below, or from a manifest file that is re-read when it changes); every change is applied at
once and pushed to WatchGameServer streams. Errors are plain errors (gRPC UNKNOWN) with Agones'
texts. In test mode each RPC records a request name; `close()` compares the names received with the
expected ones as sets and reports whether they match. `setlabel`/`setannotation` and the player
calls are recorded only when their value matches the GameServer, as Agones does.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import structlog
import yaml

from ..featuregates import Feature, FeatureGates
from ..sdk.proto import sdk_pb2
from ..sdk.proto.alpha import alpha_pb2
from ..sdk.proto.beta import beta_pb2
from .errors import plain_error
from .sdk import METADATA_PREFIX, convert

log = structlog.get_logger("agones.sdkserver.local")

LIST_FIELDS = ("name", "capacity", "values")


def default_game_server(gates: FeatureGates, now: float | None = None) -> sdk_pb2.GameServer:
    """Agones' `defaultGs()`: the GameServer local and test modes start with."""
    gs = sdk_pb2.GameServer(
        object_meta=sdk_pb2.GameServer.ObjectMeta(
            name="local",
            namespace="default",
            uid="1234",
            generation=1,
            resource_version="v1",
            creation_timestamp=int(time.time() if now is None else now),
            labels={"islocal": "true"},
            annotations={"annotation": "true"},
        ),
        spec=sdk_pb2.GameServer.Spec(
            health=sdk_pb2.GameServer.Spec.Health(
                disabled=False, period_seconds=3, failure_threshold=5, initial_delay_seconds=10
            )
        ),
        status=sdk_pb2.GameServer.Status(
            state="Ready",
            address="127.0.0.1",
            ports=[sdk_pb2.GameServer.Status.Port(name="default", port=7777)],
        ),
    )
    if gates.enabled(Feature.COUNTS_AND_LISTS):
        gs.status.counters["rooms"].count = 1
        gs.status.counters["rooms"].capacity = 10
        gs.status.lists["players"].capacity = 100
        gs.status.lists["players"].values.extend(["test0", "test1", "test2"])
    return gs


def load_game_server_file(path: Path, gates: FeatureGates) -> sdk_pb2.GameServer:
    """Read a GameServer manifest (YAML or JSON) into its SDK view."""
    data: Any = yaml.safe_load(path.read_text())
    if not isinstance(data, dict):
        raise ValueError(f"{path}: not a GameServer manifest")
    return convert(data, gates)


def equal_sets(expected: list[str], received: list[str]) -> tuple[bool, str]:
    """Agones' `EqualSets`: (match, the first offending request name or "")."""
    expected_set = set(expected)
    for name in received:
        if name not in expected_set:
            log.error("Found a request which was not expected", request=name)
            return False, name
    received_set = set(received)
    for name in expected:
        if name not in received_set:
            log.error("Could not find a request which was expected", request=name)
            return False, name
    return True, ""


def _file_stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_mtime_ns, st.st_size


def _go_list(values: Any) -> str:
    return "[" + " ".join(str(v) for v in values) + "]"


class LocalSDKServer:
    """The local/test-mode SDK backend (implements `backend.SDKBackend`)."""

    def __init__(
        self,
        gates: FeatureGates,
        *,
        file: Path | None = None,
        test_mode: bool = False,
        expected: list[str] | None = None,
        sdk_name: str = "",
    ) -> None:
        self.gates = gates
        self.file = file
        self.gs = load_game_server_file(file, gates) if file else default_game_server(gates)
        if gates.enabled(Feature.PLAYER_TRACKING) and not self.gs.status.HasField("players"):
            self.gs.status.players.SetInParent()
        self.test_mode = test_mode
        self.expected = list(expected or [])
        self.requests: list[str] = []
        self.sdk_name = sdk_name
        self._observers: set[asyncio.Queue[bool]] = set()
        self._reserve_timer: asyncio.TimerHandle | None = None
        self._list_max_capacity: int | None = None
        self._file_task: asyncio.Task[None] | None = None
        self._closed = False

    # -- test-mode bookkeeping ---------------------------------------------------------------

    def generate_uid(self, rng: random.Random | None = None) -> None:
        """Test mode: a random decimal uid, like Go's `rand.Int()` (non-negative int63)."""
        self.gs.object_meta.uid = str((rng or random.Random()).getrandbits(63))

    def record_request(self, name: str) -> None:
        if self.test_mode:
            self.requests.append(name)
        if self.sdk_name:
            log.debug("Received request", request=name, sdk_name=self.sdk_name)

    def record_request_with_value(self, name: str, value: str, field: str) -> None:
        if not self.test_mode:
            return
        if field == "CreationTimestamp":
            actual = str(self.gs.object_meta.creation_timestamp)
        elif field == "UID":
            actual = self.gs.object_meta.uid
        elif field == "PlayerCapacity":
            if not self.gates.enabled(Feature.PLAYER_TRACKING):
                return
            actual = str(self.gs.status.players.capacity)
        elif field == "PlayerIDs":
            if not self.gates.enabled(Feature.PLAYER_TRACKING):
                return
            actual = ",".join(self.gs.status.players.ids)
        else:
            raise ValueError(f"unexpected field to compare: {field}")
        if value == actual:
            self.requests.append(name)
        else:
            log.error("unexpected value for request", request=name, expected=actual, received=value)

    def compare(self) -> bool:
        """Test mode: do the received request names match the expected ones (as sets)?"""
        if not self.test_mode:
            return True
        ok, _ = equal_sets(self.expected, self.requests)
        logger = log.bind(sdk_name=self.sdk_name) if self.sdk_name else log
        if ok:
            logger.info("Received requests match expected list. Test run was successful")
        else:
            logger.info("Testing Failed", expected=self.expected, received=self.requests)
        return ok

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self, poll_interval: float = 0.5) -> None:
        """Begin watching the GameServer file for changes (if one was given)."""
        if self.file is not None and self._file_task is None:
            first = _file_stamp(self.file)
            self._file_task = asyncio.create_task(self._watch_file(self.file, poll_interval, first))

    def close(self) -> bool:
        """Stop timers and watches; in test mode compare the requests (True when they match)."""
        self._closed = True
        if self._reserve_timer is not None:
            self._reserve_timer.cancel()
        if self._file_task is not None:
            self._file_task.cancel()
        for queue in list(self._observers):
            queue.put_nowait(False)
        return self.compare()

    async def _watch_file(self, path: Path, interval: float, last: tuple[int, int]) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                current = _file_stamp(path)
                if current == last:
                    continue
                last = current
                log.info("File has been changed!", file=str(path))
                self.gs = load_game_server_file(path, self.gates)
                if self.gates.enabled(Feature.PLAYER_TRACKING):
                    self.gs.status.players.SetInParent()
            except (OSError, ValueError, yaml.YAMLError) as err:
                log.error("error setting GameServer from file", error=str(err))
                continue
            self._notify()

    def _notify(self) -> None:
        for queue in self._observers:
            queue.put_nowait(True)

    def _update_state(self, state: str) -> None:
        self.gs.status.state = state

    def _stop_reserve_timer(self) -> None:
        if self._reserve_timer is not None:
            self._reserve_timer.cancel()
            self._reserve_timer = None

    # -- agones.dev.sdk.SDK ----------------------------------------------------------------------

    async def ready(self, request: sdk_pb2.Empty) -> sdk_pb2.Empty:
        log.info("Ready request has been received!")
        self.record_request("ready")
        self._update_state("Ready")
        self._stop_reserve_timer()
        self._notify()
        return sdk_pb2.Empty()

    async def allocate(self, request: sdk_pb2.Empty) -> sdk_pb2.Empty:
        log.info("Allocate request has been received!")
        self.record_request("allocate")
        self._update_state("Allocated")
        self._stop_reserve_timer()
        self._notify()
        return sdk_pb2.Empty()

    async def shutdown(self, request: sdk_pb2.Empty) -> sdk_pb2.Empty:
        log.info("Shutdown request has been received!")
        self.record_request("shutdown")
        self._update_state("Shutdown")
        self._stop_reserve_timer()
        self._notify()
        return sdk_pb2.Empty()

    async def health(self, requests: AsyncIterator[sdk_pb2.Empty]) -> sdk_pb2.Empty:
        async for _ in requests:
            self.record_request("health")
            log.debug("Health Ping Received!")
        log.debug("Health stream closed.")
        return sdk_pb2.Empty()

    async def get_game_server(self, request: sdk_pb2.Empty) -> sdk_pb2.GameServer:
        log.debug("Getting GameServer details")
        self.record_request("gameserver")
        result = sdk_pb2.GameServer()
        result.CopyFrom(self.gs)
        return result

    async def watch_game_server(self, request: sdk_pb2.Empty) -> AsyncIterator[sdk_pb2.GameServer]:
        log.info("Connected to watch GameServer...")
        queue: asyncio.Queue[bool] = asyncio.Queue()
        self._observers.add(queue)
        self.record_request("watch")
        queue.put_nowait(True)
        try:
            while await queue.get() and not self._closed:
                snapshot = sdk_pb2.GameServer()
                snapshot.CopyFrom(self.gs)
                yield snapshot
        finally:
            self._observers.discard(queue)

    async def set_label(self, request: sdk_pb2.KeyValue) -> sdk_pb2.Empty:
        log.info("Setting label", key=request.key, value=request.value)
        self.gs.object_meta.labels[METADATA_PREFIX + request.key] = request.value
        self._notify()
        self.record_request_with_value("setlabel", request.value, "CreationTimestamp")
        return sdk_pb2.Empty()

    async def set_annotation(self, request: sdk_pb2.KeyValue) -> sdk_pb2.Empty:
        log.info("Setting annotation", key=request.key, value=request.value)
        self.gs.object_meta.annotations[METADATA_PREFIX + request.key] = request.value
        self._notify()
        self.record_request_with_value("setannotation", request.value, "UID")
        return sdk_pb2.Empty()

    async def reserve(self, request: sdk_pb2.Duration) -> sdk_pb2.Empty:
        log.info("Reserve request has been received!", seconds=request.seconds)
        self.record_request("reserve")
        if request.seconds > 0:
            # Agones' local server leaves an earlier timer alone for Reserve(0).
            self._stop_reserve_timer()
            loop = asyncio.get_running_loop()
            self._reserve_timer = loop.call_later(request.seconds, self._reserve_expired)
        self._update_state("Reserved")
        self._notify()
        return sdk_pb2.Empty()

    def _reserve_expired(self) -> None:
        self._reserve_timer = None
        task = asyncio.ensure_future(self.ready(sdk_pb2.Empty()))
        task.add_done_callback(lambda t: t.exception())

    # -- agones.dev.sdk.alpha.SDK (PlayerTracking) -------------------------------------------

    def _require(self, feature: Feature) -> None:
        if not self.gates.enabled(feature):
            raise plain_error(f"{feature.value} not enabled")

    async def player_connect(self, request: alpha_pb2.PlayerID) -> alpha_pb2.Bool:
        self._require(Feature.PLAYER_TRACKING)
        players = self.gs.status.players
        if request.playerID in players.ids:
            return alpha_pb2.Bool(bool=False)
        if players.count >= players.capacity:
            raise plain_error("Players are already at capacity")
        players.ids.append(request.playerID)
        players.count = len(players.ids)
        self._notify()
        self.record_request_with_value("playerconnect", "1234", "PlayerIDs")
        return alpha_pb2.Bool(bool=True)

    async def player_disconnect(self, request: alpha_pb2.PlayerID) -> alpha_pb2.Bool:
        self._require(Feature.PLAYER_TRACKING)
        players = self.gs.status.players
        if request.playerID not in players.ids:
            return alpha_pb2.Bool(bool=False)
        players.ids.remove(request.playerID)
        players.count = len(players.ids)
        self._notify()
        self.record_request_with_value("playerdisconnect", "", "PlayerIDs")
        return alpha_pb2.Bool(bool=True)

    async def is_player_connected(self, request: alpha_pb2.PlayerID) -> alpha_pb2.Bool:
        self._require(Feature.PLAYER_TRACKING)
        self.record_request_with_value("isplayerconnected", request.playerID, "PlayerIDs")
        return alpha_pb2.Bool(bool=request.playerID in self.gs.status.players.ids)

    async def get_connected_players(self, request: alpha_pb2.Empty) -> alpha_pb2.PlayerIDList:
        self._require(Feature.PLAYER_TRACKING)
        self.record_request("getconnectedplayers")
        return alpha_pb2.PlayerIDList(list=list(self.gs.status.players.ids))

    async def get_player_count(self, request: alpha_pb2.Empty) -> alpha_pb2.Count:
        self._require(Feature.PLAYER_TRACKING)
        self.record_request("getplayercount")
        return alpha_pb2.Count(count=self.gs.status.players.count)

    async def set_player_capacity(self, request: alpha_pb2.Count) -> alpha_pb2.Empty:
        self._require(Feature.PLAYER_TRACKING)
        self.gs.status.players.capacity = request.count
        self._notify()
        self.record_request_with_value("setplayercapacity", str(request.count), "PlayerCapacity")
        return alpha_pb2.Empty()

    async def get_player_capacity(self, request: alpha_pb2.Empty) -> alpha_pb2.Count:
        self._require(Feature.PLAYER_TRACKING)
        self.record_request("getplayercapacity")
        return alpha_pb2.Count(count=self.gs.status.players.capacity)

    # -- agones.dev.sdk.beta.SDK (CountsAndLists) --------------------------------------------

    async def get_counter(self, request: beta_pb2.GetCounterRequest) -> beta_pb2.Counter:
        self._require(Feature.COUNTS_AND_LISTS)
        self.record_request("getcounter")
        if request.name not in self.gs.status.counters:
            raise plain_error(f"not found. {request.name} Counter not found")
        counter = self.gs.status.counters[request.name]
        return beta_pb2.Counter(name=request.name, count=counter.count, capacity=counter.capacity)

    async def update_counter(self, request: beta_pb2.UpdateCounterRequest) -> beta_pb2.Counter:
        self._require(Feature.COUNTS_AND_LISTS)
        if not request.HasField("counterUpdateRequest"):
            raise plain_error("invalid argument. CounterUpdateRequest cannot be nil")
        update = request.counterUpdateRequest
        name = update.name
        if name not in self.gs.status.counters:
            raise plain_error(f"not found. {name} Counter not found")
        stored = self.gs.status.counters[name]
        result = beta_pb2.Counter(name=name, count=stored.count, capacity=stored.capacity)
        if update.HasField("capacity"):
            self.record_request("setcapacitycounter")
            result.capacity = update.capacity.value
            if result.capacity < 0:
                raise plain_error(
                    "out of range. Capacity must be greater than or equal to 0. "
                    f"Found Capacity: {result.capacity}"
                )
        if update.HasField("count"):
            self.record_request("setcountcounter")
            result.count = update.count.value
            self._check_count(result)
        if update.countDiff != 0:
            self.record_request("updatecounter")
            result.count += update.countDiff
            self._check_count(result)
        stored.capacity = result.capacity
        stored.count = result.count
        return result

    @staticmethod
    def _check_count(counter: beta_pb2.Counter) -> None:
        if counter.count < 0 or counter.count > counter.capacity:
            raise plain_error(
                "out of range. Count must be within range [0,Capacity]. "
                f"Found Count: {counter.count}, Capacity: {counter.capacity}"
            )

    def _list(self, name: str) -> sdk_pb2.GameServer.Status.ListStatus:
        if name not in self.gs.status.lists:
            raise plain_error(f"not found. {name} List not found")
        status: sdk_pb2.GameServer.Status.ListStatus = self.gs.status.lists[name]
        return status

    @staticmethod
    def _as_list(name: str, status: sdk_pb2.GameServer.Status.ListStatus) -> beta_pb2.List:
        return beta_pb2.List(name=name, capacity=status.capacity, values=list(status.values))

    async def get_list(self, request: beta_pb2.GetListRequest) -> beta_pb2.List:
        self._require(Feature.COUNTS_AND_LISTS)
        self.record_request("getlist")
        return self._as_list(request.name, self._list(request.name))

    async def update_list(self, request: beta_pb2.UpdateListRequest) -> beta_pb2.List:
        self._require(Feature.COUNTS_AND_LISTS)
        if not request.HasField("list") or not request.HasField("update_mask"):
            raise plain_error(
                f"invalid argument. List: {_go_message(request, 'list')} and "
                f"UpdateMask {_go_message(request, 'update_mask')} cannot be nil"
            )
        self.record_request("updatelist")
        paths = list(request.update_mask.paths)
        if any(p not in LIST_FIELDS for p in paths):
            raise plain_error(
                f"invalid argument. Field Mask Path(s): {_go_list(paths)} are invalid for List. "
                f"Use valid field name(s): {_go_list(LIST_FIELDS)}"
            )
        if self._list_max_capacity is None:
            # Agones reads the limit once, from the `players` list's capacity.
            if "players" not in self.gs.status.lists:
                raise plain_error("no players for list")
            self._list_max_capacity = self.gs.status.lists["players"].capacity
        if request.list.capacity < 0 or request.list.capacity > self._list_max_capacity:
            raise plain_error(
                "out of range. Capacity must be within range [0,1000]. "
                f"Found Capacity: {request.list.capacity}"
            )
        stored = self._list(request.list.name)
        merged = apply_list_mask(self._as_list(request.list.name, stored), request.list, paths)
        stored.capacity = merged.capacity
        del stored.values[:]
        stored.values.extend(merged.values)
        return self._as_list(request.list.name, stored)

    async def add_list_value(self, request: beta_pb2.AddListValueRequest) -> beta_pb2.List:
        self._require(Feature.COUNTS_AND_LISTS)
        self.record_request("addlistvalue")
        stored = self._list(request.name)
        if stored.capacity <= len(stored.values):
            raise plain_error(
                "out of range. No available capacity. "
                f"Current Capacity: {stored.capacity}, List Size: {len(stored.values)}"
            )
        if request.value in stored.values:
            raise plain_error(
                f"already exists. Value: {request.value} already in List: {request.name}"
            )
        stored.values.append(request.value)
        return self._as_list(request.name, stored)

    async def remove_list_value(self, request: beta_pb2.RemoveListValueRequest) -> beta_pb2.List:
        self._require(Feature.COUNTS_AND_LISTS)
        self.record_request("removelistvalue")
        stored = self._list(request.name)
        if request.value not in stored.values:
            raise plain_error(
                f"not found. Value: {request.value} not found in List: {request.name}"
            )
        stored.values.remove(request.value)
        return self._as_list(request.name, stored)


def apply_list_mask(
    current: beta_pb2.List, update: beta_pb2.List, paths: list[str]
) -> beta_pb2.List:
    """Agones' local UpdateList merge: the masked fields of `update` replace those of `current`.

    An empty mask merges the whole `update` (proto merge: non-zero scalars win, values append),
    which is what the Node SDK's `setListCapacity` ends up sending. Values beyond the capacity are
    dropped.
    """
    result = beta_pb2.List()
    result.CopyFrom(current)
    if paths:
        source = beta_pb2.List()
        for path in paths:
            result.ClearField(path)
            if path == "values":
                source.values.extend(update.values)
            else:
                setattr(source, path, getattr(update, path))
        result.MergeFrom(source)
    else:
        result.MergeFrom(update)
    if result.capacity < len(result.values):
        kept = list(result.values[: result.capacity])
        del result.values[:]
        result.values.extend(kept)
    return result


def _go_message(request: Any, field: str) -> str:
    if not request.HasField(field):
        return "<nil>"
    text: str = str(getattr(request, field)).replace("\n", " ").strip()
    return text
