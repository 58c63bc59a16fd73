"""An allocator (or several) against the local API server, with GameServers created Ready.

`AllocationHarness` starts a `LocalAPIServer` with the project's CRDs, and builds `Allocator`
replicas, each with its own REST client, informer factory and event broadcaster (as separate
processes would have). `create_ready(name, ...)` writes a GameServer straight into the Ready state
with an address, a port, a node, and (by default) the oracle fleet's counter `rooms {0/10}` and list
`players {capacity 100, [alice]}`; `ready_again(name)` puts an allocated one back to Ready.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import yaml
from prometheus_client import CollectorRegistry

from agones.client.config import load_kube_config
from agones.client.errors import ApiError
from agones.client.rest import RESTClient
from agones.client.versioned.resources import CUSTOM_RESOURCE_DEFINITIONS as CRDS
from agones.client.versioned.resources import GAME_SERVERS
from agones.controllers.gameserverallocations import Allocator, AllocatorSettings
from agones.featuregates import FeatureGates
from agones.informers import SharedInformerFactory
from agones.localcluster import LocalAPIServer
from agones.record import EventBroadcaster

ROOT = Path(__file__).resolve().parents[3]
NODES = ("node-a", "node-b", "node-c")


def ready_game_server(
    name: str,
    namespace: str = "default",
    *,
    labels: dict[str, str] | None = None,
    node: str = "node-a",
    counters: dict[str, Any] | None = None,
    lists: dict[str, Any] | None = None,
    state: str = "Ready",
) -> dict[str, Any]:
    counters = {"rooms": {"count": 0, "capacity": 10}} if counters is None else counters
    lists = {"players": {"capacity": 100, "values": ["alice"]}} if lists is None else lists
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServer",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels if labels is not None else {"agones.dev/fleet": "green-fleet"},
            "annotations": {"agones.dev/sdk-version": "1.57.0"},
        },
        "spec": {
            "ports": [{"name": "default", "containerPort": 7654, "portPolicy": "Dynamic"}],
            "counters": counters,
            "lists": lists,
            "template": {"spec": {"containers": [{"name": "game", "image": "game"}]}},
        },
        "status": {
            "state": state,
            "ports": [{"name": "default", "port": 7000 + abs(hash(name)) % 1000}],
            "address": "127.0.0.1",
            "addresses": [
                {"type": "InternalIP", "address": "127.0.0.1"},
                {"type": "ExternalIP", "address": "127.0.0.1"},
                {"type": "Hostname", "address": node},
                {"type": "PodIP", "address": "127.100.0.5"},
            ],
            "nodeName": node,
            "reservedUntil": None,
            "counters": counters,
            "lists": lists,
            "players": None,
            "eviction": {"safe": "Never"},
        },
    }


class AllocationHarness:
    def __init__(self, gates: FeatureGates | None = None) -> None:
        self.gates = gates or FeatureGates()
        self.server = LocalAPIServer()
        self.client: RESTClient | None = None
        self._stack = contextlib.AsyncExitStack()

    @property
    def rest(self) -> RESTClient:
        assert self.client is not None
        return self.client

    async def start(self) -> None:
        await self.server.start()
        self._stack.push_async_callback(self.server.stop)
        self.client = RESTClient(load_kube_config(self.server.kubeconfig))
        self._stack.push_async_callback(self.client.close)
        doc = yaml.safe_load((ROOT / "crds" / "gameserver.yaml").read_text())
        await self.client.create(CRDS, doc)
        for _ in range(200):
            try:
                await self.client.list(GAME_SERVERS, "default")
                return
            except ApiError:
                await asyncio.sleep(0.02)
        raise RuntimeError("GameServer CRD not served")

    async def stop(self) -> None:
        await self._stack.aclose()

    async def allocator(
        self, settings: AllocatorSettings | None = None, **kwargs: Any
    ) -> Allocator:
        """A started allocator replica with its own client, informers and events."""
        rest = RESTClient(load_kube_config(self.server.kubeconfig))
        self._stack.push_async_callback(rest.close)
        factory = SharedInformerFactory(rest)
        events = EventBroadcaster(rest)
        allocator = Allocator(
            rest, factory, events, self.gates, settings, registry=CollectorRegistry(), **kwargs
        )
        factory.start()
        self._stack.push_async_callback(factory.shutdown)
        event_task = asyncio.create_task(events.run())

        async def stop_events() -> None:
            event_task.cancel()
            await asyncio.gather(event_task, return_exceptions=True)

        self._stack.push_async_callback(stop_events)
        await allocator.start()
        self._stack.push_async_callback(allocator.stop)
        return allocator

    async def create_ready(
        self, name: str, namespace: str = "default", **kw: Any
    ) -> dict[str, Any]:
        return await self.rest.create(
            GAME_SERVERS, ready_game_server(name, namespace, **kw), namespace
        )

    async def ready_again(self, name: str, namespace: str = "default") -> None:
        """Put an Allocated GameServer back to Ready (as a game would after a match)."""
        while True:
            gs = await self.rest.get(GAME_SERVERS, name, namespace)
            gs["status"]["state"] = "Ready"
            try:
                await self.rest.update(GAME_SERVERS, gs, namespace)
                return
            except ApiError as err:
                if err.status_code != 409:
                    raise


@contextlib.asynccontextmanager
async def harness(gates: FeatureGates | None = None) -> AsyncIterator[AllocationHarness]:
    h = AllocationHarness(gates)
    try:
        await h.start()
        yield h
    finally:
        await h.stop()
