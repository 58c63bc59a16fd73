"""Small manifest builders for the agones.dev/v1 table tests."""

from __future__ import annotations

import copy
from typing import Any


def container(name: str = "game", **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": "example/game:1", **extra}


def game_server(spec: dict[str, Any] | None = None, **metadata: Any) -> dict[str, Any]:
    """A valid GameServer manifest; `spec` keys replace the defaults given here."""
    base: dict[str, Any] = {
        "ports": [{"name": "default", "containerPort": 7654}],
        "template": {"spec": {"containers": [container()]}},
    }
    base.update(copy.deepcopy(spec or {}))
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServer",
        "metadata": {"name": "gs", "namespace": "default", **metadata},
        "spec": base,
    }


def template(spec: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"spec": game_server(spec)["spec"]}


def fleet(spec: dict[str, Any] | None = None, **metadata: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"replicas": 2, "template": template()}
    base.update(copy.deepcopy(spec or {}))
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "Fleet",
        "metadata": {"name": "fleet", "namespace": "default", **metadata},
        "spec": base,
    }


def game_server_set(spec: dict[str, Any] | None = None, **metadata: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"replicas": 2, "template": template()}
    base.update(copy.deepcopy(spec or {}))
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServerSet",
        "metadata": {"name": "gss", "namespace": "default", **metadata},
        "spec": base,
    }


def get(obj: Any, dotted: str) -> Any:
    """Value at a dotted path (`spec.ports.0.protocol`); `KeyError` when absent."""
    for part in dotted.split("."):
        obj = obj[int(part)] if isinstance(obj, list) else obj[part]
    return obj


MISSING = object()


def lookup(obj: Any, dotted: str) -> Any:
    try:
        return get(obj, dotted)
    except (KeyError, IndexError, TypeError):
        return MISSING
