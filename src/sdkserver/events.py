"""Kubernetes Events about the GameServer, as Agones' sidecar records them ("gameserver-sidecar").

`EventRecorder.record_event` is fire-and-forget: a failure to record is logged, never raised.
`event_body` builds the core/v1 Event that `KubeGameServerStore` posts (named like client-go's
recorder, `<object>.<unix nanos in hex>`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Protocol

from ..apis.meta.objectmeta import format_time

COMPONENT = "gameserver-sidecar"


class EventRecorder(Protocol):
    def record_event(self, gs: dict[str, Any], type_: str, reason: str, message: str) -> None: ...


def event_body(
    gs: dict[str, Any], type_: str, reason: str, message: str, now: float
) -> dict[str, Any]:
    meta = gs.get("metadata") or {}
    nanos = int(now * 1e9)
    stamp = format_time(datetime.fromtimestamp(now, UTC))
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": f"{meta.get('name', '')}.{nanos:x}",
            "namespace": meta.get("namespace", ""),
        },
        "involvedObject": {
            "apiVersion": gs.get("apiVersion", "agones.dev/v1"),
            "kind": gs.get("kind", "GameServer"),
            "name": meta.get("name", ""),
            "namespace": meta.get("namespace", ""),
            "uid": meta.get("uid", ""),
            "resourceVersion": meta.get("resourceVersion", ""),
        },
        "reason": reason,
        "message": message,
        "type": type_,
        "source": {"component": COMPONENT},
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }


def go_duration(seconds: float) -> str:
    """Go's `time.Duration.String()` for whole seconds (`10s`, `1m30s`, `1h0m0s`)."""
    total = int(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"
