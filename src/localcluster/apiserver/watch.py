"""One watch stream's buffer: a bounded queue that never blocks the writer.

The store pushes each event to every interested `Watcher` synchronously, from the write path, with
`offer()`. A watcher whose consumer does not keep up (its queue reaches `capacity`) is closed, exactly
as kube-apiserver's cacher terminates an unresponsive watcher: its client sees the stream end and
re-watches from the last resourceVersion it saw. Writers therefore never wait on a watcher.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

Obj = dict[str, Any]


class Change(Protocol):
    """What a watcher reads of a change: a live `Event`, or one the store's history replays."""

    @property
    def type(self) -> str: ...
    @property
    def rv(self) -> int: ...
    @property
    def namespace(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def obj(self) -> Obj: ...
    @property
    def raw(self) -> bytes: ...
    @property
    def prev(self) -> Obj | None: ...


@dataclass(slots=True)
class Event:
    """A change to one object: `type` is ADDED, MODIFIED or DELETED (BOOKMARK for progress marks)."""

    type: str
    rv: int
    namespace: str
    obj: Obj
    raw: bytes
    prev: Obj | None = None

    @property
    def name(self) -> str:
        name: str = self.obj["metadata"].get("name", "")
        return name


Predicate = Callable[[Obj], bool]


class Watcher:
    """A bounded, single-consumer event queue; `closed` once stopped or overrun."""

    __slots__ = (
        "_items",
        "_waiter",
        "capacity",
        "close_reason",
        "closed",
        "name",
        "namespace",
        "on_overrun",
        "predicate",
    )

    def __init__(self, namespace: str, predicate: Predicate | None, capacity: int) -> None:
        self.namespace = namespace
        self.predicate = predicate
        # The one object name the predicate admits (a `metadata.name=` field selector), or None:
        # checked before the predicate, so the many single-object watches (an SDK sidecar each)
        # cost one comparison per event of another object, as the watch cache's name trigger.
        self.name: str | None = None
        self.capacity = capacity
        self.closed = False
        self.close_reason = ""
        self._items: deque[tuple[str, Obj | None, bytes]] = deque()
        # Called once when the consumer falls `capacity` events behind (the server aborts its
        # connection: a consumer stuck mid-write would otherwise hold it forever).
        self.on_overrun: Callable[[], None] | None = None
        # The consumer's pending `next_batch`, resolved by the first push (a bare future and a
        # timer: no Event, and no task for `wait_for`, per wait of a busy stream).
        self._waiter: asyncio.Future[None] | None = None

    def interested(self, event: Change) -> tuple[str, Obj | None, bytes] | None:
        """The event as this watcher sees it, after namespace and selector filtering.

        With a selector, an object that stops matching is reported DELETED (with its previous content)
        and one that starts matching ADDED, as the watch cache does.
        """
        if self.namespace and event.namespace != self.namespace:
            return None
        if self.name is not None and event.name != self.name:
            return None
        pred = self.predicate
        obj = event.obj  # read once: a replayed event decodes it on each read
        if pred is None:
            return (event.type, obj, event.raw)
        now = pred(obj)
        prev = event.prev
        was = prev is not None and pred(prev)
        if event.type == "MODIFIED":
            if now and was:
                return (event.type, obj, event.raw)
            if now:
                return ("ADDED", obj, event.raw)
            if was and prev is not None:
                gone = dict(prev)
                gone["metadata"] = {**prev["metadata"], "resourceVersion": str(event.rv)}
                return ("DELETED", gone, b"")
            return None
        return (event.type, obj, event.raw) if now else None

    def offer(self, event: Change) -> None:
        """Queue an event if it concerns this watcher; close the watcher if it is overrun."""
        if self.closed:
            return
        item = self.interested(event)
        if item is not None:
            self.push(item)

    def push(self, item: tuple[str, Obj | None, bytes]) -> None:
        if self.closed:
            return
        if len(self._items) >= self.capacity:
            self.close("watcher overrun: consumer too slow")
            if self.on_overrun is not None:
                self.on_overrun()
            return
        self._items.append(item)
        self._wake()

    def close(self, reason: str = "closed") -> None:
        if not self.closed:
            self.closed = True
            self.close_reason = reason
            self._items.clear()
            self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def next_batch(self, timeout: float | None) -> list[tuple[str, Obj | None, bytes]]:
        """Wait up to `timeout` seconds for events; [] on timeout or once closed."""
        if not self._items and not self.closed:
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            timer = None if timeout is None else loop.call_later(timeout, _expire, waiter)
            try:
                await waiter
            finally:
                self._waiter = None
                if timer is not None:
                    timer.cancel()
            if self._items and not self.closed:
                # Woken by a write: one more loop turn lets the other writes being served now
                # join this batch, so the stream takes one socket write for them all.
                await asyncio.sleep(0)
        if self.closed:
            return []
        items = list(self._items)
        self._items.clear()
        return items

    def __len__(self) -> int:
        return len(self._items)


def _expire(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
