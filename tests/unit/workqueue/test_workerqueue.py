"""Agones WorkerQueue semantics: rate-limited enqueue, forget on success, back-off on error, health."""

from __future__ import annotations

import asyncio
import gc

import pytest
import structlog
from prometheus_client import CollectorRegistry, generate_latest

from agones.client.errors import error_from_status
from agones.clock import FakeClock
from agones.informers.store import DeletedFinalStateUnknown
from agones.metrics import kubernetes_client
from agones.workqueue import ItemExponentialFailureRateLimiter, Requeue, WorkerQueue
from agones.workqueue import metrics as wq_metrics
from agones.workqueue.workerqueue import UnhealthyError

GS = {"metadata": {"namespace": "default", "name": "gs-1"}}


def conflict(reason: str) -> Exception:
    return error_from_status(409, {"kind": "Status", "code": 409, "reason": reason})


def make(handler, clock: FakeClock, **kw):  # type: ignore[no-untyped-def]
    return WorkerQueue(
        handler,
        None,
        "gameserver",
        "test",
        ItemExponentialFailureRateLimiter(1, 60),
        clock=clock,
        **kw,
    )


async def test_enqueue_is_rate_limited_and_keys_objects() -> None:
    clock = FakeClock()
    wq = make(lambda key: asyncio.sleep(0), clock)
    wq.enqueue(GS)
    assert len(wq.queue) == 0 and wq.queue.waiting() == 1
    clock.step(1)
    assert len(wq.queue) == 1
    wq.enqueue_immediately(DeletedFinalStateUnknown("default/gone", GS))
    wq.enqueue_after("cluster-scoped", 5)
    assert len(wq.queue) == 2
    assert await wq.queue.get() == ("default/gs-1", False)
    assert await wq.queue.get() == ("default/gone", False)
    wq.enqueue({"metadata": {}})  # no name: logged, not queued
    assert wq.queue.waiting() == 1


async def test_success_forgets_error_backs_off_and_never_kills_workers() -> None:
    clock = FakeClock()
    calls: list[str] = []
    outcomes = [RuntimeError("boom"), conflict("Conflict"), None]
    processed = asyncio.Event()

    async def handler(key: str) -> None:
        calls.append(key)
        outcome = outcomes.pop(0)
        if outcome is not None:
            raise outcome
        processed.set()

    wq = make(handler, clock)
    runner = asyncio.create_task(wq.run(2))
    wq.enqueue_immediately("default/a")
    await clock.wait_for_timers(1)  # failed once: re-added after 1 s
    assert wq.queue.num_requeues("default/a") == 1
    wq.healthy()
    await clock.advance(1)
    await clock.wait_for_timers(1)  # failed twice (conflict): 2 s
    assert wq.queue.num_requeues("default/a") == 2
    await clock.advance(2)
    await asyncio.wait_for(processed.wait(), 1)
    await asyncio.sleep(0)
    assert calls == ["default/a"] * 3
    assert wq.queue.num_requeues("default/a") == 0, "success forgets the key"
    assert wq.run_count() == 2
    runner.cancel()
    with pytest.raises(asyncio.CancelledError):
        await runner
    assert wq.queue.shutting_down()
    with pytest.raises(UnhealthyError):
        wq.healthy()


async def test_key_never_processed_concurrently_by_many_workers() -> None:
    clock = FakeClock()
    active: set[str] = set()
    overlaps = 0
    count = 0
    release = asyncio.Event()

    async def handler(key: str) -> None:
        nonlocal overlaps, count
        if key in active:
            overlaps += 1
        active.add(key)
        await release.wait()
        active.discard(key)
        count += 1

    wq = make(handler, clock)
    runner = asyncio.create_task(wq.run(8))
    for _ in range(5):
        wq.enqueue_immediately("k")
        await asyncio.sleep(0)
    release.set()
    for _ in range(20):
        await asyncio.sleep(0)
    assert overlaps == 0
    assert count == 2, "first run plus exactly one re-run for the adds made while processing"
    wq.shut_down()
    await asyncio.wait_for(runner, 1)


async def test_workqueue_metrics_use_agones_names() -> None:
    registry = CollectorRegistry()
    previous = wq_metrics.get_provider()
    try:
        kubernetes_client.register(registry)
        clock = FakeClock()
        done = asyncio.Event()

        async def handler(key: str) -> None:
            clock.step(0.25)
            done.set()

        wq = make(handler, clock)
        wq.enqueue_immediately("a")
        clock.step(0.5)
        runner = asyncio.create_task(wq.run(1))
        await asyncio.wait_for(done.wait(), 1)
        wq.shut_down()
        await asyncio.wait_for(runner, 1)

        def value(name: str) -> float | None:
            return registry.get_sample_value(name, {"queue_name": "test"})

        assert value("agones_k8s_client_workqueue_items_total") == 1
        assert value("agones_k8s_client_workqueue_depth") == 0
        assert value("agones_k8s_client_workqueue_latency_seconds_sum") == 0.5
        assert value("agones_k8s_client_workqueue_work_duration_seconds_sum") == 0.25
        assert value("agones_k8s_client_workqueue_retries_total") == 0
        assert value("agones_k8s_client_workqueue_unfinished_work_seconds") == 0
    finally:
        wq_metrics.set_provider(previous)


@pytest.mark.parametrize(
    ("error", "level"),
    [
        pytest.param(conflict("Conflict"), "debug", id="conflict"),
        pytest.param(conflict("AlreadyExists"), "error", id="already-exists"),
        pytest.param(RuntimeError("boom"), "error", id="other"),
    ],
)
async def test_only_conflicts_are_logged_quietly(error: Exception, level: str) -> None:
    async def handler(key: str) -> None:
        raise error

    wq = WorkerQueue(handler, None, "gameserver", "test", clock=FakeClock())
    wq.enqueue_immediately("default/a")
    with structlog.testing.capture_logs() as logs:
        assert await wq.process_next_work_item()
    assert [(e["log_level"], e["gameserver"]) for e in logs] == [(level, "default/a")]
    assert wq.queue.num_requeues("default/a") == 1


def test_register_serves_every_new_registry() -> None:
    # Registries come and go (one per test here); a new one may reuse a dead one's address.
    for _ in range(20):
        registry = CollectorRegistry()
        kubernetes_client.register(registry)
        assert b"agones_k8s_client_workqueue_depth" in generate_latest(registry)
        del registry
        gc.collect(1)  # the young generations, where the dead registry is: no whole-heap walk


def _outcome(exc: BaseException | None):  # type: ignore[no-untyped-def]
    async def handler(key: str) -> None:
        if exc is not None:
            raise exc

    return handler


@pytest.mark.parametrize(
    ("outcome", "prior_failures", "requeues_after", "waiting_for"),
    [
        pytest.param(None, 2, 0, None, id="success-forgets"),
        pytest.param(Requeue("not yet"), 0, 1, 1.0, id="requeue-first-uses-limiter"),
        pytest.param(Requeue("not yet"), 2, 3, 4.0, id="requeue-keeps-history"),
        pytest.param(Requeue("later", after=7.5), 2, 0, 7.5, id="requeue-after-forgets"),
        pytest.param(Requeue("now", after=0), 3, 0, 0.0, id="requeue-after-zero-is-add"),
        pytest.param(RuntimeError("boom"), 1, 2, 2.0, id="error-backs-off"),
    ],
)
async def test_outcome_to_queue_action(
    outcome: BaseException | None,
    prior_failures: int,
    requeues_after: int,
    waiting_for: float | None,
) -> None:
    """Each handler outcome maps to one queue action (the table in the module docstring)."""
    clock = FakeClock()
    wq = make(_outcome(outcome), clock)
    for _ in range(prior_failures):  # earlier failures of the key, as the limiter counts them
        wq.queue.rate_limiter.when("default/gs-1")
    wq.enqueue_immediately(GS)
    assert await wq.process_next_work_item()
    assert wq.queue.num_requeues("default/gs-1") == requeues_after
    if waiting_for is None:
        assert len(wq.queue) == 0 and wq.queue.waiting() == 0
    elif waiting_for == 0:
        assert len(wq.queue) == 1
    else:
        assert len(wq.queue) == 0 and wq.queue.waiting() == 1
        clock.step(waiting_for - 0.01)
        assert len(wq.queue) == 0
        clock.step(0.01)
        assert len(wq.queue) == 1


async def test_requeue_is_not_logged_as_an_error() -> None:
    clock = FakeClock()
    wq = make(_outcome(Requeue("pod not in the cache yet")), clock)
    wq.enqueue_immediately(GS)
    with structlog.testing.capture_logs() as logs:
        await wq.process_next_work_item()
    assert [entry["log_level"] for entry in logs] == ["debug"]
    assert logs[0]["reason"] == "pod not in the cache yet"
