"""A FleetAutoscaler controller run in-process against the cluster, on a fake clock.

The test plays the Fleet controller's part: it creates Fleets and writes their status through the
status subresource; the controller under test reads them and writes `spec.replicas` and the
FleetAutoscaler's status. Time (sync ticks, queue delays, Schedule windows) moves only when
`env.eventually` advances the fake clock while it polls the API.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry

from agones.client import errors
from agones.client.config import load_kube_config
from agones.client.rest import RESTClient
from agones.client.versioned.resources import CUSTOM_RESOURCE_DEFINITIONS as CRDS
from agones.client.versioned.resources import EVENTS, FLEET_AUTOSCALERS, FLEETS
from agones.clock import FakeClock
from agones.controllers.fleetautoscalers import Controller, FleetAutoscalerMetrics, PolicyRegistry
from agones.featuregates import FeatureGates
from agones.informers import SharedInformerFactory
from agones.record import EventBroadcaster
from tests.cluster import Cluster
from tests.waiting import wait_for_async

ROOT = Path(__file__).resolve().parents[3]
START = 1_710_000_000.0  # 2024-03-09T16:00:00Z


async def install_crd(rest: RESTClient, cluster: Cluster, file: str) -> None:
    crd = yaml.safe_load((ROOT / "crds" / file).read_text())
    name = crd["metadata"]["name"]
    try:
        await rest.get(CRDS, name)
        return
    except errors.NotFoundError:
        if not cluster.local:
            pytest.skip(f"{name} is not installed on this cluster")
    await rest.request("POST", CRDS.path(), body=crd)
    for _ in range(400):
        status = (await rest.get(CRDS, name)).get("status") or {}
        if any(
            c["type"] == "Established" and c["status"] == "True"
            for c in status.get("conditions") or []
        ):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{name} was not established")


@dataclass
class Env:
    rest: RESTClient
    namespace: str
    clock: FakeClock
    controller: Controller
    registry: CollectorRegistry
    policies: PolicyRegistry
    syncs: list[str] = field(default_factory=list)

    async def eventually(
        self,
        check: Callable[[], Awaitable[Any]],
        what: str,
        step: float = 0.25,
        timeout: float = 30.0,
    ) -> Any:
        """Poll `check` (real time, bounded), moving the fake clock by `step` between polls."""
        return await wait_for_async(
            check, timeout, 0.02, what, between=lambda: self.clock.advance(step)
        )

    async def create_fleet(
        self,
        name: str,
        replicas: int,
        status: dict[str, Any],
        template: dict[str, Any] | None = None,
    ) -> None:
        spec: dict[str, Any] = {
            "ports": [{"name": "default", "containerPort": 7654}],
            "template": {"spec": {"containers": [{"name": "game", "image": "game:1"}]}},
        }
        spec.update(template or {})
        body = {
            "apiVersion": "agones.dev/v1",
            "kind": "Fleet",
            "metadata": {"name": name},
            "spec": {"replicas": replicas, "scheduling": "Packed", "template": {"spec": spec}},
        }
        await self.rest.create(FLEETS, body, self.namespace)
        await self.set_fleet_status(name, status)

    async def set_fleet_status(self, name: str, status: dict[str, Any]) -> None:
        await self.rest.patch(
            FLEETS, name, {"status": status}, namespace=self.namespace, subresource="status"
        )

    async def fleet(self, name: str) -> dict[str, Any]:
        return await self.rest.get(FLEETS, name, self.namespace)

    async def replicas(self, name: str) -> int:
        return int((await self.fleet(name))["spec"].get("replicas", 0))

    async def create_fas(
        self, name: str, fleet: str, policy: dict[str, Any], seconds: int = 3600
    ) -> dict[str, Any]:
        body = {
            "apiVersion": "autoscaling.agones.dev/v1",
            "kind": "FleetAutoscaler",
            "metadata": {"name": name},
            "spec": {
                "fleetName": fleet,
                "policy": policy,
                "sync": {"type": "FixedInterval", "fixedInterval": {"seconds": seconds}},
            },
        }
        return await self.rest.create(FLEET_AUTOSCALERS, body, self.namespace)

    async def fas_status(self, name: str) -> dict[str, Any]:
        fas = await self.rest.get(FLEET_AUTOSCALERS, name, self.namespace)
        return dict(fas.get("status") or {})

    async def event_reasons(self, name: str) -> list[str]:
        listed = await self.rest.list(EVENTS, self.namespace)
        return [e["reason"] for e in listed["items"] if e["involvedObject"].get("name") == name]

    async def event_messages(self, name: str, reason: str) -> list[str]:
        listed = await self.rest.list(EVENTS, self.namespace)
        return [
            e["message"]
            for e in listed["items"]
            if e["involvedObject"].get("name") == name and e["reason"] == reason
        ]

    def gauge(self, metric: str, **labels: str) -> float | None:
        return self.registry.get_sample_value(metric, {"namespace": self.namespace, **labels})


@pytest.fixture
async def env(cluster: Cluster, request: pytest.FixtureRequest) -> AsyncIterator[Env]:
    marker = request.node.get_closest_marker("gates")
    gates = FeatureGates.parse(marker.args[0] if marker else "")
    rest = RESTClient(load_kube_config(cluster.kubeconfig))
    namespace = cluster.create_namespace("fas")
    try:
        for file in ("gameserver.yaml", "fleet.yaml", "fleetautoscaler.yaml"):
            await install_crd(rest, cluster, file)
        clock = FakeClock(START)
        factory = SharedInformerFactory(rest, 30.0, namespace=namespace)
        events = EventBroadcaster(rest)
        policies = PolicyRegistry(group="agones-tests.none")
        registry = CollectorRegistry()
        controller = Controller(rest, factory, events, gates, clock=clock, registry=policies)
        FleetAutoscalerMetrics(factory, registry)
        env = Env(rest, namespace, clock, controller, registry, policies)
        handler = controller.workerqueue.sync_handler

        async def counting(key: str) -> None:
            try:
                await handler(key)
            finally:
                env.syncs.append(key)

        controller.workerqueue.sync_handler = counting
        factory.start()
        assert all((await factory.wait_for_cache_sync(20)).values())
        tasks = [asyncio.create_task(controller.run(2)), asyncio.create_task(events.run())]
        try:
            yield env
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
