"""Event recording (client-go `tools/record/event.go` + `events_cache.go`).

`recorder.event(obj, type, reason, message)` never blocks and never fails the caller: the event
(with a reference to the object taken at once — the object itself is not kept) goes to a bounded
buffer (1,000, dropped with a log line when full) that `EventBroadcaster.run()` writes to the API
as core/v1 Events, with up to `writers` (64) writes in flight: events about one object (per source)
are written one after the other, in the order recorded, so the correlation below sees them in
order; events about different objects do not wait for each other. Like client-go's correlator:
* an exact repeat (same source, object, type, reason, message) within the cache is folded into the
  existing Event: `count` + 1 and a new `lastTimestamp`, written as a strategic-merge patch (a new
  Event is created if the old one has expired away);
* once 10 distinct messages have been seen for the same (source, object, type, reason), each
  coming within 10 minutes of the previous similar event, further new messages are aggregated into
  one Event whose message starts with "(combined from similar events): " (the set of messages
  remembered stays below 10, as client-go's `EventAggregate` keeps it);
* each (source, object) is rate-limited by a token bucket of 25 events refilled once per 5 minutes;
* a write that cannot reach the server is tried up to 12 times, 10 s apart (the first wait random
  in [0, 10 s)); one the server rejects is dropped with a log line, as client-go's `recordToSink`.
Event names are `<object name>.<hex nanoseconds>`, in the object's namespace ("default" for
cluster-scoped objects). The caches (4,096 entries each, as client-go's) are keyed by the object's
uid among the rest, so `forget(obj)` — called by a controller when the object is deleted — drops
what they hold about it, instead of keeping every deleted GameServer until others push it out.
"""

from __future__ import annotations

import asyncio
import enum
import random
import socket
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp
import structlog

from ..apis.meta.objectmeta import format_micro_time
from ..client.errors import NotFoundError
from ..client.rest import PatchType, Resource
from ..client.versioned.resources import EVENTS
from ..clock import Clock, RealClock
from ..flowcontrol import Limiter
from ..informers.meta import (
    get_api_version,
    get_kind,
    get_name,
    get_namespace,
    get_resource_version,
    get_uid,
)

MAX_QUEUED_EVENTS = 1000
LRU_CACHE_SIZE = 4096
MAX_SIMILAR_EVENTS = 10
AGGREGATE_INTERVAL = 600.0
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
AGGREGATE_PREFIX = "(combined from similar events): "
MAX_TRIES_PER_EVENT = 12
RETRY_SLEEP = 10.0
WRITERS = 64


class EventType(enum.StrEnum):
    NORMAL = "Normal"
    WARNING = "Warning"


class EventClient(Protocol):
    async def create(
        self, res: Resource, body: Any, namespace: str | None = None
    ) -> dict[str, Any]: ...

    async def patch(
        self,
        res: Resource,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType = "merge",
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool = False,
    ) -> dict[str, Any]: ...


@dataclass(slots=True)
class _Seen:
    name: str
    namespace: str
    count: int
    first_timestamp: float


@dataclass(slots=True)
class _Pending:
    involved: dict[str, str]
    type: str
    reason: str
    message: str
    component: str
    host: str
    at: float


class EventBroadcaster:
    """Owns the buffer and the writer task; hands out recorders per component."""

    def __init__(
        self,
        client: EventClient,
        *,
        clock: Clock | None = None,
        rand: Callable[[], float] = random.random,
        writers: int = WRITERS,
    ) -> None:
        self.client = client
        self.clock = clock or RealClock()
        self._rand = rand
        self.writers = max(1, writers)
        self._queue: asyncio.Queue[_Pending] = asyncio.Queue(MAX_QUEUED_EVENTS)
        # source key -> events about that object taken off the queue while one of it is written
        self._writing: dict[tuple[str, ...], deque[_Pending]] = {}
        self._seen: OrderedDict[tuple[str, ...], _Seen] = OrderedDict()
        # (last similar event's time, the distinct messages seen since: a tuple, < 10 of them)
        self._similar: OrderedDict[tuple[str, ...], tuple[float, tuple[str, ...]]] = OrderedDict()
        self._spam: OrderedDict[tuple[str, ...], Limiter] = OrderedDict()
        self._caches = (self._seen, self._similar, self._spam)
        # object uid -> (which of `_caches`, key) of each entry it has there (see `forget`)
        # (a list: a handful per object, and a set's table cost more than the rest of the entry)
        self._keys_of: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
        self.log = structlog.get_logger().bind(component="events")
        self.dropped = 0
        self.written = 0

    def new_recorder(self, component: str, host: str | None = None) -> EventRecorder:
        return EventRecorder(self, component, host if host is not None else socket.gethostname())

    def _enqueue(self, pending: _Pending) -> None:
        try:
            self._queue.put_nowait(pending)
        except asyncio.QueueFull:
            self.dropped += 1
            self.log.warning("event buffer full, dropping event", reason=pending.reason)

    async def run(self) -> None:
        """Write buffered events until cancelled, `writers` at a time."""
        await asyncio.gather(*(self._writer() for _ in range(self.writers)))

    async def _writer(self) -> None:
        while True:
            pending = await self._queue.get()
            key = _source_key(pending)
            waiting = self._writing.get(key)
            if waiting is not None:
                waiting.append(pending)  # the writer of this object writes it next, in order
                continue
            waiting = self._writing[key] = deque([pending])
            try:
                while waiting:
                    await self._record_one(waiting[0])
                    waiting.popleft()
                    self._queue.task_done()
            finally:
                del self._writing[key]

    async def _record_one(self, pending: _Pending) -> None:
        try:
            await self._record(pending)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            self.log.warning("unable to write event", reason=pending.reason, error=str(err))

    async def flush(self) -> None:
        """Wait until every buffered event has been written (or failed)."""
        await self._queue.join()

    def _lru_put(self, which: int, key: tuple[str, ...], value: Any) -> None:
        cache: OrderedDict[tuple[str, ...], Any] = self._caches[which]
        if key in cache:
            cache.move_to_end(key)
        else:
            self._keys_of.setdefault(key[_UID], []).append((which, key))
        cache[key] = value
        while len(cache) > LRU_CACHE_SIZE:
            old, _ = cache.popitem(last=False)
            self._unindex(which, old)

    def _unindex(self, which: int, key: tuple[str, ...]) -> None:
        keys = self._keys_of.get(key[_UID])
        if keys is not None:
            keys.remove((which, key))
            if not keys:
                del self._keys_of[key[_UID]]

    def forget(self, obj: Any) -> None:
        """Drop what the correlator keeps about `obj` (its uid is in every key, so nothing of a
        deleted object can match again): without this, every GameServer ever seen stayed in the
        caches until 4,096 others pushed it out, and the controller grew round after round."""
        for which, key in self._keys_of.pop(get_uid(obj), ()):
            self._caches[which].pop(key, None)

    def cached(self) -> int:
        """Entries in the correlator's caches (for tests and benchmarks)."""
        return len(self._seen) + len(self._similar) + len(self._spam)

    async def _record(self, p: _Pending) -> None:
        involved = p.involved
        source_key = _source_key(p)
        # Spam filter per source + object.
        limiter = self._spam.get(source_key)
        if limiter is None:
            limiter = Limiter(SPAM_QPS, SPAM_BURST, self.clock)
            self._lru_put(_SPAM, source_key, limiter)
        if limiter.tokens() < 1.0:
            self.dropped += 1
            return
        limiter.reserve()
        # Aggregate floods of similar events with different messages.
        message = p.message
        similar_key = (*source_key, p.type, p.reason)
        last, messages = self._similar.get(similar_key, (p.at, ()))
        if p.at - last > AGGREGATE_INTERVAL:
            messages = ()
        if p.message not in messages:
            messages = (*messages, p.message)
        if len(messages) < MAX_SIMILAR_EVENTS:
            key = (*similar_key, involved.get("fieldPath", ""), message)
        else:
            messages = messages[1:]  # drop the oldest: they never grow past the threshold
            message = AGGREGATE_PREFIX + p.message
            key = (*similar_key, AGGREGATE_PREFIX)
        self._lru_put(_SIMILAR, similar_key, (p.at, messages))
        for tries in range(1, MAX_TRIES_PER_EVENT + 1):
            try:
                await self._write(p, involved, key, message)
                return
            except (aiohttp.ClientError, OSError, TimeoutError) as err:
                # The server could not be reached (a rejection is an ApiError: not retried).
                if tries == MAX_TRIES_PER_EVENT:
                    raise
                self.log.info("unable to write event, retrying", reason=p.reason, error=str(err))
                # The first wait is random so that clients do not retry in step.
                await self.clock.sleep(RETRY_SLEEP * (self._rand() if tries == 1 else 1.0))

    async def _write(
        self, p: _Pending, involved: dict[str, str], key: tuple[str, ...], message: str
    ) -> None:
        now = format_micro_time(p.at)
        seen = self._seen.get(key)
        if seen is not None:
            try:
                await self.client.patch(
                    EVENTS,
                    seen.name,
                    {"count": seen.count + 1, "lastTimestamp": _seconds(now), "message": message},
                    namespace=seen.namespace,
                    patch_type="strategic",
                )
                seen.count += 1
                self._seen.move_to_end(key)
                self.written += 1
                return
            except NotFoundError:
                if self._seen.pop(key, None) is not None:
                    self._unindex(_SEEN, key)
        namespace = involved["namespace"] or "default"
        name = f"{involved['name']}.{int(p.at * 1e9):x}"
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": {k: v for k, v in involved.items() if v},
            "reason": p.reason,
            "message": message,
            "source": {"component": p.component, "host": p.host},
            "firstTimestamp": _seconds(now),
            "lastTimestamp": _seconds(now),
            "count": 1,
            "type": p.type,
            "reportingComponent": p.component,
            "reportingInstance": p.host,
        }
        await self.client.create(EVENTS, body, namespace)
        self._lru_put(_SEEN, key, _Seen(name, namespace, 1, p.at))
        self.written += 1


def object_reference(obj: Any, field_path: str) -> dict[str, str]:
    """A reference to part of `obj` (client-go `ref.GetPartialReference`), e.g. one container
    of a pod (`spec.containers{main}`); recording an event on it names that part."""
    return {**involved_object(obj), "fieldPath": field_path}


def _is_reference(obj: Any) -> bool:
    return isinstance(obj, dict) and "metadata" not in obj and "fieldPath" in obj


def involved_object(obj: Any) -> dict[str, str]:
    """The ObjectReference an event is about (client-go `ref.GetReference`; an ObjectReference
    made by `object_reference` is used as it is)."""
    if _is_reference(obj):
        return dict(obj)
    return {
        "kind": get_kind(obj),
        "namespace": get_namespace(obj),
        "name": get_name(obj),
        "uid": get_uid(obj),
        "apiVersion": get_api_version(obj),
        "resourceVersion": get_resource_version(obj),
    }


_SEEN, _SIMILAR, _SPAM = 0, 1, 2
"""Positions of the correlator's caches in `EventBroadcaster._caches`."""

_UID = 5
"""Where the object's uid sits in every correlator key (after component, host, kind, namespace,
name)."""


def _source_key(p: _Pending) -> tuple[str, ...]:
    """The correlator's source + object key (events about one object are written in order)."""
    involved = p.involved
    return (
        p.component,
        p.host,
        *(involved[k] for k in ("kind", "namespace", "name", "uid", "apiVersion")),
    )


def _seconds(micro: str | None) -> str | None:
    """Event timestamps are metav1.Time: second precision."""
    return None if micro is None else micro[:19] + "Z"


class EventRecorder:
    """Agones-style usage: `recorder.event(gs, "Normal", "Ready", "SDK.Ready() complete")`."""

    def __init__(self, broadcaster: EventBroadcaster, component: str, host: str) -> None:
        self._broadcaster = broadcaster
        self.component = component
        self.host = host

    def event(self, obj: Any, event_type: str, reason: str, message: str) -> None:
        if event_type not in (EventType.NORMAL, EventType.WARNING):
            self._broadcaster.log.error("unsupported event type", type=event_type, reason=reason)
            return
        if not (obj.get("name") if _is_reference(obj) else get_name(obj)):
            self._broadcaster.log.error("event for an object without a name", reason=reason)
            return
        self._broadcaster._enqueue(
            _Pending(
                involved_object(obj),
                str(event_type),
                reason,
                message,
                self.component,
                self.host,
                self._broadcaster.clock.now(),
            )
        )

    def eventf(self, obj: Any, event_type: str, reason: str, fmt: str, *args: Any) -> None:
        self.event(obj, event_type, reason, fmt % args if args else fmt)
