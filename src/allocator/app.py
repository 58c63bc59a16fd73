"""The allocator process put together (Agones `cmd/allocator` `newServiceHandler` + `main`).

`AllocatorApp(settings, gates, client)`: one shared informer factory (GameServers, Nodes for the
per-node counter, GameServerAllocationPolicies, Secrets), the event broadcaster (its writes draw
from the client's Kubernetes budget, the GameServer writes from its Agones one: Agones'
`kubeClient` beside its `agonesClient`, a token bucket each, so Events never slow the allocation
writes; see `client/throttle.py`), the batching
`Allocator` with the `MultiClusterAllocator` hook, the `AllocationService` on it and the
`AllocatorServer` in front. `start()` returns once the caches are synced (and frozen out of the
cyclic GC's full collections) and the ports are bound
(`server.ports`); `run_until_signalled()` serves until SIGTERM/SIGINT, shuts the server down with
its drain, stops the allocator, informers and events, and returns 0.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import structlog

from .. import aioloop
from ..client.rest import RESTClient
from ..controllers.gameserverallocations.allocator import Allocator, AllocatorSettings
from ..controllers.gameserverallocations.multicluster import (
    MultiClusterAllocator,
    RemoteAllocationSettings,
)
from ..featuregates import FeatureGates
from ..informers import SharedInformerFactory
from ..record import EventBroadcaster
from .server import AllocatorServer
from .service import AllocationService
from .settings import AllocatorServiceSettings

RESYNC_PERIOD = 30.0
CACHE_SYNC_TIMEOUT = 60.0
EVENTS_FLUSH_TIMEOUT = 5.0


class AllocatorApp:
    def __init__(
        self,
        settings: AllocatorServiceSettings,
        gates: FeatureGates,
        client: RESTClient,
        *,
        logger: Any = None,
    ) -> None:
        self.settings = settings
        self.client = client
        self.log = logger or structlog.get_logger().bind(component="allocator")
        self.factory = SharedInformerFactory(client, RESYNC_PERIOD)
        self.events = EventBroadcaster(client)
        self.multi_cluster = MultiClusterAllocator(
            self.factory,
            gates,
            RemoteAllocationSettings(
                remote_allocation_timeout=settings.remote_allocation_timeout,
                total_remote_allocation_timeout=settings.total_remote_allocation_timeout,
            ),
            logger=self.log,
        )
        self.allocator = Allocator(
            client,
            self.factory,
            self.events,
            gates,
            AllocatorSettings(
                batch_wait_time=settings.allocation_batch_wait_time,
                partition=settings.partition(),
            ),
            multi_cluster=self.multi_cluster,
            logger=self.log,
        )
        self.service = AllocationService(
            self.allocator.allocate, gates, settings.http_unallocated_status_code, self.log
        )
        self.server = AllocatorServer(settings, self.service, api_check=self._api_check)
        self._events_task: asyncio.Task[None] | None = None

    async def _api_check(self) -> None:
        """Agones' readiness probe of the API server (`ServerVersion`)."""
        await self.client.request("GET", "/version")

    async def start(self) -> None:
        self.factory.start()
        self._events_task = asyncio.create_task(self.events.run())
        await self.allocator.start()
        synced = await self.factory.wait_for_cache_sync(CACHE_SYNC_TIMEOUT)
        if not all(synced.values()):
            raise RuntimeError(f"caches did not sync: {synced}")
        # What lives now (modules, schemas, the synced caches) lives long: no collection, a pause
        # in every allocation then in flight, walks it again (GameServers have no cycles:
        # refcounting still frees them).
        aioloop.freeze_long_lived()
        await self.server.start()

    async def stop(self) -> None:
        """Everything but the server (which `server.shutdown()` stops, draining first)."""
        await self.allocator.stop()
        if self._events_task is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.events.flush(), EVENTS_FLUSH_TIMEOUT)
            self._events_task.cancel()
            await asyncio.gather(self._events_task, return_exceptions=True)
        await self.factory.shutdown()

    async def run_until_signalled(self) -> int:
        try:
            await self.start()
            return await self.server.run_until_signalled()
        finally:
            await self.stop()
