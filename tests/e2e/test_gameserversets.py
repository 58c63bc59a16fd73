"""A GameServerSet on its own, end to end (the local stack, or any cluster via KUBECONFIG): it
brings its GameServers to Ready, keeps the count when one is deleted behind its back, scales up
and down (the surplus goes through Shutdown and is deleted by the GameServer controller), and its
status follows."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.framework import Framework, game_server

pytestmark = pytest.mark.timeout(240)


def game_server_set(name: str, replicas: int) -> dict[str, Any]:
    template = game_server("unused")
    del template["metadata"]
    template.pop("apiVersion")
    template.pop("kind")
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServerSet",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "scheduling": "Packed", "template": template},
    }


class Sets:
    def __init__(self, framework: Framework) -> None:
        self.fw = framework
        self.path = f"/apis/agones.dev/v1/namespaces/{framework.namespace}/gameserversets"

    def create(self, gss: dict[str, Any]) -> None:
        resp = self.fw.api.post(self.path, gss)
        assert resp.status == 201, resp

    def status(self, name: str) -> dict[str, Any]:
        body: dict[str, Any] = self.fw.api.get(f"{self.path}/{name}").body
        return body.get("status") or {}

    def scale(self, name: str, replicas: int) -> None:
        resp = self.fw.api.patch(f"{self.path}/{name}", {"spec": {"replicas": replicas}})
        assert resp.status == 200, resp

    def owned(self, name: str) -> list[dict[str, Any]]:
        return [
            gs
            for gs in self.fw.list()
            if gs["metadata"].get("labels", {}).get("agones.dev/gameserverset") == name
        ]

    def wait_ready(self, name: str, n: int) -> list[dict[str, Any]]:
        def settled() -> list[dict[str, Any]] | None:
            servers = self.owned(name)
            states = [(gs.get("status") or {}).get("state") for gs in servers]
            status = self.status(name)
            done = len(servers) == n and states.count("Ready") == n
            counted = (status.get("readyReplicas"), status.get("replicas")) == (n, n)
            return servers if done and counted and status.get("shutdownReplicas") == 0 else None

        result: list[dict[str, Any]] = self.fw.wait(f"{n} Ready in {name}", settled, 120)
        return result


def test_game_server_set_keeps_its_count_and_scales(framework: Framework) -> None:
    sets = Sets(framework)
    sets.create(game_server_set("solo", 3))
    servers = sets.wait_ready("solo", 3)

    victim = servers[0]["metadata"]["name"]
    resp = framework.api.delete(framework.gs_path(victim))
    assert resp.status == 200, resp
    framework.wait(f"{victim} gone", lambda: framework.get(victim) is None, 60)
    replaced = sets.wait_ready("solo", 3)
    assert victim not in {gs["metadata"]["name"] for gs in replaced}

    sets.scale("solo", 6)
    sets.wait_ready("solo", 6)
    sets.scale("solo", 1)
    sets.wait_ready("solo", 1)
