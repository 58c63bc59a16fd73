"""One simulation run: a demand trace against the real GameServerSet, Fleet and FleetAutoscaler
controllers, on virtual time.

`run_simulation(arrivals, fleet, fleet_autoscaler, options)` starts an in-process local API server
(the project's own, over loopback HTTP), installs the CRDs, runs the three controllers and the
simulated world (`world`) on one `FakeClock`, creates the Fleet and the FleetAutoscaler, and then
repeats: let the system settle (nothing in flight, every queue idle), serve the allocations due
now, move the clock to the next thing due (a timer of any controller or queue, an arrival, a
sample). So controllers take no virtual time to react, a GameServer takes `options.startup`
seconds to become Ready, and the same inputs give the same numbers. Each allocation is served
by a Ready GameServer of the Fleet or fails; a served one is released after its session (SDK
Shutdown). Returns a `RunResult` (counts, failures with their times, GameServer-hours, fleet size
peak and time-weighted mean, API writes, samples for charts).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from prometheus_client import CollectorRegistry

from ..apis.agones.v1.fleet import FleetSpec
from ..apis.agones.v1.gameserver import GameServerState
from ..apis.scheme import load as load_scheme
from ..client.config import load_config
from ..client.errors import ApiError, NotFoundError
from ..client.informers.externalversions.factory import SharedInformerFactory as TypedFactory
from ..client.rest import RESTClient
from ..client.versioned import Clientset
from ..client.versioned.resources import FLEET_AUTOSCALERS, FLEETS
from ..clock import FakeClock
from ..controllers import fleetautoscalers, fleets, gameserversets
from ..controllers.gameservers import PerNodeCounter
from ..featuregates import FeatureGates
from ..informers import SharedInformerFactory
from ..localcluster.apiserver.server import LocalAPIServer, ServerOptions
from ..localcluster.stack_agones import install_crds
from ..record import EventBroadcaster
from .trace import Arrival
from .world import Activity, Allocator, SimulatedGameServers

EPOCH = 1_767_225_600.0  # 2026-01-01T00:00:00Z: virtual time starts here
EPSILON = 1e-6  # seconds: float noise of absolute clock times, below any event spacing


class SimulationError(RuntimeError):
    """A simulation that cannot run (bad manifest, a cluster that does not answer)."""


@dataclass(frozen=True)
class SimulationOptions:
    startup: float = 10.0
    """Seconds from a GameServer's creation to Ready (pod start and SDK Ready())."""
    sample_every: float = 60.0
    """Seconds between samples of the fleet for charts."""
    duration: float | None = None
    """Seconds to simulate (None: until an hour after the last arrival)."""
    namespace: str = "default"
    workers: int = 4
    """Workers per controller queue."""
    gates: str = ""
    """Feature gates, as `--feature-gates`."""


@dataclass(frozen=True)
class Sample:
    t: float
    replicas: int  # Fleet spec.replicas
    game_servers: int  # GameServers that exist (what is paid for)
    ready: int
    allocated: int
    failed: int  # cumulative failed allocations


@dataclass
class RunResult:
    label: str
    asked: int = 0
    served: int = 0
    failed: int = 0
    failed_at: list[float] = field(default_factory=list)
    game_server_seconds: float = 0.0
    peak_fleet_size: int = 0
    mean_fleet_size: float = 0.0
    simulated_seconds: float = 0.0
    api_writes: int = 0
    wall_seconds: float = 0.0
    samples: list[Sample] = field(default_factory=list)

    @property
    def game_server_hours(self) -> float:
        return self.game_server_seconds / 3600.0

    def summary(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "allocations": {
                "asked": self.asked,
                "served": self.served,
                "failed": self.failed,
                "failed_at_seconds": [round(t, 1) for t in self.failed_at],
            },
            "game_server_hours": round(self.game_server_hours, 2),
            "fleet_size": {"peak": self.peak_fleet_size, "mean": round(self.mean_fleet_size, 2)},
            "simulated_seconds": self.simulated_seconds,
            "api_writes": self.api_writes,
            "wall_seconds": round(self.wall_seconds, 2),
        }


def admitted(manifest: dict[str, Any], kind: str, gates: FeatureGates) -> dict[str, Any]:
    """The manifest as Agones' webhooks would store it; SimulationError with every cause."""
    scheme = load_scheme()
    result = scheme.admit(manifest, gates)
    if result.obj is None or result.errors:
        causes = "; ".join(
            f"{e.field}: {e.detail}" if e.field else str(e.detail) for e in result.errors
        )
        raise SimulationError(f"invalid {kind}: {causes}")
    out: dict[str, Any] = scheme.encode(result.obj)
    return out


class _Run:
    """The running system of one simulation."""

    def __init__(
        self, client: RESTClient, clock: FakeClock, options: SimulationOptions, fleet: str
    ) -> None:
        self.client = client
        self.clock = clock
        self.options = options
        self.fleet_name = fleet
        self.gates = FeatureGates.parse(options.gates)
        clientset = Clientset(client)
        self.factory = SharedInformerFactory(client, 0.0, namespace=options.namespace)
        self.events = EventBroadcaster(client)
        counter = PerNodeCounter(self.factory)
        self.gss = gameserversets.Controller(
            clientset,
            self.factory,
            counter,
            self.events,
            self.gates,
            clock=clock,
            registry=CollectorRegistry(),
        )
        self.fleets = fleets.Controller(
            clientset, self.factory, self.events, self.gates, clock=clock
        )
        self.fas = fleetautoscalers.Controller(
            client, self.factory, self.events, self.gates, clock=clock, node_counts=counter.counts
        )
        self.world = SimulatedGameServers(clientset, self.factory, clock, options.startup)
        self.allocator = Allocator(clientset, self.world, options.namespace, fleet)
        queues = [
            self.gss.workerqueue,
            self.gss.allocation_controller.workerqueue,
            self.fleets.workerqueue,
            self.fas.workerqueue,
            self.world.queue,
        ]
        self.activity = Activity(queues=queues)
        typed = TypedFactory.from_generic(self.factory)
        self.fleet_lister = typed.agones().v1().fleets().lister()
        self.activity.watch(
            [
                typed.agones().v1().game_servers().informer(),
                typed.agones().v1().game_server_sets().informer(),
                typed.agones().v1().fleets().informer(),
                typed.autoscaling().v1().fleet_autoscalers().informer(),
            ]
        )
        self.tasks: list[asyncio.Task[Any]] = []

    async def start(self) -> None:
        self.factory.start()
        synced = await self.factory.wait_for_cache_sync(30)
        if not all(synced.values()):
            raise SimulationError("the informers did not sync")
        workers = self.options.workers
        for runnable in (self.gss, self.fleets, self.fas, self.world.queue):
            self.tasks.append(asyncio.create_task(runnable.run(workers)))
        self.tasks.append(asyncio.create_task(self.events.run()))

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await self.factory.shutdown()

    def counts(self) -> tuple[int, int, int]:
        """(GameServers that exist, Ready, Allocated) of the Fleet, from the cache."""
        listed = self.world.lister.game_servers(self.options.namespace).list(
            self.allocator.selector
        )
        ready = sum(1 for gs in listed if gs.state() == GameServerState.READY)
        allocated = sum(1 for gs in listed if gs.state() == GameServerState.ALLOCATED)
        return len(listed), ready, allocated

    def fleet_replicas(self) -> int:
        try:
            fleet = self.fleet_lister.fleets(self.options.namespace).get(self.fleet_name)
        except NotFoundError:
            return 0
        spec = fleet.spec if isinstance(fleet.spec, FleetSpec) else FleetSpec()
        return spec.replicas if isinstance(spec.replicas, int) else 0


async def _create(
    client: RESTClient, namespace: str, fleet: dict[str, Any], fas: dict[str, Any]
) -> None:
    try:
        await client.create(FLEETS, fleet, namespace)
        await client.create(FLEET_AUTOSCALERS, fas, namespace)
    except ApiError as err:
        raise SimulationError(
            f"the API server refused the Fleet or FleetAutoscaler: {err}"
        ) from None


async def _drive(run: _Run, arrivals: Sequence[Arrival], end: float, result: RunResult) -> None:
    clock, start = run.clock, run.clock.now()
    i, next_sample, last_t, last_size = 0, 0.0, 0.0, 0
    size_seconds = 0.0
    while True:
        await run.activity.settle()
        t = clock.now() - start
        size, ready, allocated = run.counts()
        result.game_server_seconds += last_size * (t - last_t)
        size_seconds += last_size * (t - last_t)
        result.peak_fleet_size = max(result.peak_fleet_size, size)
        last_t, last_size = t, size
        if t + EPSILON >= next_sample:
            result.samples.append(
                Sample(t, run.fleet_replicas(), size, ready, allocated, result.failed)
            )
            next_sample += run.options.sample_every
        served_any = False
        while i < len(arrivals) and arrivals[i].at <= t + EPSILON:
            await _allocate(run, arrivals[i], result, t)
            served_any = True
            i += 1
        if served_any:
            continue  # settle the writes before time moves on
        if t + EPSILON >= end:
            break
        due = [start + end, start + next_sample]
        if i < len(arrivals):
            due.append(start + arrivals[i].at)
        timer = clock.next_timer()
        if timer is not None:
            due.append(timer)
        clock.set_time(max(min(due), clock.now()))
    result.simulated_seconds = end
    result.mean_fleet_size = size_seconds / end if end > 0 else 0.0


async def _allocate(run: _Run, arrival: Arrival, result: RunResult, t: float) -> None:
    result.asked += 1
    key = await run.allocator.allocate()
    if key is None:
        result.failed += 1
        result.failed_at.append(t)
        return
    result.served += 1
    run.clock.call_later(arrival.session, lambda: run.allocator.release(key))


async def run_simulation(
    arrivals: Sequence[Arrival],
    fleet: dict[str, Any],
    fleet_autoscaler: dict[str, Any],
    options: SimulationOptions | None = None,
    label: str = "",
) -> RunResult:
    """Replay `arrivals` against a fresh local cluster (see the module docstring)."""
    options = options or SimulationOptions()
    gates = FeatureGates.parse(options.gates)
    fleet_obj = admitted(fleet, "Fleet", gates)
    fas_obj = admitted(fleet_autoscaler, "FleetAutoscaler", gates)
    fleet_name = str(fleet_obj["metadata"]["name"])
    if fas_obj["spec"]["fleetName"] != fleet_name:
        raise SimulationError(
            f"the FleetAutoscaler scales {fas_obj['spec']['fleetName']!r}, not the Fleet {fleet_name!r}"
        )
    last = max((a.at for a in arrivals), default=0.0)
    end = options.duration if options.duration is not None else math.ceil(last / 60) * 60 + 3600
    result = RunResult(label)
    wall = time.monotonic()
    server = LocalAPIServer(ServerOptions(bookmark_interval=3600.0, history_size=100000))
    await server.start()
    try:
        config = load_config(server.kubeconfig)
        config.qps = 0
        async with RESTClient(config) as client:
            try:
                await install_crds(client)
            except RuntimeError as err:
                raise SimulationError(f"the CRDs were not installed: {err}") from err
            run = _Run(client, FakeClock(EPOCH), options, fleet_name)
            run.activity.install(server)
            await run.start()
            try:
                await _create(client, options.namespace, fleet_obj, fas_obj)
                await _drive(run, arrivals, end, result)
                result.api_writes = run.activity.writes
            finally:
                await run.stop()
    finally:
        await server.stop()
    result.wall_seconds = time.monotonic() - wall
    return result
