"""Typed Fleets and GameServers for the policy tables."""

from __future__ import annotations

from typing import Any

import msgspec

from agones.apis.agones.v1.fleet import Fleet
from agones.apis.agones.v1.gameserver import GameServer


def fleet(
    replicas: int = 0,
    allocated: int = 0,
    ready: int | None = None,
    *,
    spec_replicas: int | None = None,
    counters: dict[str, dict[str, int]] | None = None,
    lists: dict[str, dict[str, int]] | None = None,
    template_counters: dict[str, dict[str, int]] | None = None,
    template_lists: dict[str, dict[str, Any]] | None = None,
    scheduling: str = "Packed",
) -> Fleet:
    status: dict[str, Any] = {
        "replicas": replicas,
        "allocatedReplicas": allocated,
        "readyReplicas": replicas - allocated if ready is None else ready,
    }
    if counters is not None:
        status["counters"] = counters
    if lists is not None:
        status["lists"] = lists
    tspec: dict[str, Any] = {"template": {}}
    if template_counters is not None:
        tspec["counters"] = template_counters
    if template_lists is not None:
        tspec["lists"] = template_lists
    return msgspec.convert(
        {
            "metadata": {"name": "f", "namespace": "default"},
            "spec": {
                "replicas": replicas if spec_replicas is None else spec_replicas,
                "scheduling": scheduling,
                "template": {"spec": tspec},
            },
            "status": status,
        },
        Fleet,
    )


def game_server(
    name: str,
    *,
    counter: tuple[str, int, int] | None = None,
    lst: tuple[str, int, int] | None = None,
    created: str = "2024-01-01T00:00:00Z",
) -> GameServer:
    status: dict[str, Any] = {"state": "Ready", "nodeName": "node-1"}
    if counter is not None:
        key, count, capacity = counter
        status["counters"] = {key: {"count": count, "capacity": capacity}}
    if lst is not None:
        key, count, capacity = lst
        status["lists"] = {key: {"capacity": capacity, "values": [str(i) for i in range(count)]}}
    return msgspec.convert(
        {
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": created},
            "spec": {"template": {}},
            "status": status,
        },
        GameServer,
    )
