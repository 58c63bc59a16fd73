"""The tests' one way to wait for an observable condition: poll it, bounded, never sleep-and-hope.

`wait_for(condition)` (threads, plain code) and `await wait_for_async(condition)` (in a loop, where
`condition` may also return an awaitable) return the first truthy value of `condition()` and fail
with `timed out waiting for <what>` after `timeout` seconds. `interval=0` only yields to the loop
between polls (for conditions other tasks make true at once). `between`, when given, is awaited
between polls instead of sleeping: a test on fake time moves its clock there.
Kept apart from `tests/cluster.py` so that unit tests can wait without importing a cluster.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any


def wait_for(
    condition: Callable[[], Any],
    timeout: float = 20.0,
    interval: float = 0.05,
    what: str = "condition",
) -> Any:
    """Poll `condition` until it returns a truthy value; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(interval)


async def wait_for_async(
    condition: Callable[[], Any],
    timeout: float = 20.0,
    interval: float = 0.05,
    what: str = "condition",
    between: Callable[[], Awaitable[Any]] | None = None,
) -> Any:
    """`wait_for` inside an event loop: `condition` may return an awaitable."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        if between is not None:
            await between()
        await asyncio.sleep(interval)
