"""`agones.aioloop`: `run` picks uvloop's loop or asyncio's, runs like `asyncio.run`, tunes the GC."""

from __future__ import annotations

import asyncio
import gc
import sys
import weakref
from collections.abc import Iterator

import pytest

from agones import aioloop


@pytest.fixture(autouse=True)
def restore_gc() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


async def loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__.split(".")[0]


def hide_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # `import uvloop` raises ImportError


@pytest.mark.parametrize(
    ("installed", "use_uvloop", "want"),
    [
        pytest.param(True, True, "uvloop", id="uvloop-when-installed"),
        pytest.param(True, False, "asyncio", id="asyncio-when-asked"),
        pytest.param(False, True, "asyncio", id="asyncio-when-uvloop-is-absent"),
    ],
)
def test_run_picks_the_loop(
    monkeypatch: pytest.MonkeyPatch, installed: bool, use_uvloop: bool, want: str
) -> None:
    if installed:
        pytest.importorskip("uvloop")
    else:
        hide_uvloop(monkeypatch)
    assert aioloop.run(loop_module(), use_uvloop=use_uvloop) == want


@pytest.mark.parametrize("installed", [True, False], ids=["uvloop", "asyncio"])
def test_run_cancels_what_is_left_and_closes_its_loop(
    monkeypatch: pytest.MonkeyPatch, installed: bool
) -> None:
    if not installed:
        hide_uvloop(monkeypatch)
    seen: dict[str, object] = {}

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen["cancelled"] = True
            raise

    async def main() -> int:
        seen["loop"] = asyncio.get_running_loop()
        seen["task"] = asyncio.create_task(forever())
        await asyncio.sleep(0)
        return 7

    assert aioloop.run(main()) == 7
    assert seen["cancelled"] is True
    loop = seen["loop"]
    assert isinstance(loop, asyncio.AbstractEventLoop) and loop.is_closed()


def test_run_propagates_the_exception() -> None:
    async def fails() -> None:
        raise LookupError("no such thing")

    with pytest.raises(LookupError, match="no such thing"):
        aioloop.run(fails())


def test_tune_gc_freezes_the_live_heap_and_sets_the_thresholds() -> None:
    gc.unfreeze()
    kept = [{"n": i} for i in range(100)]
    aioloop.tune_gc()
    assert gc.get_threshold() == aioloop.GC_THRESHOLDS
    assert gc.get_freeze_count() > len(kept)
    assert not any(o is kept for o in gc.get_objects())


class _Node:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _cycle_frozen_while_alive(collector: aioloop.Collector) -> weakref.ref[_Node]:
    node = _Node()
    collector.collect_young()  # survives the young collection: frozen
    ref = weakref.ref(node)
    del node  # garbage now, but in the frozen generation
    return ref


def test_collect_young_freezes_the_survivors() -> None:
    gc.unfreeze()
    collector = aioloop.Collector(clock=_Clock())
    survivors = [[i] for i in range(100)]
    collector.collect_young()
    frozen = gc.get_freeze_count()
    assert frozen >= len(survivors)
    assert not any(o is survivors for o in gc.get_objects())  # never walked again
    assert collector.full_collections == 0


def test_a_young_cycle_is_collected_at_the_next_tick() -> None:
    gc.unfreeze()
    collector = aioloop.Collector(clock=_Clock())
    ref = weakref.ref(_Node())
    assert ref() is not None  # only the cyclic collector can free it
    collector.collect_young()
    assert ref() is None


BUSY, QUIET = 0.9, 0.01
"""Shares of a CPU the process used over a one-second window."""


def _grow(base: int, by: float) -> list[list[int]]:
    """Objects that grow the heap (in allocated blocks) by `by` of `base`."""
    held: list[list[int]] = []
    while sys.getallocatedblocks() < base * (1 + by):
        held += [[i] for i in range(1_000)]
    return held


@pytest.mark.parametrize(
    ("windows", "grown", "collected"),
    [
        pytest.param([QUIET], 0.3, True, id="grown-quiet"),
        pytest.param([QUIET, QUIET], 0.0, False, id="quiet-not-grown"),
        pytest.param([], 1.1, False, id="grown-no-window-ended"),
        pytest.param([BUSY, BUSY, BUSY], 0.3, False, id="grown-busy-below-the-forced-growth"),
        pytest.param([BUSY], 1.1, True, id="grown-past-the-forced-growth-busy"),
        pytest.param([BUSY, BUSY, QUIET], 0.3, True, id="grown-busy-then-quiet"),
    ],
)
def test_frozen_garbage_waits_for_the_full_collection(
    windows: list[float], grown: float, collected: bool
) -> None:
    gc.unfreeze()
    gc.collect()
    gc.freeze()  # as `tune_gc` leaves the heap before `run` starts the collector
    clock, cpu = _Clock(), _Clock()
    collector = aioloop.Collector(
        clock=clock,
        growth=0.25,
        floor=1_000,
        forced_growth=1.0,
        quiet_window=1.0,
        quiet_cpu=0.1,
        cpu_clock=cpu,
    )
    ref = _cycle_frozen_while_alive(collector)
    held = _grow(max(collector.base, collector.floor), grown)
    for share in windows:
        clock.now += 1.0
        cpu.now += share
        collector.collect_young()
    assert (ref() is None) is collected
    assert collector.full_collections == int(collected)
    if collected:
        assert collector.base >= len(held)  # reckoned anew from the heap the collection left


def test_a_collections_own_cpu_is_not_a_busy_spell() -> None:
    """A collection takes CPU (up to seconds): the window after it starts afresh, or a quiet
    process would count as busy and wait for twice its heap."""
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    clock, cpu = _Clock(), _Clock()
    collector = aioloop.Collector(clock=clock, floor=1_000, cpu_clock=cpu)
    real_full = collector.collect_full

    def slow_full() -> None:
        real_full()
        cpu.now += 1.5  # what collecting a big heap costs

    collector.collect_full = slow_full  # type: ignore[method-assign]
    held = []
    for _ in range(2):
        held += _grow(collector.base, 0.5)  # past the quiet growth, short of the forced one
        clock.now += 1.0
        cpu.now += QUIET
        collector.collect_young()
    assert collector.full_collections == 2


def test_run_collects_on_its_clock() -> None:
    seen: dict[str, object] = {}

    async def main() -> None:
        seen["collector"] = aioloop._running
        kept = [[i] for i in range(1_000)]  # young until the collector's tick
        while any(o is kept for o in gc.get_objects(generation=0)):
            await asyncio.sleep(0.01)
        seen["frozen"] = not any(o is kept for o in gc.get_objects())

    aioloop.run(main())
    assert isinstance(seen["collector"], aioloop.Collector)
    assert seen["frozen"] is True
    assert aioloop._running is None


def test_freeze_long_lived_rebases_the_running_collector() -> None:
    async def main() -> tuple[int, int, int]:
        assert aioloop._running is not None
        before = aioloop._running.base
        caches = [[i] for i in range(20_000)]  # lists are always tracked
        aioloop.freeze_long_lived()
        after, blocks = aioloop._running.base, sys.getallocatedblocks()
        assert len(caches) == 20_000  # alive, so blocks
        return before, after, blocks

    before, after, blocks = aioloop.run(main())
    assert after >= before + 20_000
    assert abs(after - blocks) < 1_000  # the same count, but for blocks freed in between


@pytest.mark.parametrize(
    ("found", "collected_at"),
    [
        pytest.param({}, [1, 3, 7, 11], id="none-found-backs-off-to-every-4"),
        pytest.param({3: 5}, [1, 3, 4, 6, 10], id="found-resets-to-every-tick"),
        pytest.param({1: 1, 2: 1, 3: 1}, [1, 2, 3, 4, 6, 10], id="found-each-time-every-tick"),
        pytest.param({7: 1}, [1, 3, 7, 8, 10], id="found-after-the-backoff-resets-it"),
    ],
)
def test_young_collections_back_off_while_they_find_no_garbage(
    found: dict[int, int], collected_at: list[int]
) -> None:
    """`found`: tick → unreachable objects the young collection at that tick finds."""
    tick = 0
    ticks: list[int] = []

    def collect() -> int:
        ticks.append(tick)
        return found.get(tick, 0)

    collector = aioloop.Collector(clock=_Clock(), backoff=4, collect_generation_0=collect)
    frozen = []
    for tick in range(1, 12):
        young = [[tick]]
        collector.collect_young()
        frozen.append(not any(o is young for o in gc.get_objects()))
    assert ticks == collected_at
    assert collector.young_collections == len(collected_at)
    assert all(frozen)  # frozen at every tick, collected or not


def test_a_cycle_frozen_while_backed_off_waits_for_the_full_collection() -> None:
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    collector = aioloop.Collector(clock=_Clock(), floor=1_000, backoff=8)
    collector.collect_young()  # nothing to find: the next young collection in 2 ticks
    ref = weakref.ref(_Node())
    collector.collect_young()  # not due: the cycle is frozen unwalked
    assert ref() is not None
    assert collector.young_collections == 1
    collector.collect_full()
    assert ref() is None
