"""Protobuf watch events are encoded once per event for all the watchers they go to."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from agones.localcluster.apiserver import watchstream
from agones.localcluster.apiserver.faults import Faults
from agones.localcluster.apiserver.registry import Registry
from agones.localcluster.apiserver.store import Store


def configmap(name: str, rv: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": rv},
        "data": {"k": "v"},
    }


@pytest.fixture
def encodings(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every event `_protobuf_frame` encodes."""
    seen: list[dict[str, Any]] = []
    real = watchstream._protobuf_frame

    def counting(event: dict[str, Any]) -> bytes:
        seen.append(event)
        return real(event)

    monkeypatch.setattr(watchstream, "_protobuf_frame", counting)
    return seen


def test_one_encoding_per_event_and_type(encodings: list[dict[str, Any]]) -> None:
    registry = Registry(Store(), Faults())
    info = registry.lookup("", "v1", "configmaps")
    assert info is not None
    server = watchstream.WatchServer(registry, 5.0)
    obj = configmap("a", "5")
    raw = msgspec.json.encode(obj)
    frames = [server.protobuf_event(info, ("ADDED", obj, raw)) for _ in range(3)]
    assert len(encodings) == 1
    assert frames[0] == frames[1] == frames[2]
    assert frames[0] == watchstream._protobuf_frame({"type": "ADDED", "object": obj})
    server.protobuf_event(info, ("MODIFIED", obj, raw))
    assert [e["type"] for e in encodings[:3]] == ["ADDED", "ADDED", "MODIFIED"]


def test_events_without_stored_bytes_are_encoded_each_time(
    encodings: list[dict[str, Any]],
) -> None:
    registry = Registry(Store(), Faults())
    info = registry.lookup("", "v1", "configmaps")
    assert info is not None
    server = watchstream.WatchServer(registry, 5.0)
    obj = configmap("gone", "7")
    first = server.protobuf_event(info, ("DELETED", obj, b""))
    second = server.protobuf_event(info, ("DELETED", obj, b""))
    assert first == second
    assert len(encodings) == 2


def test_the_memo_stays_bounded() -> None:
    registry = Registry(Store(), Faults())
    info = registry.lookup("", "v1", "configmaps")
    assert info is not None
    server = watchstream.WatchServer(registry, 5.0)
    for i in range(watchstream.FRAME_MEMO_SIZE + 50):
        obj = configmap(f"o{i}", str(i + 1))
        server.protobuf_event(info, ("ADDED", obj, msgspec.json.encode(obj)))
    assert len(server._frames) == watchstream.FRAME_MEMO_SIZE
