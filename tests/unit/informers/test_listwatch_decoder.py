"""`StructDecoder.decode_event`: one pass for item events, the slow path for the rest."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from agones.apis.agones.v1.gameserver import GameServer
from agones.apis.core.v1 import Pod
from agones.informers.listwatch import RawDecoder, StructDecoder

GS = {
    "apiVersion": "agones.dev/v1",
    "kind": "GameServer",
    "metadata": {
        "name": "gs-1",
        "namespace": "default",
        "resourceVersion": "42",
        "managedFields": [{"manager": "agones-py", "operation": "Update"}],
    },
    "spec": {"ports": [{"name": "default", "containerPort": 7654}]},
    "status": {"state": "Ready", "address": "10.0.0.1"},
}
POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "gs-1", "namespace": "default", "resourceVersion": "7"},
    "spec": {"nodeName": "node-1", "containers": [{"name": "a", "image": "x", "args": ["-v"]}]},
    "status": {"phase": "Running"},
}
STATUS = {
    "kind": "Status",
    "apiVersion": "v1",
    "status": "Failure",
    "message": "too old resource version: 1 (42)",
    "reason": "Expired",
    "code": 410,
}
BOOKMARK = {
    "kind": "GameServer",
    "apiVersion": "agones.dev/v1",
    "metadata": {"resourceVersion": "99"},
}


def _raw(type_: str, obj: Any) -> bytes:
    return msgspec.json.encode({"type": type_, "object": obj})


@pytest.mark.parametrize("type_", ["ADDED", "MODIFIED", "DELETED"])
def test_item_events_decode_into_the_type(type_: str) -> None:
    event = StructDecoder(GameServer).decode_event(_raw(type_, GS))
    assert event.type == type_
    assert isinstance(event.object, GameServer)
    assert event.object == msgspec.convert(GS, GameServer)


def test_a_read_model_keeps_only_what_it_declares() -> None:
    event = StructDecoder(Pod).decode_event(_raw("ADDED", POD))
    assert isinstance(event.object, Pod)
    assert event.object.spec is not None and event.object.spec.node_name == "node-1"
    assert "containers" not in msgspec.to_builtins(event.object)["spec"]


@pytest.mark.parametrize(
    ("decoder", "type_", "obj"),
    [
        pytest.param(StructDecoder(GameServer), "ERROR", STATUS, id="typed-error"),
        pytest.param(StructDecoder(GameServer), "BOOKMARK", BOOKMARK, id="typed-bookmark"),
        pytest.param(StructDecoder(Pod), "ERROR", STATUS, id="read-model-error"),
        pytest.param(RawDecoder(), "ERROR", STATUS, id="raw-error"),
        pytest.param(RawDecoder(), "BOOKMARK", BOOKMARK, id="raw-bookmark"),
    ],
)
def test_error_and_bookmark_events_are_plain_dicts(
    decoder: StructDecoder[Any], type_: str, obj: dict[str, Any]
) -> None:
    event = decoder.decode_event(_raw(type_, obj))
    assert event.type == type_
    assert type(event.object) is dict
    assert event.object == obj


def test_raw_decoder_yields_the_json_as_sent() -> None:
    event = RawDecoder().decode_event(_raw("MODIFIED", GS))
    assert event.type == "MODIFIED" and event.object == GS


def test_an_item_that_does_not_fit_the_type_is_an_error() -> None:
    bad = {**GS, "spec": {"ports": "not a list"}}
    with pytest.raises(msgspec.ValidationError):
        StructDecoder(GameServer).decode_event(_raw("MODIFIED", bad))


def test_malformed_json_is_a_decode_error() -> None:
    with pytest.raises(msgspec.DecodeError):
        StructDecoder(GameServer).decode_event(b'{"type": "ADDED", "object": {')


@pytest.mark.parametrize(
    ("decoder", "obj"),
    [
        pytest.param(StructDecoder(GameServer), GS, id="gameserver"),
        pytest.param(StructDecoder(Pod), POD, id="pod-read-model"),
        pytest.param(RawDecoder(), GS, id="raw"),
    ],
)
def test_an_object_decodes_as_it_does_inside_an_event(decoder: Any, obj: dict[str, Any]) -> None:
    event = decoder.decode_event(msgspec.json.encode({"type": "MODIFIED", "object": obj}))
    assert decoder.decode_object(msgspec.json.encode(obj)) == event.object


def test_decode_object_gives_a_new_copy_each_time() -> None:
    raw = msgspec.json.encode(GS)
    first, second = RawDecoder().decode_object(raw), RawDecoder().decode_object(raw)
    first["metadata"]["name"] = "changed"
    assert second["metadata"]["name"] == "gs-1"
