"""GameServer (Kubernetes JSON) → SDK `GameServer` message (Agones `pkg/sdkserver/sdk.go`).

Players are exposed only with the PlayerTracking gate, counters and lists only with CountsAndLists.
Timestamps become seconds since the Unix epoch; a missing creationTimestamp becomes Go's zero
time (-62135596800), as Agones' `metav1.Time{}.Unix()` does.
"""

from __future__ import annotations

from typing import Any

from ..apis.meta.objectmeta import parse_time
from ..featuregates import Feature, FeatureGates
from ..sdk.proto import sdk_pb2

# Prefix of labels and annotations set through the SDK.
METADATA_PREFIX = "agones.dev/sdk-"

GO_ZERO_TIME_UNIX = -62135596800


def to_unix(text: str | None) -> int:
    if not text:
        return GO_ZERO_TIME_UNIX
    return int(parse_time(text).timestamp())


def convert(gs: dict[str, Any], gates: FeatureGates) -> sdk_pb2.GameServer:
    """The SDK view of a GameServer given as its Kubernetes JSON."""
    meta = gs.get("metadata") or {}
    spec = gs.get("spec") or {}
    status = gs.get("status") or {}
    health = spec.get("health") or {}
    result = sdk_pb2.GameServer(
        object_meta=sdk_pb2.GameServer.ObjectMeta(
            name=meta.get("name", ""),
            namespace=meta.get("namespace", ""),
            uid=meta.get("uid", ""),
            resource_version=meta.get("resourceVersion", ""),
            generation=int(meta.get("generation") or 0),
            creation_timestamp=to_unix(meta.get("creationTimestamp")),
            annotations=meta.get("annotations") or {},
            labels=meta.get("labels") or {},
        ),
        spec=sdk_pb2.GameServer.Spec(
            health=sdk_pb2.GameServer.Spec.Health(
                disabled=bool(health.get("disabled", False)),
                period_seconds=int(health.get("periodSeconds") or 0),
                failure_threshold=int(health.get("failureThreshold") or 0),
                initial_delay_seconds=int(health.get("initialDelaySeconds") or 0),
            )
        ),
        status=sdk_pb2.GameServer.Status(
            state=status.get("state", ""), address=status.get("address", "")
        ),
    )
    if meta.get("deletionTimestamp"):
        result.object_meta.deletion_timestamp = to_unix(meta["deletionTimestamp"])
    for address in status.get("addresses") or []:
        result.status.addresses.add(
            type=address.get("type", ""), address=address.get("address", "")
        )
    for port in status.get("ports") or []:
        result.status.ports.add(name=port.get("name", ""), port=int(port.get("port") or 0))
    if gates.enabled(Feature.PLAYER_TRACKING) and status.get("players") is not None:
        players = status["players"]
        result.status.players.count = int(players.get("count") or 0)
        result.status.players.capacity = int(players.get("capacity") or 0)
        result.status.players.ids.extend(players.get("ids") or [])
    if gates.enabled(Feature.COUNTS_AND_LISTS):
        for name, counter in (status.get("counters") or {}).items():
            result.status.counters[name].count = int(counter.get("count") or 0)
            result.status.counters[name].capacity = int(counter.get("capacity") or 0)
        for name, lst in (status.get("lists") or {}).items():
            result.status.lists[name].capacity = int(lst.get("capacity") or 0)
            result.status.lists[name].values.extend(lst.get("values") or [])
    return result
