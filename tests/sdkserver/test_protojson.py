"""protojson: grpc-gateway's JSON for the SDK (proto names, every field, int64 as strings)."""

from __future__ import annotations

import pytest
from google.protobuf import json_format

from agones.sdk.proto import sdk_pb2
from agones.sdk.proto.beta import beta_pb2
from agones.sdkserver.protojson import marshal, unmarshal


def test_empty_game_server_emits_every_field() -> None:
    data = marshal(sdk_pb2.GameServer(status=sdk_pb2.GameServer.Status(state="Ready")))
    assert data["object_meta"] is None
    assert data["spec"] is None
    status = data["status"]
    assert status["state"] == "Ready"
    assert status["address"] == ""
    assert status["ports"] == [] and status["addresses"] == []
    assert status["players"] is None
    assert status["counters"] == {} and status["lists"] == {}


def test_int64_are_strings_int32_are_numbers() -> None:
    gs = sdk_pb2.GameServer()
    gs.object_meta.generation = 3
    gs.spec.health.period_seconds = 5
    gs.status.counters["rooms"].count = 7
    data = marshal(gs)
    assert data["object_meta"]["generation"] == "3"
    assert data["object_meta"]["deletion_timestamp"] == "0"
    assert data["spec"]["health"] == {
        "disabled": False,
        "period_seconds": 5,
        "failure_threshold": 0,
        "initial_delay_seconds": 0,
    }
    assert data["status"]["counters"]["rooms"] == {"count": "7", "capacity": "0"}


def test_wrappers_and_field_masks_keep_their_json_forms() -> None:
    request = beta_pb2.UpdateCounterRequest()
    request.counterUpdateRequest.count.value = 4
    data = marshal(request)
    assert data == {
        "counterUpdateRequest": {"name": "", "count": "4", "capacity": None, "countDiff": "0"}
    }
    mask = marshal(beta_pb2.UpdateListRequest(update_mask={"paths": ["capacity", "values"]}))
    assert mask["update_mask"] == "capacity,values"
    assert mask["list"] is None


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"countDiff": "-1", "capacity": "42"}, id="json-names-string-ints"),
        pytest.param({"countDiff": -1, "capacity": 42}, id="number-ints"),
        pytest.param({"countDiff": "-1", "capacity": "42", "extra": 1}, id="unknown-ignored"),
    ],
)
def test_unmarshal_accepts_gateway_inputs(body: dict[str, object]) -> None:
    update = beta_pb2.CounterUpdateRequest()
    unmarshal(body, update)
    assert update.countDiff == -1
    assert update.HasField("capacity") and update.capacity.value == 42
    assert not update.HasField("count")


def test_unmarshal_accepts_proto_names() -> None:
    request = beta_pb2.UpdateListRequest()
    unmarshal({"update_mask": "capacity", "list": {"name": "x"}}, request)
    assert list(request.update_mask.paths) == ["capacity"]


def test_unmarshal_rejects_wrong_types() -> None:
    with pytest.raises(json_format.ParseError):
        unmarshal({"seconds": "soon"}, sdk_pb2.Duration())


def test_keys_follow_declaration_order() -> None:
    gs = sdk_pb2.GameServer()
    gs.status.state = "Ready"
    data = marshal(gs)
    assert list(data) == ["object_meta", "spec", "status"]
    assert list(data["status"]) == [
        "state",
        "address",
        "addresses",
        "ports",
        "players",
        "counters",
        "lists",
    ]
