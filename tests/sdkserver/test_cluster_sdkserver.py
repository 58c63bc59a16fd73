"""Cluster-mode SDKServer against the in-memory GameServer store, with a fake clock."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
import structlog
import structlog.testing
from google.protobuf import field_mask_pb2

from agones.featuregates import FeatureGates
from agones.jsonpatch import Patch
from agones.sdk import AsyncSDK
from agones.sdk import SDKError as ClientError
from agones.sdk.proto import sdk_pb2
from agones.sdk.proto.alpha import alpha_pb2
from agones.sdk.proto.beta import beta_pb2
from agones.sdkserver.clock import FakeClock
from agones.sdkserver.errors import SDKError
from agones.sdkserver.sdkserver import SDKServer, SDKServerOptions
from agones.sdkserver.serve import serve_sdk
from agones.sdkserver.store import ConflictError, InMemoryGameServerStore
from tests.sdkserver.harness import counter_update

EMPTY = sdk_pb2.Empty()
START = 1_700_000_000.0

GS: dict[str, Any] = {
    "apiVersion": "agones.dev/v1",
    "kind": "GameServer",
    "metadata": {
        "name": "gs1",
        "namespace": "default",
        "uid": "u-1",
        "resourceVersion": "10",
        "generation": 1,
        "creationTimestamp": "2024-01-01T00:00:00Z",
        "labels": {"agones.dev/fleet": "f"},
    },
    "spec": {"health": {"periodSeconds": 5, "failureThreshold": 3, "initialDelaySeconds": 5}},
    "status": {
        "state": "Scheduled",
        "address": "10.0.0.1",
        "ports": [{"name": "default", "port": 7000}],
        "reservedUntil": None,
        "players": {"count": 0, "capacity": 0, "ids": []},
        "counters": {"rooms": {"count": 1, "capacity": 10}},
        "lists": {"players": {"capacity": 10, "values": ["a", "b"]}},
    },
}


class Harness:
    def __init__(self, gs: dict[str, Any] | None = None, **options: Any) -> None:
        self.clock = FakeClock(START)
        self.store = InMemoryGameServerStore(copy.deepcopy(gs or GS))
        gates = FeatureGates().with_values(PlayerTracking=True)
        self.server = SDKServer(
            self.store,
            gates,
            clock=self.clock,
            options=SDKServerOptions(**options),
            recorder=self.store,
        )

    @property
    def gs(self) -> dict[str, Any]:
        return self.store.current

    @property
    def state(self) -> str:
        return str(self.gs["status"]["state"])


@pytest.fixture
async def h() -> AsyncIterator[Harness]:
    harness = Harness()
    await harness.server.run()
    yield harness
    await harness.server.stop()


async def test_ready_writes_request_ready_after_the_rate_limit(h: Harness) -> None:
    await h.server.ready(EMPTY)
    await h.clock.advance(0.4)
    assert h.store.writes == 0
    await h.clock.advance(0.1)
    assert h.state == "RequestReady"
    assert h.store.writes == 1
    assert h.store.patches[0][0] == {
        "op": "test",
        "path": "/metadata/resourceVersion",
        "value": "10",
    }


@pytest.mark.parametrize(
    ("first_immediately", "writes"),
    [pytest.param(False, 1, id="agones-500ms"), pytest.param(True, 2, id="first-at-once")],
)
async def test_100_set_labels_in_100ms_make_at_most_2_writes(
    first_immediately: bool, writes: int
) -> None:
    h = Harness(first_write_immediately=first_immediately)
    await h.server.run()
    for i in range(100):
        await h.server.set_label(sdk_pb2.KeyValue(key=f"k{i % 10}", value=str(i)))
        await h.clock.advance(0.001)
    await h.clock.advance(1)
    assert h.store.writes == writes
    labels = h.gs["metadata"]["labels"]
    assert labels["agones.dev/sdk-k9"] == "99"
    assert labels["agones.dev/fleet"] == "f"
    await h.server.stop()


async def test_reserve_then_back_to_ready_by_itself(h: Harness) -> None:
    await h.server.reserve(sdk_pb2.Duration(seconds=2))
    await h.clock.advance(0.5)
    assert h.state == "Reserved"
    assert h.gs["status"]["reservedUntil"] == "2023-11-14T22:13:22Z"  # START + 0.5 s + 2 s
    await h.clock.advance(2.0)
    await h.clock.advance(0.5)
    assert h.state == "RequestReady"
    assert h.gs["status"]["reservedUntil"] is None
    assert h.store.events == [
        ("Normal", "Reserved", "SDK state change, for 2s"),
        ("Normal", "RequestReady", "SDK state change"),
    ]


async def test_allocate_cancels_reserve_and_stamps_last_allocated(h: Harness) -> None:
    await h.server.reserve(sdk_pb2.Duration(seconds=1))
    await h.clock.advance(0.5)
    await h.server.allocate(EMPTY)
    await h.clock.advance(3)
    assert h.state == "Allocated"
    assert h.gs["metadata"]["annotations"]["agones.dev/last-allocated"].startswith(
        "2023-11-14T22:13"
    )


async def test_reserve_timer_is_restored_from_reserved_until() -> None:
    gs = copy.deepcopy(GS)
    gs["status"]["state"] = "Reserved"
    gs["status"]["reservedUntil"] = "2023-11-14T22:13:23Z"  # START + 3 s
    h = Harness(gs)
    await h.server.run()
    await h.clock.advance(2.9)
    assert h.state == "Reserved"
    await h.clock.advance(0.1 + 0.5)
    assert h.state == "RequestReady"
    await h.server.stop()


async def test_missed_health_pings_make_it_unhealthy_and_unhealthy_sticks(h: Harness) -> None:
    h.server.ensure_health_checks_running()
    for _ in range(4):  # pings every 2 s keep it healthy
        await h.server.health(_one_ping())
        await h.clock.advance(2)
    assert h.server.healthy()
    # checks run every periodSeconds; the 3rd consecutive miss trips it
    await h.clock.advance(5 * 3)
    assert h.server.healthy()
    assert h.state == "Scheduled"
    await h.clock.advance(5)
    assert not h.server.healthy()
    assert h.state == "Unhealthy"
    assert h.store.events == [("Warning", "Unhealthy", "Health check failure")]
    await h.server.ready(EMPTY)
    await h.server.health(_one_ping())
    await h.clock.advance(5)
    assert h.state == "Unhealthy"
    assert h.server.gs_state == "Unhealthy"


async def test_first_health_check_runs_on_the_first_probe(h: Harness) -> None:
    # the kubelet's first probe comes after initialDelaySeconds; no ping since start is a miss at
    # once (Go's wait.Until), then one per period: the 3rd miss is at 7 + 2 * 5 s
    await h.clock.advance(7)
    h.server.ensure_health_checks_running()
    await h.clock.settle()
    assert h.server.health_failure_count == 1
    await h.clock.advance(5 * 2 - 0.1)
    assert h.server.health_failure_count == 2
    await h.clock.advance(0.1)
    assert not h.server.healthy()
    await h.clock.advance(0.5)
    assert h.state == "Unhealthy"


async def test_health_autostart_after_initial_delay() -> None:
    h = Harness(health_autostart=True)
    await h.server.run()
    await h.clock.advance(5 + 5 * 4)
    assert h.state == "Unhealthy"
    await h.server.stop()


async def test_persisted_unhealthy_is_not_moved(h: Harness) -> None:
    h.store.update(lambda gs: gs["status"].update(state="Unhealthy"))
    await h.clock.settle()
    await h.server.allocate(EMPTY)
    await h.clock.advance(1)
    assert h.state == "Unhealthy"


async def test_shutdown_is_final_and_ends_graceful_termination(h: Harness) -> None:
    await h.server.shutdown(EMPTY)
    await h.clock.advance(0.5)
    assert h.state == "Shutdown"
    await h.server.wait_for_shutdown()
    await h.server.ready(EMPTY)
    await h.clock.advance(1)
    assert h.state == "Shutdown"


async def _one_ping() -> AsyncIterator[sdk_pb2.Empty]:
    yield sdk_pb2.Empty()


async def test_conflicts_are_retried_with_a_fresh_read() -> None:
    class Flaky(InMemoryGameServerStore):
        conflicts = 1

        async def patch(self, patch: Patch) -> dict[str, Any]:
            if self.conflicts:
                self.conflicts -= 1
                self.update(lambda gs: gs["metadata"].setdefault("annotations", {}).update(x="y"))
                raise ConflictError("changed")
            return await super().patch(patch)

    h = Harness()
    h.store = Flaky(copy.deepcopy(GS))
    h.server.store = h.store
    await h.server.run()
    await h.server.ready(EMPTY)
    await h.clock.advance(0.5)
    await h.clock.advance(0.5)
    assert h.state == "RequestReady"
    assert h.gs["metadata"]["annotations"] == {"x": "y"}
    await h.server.stop()


async def test_a_failed_patch_test_is_retried_without_an_error_log() -> None:
    """A JSON-patch `test` on a resourceVersion another writer moved on fails (the API server's
    422): an expected outcome, retried by the queue, and logged below error as Agones' sidecar
    does (`patchGameServer` wraps IsInvalid in a trace-level error)."""

    class Raced(InMemoryGameServerStore):
        races = 1

        async def patch(self, patch: Patch) -> dict[str, Any]:
            if self.races:
                self.races -= 1
                self.update(lambda gs: gs["metadata"].setdefault("labels", {}).update(x="y"))
            return await super().patch(patch)  # the `test` op now fails: ConflictError

    h = Harness()
    h.store = Raced(copy.deepcopy(GS))
    h.server.store = h.store
    await h.server.run()
    with structlog.testing.capture_logs() as logs:
        await h.server.ready(EMPTY)
        await h.clock.advance(0.5)
        assert h.store.writes == 0 and h.store.races == 0  # the first write was refused
        await h.clock.advance(0.5)
    assert h.state == "RequestReady"
    assert h.gs["metadata"]["labels"]["x"] == "y"
    assert [e for e in logs if e["log_level"] in ("error", "critical", "warning")] == []
    retried = [e for e in logs if e.get("operation") == "updateState" and "reason" in e]
    assert [e["log_level"] for e in retried] == ["debug"]
    await h.server.stop()


async def test_watch_sends_the_game_server_then_every_change(h: Harness) -> None:
    stream = h.server.watch_game_server(EMPTY)
    first = await anext(stream)
    assert (first.object_meta.name, first.status.state) == ("gs1", "Scheduled")
    await h.server.ready(EMPTY)
    await h.clock.advance(0.5)
    assert (await anext(stream)).status.state == "RequestReady"
    await stream.aclose()


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        pytest.param(
            "bad key", "v", 'invalid label key "bad key": name part must consist of', id="key"
        ),
        pytest.param("k", "bad value!", 'invalid label value "bad value!" for key "k"', id="value"),
        pytest.param(
            "example.com/",
            "v",
            'invalid label key "example.com/": name part must be non-empty, '
            "name part must consist of alphanumeric characters",
            id="empty-name-also-fails-the-pattern",
        ),
    ],
)
async def test_set_label_validates(h: Harness, key: str, value: str, message: str) -> None:
    with pytest.raises(SDKError) as err:
        await h.server.set_label(sdk_pb2.KeyValue(key=key, value=value))
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert err.value.message.startswith(message)


async def test_annotations_only_need_a_qualified_key(h: Harness) -> None:
    await h.server.set_annotation(sdk_pb2.KeyValue(key="note", value="any text at all!"))
    await h.clock.advance(0.5)
    assert h.gs["metadata"]["annotations"]["agones.dev/sdk-note"] == "any text at all!"


async def test_players_are_written_after_a_second(h: Harness) -> None:
    await h.server.set_player_capacity(alpha_pb2.Count(count=2))
    assert (await h.server.player_connect(alpha_pb2.PlayerID(playerID="p1"))).bool
    assert (await h.server.player_connect(alpha_pb2.PlayerID(playerID="p2"))).bool
    with pytest.raises(SDKError, match="players are already at capacity"):
        await h.server.player_connect(alpha_pb2.PlayerID(playerID="p3"))
    await h.clock.advance(0.5)
    assert h.gs["status"]["players"] == {"count": 0, "capacity": 2, "ids": []}
    await h.clock.advance(0.5)
    assert h.gs["status"]["players"] == {"count": 2, "capacity": 2, "ids": ["p1", "p2"]}
    assert [e[1:] for e in h.store.events] == [
        ("PlayerCapacity", "Set to 2"),
        ("PlayerCount", "Set to 2"),
    ]


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        pytest.param(
            counter_update(name="nope", diff=1), "counter not found: nope", id="not-found"
        ),
        pytest.param(
            counter_update(count=11),
            "out of range. Count must be within range [0,Capacity]. Found Count: 11, Capacity: 10",
            id="count-over",
        ),
        pytest.param(
            counter_update(diff=-2),
            "out of range. Count must be within range [0,Capacity]. Found Count: -1, Capacity: 10",
            id="diff-under",
        ),
        pytest.param(
            counter_update(capacity=-1),
            "out of range. Capacity must be greater than or equal to 0. Found Capacity: -1",
            id="capacity",
        ),
        pytest.param(
            counter_update(),
            'invalid argument. Malformed CounterUpdateRequest: name:"rooms"',
            id="malformed",
        ),
        pytest.param(
            beta_pb2.UpdateCounterRequest(),
            "invalid argument. CounterUpdateRequest: <nil> cannot be nil",
            id="nil",
        ),
    ],
)
async def test_counter_errors_are_agones_plain_errors(
    h: Harness, request_: beta_pb2.UpdateCounterRequest, message: str
) -> None:
    """Agones' sidecar returns `errors.Errorf` values: gRPC UNKNOWN with its texts."""
    with pytest.raises(SDKError) as err:
        await h.server.update_counter(request_)
    assert (err.value.code, err.value.message) == (grpc.StatusCode.UNKNOWN, message)


async def test_counter_changes_are_batched_and_projected(h: Harness) -> None:
    for _ in range(3):
        result = await h.server.update_counter(counter_update(diff=2))
    assert (result.count, result.capacity) == (7, 10)
    got = await h.server.get_counter(beta_pb2.GetCounterRequest(name="rooms"))
    assert got.count == 7
    await h.server.update_counter(counter_update(capacity=20, count=15))
    await h.clock.advance(0.5)
    assert h.gs["status"]["counters"]["rooms"] == {"count": 15, "capacity": 20}
    assert h.store.writes == 1
    assert h.store.events == [
        ("Normal", "UpdateCounter", "Counter rooms updated to Count:15 Capacity:20")
    ]


class GatedStore(InMemoryGameServerStore):
    """Each write waits for `gate`; the first `conflicts` writes then fail."""

    def __init__(self, gs: dict[str, Any], conflicts: int = 0) -> None:
        super().__init__(gs)
        self.gate = asyncio.Event()
        self.in_flight = asyncio.Event()
        self.conflicts = conflicts

    async def patch(self, patch: Patch) -> dict[str, Any]:
        self.in_flight.set()
        await self.gate.wait()
        if self.conflicts:
            self.conflicts -= 1
            raise ConflictError("changed")
        return await super().patch(patch)


async def _gated(conflicts: int) -> Harness:
    h = Harness()
    h.store = GatedStore(copy.deepcopy(GS), conflicts)
    h.server.store = h.store
    await h.server.run()
    return h


@pytest.mark.parametrize(
    ("conflicts", "second_diff", "outcome"),
    [
        # Go holds the update lock over the write: the second call sees count 9 and is refused
        pytest.param(0, 2, "out-of-range", id="checked-against-the-written-count"),
        # a failed write keeps its batch: the retry writes both diffs
        pytest.param(1, 1, 1 + 8 + 1, id="failed-write-keeps-its-batch"),
    ],
)
async def test_counter_update_during_a_write(
    conflicts: int, second_diff: int, outcome: Any
) -> None:
    h = await _gated(conflicts)
    store = h.store
    assert isinstance(store, GatedStore)
    await h.server.update_counter(counter_update(diff=8))
    await h.clock.advance(0.5)
    await asyncio.wait_for(store.in_flight.wait(), 5)
    second = asyncio.create_task(h.server.update_counter(counter_update(diff=second_diff)))
    await h.clock.settle()
    store.gate.set()
    if outcome == "out-of-range":
        with pytest.raises(SDKError) as err:
            await asyncio.wait_for(second, 5)
        assert err.value.message.startswith("out of range. Count must be within range")
    else:
        await asyncio.wait_for(second, 5)
    await h.clock.advance(2)
    expected = 9 if outcome == "out-of-range" else outcome
    assert h.gs["status"]["counters"]["rooms"]["count"] == expected
    await h.server.stop()


async def test_list_changes_are_batched_with_their_errors(h: Harness) -> None:
    add, remove = beta_pb2.AddListValueRequest, beta_pb2.RemoveListValueRequest
    assert list((await h.server.add_list_value(add(name="players", value="c"))).values) == [
        "a",
        "b",
        "c",
    ]
    await h.server.remove_list_value(remove(name="players", value="a"))
    with pytest.raises(SDKError) as err:
        await h.server.add_list_value(add(name="players", value="b"))
    assert (err.value.code, err.value.message) == (
        grpc.StatusCode.UNKNOWN,
        "already exists. Value: b already in List: players",
    )
    with pytest.raises(SDKError) as err:
        await h.server.remove_list_value(remove(name="players", value="zz"))
    assert (err.value.code, err.value.message) == (
        grpc.StatusCode.UNKNOWN,
        "not found. Value: zz not found in List: players",
    )
    with pytest.raises(SDKError) as err:
        await h.server.get_list(beta_pb2.GetListRequest(name="nope"))
    assert (err.value.code, err.value.message) == (grpc.StatusCode.UNKNOWN, "list not found: nope")
    await h.clock.advance(0.5)
    assert h.gs["status"]["lists"]["players"] == {"capacity": 10, "values": ["b", "c"]}
    reply = await h.server.update_list(
        beta_pb2.UpdateListRequest(
            list=beta_pb2.List(name="players", capacity=1),
            update_mask=field_mask_pb2.FieldMask(paths=["capacity"]),
        )
    )
    assert reply == beta_pb2.List()  # the real sidecar answers an empty List
    for bad, message in [
        (
            beta_pb2.UpdateListRequest(
                list=beta_pb2.List(name="players", capacity=1001), update_mask={"paths": []}
            ),
            "out of range. Capacity must be within range [0,1000]. Found Capacity: 1001",
        ),
        (
            beta_pb2.UpdateListRequest(
                list=beta_pb2.List(name="players"), update_mask={"paths": ["x"]}
            ),
            "invalid argument. Field Mask Path(s): [x] are invalid for List. "
            "Use valid field name(s): [name capacity values]",
        ),
        (
            beta_pb2.UpdateListRequest(list=beta_pb2.List(name="players", capacity=2)),
            'invalid argument. List: name:"players" capacity:2 and UpdateMask <nil> cannot be nil',
        ),
        (
            beta_pb2.UpdateListRequest(
                list=beta_pb2.List(name="nope"), update_mask={"paths": ["capacity"]}
            ),
            "not found. nope List not found",
        ),
    ]:
        with pytest.raises(SDKError) as err:
            await h.server.update_list(bad)
        assert (err.value.code, err.value.message) == (grpc.StatusCode.UNKNOWN, message)
    await h.clock.advance(0.5)
    assert h.gs["status"]["lists"]["players"] == {"capacity": 1, "values": ["b"]}


async def test_errors_reach_grpc_clients_with_their_codes(h: Harness) -> None:
    serving = await serve_sdk(h.server, address="127.0.0.1", grpc_port=0, http_port=0)
    sdk = AsyncSDK("127.0.0.1", serving.grpc_port)
    try:
        await sdk.connect(5)
        with pytest.raises(ClientError) as err:
            await sdk.beta.get_counter_count("nope")
        assert err.value.code == grpc.StatusCode.UNKNOWN
        assert "counter not found: nope" in str(err.value)
        with pytest.raises(ClientError) as err:
            await sdk.beta.set_counter_count("rooms", 99)
        assert err.value.code == grpc.StatusCode.UNKNOWN
        with pytest.raises(ClientError) as err:
            await sdk.set_label("no spaces allowed", "v")
        assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert (await sdk.game_server()).object_meta.name == "gs1"
    finally:
        await sdk.close()
        await serving.stop(0)


async def test_watch_skips_versions_already_sent() -> None:
    class Relisting(InMemoryGameServerStore):
        async def watch(self) -> AsyncIterator[dict[str, Any]]:
            yield self.current  # a relist repeats the version every stream already has
            async for gs in super().watch():
                yield gs

    h = Harness()
    h.store = Relisting(copy.deepcopy(GS))
    h.server.store = h.store
    stream = h.server.watch_game_server(EMPTY)
    await h.server.run()
    assert (await anext(stream)).object_meta.resource_version == "10"
    await h.server.allocate(EMPTY)
    await h.clock.advance(0.5)
    update = await anext(stream)
    assert (update.object_meta.resource_version, update.status.state) == ("11", "Allocated")
    await stream.aclose()
    await h.server.stop()
