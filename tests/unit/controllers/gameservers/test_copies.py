"""The cheap copies the sync steps write from: the copy's own part may be assigned without the
shared (cached) original changing; the rest is shared, not copied."""

from __future__ import annotations

from collections.abc import Callable

import msgspec
import pytest

from agones.apis.agones.v1.gameserver import GameServer, GameServerState
from agones.controllers.gameservers.controller import has_static_tcpudp_ports
from agones.controllers.gameservers.gameservers import (
    deep_copy,
    with_own_metadata,
    with_own_status,
)


def cached(**status: object) -> GameServer:
    return msgspec.convert(
        {
            "metadata": {"name": "gs", "namespace": "default", "finalizers": ["agones.dev"]},
            "spec": {"ports": [{"name": "default", "containerPort": 7654, "hostPort": 7001}]},
            **({"status": status} if status else {}),
        },
        GameServer,
    )


def test_with_own_status_leaves_the_original_alone() -> None:
    original = cached(state="Creating", address="1.2.3.4")
    before = msgspec.json.encode(original)
    copy = with_own_status(original)
    copy.gs_status.state = GameServerState.STARTING
    copy.gs_status.address = "5.6.7.8"
    assert msgspec.json.encode(original) == before
    assert copy.state() == GameServerState.STARTING
    assert copy.spec is original.spec, "the spec is shared, not copied"


def test_with_own_status_of_a_game_server_without_status() -> None:
    original = cached()
    copy = with_own_status(original)
    copy.gs_status.state = GameServerState.SHUTDOWN
    assert original.status is msgspec.UNSET
    assert copy.state() == GameServerState.SHUTDOWN


def test_with_own_metadata_leaves_the_original_alone() -> None:
    original = cached(state="Shutdown")
    copy = with_own_metadata(original)
    copy.meta.finalizers = []
    copy.meta.deletion_timestamp = "2026-12-01T00:00:00Z"
    assert original.meta.finalizers == ["agones.dev"]
    assert original.meta.deletion_timestamp is msgspec.UNSET
    assert copy.status is original.status


@pytest.mark.parametrize(
    "copier",
    [
        pytest.param(deep_copy, id="deep"),
        pytest.param(with_own_status, id="own-status"),
        pytest.param(with_own_metadata, id="own-metadata"),
    ],
)
def test_copies_encode_as_the_original(copier: Callable[[GameServer], GameServer]) -> None:
    original = cached(state="Ready", address="1.2.3.4")
    assert msgspec.json.encode(copier(original)) == msgspec.json.encode(original)


@pytest.mark.parametrize(
    ("ports", "expected"),
    [
        pytest.param([], False, id="no-ports"),
        pytest.param([{"portPolicy": "Dynamic", "protocol": "TCPUDP"}], False, id="dynamic"),
        pytest.param([{"portPolicy": "Static", "protocol": "UDP"}], False, id="static-udp"),
        pytest.param([{"portPolicy": "Static", "protocol": "TCPUDP"}], True, id="static-tcpudp"),
    ],
)
def test_has_static_tcpudp_ports(ports: list[dict[str, str]], expected: bool) -> None:
    gs = msgspec.convert(
        {"spec": {"ports": [{"name": f"p{i}", **p} for i, p in enumerate(ports)]}}, GameServer
    )
    assert has_static_tcpudp_ports(gs) is expected
