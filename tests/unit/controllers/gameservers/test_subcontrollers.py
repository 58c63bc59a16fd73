"""Health, missing-pod, migration and succeeded controllers; restart rebuild; counters; metrics."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from agones.client.versioned.resources import GAME_SERVERS, PODS
from agones.controllers.gameservers import GameServerMetrics
from agones.featuregates import FeatureGates

from .fakeapi import FakeAPI
from .harness import Harness, game_server, running

pytestmark = pytest.mark.timeout(30)

SIDECARS_OFF = FeatureGates().with_values(SidecarContainers=False)


async def ready(h: Harness, name: str) -> dict[str, Any]:
    await h.create(game_server(name))
    await h.wait_state(name, "Starting")
    await h.schedule(name)
    await h.wait_state(name, "Scheduled")
    await h.set_state(name, "RequestReady")
    return await h.wait_state(name, "Ready")


def set_pod_status(**fields: Any) -> Any:
    def change(pod: dict[str, Any]) -> None:
        pod["status"].update(fields)

    return change


async def test_evicted_pod_makes_ready_game_server_unhealthy() -> None:
    async with running() as h:
        await ready(h, "gs1")
        await h.api.mutate("pods", "gs1", set_pod_status(reason="Evicted", phase="Failed"))
        await h.wait_state("gs1", "Unhealthy")
        await h.api.wait_for(
            lambda: ("Unhealthy", "Issue with Gameserver pod") in h.event_reasons("gs1")
        )


async def test_pod_deleted_behind_the_controller_makes_it_unhealthy() -> None:
    async with running() as h:
        await ready(h, "gs1")
        await h.api.delete(PODS, "gs1", "default")
        unhealthy = await h.wait_state("gs1", "Unhealthy")
        assert unhealthy["status"]["address"] == "127.0.0.2"


async def test_missing_pod_found_on_a_later_update() -> None:
    async with running() as h:
        await ready(h, "gs1")
        h.controller.health_controller.workerqueue.shut_down()  # only missing-pod may act
        await h.api.delete(PODS, "gs1", "default")
        await h.set_state("gs1", "Allocated")
        await h.wait_state("gs1", "Unhealthy")
        await h.api.wait_for(lambda: ("Unhealthy", "Pod is missing") in h.event_reasons("gs1"))


async def test_game_container_restart_after_ready_without_native_sidecars() -> None:
    async with running(gates=SIDECARS_OFF) as h:
        await ready(h, "gs1")

        def crashed(pod: dict[str, Any]) -> None:
            cs = pod["status"]["containerStatuses"][0]
            cs["lastState"] = {"terminated": {"exitCode": 1}}
            cs["containerID"] = "containerd://game-2"

        await h.api.mutate("pods", "gs1", crashed)
        await h.wait_state("gs1", "Unhealthy")


async def test_game_container_restart_before_ready_is_allowed() -> None:
    async with running(gates=SIDECARS_OFF) as h:
        await h.create(game_server("gs1"))
        await h.wait_state("gs1", "Starting")
        await h.schedule("gs1")
        await h.wait_state("gs1", "Scheduled")

        def crashed(pod: dict[str, Any]) -> None:
            pod["status"]["containerStatuses"][0]["lastState"] = {"terminated": {"exitCode": 1}}

        await h.api.mutate("pods", "gs1", crashed)
        await h.set_state("gs1", "RequestReady")
        await h.wait_state("gs1", "Ready")
        await h.controller.health_controller.workerqueue.queue.shut_down_with_drain()
        gs = h.gs("gs1")
        assert gs is not None and gs["status"]["state"] == "Ready"


async def test_failed_pod_phase_with_native_sidecars() -> None:
    async with running() as h:
        await ready(h, "gs1")
        await h.api.mutate("pods", "gs1", set_pod_status(phase="Failed"))
        await h.wait_state("gs1", "Unhealthy")


async def test_succeeded_pod_shuts_the_game_server_down() -> None:
    async with running() as h:
        await ready(h, "gs1")
        await h.api.mutate("pods", "gs1", set_pod_status(phase="Succeeded"))
        await h.wait_gone("gameservers", "gs1")
        assert ("Shutdown", "Pod is in Succeeded state") in h.event_reasons("gs1")


async def test_node_migration_after_ready_is_unhealthy() -> None:
    async with running(nodes=(("node-1", "127.0.0.2"), ("node-2", "127.0.0.3"))) as h:
        await ready(h, "gs1")

        def moved(node: dict[str, Any]) -> None:
            node["status"]["addresses"][0]["address"] = "127.0.0.9"

        await h.api.mutate("nodes", "node-1", moved, namespace="")
        await h.api.mutate("pods", "gs1", set_pod_status(message="nudge"))
        await h.wait_state("gs1", "Unhealthy")
        await h.api.wait_for(
            lambda: ("Unhealthy", "Node migration occurred") in h.event_reasons("gs1")
        )


async def test_node_migration_before_ready_updates_the_address() -> None:
    async with running(nodes=(("node-1", "127.0.0.2"), ("node-2", "127.0.0.3"))) as h:
        await h.create(game_server("gs1"))
        await h.wait_state("gs1", "Starting")
        await h.schedule("gs1")
        await h.wait_state("gs1", "Scheduled")

        def moved(pod: dict[str, Any]) -> None:
            pod["spec"]["nodeName"] = "node-2"

        await h.api.mutate("pods", "gs1", moved)
        await h.api.wait_for(
            lambda: (h.gs("gs1") or {}).get("status", {}).get("address") == "127.0.0.3"
        )
        gs = h.gs("gs1")
        assert gs is not None
        assert gs["status"]["state"] == "Scheduled"
        assert gs["status"]["nodeName"] == "node-2"


async def test_restart_rebuilds_ports_and_converges() -> None:
    """Controller killed mid-flight: a new one rebuilds the port map from the GameServers."""
    api = FakeAPI()
    async with running(api=api, port_range=(7000, 7002)) as h:
        await ready(h, "gs1")
        await h.create(game_server("gs2"))
        await h.wait_state("gs2", "Starting")
    # A GameServer created while no controller runs.
    async with running(api=api, port_range=(7000, 7002)) as h:
        ra = h.allocator.allocators[0]
        taken = {
            (h.gs(n) or {})["spec"]["ports"][0]["hostPort"]
            for n in ("gs1", "gs2")  # already allocated before the restart
        }
        assert ra.taken_count() == 2
        await h.create(game_server("gs3"))
        gs3 = await h.wait_state("gs3", "Starting")
        assert gs3["spec"]["ports"][0]["hostPort"] not in taken
        await h.schedule("gs2")
        await h.wait_state("gs2", "Scheduled")


async def test_per_node_counter_tracks_ready_and_allocated() -> None:
    async with running() as h:
        await ready(h, "gs1")
        await ready(h, "gs2")
        assert h.counter.counts()["node-1"].ready == 2
        await h.set_state("gs1", "Allocated")
        await h.api.wait_for(lambda: h.counter.counts()["node-1"].allocated == 1)
        assert h.counter.counts()["node-1"].ready == 1
        await h.set_state("gs1", "Shutdown")
        await h.wait_gone("gameservers", "gs1")
        await h.api.wait_for(lambda: h.counter.counts()["node-1"].allocated == 0)


async def test_metrics_count_states() -> None:
    registry = CollectorRegistry()
    async with running() as h:
        metrics = GameServerMetrics(h.factory, registry)
        # Registered after start: replays existing objects as adds.
        await ready(h, "gs1")
        labels = {"type": "Ready", "fleet_name": "none", "namespace": "default"}
        await h.api.wait_for(
            lambda: registry.get_sample_value("agones_gameservers_count", labels) == 1
        )
        assert registry.get_sample_value("agones_gameservers_total", labels) == 1
        starting = {**labels, "type": "Starting"}
        assert registry.get_sample_value("agones_gameservers_count", starting) == 0
        assert registry.get_sample_value("agones_gameserver_state_duration_count", starting) == 1
        assert metrics.count is not None


async def test_a_healthy_lifecycle_queues_nothing_for_migration_or_missing_pod() -> None:
    """Both queues share a 10/s rate limiter: fed every pod and GameServer event of 1000
    GameServers, they held thousands of names waiting for minutes, more each round. Only a pod
    that migrated or went missing is queued (as in Agones)."""
    async with running() as h:
        queued: list[tuple[str, Any]] = []
        for name, controller in (
            ("migration", h.controller.migration_controller),
            ("missing", h.controller.missing_pod_controller),
        ):
            enqueue = controller.workerqueue.enqueue

            def counting(obj: Any, name: str = name, enqueue: Any = enqueue) -> None:
                queued.append((name, obj))
                enqueue(obj)

            controller.workerqueue.enqueue = counting  # type: ignore[method-assign]
        await ready(h, "gs1")
        await h.api.mutate("pods", "gs1", set_pod_status(message="nudge"))
        await h.set_state("gs1", "Allocated")
        await h.wait_state("gs1", "Allocated")
        assert queued == []
        await h.api.delete(PODS, "gs1", "default")
        await h.wait_state("gs1", "Unhealthy")
        assert {name for name, _ in queued} <= {"missing"}


async def test_deleting_a_game_server_queues_nothing_for_health() -> None:
    """The pod of a GameServer being deleted goes too; queued through the shared 10/s bucket,
    every pod of a 1000 scale-down waited up to 100 s for a sync that did nothing."""
    async with running() as h:
        queued: list[Any] = []
        health = h.controller.health_controller
        enqueue = health.workerqueue.enqueue

        def counting(obj: Any) -> None:
            queued.append(obj)
            enqueue(obj)

        health.workerqueue.enqueue = counting  # type: ignore[method-assign]
        await ready(h, "gs1")
        await h.api.delete(GAME_SERVERS, "gs1", "default")
        await h.wait_gone("gameservers", "gs1")
        await h.wait_gone("pods", "gs1")
        await h.api.wait_for(lambda: health.get_pod("default", "gs1") is None)
        assert queued == []
        assert health.workerqueue.queue.waiting() == 0
