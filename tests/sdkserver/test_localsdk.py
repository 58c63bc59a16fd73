"""LocalSDKServer (local and test modes): state changes, Agones' error texts, test-mode recording."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import field_mask_pb2

from agones.featuregates import FeatureGates
from agones.sdk.proto import sdk_pb2
from agones.sdk.proto.alpha import alpha_pb2
from agones.sdk.proto.beta import beta_pb2
from agones.sdkserver.errors import SDKError
from agones.sdkserver.localsdk import LocalSDKServer, apply_list_mask, equal_sets
from tests.sdkserver.harness import counter_update

EMPTY = sdk_pb2.Empty()
PLAYERS_ON = FeatureGates().with_values(PlayerTracking=True)


def local(gates: FeatureGates | None = None, **kwargs: object) -> LocalSDKServer:
    return LocalSDKServer(gates or FeatureGates(), **kwargs)  # type: ignore[arg-type]


async def test_default_game_server_seeds_counters_lists_and_players() -> None:
    server = local(PLAYERS_ON)
    gs = await server.get_game_server(EMPTY)
    assert gs.object_meta.name == "local"
    assert gs.object_meta.namespace == "default"
    assert gs.object_meta.uid == "1234"
    assert gs.object_meta.labels == {"islocal": "true"}
    assert gs.status.state == "Ready"
    assert gs.status.counters["rooms"].count == 1
    assert gs.status.counters["rooms"].capacity == 10
    assert list(gs.status.lists["players"].values) == ["test0", "test1", "test2"]
    assert gs.status.HasField("players")


async def test_counts_and_lists_off_leaves_no_counters() -> None:
    server = local(FeatureGates().with_values(CountsAndLists=False))
    gs = await server.get_game_server(EMPTY)
    assert len(gs.status.counters) == 0
    with pytest.raises(SDKError) as err:
        await server.get_counter(beta_pb2.GetCounterRequest(name="rooms"))
    assert (err.value.code, err.value.message) == (
        grpc.StatusCode.UNKNOWN,
        "CountsAndLists not enabled",
    )


def test_generated_uid_is_a_random_decimal_int() -> None:
    server = local()
    server.generate_uid()
    first = server.gs.object_meta.uid
    server.generate_uid()
    assert first.isdigit() and server.gs.object_meta.uid.isdigit()
    assert first != server.gs.object_meta.uid


@pytest.mark.parametrize(
    ("rpc", "state"),
    [
        pytest.param("ready", "Ready", id="ready"),
        pytest.param("allocate", "Allocated", id="allocate"),
        pytest.param("shutdown", "Shutdown", id="shutdown"),
    ],
)
async def test_state_rpcs_change_state_at_once(rpc: str, state: str) -> None:
    server = local()
    server.gs.status.state = "Scheduled"
    await getattr(server, rpc)(EMPTY)
    assert server.gs.status.state == state


async def test_labels_and_annotations_get_the_sdk_prefix() -> None:
    server = local()
    await server.set_label(sdk_pb2.KeyValue(key="mode", value="ctf"))
    await server.set_annotation(sdk_pb2.KeyValue(key="map", value="de_dust"))
    assert server.gs.object_meta.labels["agones.dev/sdk-mode"] == "ctf"
    assert server.gs.object_meta.annotations["agones.dev/sdk-map"] == "de_dust"


async def test_watch_sends_current_state_then_every_change() -> None:
    server = local()
    stream = server.watch_game_server(EMPTY)
    first = await anext(stream)
    assert first.status.state == "Ready"
    await server.allocate(EMPTY)
    second = await asyncio.wait_for(anext(stream), 2)
    assert second.status.state == "Allocated"
    server.close()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(anext(stream), 2)


async def test_reserve_returns_to_ready_after_the_duration() -> None:
    server = local(test_mode=True, expected=[])
    stream = server.watch_game_server(EMPTY)
    await anext(stream)
    await server.reserve(sdk_pb2.Duration(seconds=1))
    assert (await asyncio.wait_for(anext(stream), 2)).status.state == "Reserved"
    assert (await asyncio.wait_for(anext(stream), 3)).status.state == "Ready"
    # the timer calls Ready itself, which records a second request name
    assert server.requests == ["watch", "reserve", "ready"]


async def test_allocate_cancels_the_reserve_timer() -> None:
    server = local()
    await server.reserve(sdk_pb2.Duration(seconds=1))
    await server.allocate(EMPTY)
    assert server._reserve_timer is None
    assert server.gs.status.state == "Allocated"


async def _pings(n: int) -> AsyncIterator[sdk_pb2.Empty]:
    for _ in range(n):
        yield sdk_pb2.Empty()


async def test_each_health_message_is_recorded() -> None:
    server = local(test_mode=True, expected=["health"])
    await server.health(_pings(3))
    assert server.requests == ["health"] * 3


async def test_setlabel_and_setannotation_recorded_only_with_expected_values() -> None:
    server = local(test_mode=True, expected=["setlabel", "setannotation"])
    server.generate_uid()
    created = str(server.gs.object_meta.creation_timestamp)
    await server.set_label(sdk_pb2.KeyValue(key="label", value="wrong"))
    await server.set_annotation(sdk_pb2.KeyValue(key="annotation", value="1234"))
    assert server.requests == []
    await server.set_label(sdk_pb2.KeyValue(key="label", value=created))
    await server.set_annotation(sdk_pb2.KeyValue(key="a", value=server.gs.object_meta.uid))
    assert server.requests == ["setlabel", "setannotation"]
    assert server.compare()


@pytest.mark.parametrize(
    ("expected", "received", "ok"),
    [
        pytest.param(["a", "b"], ["b", "a", "a"], True, id="order-and-duplicates-ignored"),
        pytest.param(["a", "b"], ["a"], False, id="missing"),
        pytest.param(["a"], ["a", "c"], False, id="unexpected"),
        pytest.param([], [], True, id="empty"),
    ],
)
def test_equal_sets(expected: list[str], received: list[str], ok: bool) -> None:
    assert equal_sets(expected, received)[0] is ok


# -- counters ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        pytest.param(
            counter_update(count=101),
            "out of range. Count must be within range [0,Capacity]. Found Count: 101, Capacity: 10",
            id="count-above-capacity",
        ),
        pytest.param(
            counter_update(diff=-2),
            "out of range. Count must be within range [0,Capacity]. Found Count: -1, Capacity: 10",
            id="diff-below-zero",
        ),
        pytest.param(
            counter_update(capacity=-1),
            "out of range. Capacity must be greater than or equal to 0. Found Capacity: -1",
            id="negative-capacity",
        ),
        pytest.param(
            counter_update(name="nope", diff=1), "not found. nope Counter not found", id="unknown"
        ),
        pytest.param(
            beta_pb2.UpdateCounterRequest(),
            "invalid argument. CounterUpdateRequest cannot be nil",
            id="nil-update",
        ),
    ],
)
async def test_update_counter_errors_are_plain(
    request_: beta_pb2.UpdateCounterRequest, message: str
) -> None:
    server = local()
    with pytest.raises(SDKError) as err:
        await server.update_counter(request_)
    assert (err.value.code, err.value.message) == (grpc.StatusCode.UNKNOWN, message)
    assert server.gs.status.counters["rooms"].count == 1


async def test_update_counter_applies_capacity_then_count_then_diff_and_records_each() -> None:
    server = local(test_mode=True, expected=[])
    result = await server.update_counter(counter_update(capacity=42, count=40, diff=-1))
    assert (result.name, result.count, result.capacity) == ("rooms", 39, 42)
    assert server.requests == ["setcapacitycounter", "setcountcounter", "updatecounter"]
    got = await server.get_counter(beta_pb2.GetCounterRequest(name="rooms"))
    assert (got.count, got.capacity) == (39, 42)


# -- lists -------------------------------------------------------------------------------------


def list_update(paths: list[str] | None, **fields: object) -> beta_pb2.UpdateListRequest:
    return beta_pb2.UpdateListRequest(
        list=beta_pb2.List(name="players", **fields),  # type: ignore[arg-type]
        update_mask=field_mask_pb2.FieldMask(paths=paths or []),
    )


@pytest.mark.parametrize(
    ("paths", "fields", "capacity", "values"),
    [
        pytest.param(["capacity"], {"capacity": 2}, 2, ["test0", "test1"], id="capacity-truncates"),
        pytest.param([], {"capacity": 2}, 2, ["test0", "test1"], id="empty-mask-merges-all"),
        pytest.param(["values"], {"values": ["x"]}, 100, ["x"], id="values-replace"),
        pytest.param(
            [], {"values": ["x"]}, 100, ["test0", "test1", "test2", "x"], id="merge-appends"
        ),
        pytest.param(["capacity"], {"capacity": 0}, 0, [], id="zero-capacity"),
    ],
)
async def test_update_list_mask_semantics(
    paths: list[str], fields: dict[str, object], capacity: int, values: list[str]
) -> None:
    server = local()
    result = await server.update_list(list_update(paths, **fields))
    assert (result.capacity, list(result.values)) == (capacity, values)
    stored = server.gs.status.lists["players"]
    assert (stored.capacity, list(stored.values)) == (capacity, values)


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        pytest.param(
            list_update(["capacity"], capacity=1001),
            "out of range. Capacity must be within range [0,1000]. Found Capacity: 1001",
            id="capacity-above-max",
        ),
        pytest.param(
            list_update(["bogus"]),
            "invalid argument. Field Mask Path(s): [bogus] are invalid for List. "
            "Use valid field name(s): [name capacity values]",
            id="bad-mask",
        ),
        pytest.param(
            beta_pb2.UpdateListRequest(list=beta_pb2.List(name="players")),
            'invalid argument. List: name: "players" and UpdateMask <nil> cannot be nil',
            id="nil-mask",
        ),
        pytest.param(
            beta_pb2.UpdateListRequest(
                list=beta_pb2.List(name="nope"), update_mask=field_mask_pb2.FieldMask()
            ),
            "not found. nope List not found",
            id="unknown-list",
        ),
    ],
)
async def test_update_list_errors(request_: beta_pb2.UpdateListRequest, message: str) -> None:
    server = local()
    with pytest.raises(SDKError) as err:
        await server.update_list(request_)
    assert (err.value.code, err.value.message) == (grpc.StatusCode.UNKNOWN, message)


async def test_list_values_add_and_remove_with_errors() -> None:
    server = local()
    add = beta_pb2.AddListValueRequest
    remove = beta_pb2.RemoveListValueRequest
    result = await server.add_list_value(add(name="players", value="test3"))
    assert list(result.values) == ["test0", "test1", "test2", "test3"]
    with pytest.raises(SDKError, match=r"already exists. Value: test3 already in List: players"):
        await server.add_list_value(add(name="players", value="test3"))
    result = await server.remove_list_value(remove(name="players", value="test0"))
    assert list(result.values) == ["test1", "test2", "test3"]
    with pytest.raises(SDKError, match=r"not found. Value: test0 not found in List: players"):
        await server.remove_list_value(remove(name="players", value="test0"))
    await server.update_list(list_update(["capacity"], capacity=3))
    with pytest.raises(
        SDKError, match=r"out of range. No available capacity. Current Capacity: 3, List Size: 3"
    ):
        await server.add_list_value(add(name="players", value="x"))


def test_apply_list_mask_is_pure() -> None:
    current = beta_pb2.List(name="l", capacity=5, values=["a"])
    apply_list_mask(current, beta_pb2.List(capacity=1), ["capacity"])
    assert current.capacity == 5


# -- players (alpha) ---------------------------------------------------------------------------


async def test_player_rpcs_need_the_gate() -> None:
    server = local()
    with pytest.raises(SDKError, match=r"^PlayerTracking not enabled$"):
        await server.player_connect(alpha_pb2.PlayerID(playerID="1"))


async def test_player_tracking_sequence_and_recording() -> None:
    server = local(PLAYERS_ON, test_mode=True, expected=[])
    pid = alpha_pb2.PlayerID(playerID="1234")
    with pytest.raises(SDKError, match=r"^Players are already at capacity$"):
        await server.player_connect(pid)
    await server.set_player_capacity(alpha_pb2.Count(count=1))
    assert (await server.player_connect(pid)).bool is True
    assert (await server.player_connect(pid)).bool is False
    with pytest.raises(SDKError, match="at capacity"):
        await server.player_connect(alpha_pb2.PlayerID(playerID="other"))
    assert (await server.is_player_connected(pid)).bool is True
    assert list((await server.get_connected_players(alpha_pb2.Empty())).list) == ["1234"]
    assert (await server.player_disconnect(pid)).bool is True
    assert (await server.player_disconnect(pid)).bool is False
    assert (await server.get_player_count(alpha_pb2.Empty())).count == 0
    assert (await server.get_player_capacity(alpha_pb2.Empty())).count == 1
    assert set(server.requests) == {
        "setplayercapacity",
        "playerconnect",
        "isplayerconnected",
        "getconnectedplayers",
        "playerdisconnect",
        "getplayercount",
        "getplayercapacity",
    }


# -- file mode ---------------------------------------------------------------------------------

MANIFEST = """
apiVersion: agones.dev/v1
kind: GameServer
metadata:
  name: from-file
  namespace: ns
  creationTimestamp: "2024-01-02T03:04:05Z"
  labels: {{a: b}}
spec:
  health: {{periodSeconds: 7}}
status:
  state: {state}
  counters: {{c: {{count: 2, capacity: 3}}}}
"""


async def test_file_seeds_the_game_server_and_is_reloaded_on_change(tmp_path: Path) -> None:
    path = tmp_path / "gs.yaml"
    path.write_text(MANIFEST.format(state="Scheduled"))
    server = local(file=path)
    gs = await server.get_game_server(EMPTY)
    assert (gs.object_meta.name, gs.object_meta.namespace) == ("from-file", "ns")
    assert gs.object_meta.creation_timestamp == 1704164645
    assert gs.spec.health.period_seconds == 7
    assert gs.status.counters["c"].capacity == 3
    await server.start(poll_interval=0.02)
    stream = server.watch_game_server(EMPTY)
    assert (await anext(stream)).status.state == "Scheduled"
    path.write_text(MANIFEST.format(state="Allocated") + "\n")
    assert (await asyncio.wait_for(anext(stream), 5)).status.state == "Allocated"
    server.close()
