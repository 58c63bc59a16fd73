"""GameServers and GameServerSets for the GameServerSet controller's table tests."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec

from agones.apis.agones.v1.gameserver import GameServer
from agones.apis.agones.v1.gameserverset import GameServerSet

NOW = 1_700_000_000.0


def stamp(seconds_ago: float) -> str:
    return datetime.fromtimestamp(NOW - seconds_ago, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def gs(
    name: str,
    state: str | None = "Ready",
    *,
    node: str = "",
    age: float = 0.0,
    deleting: bool = False,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    counters: dict[str, dict[str, int]] | None = None,
    lists: dict[str, dict[str, Any]] | None = None,
    players: dict[str, int] | None = None,
    owner_uid: str = "gss-uid",
) -> GameServer:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "default",
        "uid": f"uid-{name}",
        "creationTimestamp": stamp(age),
        "labels": {"agones.dev/gameserverset": "set", **(labels or {})},
        "ownerReferences": [
            {
                "apiVersion": "agones.dev/v1",
                "kind": "GameServerSet",
                "name": "set",
                "uid": owner_uid,
                "controller": True,
            }
        ],
    }
    if deleting:
        meta["deletionTimestamp"] = stamp(0)
    if annotations:
        meta["annotations"] = annotations
    status: dict[str, Any] = {}
    if state is not None:
        status["state"] = state
    if node:
        status["nodeName"] = node
    if counters:
        status["counters"] = counters
    if lists:
        status["lists"] = lists
    if players:
        status["players"] = players
    raw = {"apiVersion": "agones.dev/v1", "kind": "GameServer", "metadata": meta, "spec": {}}
    raw["status"] = status
    return msgspec.convert(raw, GameServer)


def gss(replicas: int = 3, **spec: Any) -> GameServerSet:
    raw = {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServerSet",
        "metadata": {"name": "set", "namespace": "default", "uid": "gss-uid"},
        "spec": {"replicas": replicas, "template": {"spec": {}}, **spec},
    }
    return msgspec.convert(raw, GameServerSet)


def names(game_servers: list[GameServer]) -> list[str]:
    return [g.meta.get_name() for g in game_servers]
