"""Garbage anywhere in a FleetAutoscaler, GameServerAllocation or GameServerAllocationPolicy
becomes field errors, never an exception.

Rich valid manifests are mutated at random (seeded): a node is replaced by a value of another
JSON type, or removed. `Scheme.admit` must return without its last-resort `InternalError`; the
only `InternalError` allowed is the FleetAutoscaler's Go-decode error (e.g. a time Go cannot parse),
which Agones itself answers with.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from agones.apis.field import FieldError
from agones.apis.scheme import Scheme, load
from agones.featuregates import FeatureGates

BUFFER = {"type": "Buffer", "buffer": {"bufferSize": "10%", "minReplicas": 1, "maxReplicas": 9}}
URL_CONF = {
    "url": "http://a/b",
    "service": {"name": "s", "namespace": "d", "path": "/p", "port": 1},
    "caBundle": "bm90",
}
SCHEDULE = {
    "between": {"start": "2100-01-01T00:00:00Z", "end": "2100-02-01T00:00:00+01:00"},
    "activePeriod": {"timezone": "Europe/Paris", "startCron": "0 1 * * 0", "duration": "1h"},
    "policy": BUFFER,
}
SEEDS: list[dict[str, Any]] = [
    {
        "apiVersion": "autoscaling.agones.dev/v1",
        "kind": "FleetAutoscaler",
        "metadata": {"name": "f", "labels": {"a": "b"}},
        "spec": {
            "fleetName": "fleet",
            "policy": {
                "type": "Chain",
                "chain": [
                    {"id": "a", **BUFFER},
                    {"id": "b", "type": "Webhook", "webhook": URL_CONF},
                    {
                        "id": "c",
                        "type": "Counter",
                        "counter": {
                            "key": "r",
                            "bufferSize": 2,
                            "minCapacity": 2,
                            "maxCapacity": 9,
                        },
                    },
                    {
                        "id": "d",
                        "type": "List",
                        "list": {"key": "l", "bufferSize": 2, "maxCapacity": 9},
                    },
                    {"id": "e", "type": "Schedule", "schedule": SCHEDULE},
                    {
                        "id": "f",
                        "type": "Wasm",
                        "wasm": {
                            "function": "f",
                            "config": {"k": "v"},
                            "from": {"url": URL_CONF},
                            "hash": "a" * 64,
                        },
                    },
                ],
            },
            "sync": {"type": "FixedInterval", "fixedInterval": {"seconds": 5}},
        },
        "status": {
            "currentReplicas": 1,
            "lastScaleTime": "2024-01-01T00:00:00Z",
            "ableToScale": True,
        },
    },
    {
        "apiVersion": "autoscaling.agones.dev/v1",
        "kind": "FleetAutoscaler",
        "metadata": {"name": "s"},
        "spec": {"fleetName": "fleet", "policy": {"type": "Schedule", "schedule": SCHEDULE}},
    },
    {
        "apiVersion": "allocation.agones.dev/v1",
        "kind": "GameServerAllocation",
        "spec": {
            "multiClusterSetting": {"enabled": True, "policySelector": {"matchLabels": {"c": "1"}}},
            "required": {
                "matchLabels": {"g": "1"},
                "players": {"minAvailable": 1, "maxAvailable": 3},
            },
            "preferred": [{"matchExpressions": [{"key": "t", "operator": "In", "values": ["x"]}]}],
            "selectors": [
                {
                    "matchLabels": {"f": "g"},
                    "gameServerState": "Ready",
                    "counters": {
                        "r": {"minCount": 1, "maxCount": 3, "minAvailable": 1, "maxAvailable": 4}
                    },
                    "lists": {"l": {"containsValue": "v", "minAvailable": 1, "maxAvailable": 2}},
                }
            ],
            "scheduling": "Distributed",
            "priorities": [{"type": "Counter", "key": "r", "order": "Descending"}],
            "metadata": {"labels": {"a": "b"}, "annotations": {"c": "d"}},
            "counters": {"r": {"action": "Increment", "amount": 1, "capacity": 5}},
            "lists": {"l": {"addValues": ["x"], "deleteValues": ["y"], "capacity": 5}},
        },
    },
    {
        "apiVersion": "multicluster.agones.dev/v1",
        "kind": "GameServerAllocationPolicy",
        "metadata": {"name": "p"},
        "spec": {
            "priority": 1,
            "weight": 2,
            "connectionInfo": {
                "clusterName": "c",
                "allocationEndpoints": ["e"],
                "secretName": "s",
                "namespace": "n",
                "serverCa": "bm90",
            },
        },
    },
]
GARBAGE: list[Any] = [
    None,
    0,
    -1,
    2**40,
    2**70,
    1.5,
    "",
    "x",
    "10%",
    True,
    [],
    [1, "a"],
    {},
    {"k": None},
]


def _nodes(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [path]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _nodes(v, (*path, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _nodes(v, (*path, i))
    return out


def _mutate(rng: random.Random, manifest: dict[str, Any]) -> Any:
    out = copy.deepcopy(manifest)
    for _ in range(rng.randint(1, 3)):
        paths = [p for p in _nodes(out) if p and p[0] not in ("apiVersion", "kind")]
        if not paths:
            break
        path = rng.choice(paths)
        parent = out
        for step in path[:-1]:
            parent = parent[step]
        if isinstance(parent, dict) and rng.random() < 0.2:
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(rng.choice(GARBAGE))
    return out


@pytest.fixture(scope="module")
def scheme() -> Scheme:
    return load()


def test_seeds_are_valid(scheme: Scheme) -> None:
    gates = FeatureGates.all_enabled()
    for seed in SEEDS[1:]:
        assert scheme.admit(seed, gates).errors == []


@pytest.mark.parametrize("seed", range(6))
def test_mutated_manifests_never_crash(scheme: Scheme, seed: int) -> None:
    rng = random.Random(seed)
    gates = [FeatureGates(), FeatureGates.all_enabled()]
    for _ in range(150):
        manifest = _mutate(rng, rng.choice(SEEDS))
        admission = scheme.admit(manifest, rng.choice(gates))
        assert all(isinstance(e, FieldError) and str(e) for e in admission.errors)
        crashes = [
            e
            for e in admission.errors
            if e.reason == "InternalError" and "error unmarshalling FleetAutoscaler" not in e.detail
        ]
        assert not crashes, (manifest, crashes)
        if not admission.errors:
            assert admission.obj is not None


@pytest.mark.parametrize("seed", SEEDS, ids=[s["kind"] + str(i) for i, s in enumerate(SEEDS)])
def test_round_trip_loses_nothing(scheme: Scheme, seed: dict[str, Any]) -> None:
    obj = scheme.decode(seed)
    assert scheme.encode(obj) == seed
    assert scheme.decode_json(type(obj), scheme.encode_json(obj)) == obj
