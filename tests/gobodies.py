"""Agones objects as a Go client sends them: what `encoding/json` writes for the Agones Go types
(`pkg/apis/{agones,autoscaling,allocation,multicluster}/v1`) when only the fields a user sets are
filled in. Every field without `omitempty` appears with its zero value (`""`, `0`, `false`,
`null` for nil slices, maps and pointers); a struct-typed field always appears, `omitempty` or
not (`"health": {}`, `"resources": {}`); a zero `metav1.Time` is `null` (`creationTimestamp`).
"""

from __future__ import annotations

from typing import Any

IMAGE = "us-docker.pkg.dev/agones-images/examples/simple-game-server:0.41"
SIMULATE = {"local.agones-py.dev/simulate": "true"}


def _pod_template(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"creationTimestamp": None}
    if annotations:
        meta["annotations"] = annotations
    container = {"name": "simple-game-server", "image": IMAGE, "resources": {}}
    return {"metadata": meta, "spec": {"containers": [container]}}


def game_server_spec(annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """GameServerSpec: `health` and `sdkServer` are structs (always written); `scheduling`,
    `container`, `counters`, `lists` are omitempty; `players`, `eviction` nil pointers."""
    return {
        "ports": [{"name": "default", "containerPort": 7654}],
        "health": {},
        "sdkServer": {},
        "template": _pod_template(annotations),
    }


def game_server(name: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """GameServerStatus has no omitempty on state, ports, address, addresses, nodeName,
    reservedUntil or players."""
    return {
        "kind": "GameServer",
        "apiVersion": "agones.dev/v1",
        "metadata": {"name": name, "creationTimestamp": None},
        "spec": game_server_spec(annotations),
        "status": {
            "state": "",
            "ports": None,
            "address": "",
            "addresses": None,
            "nodeName": "",
            "reservedUntil": None,
            "players": None,
        },
    }


def _template(annotations: dict[str, str] | None) -> dict[str, Any]:
    return {"metadata": {"creationTimestamp": None}, "spec": game_server_spec(annotations)}


def game_server_set(name: str, replicas: int = 0) -> dict[str, Any]:
    """GameServerSetSpec.replicas has no omitempty; the status counts neither."""
    return {
        "kind": "GameServerSet",
        "apiVersion": "agones.dev/v1",
        "metadata": {"name": name, "creationTimestamp": None},
        "spec": {"replicas": replicas, "template": _template(SIMULATE)},
        "status": {
            "replicas": 0,
            "readyReplicas": 0,
            "reservedReplicas": 0,
            "allocatedReplicas": 0,
            "shutdownReplicas": 0,
            "players": None,
            "counters": None,
            "lists": None,
        },
    }


def fleet(name: str, replicas: int = 0) -> dict[str, Any]:
    """FleetSpec.strategy is an apps/v1 DeploymentStrategy struct: `{}` when unset."""
    return {
        "kind": "Fleet",
        "apiVersion": "agones.dev/v1",
        "metadata": {"name": name, "creationTimestamp": None},
        "spec": {"replicas": replicas, "strategy": {}, "template": _template(SIMULATE)},
        "status": {
            "replicas": 0,
            "readyReplicas": 0,
            "reservedReplicas": 0,
            "allocatedReplicas": 0,
            "players": None,
            "counters": None,
            "lists": None,
        },
    }


def fleet_autoscaler(name: str, fleet_name: str) -> dict[str, Any]:
    """BufferPolicy writes minReplicas 0; `sync` is a nil pointer; FleetAutoscalerStatus has no
    omitempty (lastScaleTime is a nil *metav1.Time)."""
    return {
        "kind": "FleetAutoscaler",
        "apiVersion": "autoscaling.agones.dev/v1",
        "metadata": {"name": name, "creationTimestamp": None},
        "spec": {
            "fleetName": fleet_name,
            "policy": {
                "type": "Buffer",
                "buffer": {"maxReplicas": 10, "minReplicas": 0, "bufferSize": 2},
            },
        },
        "status": {
            "currentReplicas": 0,
            "desiredReplicas": 0,
            "lastScaleTime": None,
            "ableToScale": False,
            "scalingLimited": False,
        },
    }


def _buffer() -> dict[str, Any]:
    return {"type": "Buffer", "buffer": {"maxReplicas": 10, "minReplicas": 0, "bufferSize": 2}}


def schedule_fleet_autoscaler(name: str, fleet_name: str) -> dict[str, Any]:
    """A Schedule policy: `between` and `activePeriod` are structs (always written), their
    metav1.Time fields `null` and strings `""` when unset."""
    fas = fleet_autoscaler(name, fleet_name)
    fas["spec"]["policy"] = {
        "type": "Schedule",
        "schedule": {
            "between": {"start": None, "end": None},
            "activePeriod": {"timezone": "", "startCron": "", "duration": ""},
            "policy": _buffer(),
        },
    }
    return fas


def chain_fleet_autoscaler(name: str, fleet_name: str) -> dict[str, Any]:
    """A Chain policy: each ChainEntry's `id` has no omitempty; its policy is inlined."""
    fas = fleet_autoscaler(name, fleet_name)
    fas["spec"]["policy"] = {"type": "Chain", "chain": [{"id": "", **_buffer()}]}
    return fas


def game_server_allocation() -> dict[str, Any]:
    """GameServerAllocationSpec: multiClusterSetting, required and metadata are structs;
    `scheduling` has no omitempty; the status's state, gameServerName and source neither."""
    return {
        "kind": "GameServerAllocation",
        "apiVersion": "allocation.agones.dev/v1",
        "metadata": {"creationTimestamp": None},
        "spec": {
            "multiClusterSetting": {"policySelector": {}},
            "required": {},
            "selectors": [{"matchLabels": {"agones.dev/fleet": "f"}}],
            "scheduling": "",
            "metadata": {},
        },
        "status": {"state": "", "gameServerName": "", "source": ""},
    }


def game_server_allocation_policy(name: str) -> dict[str, Any]:
    """ClusterConnectionInfo's clusterName, secretName and namespace have no omitempty."""
    return {
        "kind": "GameServerAllocationPolicy",
        "apiVersion": "multicluster.agones.dev/v1",
        "metadata": {"name": name, "creationTimestamp": None},
        "spec": {
            "priority": 1,
            "weight": 100,
            "connectionInfo": {"clusterName": "", "secretName": "", "namespace": ""},
        },
    }
