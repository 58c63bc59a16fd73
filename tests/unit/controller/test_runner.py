"""ControllerRunner: health/metrics endpoints, sync before workers, drain on stop, exit 1 on lost lease."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import pytest
from prometheus_client import CollectorRegistry

from agones.client.rest import Resource
from agones.client.versioned.resources import GAME_SERVERS as RES
from agones.clock import FakeClock
from agones.controller import Context, ControllerRunner, ControllerSettings
from agones.informers import ResourceEventHandlerFuncs
from agones.workqueue import WorkerQueue
from tests.waiting import wait_for_async

from ..informers.fakeapi import FakeAPI, gs
from ..leaderelection.test_leaderelection import LeaseAPI, LeaseStore


class Client:
    """FakeAPI for game servers, LeaseAPI for leases, a sink for events."""

    def __init__(self) -> None:
        self.api = FakeAPI()
        self.leases = LeaseAPI(LeaseStore(), "runner")
        self.events: list[Any] = []

    async def list_raw(self, res: Resource, namespace: str | None = None, **kw: Any) -> bytes:
        return await self.api.list_raw(res, namespace, **kw)

    def watch(self, res: Resource, namespace: str | None = None, **kw: Any) -> Any:
        return self.api.watch(res, namespace, **kw)

    async def get(
        self, res: Resource, name: str, namespace: str | None = None, subresource: str | None = None
    ) -> Any:
        return await self.leases.get(res, name, namespace)

    async def create(self, res: Resource, body: Any, namespace: str | None = None) -> Any:
        if res.plural == "events":
            self.events.append(body)
            return body
        return await self.leases.create(res, body, namespace)

    async def update(
        self, res: Resource, body: Any, namespace: str | None = None, subresource: str | None = None
    ) -> Any:
        return await self.leases.update(res, body, namespace)

    async def patch(self, *a: Any, **kw: Any) -> Any:
        return {}


class Example:
    """A controller: enqueue every game server, sync slowly enough to observe draining."""

    def __init__(self, ctx: Context) -> None:
        self.synced: list[str] = []
        self.in_flight = asyncio.Event()
        self.release = asyncio.Event()
        self.queue = WorkerQueue(self.sync, None, "gameserver", "example")
        informer = ctx.informer_factory.for_resource(RES).informer()
        informer.add_event_handler(
            ResourceEventHandlerFuncs(add_func=self.queue.enqueue_immediately)
        )
        self.recorder = ctx.event_broadcaster.new_recorder("example", "h")

    async def sync(self, key: str) -> None:
        if key == "default/slow":
            self.in_flight.set()
            await self.release.wait()
        self.synced.append(key)


async def get(port: int, path: str) -> tuple[int, str]:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{port}{path}") as resp,
    ):
        return resp.status, await resp.text()


async def until(cond: Any, timeout: float = 5.0) -> None:
    await wait_for_async(cond, timeout, interval=0.001)


async def test_runner_serves_health_runs_workers_and_drains_on_stop() -> None:
    client = Client()
    client.api.create(gs("a"))
    controllers: list[Example] = []

    def build(ctx: Context) -> list[WorkerQueue]:
        controllers.append(Example(ctx))
        return [controllers[0].queue]

    runner = ControllerRunner(
        ControllerSettings(http_host="127.0.0.1", http_port=0, num_workers=4),
        client,
        build,  # type: ignore[arg-type]
        registry=CollectorRegistry(),
    )
    task = asyncio.create_task(runner.run())
    await until(lambda: controllers and controllers[0].synced == ["default/a"])
    assert runner.port
    assert (await get(runner.port, "/live"))[0] == 200
    status, body = await get(runner.port, "/ready?full=1")
    assert status == 200 and '"controller": "OK"' in body
    status, body = await get(runner.port, "/metrics")
    assert 'agones_k8s_client_workqueue_items_total{queue_name="example"} 1.0' in body

    example = controllers[0]
    client.api.create(gs("slow"))
    await asyncio.wait_for(example.in_flight.wait(), 5)
    runner.stop()
    await until(lambda: runner._stop.is_set())
    status, _ = await get(runner.port, "/ready")
    assert status == 503, "not ready once shutting down"
    assert not task.done(), "waits for the in-flight sync"
    example.release.set()
    assert await asyncio.wait_for(task, 5) == 0
    assert example.synced[-1] == "default/slow"


async def test_runner_exits_1_when_leadership_is_lost() -> None:
    client = Client()
    clock = FakeClock()
    started = asyncio.Event()

    def build(ctx: Context) -> list[WorkerQueue]:
        async def sync(key: str) -> None: ...

        queue = WorkerQueue(sync, None, "key", "q", clock=clock)
        ctx.informer_factory.for_resource(RES).informer().add_event_handler(
            ResourceEventHandlerFuncs(add_func=lambda obj: started.set())
        )
        return [queue]

    client.api.create(gs("a"))
    runner = ControllerRunner(
        ControllerSettings(http_host="127.0.0.1", http_port=0, leader_election=True),
        client,
        build,  # type: ignore[arg-type]
        clock=clock,
        identity="me",
        registry=CollectorRegistry(),
    )
    task = asyncio.create_task(runner.run())
    await asyncio.wait_for(started.wait(), 5)
    assert client.leases.store.lease is not None
    assert client.leases.store.lease["metadata"]["name"] == "agones-controller-lock"
    assert client.leases.store.lease["metadata"]["namespace"] == "agones-system"
    assert client.leases.store.lease["spec"]["holderIdentity"] == "me"
    client.leases.down = True
    for _ in range(30):
        await clock.advance(1)
        if task.done():
            break
    assert await asyncio.wait_for(task, 5) == 1


async def test_runner_releases_lease_on_graceful_stop() -> None:
    client = Client()
    clock = FakeClock()
    runner = ControllerRunner(
        ControllerSettings(http_host="127.0.0.1", http_port=0, leader_election=True),
        client,
        lambda ctx: [],  # type: ignore[arg-type]
        clock=clock,
        identity="me",
        registry=CollectorRegistry(),
    )
    task = asyncio.create_task(runner.run())
    await until(lambda: runner.synced)
    runner.stop()
    assert await asyncio.wait_for(task, 5) == 0
    assert client.leases.store.lease is not None
    assert client.leases.store.lease["spec"]["holderIdentity"] == ""


async def test_runner_stops_cleanly_before_caches_sync() -> None:
    client = Client()
    client.api.list_faults.extend(RuntimeError("apiserver down") for _ in range(1000))

    def build(ctx: Context) -> list[WorkerQueue]:
        ctx.informer_factory.for_resource(RES)
        return []

    runner = ControllerRunner(
        ControllerSettings(http_host="127.0.0.1", http_port=0),
        client,
        build,  # type: ignore[arg-type]
        registry=CollectorRegistry(),
    )
    task = asyncio.create_task(runner.run())
    await until(lambda: runner.leading)
    assert (await get(runner.port or 0, "/ready"))[0] == 503, "not ready until synced"
    runner.stop()
    assert await asyncio.wait_for(task, 5) == 0


class Failing:
    """A runnable whose workers die at once."""

    async def run(self, workers: int) -> None:
        raise ValueError("boom")

    async def shut_down_with_drain(self) -> None: ...


async def test_runner_raises_when_a_runnable_fails() -> None:
    runner = ControllerRunner(
        ControllerSettings(http_host="127.0.0.1", http_port=0),
        Client(),
        lambda ctx: [Failing()],
        registry=CollectorRegistry(),
    )
    with pytest.raises(RuntimeError, match="controller 0 failed") as failed:
        await asyncio.wait_for(runner.run(), 5)
    assert isinstance(failed.value.__cause__, ValueError)


async def test_elected_runner_releases_lease_and_raises_when_a_runnable_fails() -> None:
    client = Client()
    runner = ControllerRunner(
        ControllerSettings(http_host="127.0.0.1", http_port=0, leader_election=True),
        client,
        lambda ctx: [Failing()],
        clock=FakeClock(),
        identity="me",
        registry=CollectorRegistry(),
    )
    with pytest.raises(RuntimeError, match="controller 0 failed") as failed:
        await asyncio.wait_for(runner.run(), 5)
    assert isinstance(failed.value.__cause__, ValueError)
    assert client.leases.store.lease is not None
    assert client.leases.store.lease["spec"]["holderIdentity"] == ""


async def test_runner_raises_when_an_informer_dies() -> None:
    client = Client()
    informers = []

    def build(ctx: Context) -> list[WorkerQueue]:
        informers.append(ctx.informer_factory.for_resource(RES).informer())
        return []

    clock = FakeClock()
    runner = ControllerRunner(
        ControllerSettings(http_host="127.0.0.1", http_port=0),
        client,
        build,  # type: ignore[arg-type]
        clock=clock,
        registry=CollectorRegistry(),
    )
    task = asyncio.create_task(runner.run())
    await until(lambda: runner.synced)

    def boom() -> None:
        raise AssertionError("cache mutated")

    # What a cache mutation (or a failing index function on resync) does to an informer's task.
    informers[0].mutation_detector.check = boom  # type: ignore[method-assign]
    await clock.advance(30)
    with pytest.raises(RuntimeError, match=r"informer gameservers\.agones\.dev failed"):
        await asyncio.wait_for(task, 5)
