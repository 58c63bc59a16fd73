"""The GameServerSet controller, run in-process against the cluster (the local API server by
default, any cluster via KUBECONFIG): a GameServerSet on its own reaches its replica count, keeps it
when GameServers are deleted behind its back, scales down by moving the surplus to Shutdown, and
reports its status. The test plays the GameServer controller's part where one is needed: it deletes
the GameServers that reached Shutdown and moves one to Ready.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry

from agones.client import errors
from agones.client.config import load_kube_config
from agones.client.rest import RESTClient
from agones.client.versioned import Clientset
from agones.client.versioned.resources import CUSTOM_RESOURCE_DEFINITIONS as CRDS
from agones.client.versioned.resources import EVENTS, GAME_SERVER_SETS, GAME_SERVERS
from agones.controllers.gameservers import PerNodeCounter
from agones.controllers.gameserversets import Controller, GameServerSetSettings
from agones.featuregates import FeatureGates
from agones.informers import SharedInformerFactory
from agones.record import EventBroadcaster
from tests.cluster import Cluster
from tests.waiting import wait_for_async

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(90)]

ROOT = Path(__file__).resolve().parents[3]


async def install_crd(rest: RESTClient, cluster: Cluster, file: str) -> None:
    crd = yaml.safe_load((ROOT / "crds" / file).read_text())
    try:
        await rest.get(CRDS, crd["metadata"]["name"])
        return
    except errors.NotFoundError:
        if not cluster.local:
            pytest.skip(f"{crd['metadata']['name']} is not installed on this cluster")
    await rest.request("POST", CRDS.path(), body=crd)
    await wait_for_async(
        lambda: _established(rest, crd["metadata"]["name"]), 30, what="CRD established"
    )


async def _established(rest: RESTClient, name: str) -> bool:
    status = (await rest.get(CRDS, name)).get("status") or {}
    return any(
        c["type"] == "Established" and c["status"] == "True" for c in status.get("conditions") or []
    )


@dataclass
class Env:
    rest: RESTClient
    namespace: str
    registry: CollectorRegistry

    async def game_servers(self) -> list[dict[str, Any]]:
        listed = await self.rest.list(GAME_SERVERS, self.namespace)
        return list(listed["items"])

    async def game_server_set(self, name: str) -> dict[str, Any]:
        return await self.rest.get(GAME_SERVER_SETS, name, self.namespace)

    async def set_state(self, name: str, state: str) -> None:
        await self.rest.patch(
            GAME_SERVERS, name, {"status": {"state": state}}, namespace=self.namespace
        )


@pytest.fixture
async def env(cluster: Cluster) -> AsyncIterator[Env]:
    rest = RESTClient(load_kube_config(cluster.kubeconfig))
    namespace = cluster.create_namespace("gss")
    try:
        await install_crd(rest, cluster, "gameserver.yaml")
        await install_crd(rest, cluster, "gameserverset.yaml")
        factory = SharedInformerFactory(rest, 30.0, namespace=namespace)
        events = EventBroadcaster(rest)
        registry = CollectorRegistry()
        controller = Controller(
            Clientset(rest),
            factory,
            PerNodeCounter(factory),
            events,
            FeatureGates(),
            # Small batches, so reaching 3 takes a capped (partial) sync and its re-enqueue.
            GameServerSetSettings(
                max_creation_parallelism=2, max_game_server_creations_per_batch=2
            ),
            registry=registry,
        )
        factory.start()
        assert all((await factory.wait_for_cache_sync(20)).values())
        tasks = [asyncio.create_task(controller.run(2)), asyncio.create_task(events.run())]
        try:
            yield Env(rest, namespace, registry)
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


def game_server_set(name: str, replicas: int, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServerSet",
        "metadata": {"name": name, "labels": {"agones.dev/fleet": "my-fleet"}},
        "spec": {
            "replicas": replicas,
            "scheduling": "Distributed",
            **spec,
            "template": {
                "metadata": {"labels": {"app": "game"}},
                "spec": {
                    "ports": [{"name": "default", "containerPort": 7654}],
                    "template": {"spec": {"containers": [{"name": "game", "image": "game:1"}]}},
                },
            },
        },
    }


def live(gss: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [gs for gs in gss if (gs.get("status") or {}).get("state") != "Shutdown"]


async def test_game_server_set_keeps_its_count_scales_down_and_reports_status(env: Env) -> None:
    servers = await _creates_its_game_servers(env)
    await _counts_them_and_observes_each_batch(env)
    await _replaces_one_deleted_behind_its_back(env, servers)
    await _counts_a_ready_one(env)
    await _scales_down_through_shutdown(env)
    await _records_its_events(env)


async def _creates_its_game_servers(env: Env) -> list[dict[str, Any]]:
    """The set creates its 3 GameServers from its template, owned by it and labelled."""
    created = await env.rest.create(GAME_SERVER_SETS, game_server_set("set", 3), env.namespace)

    async def three() -> list[dict[str, Any]] | None:
        gss = await env.game_servers()
        return gss if len(gss) == 3 else None

    servers = await wait_for_async(three, 30, what="3 GameServers")
    for gs in servers:
        meta = gs["metadata"]
        assert meta["generateName"] == "set-"
        assert meta["name"].startswith("set-")
        assert meta["labels"] == {
            "app": "game",
            "agones.dev/gameserverset": "set",
            "agones.dev/fleet": "my-fleet",
        }
        (owner,) = meta["ownerReferences"]
        assert owner["uid"] == created["metadata"]["uid"]
        assert owner["kind"] == "GameServerSet" and owner["controller"] is True
        assert gs["spec"]["scheduling"] == "Distributed"
    return servers


async def _counts_them_and_observes_each_batch(env: Env) -> None:
    """status.replicas counts them; each creation batch is observed in the metrics."""

    async def status_replicas(n: int) -> bool:
        status = (await env.game_server_set("set")).get("status") or {}
        return status.get("replicas") == n

    await wait_for_async(lambda: status_replicas(3), 30, what="status.replicas 3")
    # A batch of 2 then one of 1 (the batch cap), each observed once, as Agones labels it.
    for batch in ("2", "1"):
        labels = {"name": batch, "type": "none", "fleet_name": "none", "namespace": ""}
        count = env.registry.get_sample_value("agones_gameserver_creation_duration_count", labels)
        assert count is not None and count >= 1


async def _replaces_one_deleted_behind_its_back(env: Env, servers: list[dict[str, Any]]) -> None:
    """Deleted behind its back: the set replaces it, and never overshoots."""
    victim = servers[0]["metadata"]["name"]
    await env.rest.delete(GAME_SERVERS, victim, env.namespace)

    async def replaced() -> bool:
        names = {gs["metadata"]["name"] for gs in await env.game_servers()}
        return len(names) == 3 and victim not in names

    await wait_for_async(replaced, 30, what="a replacement GameServer")
    assert len(await env.game_servers()) == 3


async def _counts_a_ready_one(env: Env) -> None:
    """One goes Ready (as the GameServer controller would move it): the status counts it."""
    ready = (await env.game_servers())[0]["metadata"]["name"]
    await env.set_state(ready, "Ready")

    async def ready_counted() -> bool:
        status = (await env.game_server_set("set")).get("status") or {}
        return status.get("readyReplicas") == 1

    await wait_for_async(ready_counted, 30, what="status.readyReplicas 1")


async def _scales_down_through_shutdown(env: Env) -> None:
    """Scale down to 1: two move to Shutdown, then (once deleted) the status says 1."""
    await env.rest.patch(
        GAME_SERVER_SETS, "set", {"spec": {"replicas": 1}}, namespace=env.namespace
    )

    async def two_shut_down() -> list[dict[str, Any]] | None:
        gss = await env.game_servers()
        down = [gs for gs in gss if (gs.get("status") or {}).get("state") == "Shutdown"]
        return down if len(down) == 2 and len(live(gss)) == 1 else None

    down = await wait_for_async(two_shut_down, 30, what="two GameServers in Shutdown")

    async def shutdown_counted() -> bool:
        status = (await env.game_server_set("set")).get("status") or {}
        return status.get("shutdownReplicas") == 2 and status.get("replicas") == 1

    await wait_for_async(shutdown_counted, 30, what="status.shutdownReplicas 2")
    for gs in down:
        await env.rest.delete(GAME_SERVERS, gs["metadata"]["name"], env.namespace)

    async def settled() -> dict[str, Any] | None:
        status = (await env.game_server_set("set")).get("status") or {}
        want = status.get("shutdownReplicas") == 0 and status.get("replicas") == 1
        return status if want and len(await env.game_servers()) == 1 else None

    status = await wait_for_async(settled, 30, what="one GameServer left")
    assert status["allocatedReplicas"] == 0 and status["reservedReplicas"] == 0


async def _records_its_events(env: Env) -> None:
    """The set's SuccessfulCreate and SuccessfulDelete events are recorded."""

    async def events() -> set[str] | None:
        listed = await env.rest.list(EVENTS, env.namespace)
        reasons = {
            e["reason"]
            for e in listed["items"]
            if e["involvedObject"].get("kind") == "GameServerSet"
        }
        return reasons if {"SuccessfulCreate", "SuccessfulDelete"} <= reasons else None

    await wait_for_async(events, 30, what="SuccessfulCreate and SuccessfulDelete events")


async def test_allocation_overflow_labels_the_surplus_allocated_servers(env: Env) -> None:
    overflow = {"labels": {"overflow": "true"}, "annotations": {"drain": "soon"}}
    await env.rest.create(
        GAME_SERVER_SETS, game_server_set("busy", 3, allocationOverflow=overflow), env.namespace
    )

    async def three() -> list[dict[str, Any]] | None:
        gss = await env.game_servers()
        return gss if len(gss) == 3 else None

    for gs in await wait_for_async(three, 30, what="3 GameServers"):
        await env.set_state(gs["metadata"]["name"], "Allocated")

    async def allocated(n: int) -> bool:
        status = (await env.game_server_set("busy")).get("status") or {}
        return status.get("allocatedReplicas") == n

    await wait_for_async(lambda: allocated(3), 30, what="status.allocatedReplicas 3")
    await env.rest.patch(
        GAME_SERVER_SETS, "busy", {"spec": {"replicas": 1}}, namespace=env.namespace
    )

    async def labelled() -> list[dict[str, Any]] | None:
        gss = await env.game_servers()
        marked = [gs for gs in gss if gs["metadata"].get("labels", {}).get("overflow") == "true"]
        return marked if len(marked) == 2 else None

    for gs in await wait_for_async(labelled, 30, what="two overflow-labelled GameServers"):
        assert gs["metadata"]["annotations"]["drain"] == "soon"
    servers = await env.game_servers()
    assert len(servers) == 3
    assert all(gs["status"]["state"] == "Allocated" for gs in servers)
