"""Run the GameServer controller against the fake API, with helpers that play the other actors."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import msgspec

from agones.apis.agones.v1.gameserver import GameServer
from agones.apis.agones.v1.gameserver_validation import apply_defaults
from agones.clock import Clock
from agones.controllers.gameservers import Controller, PerNodeCounter, SidecarConfig
from agones.featuregates import FeatureGates
from agones.informers import ResourceEventHandlerFuncs, SharedInformerFactory
from agones.portallocator import PortAllocator, PortRange
from agones.record import EventBroadcaster

from .fakeapi import FakeAPI


def game_server(name: str, *ports: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """A GameServer as the apiserver stores it after the mutating webhook."""
    raw = {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServer",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "ports": list(ports) or [{"name": "default", "containerPort": 7654}],
            "template": {"spec": {"containers": [{"name": "game", "image": "simple-game-server"}]}},
            **spec,
        },
    }
    gs = msgspec.convert(raw, GameServer)
    apply_defaults(gs, FeatureGates())
    return msgspec.to_builtins(gs)  # type: ignore[no-any-return]


def node(name: str, ip: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "spec": {},
        "status": {
            "addresses": [
                {"type": "InternalIP", "address": ip},
                {"type": "Hostname", "address": name},
            ]
        },
    }


@dataclass
class Harness:
    api: FakeAPI
    controller: Controller
    allocator: PortAllocator
    counter: PerNodeCounter
    factory: SharedInformerFactory
    events: EventBroadcaster

    def gs(self, name: str) -> dict[str, Any] | None:
        return self.api.find("gameservers", name)

    def pod(self, name: str) -> dict[str, Any] | None:
        return self.api.find("pods", name)

    async def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        from agones.client.versioned.resources import GAME_SERVERS

        return await self.api.create(GAME_SERVERS, obj, "default")

    async def wait_state(self, name: str, state: str) -> dict[str, Any]:
        def check() -> dict[str, Any] | None:
            gs = self.gs(name)
            return gs if gs and gs.get("status", {}).get("state") == state else None

        result: dict[str, Any] = await self.api.wait_for(check)
        return result

    async def wait_gone(self, plural: str, name: str) -> None:
        await self.api.wait_for(lambda: self.api.find(plural, name) is None)

    async def schedule(self, name: str, node_name: str = "node-1", ip: str = "10.0.0.7") -> None:
        """Scheduler and kubelet: bind the pod, give it an IP and a running game container."""
        await self.api.wait_for(lambda: self.pod(name))

        def bind(pod: dict[str, Any]) -> None:
            pod["spec"]["nodeName"] = node_name
            pod["status"] = {
                "phase": "Running",
                "podIP": ip,
                "podIPs": [{"ip": ip}],
                "containerStatuses": [
                    {
                        "name": "game",
                        "containerID": "containerd://game-1",
                        "state": {"running": {"startedAt": "2026-01-01T00:00:01Z"}},
                    }
                ],
            }

        await self.api.mutate("pods", name, bind)

    async def set_state(self, name: str, state: str) -> None:
        """The sdk-server writes a state."""

        def change(gs: dict[str, Any]) -> None:
            gs["status"]["state"] = state

        await self.api.mutate("gameservers", name, change)

    def event_reasons(self, name: str) -> list[tuple[str, str]]:
        return [
            (e["reason"], e["message"])
            for e in self.api.objects_of("events")
            if e["involvedObject"]["name"] == name
        ]


@contextlib.asynccontextmanager
async def running(
    gates: FeatureGates | None = None,
    port_range: tuple[int, int] = (7000, 7010),
    nodes: tuple[tuple[str, str], ...] = (("node-1", "127.0.0.2"),),
    api: FakeAPI | None = None,
    workers: int = 4,
    clock: Clock | None = None,
    scheduled_write_delay: float = 0.0,
) -> AsyncIterator[Harness]:
    gates = gates or FeatureGates()
    api = api or FakeAPI()
    for name, ip in nodes:
        if api.find("nodes", name, "") is None:
            await api.put("nodes", node(name, ip))
    factory = SharedInformerFactory(api, 0)
    events = EventBroadcaster(api)
    allocator = PortAllocator({"default": PortRange(*port_range)}, gates, random.Random(1))
    controller = Controller(
        api,
        factory,
        events,
        allocator,
        SidecarConfig(),
        gates,
        clock=clock,
        scheduled_write_delay=scheduled_write_delay,
    )
    counter = PerNodeCounter(factory)
    # Re-check waits once the caches (and every handler registered before) saw a change.
    poke = ResourceEventHandlerFuncs(api.poke, api.poke, api.poke)
    for informer in factory.informers():
        informer.add_event_handler(poke)
    factory.start()
    synced = await factory.wait_for_cache_sync(5)
    assert all(synced.values()), synced
    tasks = [asyncio.create_task(controller.run(workers)), asyncio.create_task(events.run())]
    for _ in range(1000):  # let the controller rebuild its ports and start its workers
        await asyncio.sleep(0)
        if controller.workerqueue.run_count() == workers:
            break
    try:
        yield Harness(api, controller, allocator, counter, factory, events)
    finally:
        await controller.shut_down_with_drain()
        await events.flush()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await factory.shutdown()
