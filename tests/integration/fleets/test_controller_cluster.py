"""The Fleet controller, run in-process against the cluster (the local API server by default, any
cluster via KUBECONFIG) without a GameServerSet controller: the test plays that part by writing each
set's status as if its servers were all Ready. A Fleet gets its set; a template change rolls from
the old set to a new one within maxSurge, with both `RollingUpdateFix` settings, and the empty old
set is deleted; scheduling and priorities reach the active set in one write; the Fleet's status is
the sum of its sets'.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from agones.client import errors
from agones.client.config import load_kube_config
from agones.client.rest import RESTClient
from agones.client.versioned import Clientset
from agones.client.versioned.resources import FLEETS, GAME_SERVER_SETS
from agones.controllers.fleets import Controller
from agones.featuregates import FeatureGates
from agones.informers import SharedInformerFactory
from agones.record import EventBroadcaster
from tests.cluster import Cluster
from tests.integration.gameserversets.test_controller_cluster import (
    EVENTS,
    install_crd,
)
from tests.waiting import wait_for_async

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(90)]


@dataclass
class Env:
    rest: RESTClient
    namespace: str
    writes: list[tuple[str, str]]

    async def sets(self) -> list[dict[str, Any]]:
        listed = await self.rest.list(GAME_SERVER_SETS, self.namespace)
        return sorted(listed["items"], key=lambda s: s["metadata"]["creationTimestamp"])

    async def fleet(self, name: str) -> dict[str, Any]:
        return await self.rest.get(FLEETS, name, self.namespace)

    async def reasons(self, name: str) -> list[str]:
        listed = await self.rest.list(EVENTS, self.namespace)
        return [e["reason"] for e in listed["items"] if e["involvedObject"]["name"] == name]

    async def settle(self, gss: dict[str, Any], allocated: int = 0) -> None:
        """Play the GameServerSet controller: the set's servers are exactly its spec, all Ready
        (read afresh and retried on conflict, as the Fleet controller writes the set too)."""
        name = gss["metadata"]["name"]
        while True:
            current = await self.rest.get(GAME_SERVER_SETS, name, self.namespace)
            n = current["spec"]["replicas"]
            status = {
                "replicas": n,
                "readyReplicas": n - allocated,
                "reservedReplicas": 0,
                "allocatedReplicas": allocated,
                "shutdownReplicas": 0,
            }
            try:
                await self.rest.update(
                    GAME_SERVER_SETS, {**current, "status": status}, self.namespace, "status"
                )
                return
            except errors.ConflictError:
                continue


class CountingRest(RESTClient):
    """The controller's REST client, noting each state-changing request (verb, path)."""

    writes: list[tuple[str, str]]

    async def request(self, method: str, path: str, **kw: Any) -> Any:
        if method not in ("GET", "HEAD"):
            self.writes.append((method, path.rsplit("/namespaces/", 1)[-1]))
        return await super().request(method, path, **kw)


async def _run_env(cluster: Cluster, gates: FeatureGates) -> AsyncIterator[Env]:
    rest = RESTClient(load_kube_config(cluster.kubeconfig))
    controller_rest = CountingRest(load_kube_config(cluster.kubeconfig))
    controller_rest.writes = []
    namespace = cluster.create_namespace("fleet")
    try:
        for crd in ("gameserver.yaml", "gameserverset.yaml", "fleet.yaml"):
            await install_crd(rest, cluster, crd)
        factory = SharedInformerFactory(controller_rest, 30.0, namespace=namespace)
        events = EventBroadcaster(controller_rest)
        controller = Controller(Clientset(controller_rest), factory, events, gates)
        factory.start()
        assert all((await factory.wait_for_cache_sync(20)).values())
        tasks = [asyncio.create_task(controller.run(2)), asyncio.create_task(events.run())]
        try:
            yield Env(rest, namespace, controller_rest.writes)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await factory.shutdown()
    finally:
        cluster.delete_namespace(namespace)
        await rest.close()
        await controller_rest.close()


@pytest.fixture(params=[True, False], ids=["RollingUpdateFix", "no-RollingUpdateFix"])
async def env(cluster: Cluster, request: pytest.FixtureRequest) -> AsyncIterator[Env]:
    gates = FeatureGates().with_values(RollingUpdateFix=request.param)
    async for e in _run_env(cluster, gates):
        yield e


def a_fleet(name: str, replicas: int, version: str = "1", **spec: Any) -> dict[str, Any]:
    # Written as the Fleet webhook would store it (this test runs without webhooks).
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "Fleet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "scheduling": "Packed",
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "template": {
                "metadata": {"labels": {"version": version}},
                "spec": {
                    "ports": [{"name": "default", "containerPort": 7654}],
                    "template": {"spec": {"containers": [{"name": "game", "image": "game:1"}]}},
                },
            },
            **spec,
        },
    }


async def one_set(env: Env, check: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    async def found() -> dict[str, Any] | None:
        sets = await env.sets()
        return sets[0] if len(sets) == 1 and check(sets[0]) else None

    result: dict[str, Any] = await wait_for_async(found, timeout=30, what="one GameServerSet")
    return result


async def test_fleet_gets_its_set_and_sums_its_status(env: Env) -> None:
    fleet = await env.rest.create(FLEETS, a_fleet("f", 4), env.namespace)
    gss = await one_set(env, lambda s: s["spec"]["replicas"] == 4)
    meta = gss["metadata"]
    assert meta["generateName"] == "f-"
    assert meta["labels"] == {"version": "1", "agones.dev/fleet": "f"}  # template labels too, as Go
    assert meta["ownerReferences"][0]["uid"] == fleet["metadata"]["uid"]
    assert gss["spec"]["template"] == fleet["spec"]["template"]
    assert gss["spec"]["scheduling"] == "Packed"
    await env.settle(gss, allocated=1)

    async def summed() -> bool:
        status = (await env.fleet("f")).get("status") or {}
        return (status.get("replicas"), status.get("readyReplicas")) == (4, 3)

    await wait_for_async(summed, timeout=30, what="fleet status")
    status = (await env.fleet("f"))["status"]
    assert status["allocatedReplicas"] == 1 and status["reservedReplicas"] == 0
    assert "CreatingGameServerSet" in await env.reasons("f")


async def test_template_change_rolls_within_max_surge_and_deletes_the_old_set(env: Env) -> None:
    replicas = 8  # 25% → surge 2, unavailable 2
    await env.rest.create(FLEETS, a_fleet("roll", replicas), env.namespace)
    old = await one_set(env, lambda s: s["spec"]["replicas"] == replicas)
    await env.settle(old)
    await wait_for_async(
        lambda: _ready(env, "roll", replicas), timeout=30, what="fleet ready before the update"
    )
    current = await env.fleet("roll")
    current["spec"]["template"]["metadata"]["labels"]["version"] = "2"
    await env.rest.update(FLEETS, current, env.namespace)

    async def step() -> bool:
        """Settle every set whose status lags its spec; done when only the new set is left."""
        sets = await env.sets()
        assert sum(s["spec"]["replicas"] for s in sets) <= replicas + 2, sets
        for s in sets:
            if (s.get("status") or {}).get("replicas") != s["spec"]["replicas"]:
                await env.settle(s)
        return (
            len(sets) == 1
            and sets[0]["spec"]["template"]["metadata"]["labels"]["version"] == "2"
            and sets[0]["spec"]["replicas"] == replicas
        )

    await wait_for_async(step, timeout=60, what="rolled out")
    reasons = await env.reasons("roll")
    assert {"CreatingGameServerSet", "ScalingGameServerSet", "DeletingGameServerSet"} <= set(
        reasons
    )


async def _ready(env: Env, name: str, n: int) -> bool:
    status = (await env.fleet(name)).get("status") or {}
    return bool(status.get("readyReplicas") == n)


async def test_scheduling_and_priorities_reach_the_active_set_in_one_write(env: Env) -> None:
    await env.rest.create(FLEETS, a_fleet("prio", 2), env.namespace)
    gss = await one_set(env, lambda s: s["spec"]["replicas"] == 2)
    await env.settle(gss)
    await wait_for_async(lambda: _ready(env, "prio", 2), timeout=30, what="fleet ready")
    env.writes.clear()
    current = await env.fleet("prio")
    current["spec"]["scheduling"] = "Distributed"
    current["spec"]["priorities"] = [{"type": "Counter", "key": "rooms", "order": "Descending"}]
    await env.rest.update(FLEETS, current, env.namespace)
    updated = await one_set(
        env,
        lambda s: (
            s["spec"].get("scheduling") == "Distributed" and bool(s["spec"].get("priorities"))
        ),
    )
    assert updated["spec"]["priorities"] == [
        {"type": "Counter", "key": "rooms", "order": "Descending"}
    ]
    set_writes = [w for w in env.writes if w[1].startswith(f"{env.namespace}/gameserversets")]
    assert set_writes == [("PUT", f"{env.namespace}/gameserversets/{gss['metadata']['name']}")]
    reasons = await env.reasons("prio")
    await wait_for_async(
        lambda: _has(env, "prio", "UpdatingGameServerSet"),
        timeout=30,
        what="UpdatingGameServerSet event",
    )
    assert "ScalingGameServerSet" in reasons or await _has(env, "prio", "ScalingGameServerSet")


async def _has(env: Env, name: str, reason: str) -> bool:
    return reason in await env.reasons(name)
