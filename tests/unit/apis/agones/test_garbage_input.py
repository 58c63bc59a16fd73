"""Wrong types and garbage anywhere in a manifest become field errors, never exceptions.

Valid manifests are mutated at random (seeded, so failures reproduce): a node is replaced by a value
of another JSON type, or removed, or the whole object is replaced. `Scheme.admit` must return, and
must not need its last-resort `InternalError` (which would mean a rule crashed on the input).
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from agones.apis.field import FieldError
from agones.apis.scheme import Scheme
from agones.featuregates import FeatureGates

from .manifests import container, fleet, game_server, game_server_set, template

RICH_SPEC = {
    "ports": [
        {"name": "a", "portPolicy": "Static", "containerPort": 1, "hostPort": 2, "protocol": "TCP"},
        {"name": "b", "portPolicy": "Passthrough", "container": "game"},
    ],
    "health": {"disabled": False, "periodSeconds": 3},
    "sdkServer": {"logLevel": "Debug"},
    "players": {"initialCapacity": 3},
    "counters": {"rooms": {"count": 1, "capacity": 3}},
    "lists": {"players": {"capacity": 3, "values": ["x"]}},
    "eviction": {"safe": "Always"},
    "template": {
        "metadata": {"labels": {"a": "b"}, "annotations": {"c": "d"}},
        "spec": {
            "containers": [container(resources={"requests": {"cpu": "1"}, "limits": {"cpu": 2}})],
            "initContainers": [container("side", restartPolicy="Always")],
        },
    },
}
SEEDS = [
    game_server(RICH_SPEC, labels={"x": "y"}, annotations={"agones.dev/dev-address": "1.2.3.4"}),
    game_server(RICH_SPEC),
    fleet(
        {
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
            "allocationOverflow": {"labels": {"a": "b"}},
            "priorities": [{"type": "List", "key": "p", "order": "Descending"}],
            "template": template(RICH_SPEC),
        }
    ),
    game_server_set({"priorities": [{"type": "Counter"}], "template": template(RICH_SPEC)}),
]
GARBAGE: list[Any] = [None, 0, -1, 2**70, 1.5, "", "x", "-1", True, [], [1, "a"], {}, {"k": None}]


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
        path = rng.choice(paths)
        parent = out
        for step in path[:-1]:
            parent = parent[step]
        if isinstance(parent, dict) and rng.random() < 0.2:
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(rng.choice(GARBAGE))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_mutated_manifests_never_crash(scheme: Scheme, seed: int) -> None:
    rng = random.Random(seed)
    gates = [FeatureGates(), FeatureGates.all_enabled()]
    for _ in range(150):
        manifest = _mutate(rng, rng.choice(SEEDS))
        admission = scheme.admit(manifest, rng.choice(gates))
        assert all(isinstance(e, FieldError) for e in admission.errors)
        assert not [e for e in admission.errors if e.reason == "InternalError"], manifest
        if admission.errors:
            assert all(str(e) for e in admission.errors)
        else:
            assert admission.obj is not None


@pytest.mark.parametrize("garbage", [*GARBAGE, b"\xff", "not json", "[]", "{}"])
def test_whole_garbage_documents(scheme: Scheme, garbage: Any) -> None:
    admission = scheme.admit(garbage if isinstance(garbage, bytes | str) else {"spec": garbage})
    assert admission.errors and admission.obj is None


def test_update_with_garbage_old_object(scheme: Scheme) -> None:
    old = scheme.decode(game_server_set())
    mutated = _mutate(random.Random(1), game_server_set())
    admission = scheme.admit(mutated, FeatureGates(), old=old)
    assert not [e for e in admission.errors if e.reason == "InternalError"]
