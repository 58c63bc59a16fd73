"""protojson: grpc-gateway's JSON for the SDK (proto names, every field, int64 as strings)."""

from __future__ import annotations

import pytest
from google.protobuf import json_format

from agones.sdk.proto import sdk_pb2
from agones.sdk.proto.beta import beta_pb2
from agones.sdkserver.protojson import decode_values, marshal, unmarshal


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


@pytest.mark.parametrize(
    ("raw", "limit", "expected"),
    [
        pytest.param(b"", 1, [], id="empty"),
        pytest.param(b' {"a": 1} {"b": 2}', 1, [{"a": 1}], id="first-value-only"),
        pytest.param(b'{"a": 1}\n{"b": 2}', None, [{"a": 1}, {"b": 2}], id="stream"),
        pytest.param(b"{", 1, "unexpected EOF", id="cut-short"),
        pytest.param(b"x", 1, "invalid character 'x' looking for beginning of value", id="junk"),
        pytest.param(
            b'{"a": NaN}', 1, "invalid character 'N' looking for beginning of value", id="nan"
        ),
        pytest.param(b"\xff", 1, "invalid UTF-8 in request body: invalid start byte", id="utf8"),
        pytest.param(b"[" * 100_000, 1, "exceeded max depth", id="too-deep"),
    ],
)
def test_decode_values(raw: bytes, limit: int | None, expected: object) -> None:
    if isinstance(expected, list):
        assert decode_values(raw, limit) == expected
    else:
        with pytest.raises(json_format.ParseError) as err:
            decode_values(raw, limit)
        assert str(err.value) == expected


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(123, "proto: syntax error (line 1:1): unexpected token 123", id="number"),
        pytest.param("x", 'proto: syntax error (line 1:1): unexpected token "x"', id="string"),
        pytest.param([], "proto: syntax error (line 1:1): unexpected token [", id="array"),
        pytest.param(None, "proto: syntax error (line 1:1): unexpected token null", id="null"),
        pytest.param(
            {"countDiff": 2**70},
            "Failed to parse countDiff field: Value out of range: 1180591620717411303424.",
            id="out-of-range",
        ),
    ],
)
def test_unmarshal_refuses_what_is_no_request(data: object, message: str) -> None:
    with pytest.raises(json_format.ParseError) as err:
        unmarshal(data, beta_pb2.CounterUpdateRequest())
    assert str(err.value) == message
