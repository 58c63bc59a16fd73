"""Decode/encode throughput and memory of a realistic GameServer, per typing approach.

Compares, on the same JSON bytes of an allocated GameServer (ports, addresses, counters, lists,
labels, annotations, managedFields and a full pod template):

* `json`         plain `json.loads` / `json.dumps` (dicts, no types): the floor to beat;
* `msgspec`      the project's typed `GameServer` Struct (`msgspec.json.Decoder` / `Encoder`);
* `dataclasses`  stdlib dataclasses (slots) mirroring the same fields, filled from `json.loads`;
* `pydantic`     pydantic v2 models mirroring the same fields (`model_validate_json`).

The mirrors are generated from the msgspec types' field metadata, so all four hold the same data
and keep presence (absent stays absent). Prints objects/s for decode and encode, and bytes of
memory per decoded object (tracemalloc, N objects kept alive). Run:

    .venv/bin/python -m bench.bench_apis_codec [--seconds 1.0] [--objects 2000]
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import msgspec
import msgspec.inspect as mi

from agones.apis.agones.v1.gameserver import GameServer
from agones.apis.meta.schema import struct_fields, unwrap


def realistic_game_server() -> dict[str, Any]:
    """An Allocated GameServer as a controller sees it in a list/watch."""
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServer",
        "metadata": {
            "name": "simple-game-server-7x2kq-4pnzx",
            "generateName": "simple-game-server-7x2kq-",
            "namespace": "default",
            "uid": "9f0c8a47-3d3b-4c43-9b3a-8a1e5b8c2f11",
            "resourceVersion": "1843021",
            "generation": 3,
            "creationTimestamp": "2026-03-01T10:12:44Z",
            "labels": {
                "agones.dev/fleet": "simple-game-server",
                "agones.dev/gameserverset": "simple-game-server-7x2kq",
                "mode": "deathmatch",
            },
            "annotations": {
                "agones.dev/last-allocated": "2026-03-01T10:14:02.481934211Z",
                "agones.dev/ready-container-id": "containerd://5b1d0c7e9f3a",
                "agones.dev/sdk-version": "1.57.0-py",
            },
            "finalizers": ["agones.dev/controller"],
            "ownerReferences": [
                {
                    "apiVersion": "agones.dev/v1",
                    "kind": "GameServerSet",
                    "name": "simple-game-server-7x2kq",
                    "uid": "1e8e0d35-0c9c-4f05-8f7c-2a9b9d7c0e55",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
            "managedFields": [
                {
                    "apiVersion": "agones.dev/v1",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {"f:mode": {}}}},
                    "manager": "agones-controller",
                    "operation": "Update",
                    "time": "2026-03-01T10:14:02Z",
                }
            ],
        },
        "spec": {
            "container": "simple-game-server",
            "ports": [
                {
                    "name": "default",
                    "portPolicy": "Dynamic",
                    "range": "default",
                    "container": "simple-game-server",
                    "containerPort": 7654,
                    "hostPort": 7186,
                    "protocol": "UDP",
                }
            ],
            "health": {"initialDelaySeconds": 5, "periodSeconds": 5, "failureThreshold": 3},
            "scheduling": "Packed",
            "sdkServer": {"logLevel": "Info", "grpcPort": 9357, "httpPort": 9358},
            "counters": {"rooms": {"count": 1, "capacity": 10}},
            "lists": {"players": {"capacity": 100, "values": ["alice", "bob"]}},
            "eviction": {"safe": "Never"},
            "immutableReplicas": 1,
            "template": {
                "metadata": {"labels": {"mode": "deathmatch"}},
                "spec": {
                    "containers": [
                        {
                            "name": "simple-game-server",
                            "image": "us-docker.pkg.dev/agones-images/examples/simple-game-server:0.41",
                            "resources": {
                                "requests": {"cpu": "20m", "memory": "64Mi"},
                                "limits": {"cpu": "20m", "memory": "64Mi"},
                            },
                        }
                    ]
                },
            },
        },
        "status": {
            "state": "Allocated",
            "ports": [{"name": "default", "port": 7186}],
            "address": "10.0.0.12",
            "addresses": [
                {"type": "InternalIP", "address": "10.0.0.12"},
                {"type": "Hostname", "address": "node-a"},
                {"type": "PodIP", "address": "10.244.1.17"},
            ],
            "nodeName": "node-a",
            "reservedUntil": None,
            "players": None,
            "counters": {"rooms": {"count": 1, "capacity": 10}},
            "lists": {"players": {"capacity": 100, "values": ["alice", "bob"]}},
            "eviction": {"safe": "Never"},
            "immutableReplicas": 1,
        },
    }


# ---------------------------------------------------------------------------------------------
# Mirrors of the msgspec types, generated from their field metadata


class _Absent:
    __slots__ = ()


ABSENT: Any = _Absent()


def _mirror_dataclass(cls: type[msgspec.Struct], cache: dict[type, Any]) -> Any:
    if cls in cache:
        return cache[cls]
    fields = struct_fields(cls)
    dc = dataclasses.make_dataclass(
        f"DC{cls.__name__}",
        [(f.name, Any, dataclasses.field(default=ABSENT)) for f in fields],
        slots=True,
    )
    cache[cls] = dc
    for f in fields:
        _walk_structs(f.spec.type, lambda c: _mirror_dataclass(c, cache))
    return dc


def _walk_structs(t: mi.Type, visit: Callable[[type[msgspec.Struct]], Any]) -> None:
    if isinstance(t, mi.StructType):
        visit(t.cls)
    elif isinstance(t, mi.ListType):
        _walk_structs(unwrap(t.item_type).type, visit)
    elif isinstance(t, mi.DictType):
        _walk_structs(unwrap(t.value_type).type, visit)


def _from_json(t: mi.Type, value: Any, cache: dict[type, Any]) -> Any:
    if value is None:
        return None
    if isinstance(t, mi.StructType):
        dc = cache[t.cls]
        kwargs = {}
        for f in struct_fields(t.cls):
            if f.json_name in value:
                kwargs[f.name] = _from_json(f.spec.type, value[f.json_name], cache)
        return dc(**kwargs)
    if isinstance(t, mi.ListType):
        item = unwrap(t.item_type).type
        return [_from_json(item, v, cache) for v in value]
    if isinstance(t, mi.DictType):
        item = unwrap(t.value_type).type
        return {k: _from_json(item, v, cache) for k, v in value.items()}
    return value


def _to_json(t: mi.Type, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(t, mi.StructType):
        out = {}
        for f in struct_fields(t.cls):
            v = getattr(value, f.name)
            if v is not ABSENT:
                out[f.json_name] = _to_json(f.spec.type, v)
        return out
    if isinstance(t, mi.ListType):
        item = unwrap(t.item_type).type
        return [_to_json(item, v) for v in value]
    if isinstance(t, mi.DictType):
        item = unwrap(t.value_type).type
        return {k: _to_json(item, v) for k, v in value.items()}
    return value


def _pydantic_models(cls: type[msgspec.Struct]) -> Any:
    import pydantic

    cache: dict[type, Any] = {}

    def py_type(t: mi.Type) -> Any:
        if isinstance(t, mi.StructType):
            return model(t.cls)
        if isinstance(t, mi.ListType):
            return list[py_type(unwrap(t.item_type).type)]  # type: ignore[misc]
        if isinstance(t, mi.DictType):
            return dict[str, py_type(unwrap(t.value_type).type)]  # type: ignore[misc]
        return Any

    def model(c: type[msgspec.Struct]) -> Any:
        if c not in cache:
            fields = {
                f.name: (
                    py_type(f.spec.type) | None,
                    pydantic.Field(default=None, alias=f.json_name),
                )
                for f in struct_fields(c)
            }
            cache[c] = pydantic.create_model(f"PD{c.__name__}", **fields)  # type: ignore[call-overload]
        return cache[c]

    return model(cls)


# ---------------------------------------------------------------------------------------------
# Measurement


def rate(fn: Callable[[], Any], seconds: float) -> float:
    """Calls per second of fn, over about `seconds` of wall time (best of 3 rounds)."""
    best = 0.0
    for _ in range(3):
        n, start = 0, time.perf_counter()
        deadline = start + seconds / 3
        while True:
            for _ in range(200):
                fn()
            n += 200
            now = time.perf_counter()
            if now >= deadline:
                break
        best = max(best, n / (now - start))
    return best


def bytes_per_object(decode: Callable[[], Any], count: int) -> float:
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    kept = [decode() for _ in range(count)]
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del kept
    return used / count


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="time per measurement")
    parser.add_argument("--objects", type=int, default=2000, help="objects kept for memory")
    args = parser.parse_args(argv)

    data = json.dumps(realistic_game_server()).encode()
    root = mi.type_info(GameServer)

    decoder, encoder = msgspec.json.Decoder(GameServer), msgspec.json.Encoder()
    gs = decoder.decode(data)
    assert msgspec.json.decode(encoder.encode(gs)) == json.loads(data), "msgspec loses data"

    cache: dict[type, Any] = {}
    _mirror_dataclass(GameServer, cache)
    dc = _from_json(root, json.loads(data), cache)
    assert _to_json(root, dc) == json.loads(data), "dataclass mirror loses data"

    plain = json.loads(data)
    approaches: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
        ("json (dicts)", lambda: json.loads(data), lambda: json.dumps(plain)),
        ("msgspec Struct", lambda: decoder.decode(data), lambda: encoder.encode(gs)),
        (
            "dataclasses+json",
            lambda: _from_json(root, json.loads(data), cache),
            lambda: json.dumps(_to_json(root, dc)),
        ),
    ]
    try:
        model = _pydantic_models(GameServer)
        pd = model.model_validate_json(data)
        assert json.loads(pd.model_dump_json(by_alias=True, exclude_unset=True)) == json.loads(
            data
        ), "pydantic mirror loses data"
        approaches.append(
            (
                "pydantic v2",
                lambda: model.model_validate_json(data),
                lambda: pd.model_dump_json(by_alias=True, exclude_unset=True),
            )
        )
    except ImportError:
        print("pydantic not installed: skipped")

    print(f"GameServer JSON: {len(data)} bytes")
    print(f"{'approach':<18} {'decode obj/s':>13} {'encode obj/s':>13} {'bytes/object':>13}")
    for name, dec, enc in approaches:
        d, e = rate(dec, args.seconds), rate(enc, args.seconds)
        mem = bytes_per_object(dec, args.objects)
        print(f"{name:<18} {d:>13,.0f} {e:>13,.0f} {mem:>13,.0f}")


if __name__ == "__main__":
    main()
