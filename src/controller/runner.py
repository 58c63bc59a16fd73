"""The controller main flow (Agones `cmd/controller/main.go`) as a reusable runner.

`ControllerRunner(settings, client, build).run()`:
1. registers the client/work-queue metrics and serves `/live`, `/ready`, `/metrics`;
2. calls `build(context)` once: it constructs the controllers (registering informer handlers on
   `context.informer_factory`, liveness checks on `context.health`) and returns their runnables;
3. when leading (at once without leader election; otherwise after acquiring the Lease
   `settings.lease_name` in `settings.pod_namespace` under a random identity) it starts the
   informers and the event writer, waits for the caches to sync, then runs every runnable with
   `settings.num_workers` workers;
4. on SIGTERM/SIGINT (or `stop()`): `/ready` fails, runnables stop taking work and drain in-flight
   syncs (bounded by `settings.shutdown_timeout`), the Lease is released, and `run()` returns 0;
5. if leadership is lost, work is cancelled at once (no fencing: it must stop before the lease can
   lapse) and `run()` returns 1, so the process exits non-zero as Agones' does;
6. if a runnable or an informer fails (or the caches do not sync in time), `run()` raises, after
   releasing the Lease when elected: Agones exits fatally there too.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog
from aiohttp import web
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from .. import aioloop
from ..client.rest import RESTClient
from ..clock import Clock, RealClock
from ..httpserver import serve_app
from ..informers import SharedInformerFactory
from ..leaderelection import LeaderCallbacks, LeaderElectionConfig, LeaseLock, new_leader_elector
from ..metrics import kubernetes_client
from ..record import EventBroadcaster
from .health import HealthHandler
from .settings import ControllerSettings

EXIT_LEADERSHIP_LOST = 1


def _raise_failure(tasks: Sequence[asyncio.Task[None]]) -> None:
    """Raise for the first of `tasks` that failed: Agones exits fatally when a controller (or an
    informer, by panicking) fails, rather than carry on with part of the work or a stale cache."""
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise RuntimeError(f"{task.get_name()} failed") from task.exception()


class Runnable(Protocol):
    """What the runner runs: a WorkerQueue satisfies it, as does any controller wrapping some."""

    async def run(self, workers: int) -> None: ...

    async def shut_down_with_drain(self) -> None: ...


@dataclass
class Context:
    """What `build` gets to construct controllers with."""

    settings: ControllerSettings
    client: RESTClient
    informer_factory: SharedInformerFactory
    event_broadcaster: EventBroadcaster
    health: HealthHandler
    clock: Clock
    logger: Any = field(default_factory=structlog.get_logger)


Build = Callable[[Context], Sequence[Runnable]]


class ControllerRunner:
    def __init__(
        self,
        settings: ControllerSettings,
        client: RESTClient,
        build: Build,
        *,
        clock: Clock | None = None,
        identity: str | None = None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.settings = settings
        self.client = client
        self.build = build
        self.clock = clock or RealClock()
        self.identity = identity or str(uuid.uuid4())
        self.registry = registry or REGISTRY
        self.log = structlog.get_logger().bind(identity=self.identity)
        self.health = HealthHandler()
        self.context = Context(
            settings,
            client,
            SharedInformerFactory(client, settings.resync_period, clock=clock),
            EventBroadcaster(client, clock=clock),
            self.health,
            self.clock,
            self.log,
        )
        self.port: int | None = None
        self.leading = False
        self.synced = False
        self._stop = asyncio.Event()
        self._runner: web.AppRunner | None = None

    def stop(self) -> None:
        """Begin a graceful shutdown (what SIGTERM does)."""
        self._stop.set()

    # -- HTTP --------------------------------------------------------------------------------------

    def _ready_check(self) -> None:
        if self._stop.is_set():
            raise RuntimeError("shutting down")
        if self.leading and not self.synced:
            raise RuntimeError("caches not synced")

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.Response(
            body=generate_latest(self.registry), headers={"Content-Type": CONTENT_TYPE_LATEST}
        )

    async def _start_http(self) -> None:
        app = web.Application()
        self.health.add_routes(app)
        if self.settings.prometheus_exporter:
            app.router.add_get("/metrics", self._metrics)
        self._runner, self.port = await serve_app(
            app, self.settings.http_host, self.settings.http_port
        )
        self.log.info("serving health and metrics", port=self.port)

    # -- the flow ---------------------------------------------------------------------------------

    async def _lead(self, runnables: Sequence[Runnable]) -> None:
        """Start informers, wait for sync, run workers until stop; then drain."""
        self.leading = True
        factory = self.context.informer_factory
        events = asyncio.create_task(self.context.event_broadcaster.run())
        tasks: list[asyncio.Task[None]] = []
        try:
            factory.start()
            sync = asyncio.create_task(
                factory.wait_for_cache_sync(self.settings.cache_sync_timeout)
            )
            stop_early = asyncio.create_task(self._stop.wait())
            informers = factory.running()
            await asyncio.wait([sync, stop_early, *informers], return_when=asyncio.FIRST_COMPLETED)
            stop_early.cancel()
            _raise_failure(informers)
            if not sync.done():
                sync.cancel()
                self.log.info("stopped before the caches synced")
                return
            synced = sync.result()
            if not all(synced.values()):
                raise RuntimeError(f"caches did not sync: {synced}")
            self.synced = True
            # The synced caches are long-lived: no collection walks them again (JSON objects have
            # no cycles, so refcounting still frees them).
            aioloop.freeze_long_lived()
            self.log.info("caches synced; starting workers", workers=self.settings.num_workers)
            tasks = [
                asyncio.create_task(r.run(self.settings.num_workers), name=f"controller {i}")
                for i, r in enumerate(runnables)
            ]
            stop = asyncio.create_task(self._stop.wait())
            await asyncio.wait([stop, *tasks, *informers], return_when=asyncio.FIRST_COMPLETED)
            stop.cancel()
            _raise_failure([*tasks, *informers])
            self.log.info("draining in-flight work")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.gather(*(r.shut_down_with_drain() for r in runnables)),
                    self.settings.shutdown_timeout,
                )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.context.event_broadcaster.flush(), 5)
        finally:
            for task in [*tasks, events]:
                task.cancel()
            await asyncio.gather(*tasks, events, return_exceptions=True)
            await factory.shutdown()
            self.leading = False

    def _install_signals(self) -> list[signal.Signals]:
        loop = asyncio.get_running_loop()
        installed: list[signal.Signals] = []
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(sig, self.stop)
                installed.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):
                pass
        return installed

    async def run(self) -> int:
        """Run until stopped (returns 0) or until leadership is lost (returns 1)."""
        kubernetes_client.register(self.registry)
        self.health.add_readiness_check("controller", self._ready_check)
        installed = self._install_signals()
        await self._start_http()
        try:
            runnables = list(self.build(self.context))
            for i, r in enumerate(runnables):
                healthy = getattr(r, "healthy", None)
                if callable(healthy):
                    self.health.add_liveness_check(f"workerqueue-{i}", healthy)
            if not self.settings.leader_election:
                await self._lead(runnables)
                return 0
            return await self._run_elected(runnables)
        finally:
            loop = asyncio.get_running_loop()
            for sig in installed:
                loop.remove_signal_handler(sig)
            if self._runner is not None:
                await self._runner.cleanup()

    async def _run_elected(self, runnables: Sequence[Runnable]) -> int:
        lead_done = asyncio.Event()
        failure: asyncio.Future[Exception] = asyncio.get_running_loop().create_future()

        async def on_started_leading() -> None:
            try:
                await self._lead(runnables)
            except Exception as err:
                failure.set_result(err)
            finally:
                lead_done.set()

        elector = new_leader_elector(
            LeaderElectionConfig(
                lock=LeaseLock(
                    self.client,
                    self.settings.pod_namespace,
                    self.settings.lease_name,
                    self.identity,
                ),
                callbacks=LeaderCallbacks(
                    on_started_leading,
                    lambda: None,
                    lambda leader: self.log.info("new leader", leader=leader),
                ),
                lease_duration=self.settings.lease_duration,
                renew_deadline=self.settings.renew_deadline,
                retry_period=self.settings.retry_period,
                release_on_cancel=True,
                clock=self.clock,
            )
        )
        election = asyncio.create_task(elector.run())
        stop = asyncio.create_task(self._stop.wait())
        ends: list[asyncio.Future[Any]] = [election, stop, failure]
        await asyncio.wait(ends, return_when=asyncio.FIRST_COMPLETED)
        if failure.done():
            # The work failed while we lead: give the lease up and fail as the unelected run does.
            stop.cancel()
            election.cancel()
            await asyncio.gather(election, return_exceptions=True)
            raise failure.result()
        if election.done():
            stop.cancel()
            self.log.error("leadership lost; exiting")
            return EXIT_LEADERSHIP_LOST
        # Graceful: let the leader drain first, then release the Lease by cancelling the elector.
        if self.leading:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(lead_done.wait(), self.settings.shutdown_timeout + 10)
        election.cancel()
        await asyncio.gather(election, return_exceptions=True)
        return 0
