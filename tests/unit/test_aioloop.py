"""`agones.aioloop`: `run` picks uvloop's loop or asyncio's, runs like `asyncio.run`, tunes the GC."""

from __future__ import annotations

import asyncio
import gc
import sys
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
