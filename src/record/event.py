"""Event recording (client-go `tools/record/event.go` + `events_cache.go`).

`recorder.event(obj, type, reason, message)` never blocks and never fails the caller: the event
(with a reference to the object taken at once — the object itself is not kept) goes to a bounded
buffer (1,000, dropped with a log line when full) that `EventBroadcaster.run()` writes to the API
as core/v1 Events, with up to `writers` (64) writes in flight: events about one object (per source)
are written one after the other, in the order recorded, so the correlation below sees them in
order; events about different objects do not wait for each other. Before each write the
correlator of `events_cache.py` (client-go's, in client-go's order) folds exact repeats into the
existing Event (`count` + 1, a strategic-merge patch; a create under the same name and count if
it has expired away), combines floods of similar messages, and skips what the per-object spam
filter refuses. A write that cannot reach the server is tried up to 12 times, 10 s apart (the
first wait random in [0, 10 s)); one the server rejects is dropped with a log line, as client-go's
`recordToSink`. Event names are `<object name>.<hex nanoseconds>` of the time recorded (never the
same twice), in the object's namespace ("default" for cluster-scoped objects). `forget(obj)` —
called by a controller when the object is deleted — drops what the correlator holds about it.
"""

from __future__ import annotations

import asyncio
import enum
import random
import socket
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

import aiohttp
import structlog

from ..apis.meta.objectmeta import format_micro_time
from ..client.errors import NotFoundError
from ..client.rest import PatchType, Resource
from ..client.versioned.resources import EVENTS
from ..clock import Clock, RealClock
from ..informers.meta import (
    get_api_version,
    get_kind,
    get_name,
    get_namespace,
    get_resource_version,
    get_uid,
)
from .events_cache import Event, EventCorrelator, Key, UniqueNanos, event_name, spam_key

MAX_QUEUED_EVENTS = 1000
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


class EventBroadcaster:
    """Owns the buffer, the correlator and the writer tasks; hands out recorders per component."""

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
        self._queue: asyncio.Queue[Event] = asyncio.Queue(MAX_QUEUED_EVENTS)
        # source key -> events about that object taken off the queue while one of it is written
        self._writing: dict[Key, deque[Event]] = {}
        self.nanos = UniqueNanos()  # names events: shared with the correlator's combined ones
        self.correlator = EventCorrelator(self.clock, nanos=self.nanos)
        self.log = structlog.get_logger().bind(component="events")
        self.dropped = 0
        self.filtered = 0
        self.written = 0

    def new_recorder(self, component: str, host: str | None = None) -> EventRecorder:
        return EventRecorder(self, component, host if host is not None else socket.gethostname())

    def _enqueue(self, event: Event) -> None:
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            self.dropped += 1
            self.log.warning("event buffer full, dropping event", reason=event.reason)

    async def run(self) -> None:
        """Write buffered events until cancelled, `writers` at a time."""
        await asyncio.gather(*(self._writer() for _ in range(self.writers)))

    async def _writer(self) -> None:
        while True:
            event = await self._queue.get()
            key = spam_key(event)
            waiting = self._writing.get(key)
            if waiting is not None:
                waiting.append(event)  # the writer of this object writes it next, in order
                continue
            waiting = self._writing[key] = deque([event])
            try:
                while waiting:
                    await self._record_one(waiting[0])
                    waiting.popleft()
                    self._queue.task_done()
            finally:
                del self._writing[key]

    async def _record_one(self, event: Event) -> None:
        try:
            await self._record(event)
        except asyncio.CancelledError:
            raise
        except Exception as err:
            self.log.warning("unable to write event", reason=event.reason, error=str(err))

    async def flush(self) -> None:
        """Wait until every buffered event has been written (or failed)."""
        await self._queue.join()

    def forget(self, obj: Any) -> None:
        """Drop what the correlator keeps about `obj` (its uid is in every key, so nothing of a
        deleted object can match again): without this, every GameServer ever seen stayed in the
        caches until 4,096 others pushed it out, and the controller grew round after round."""
        self.correlator.forget(get_uid(obj))

    def cached(self) -> int:
        """Entries in the correlator's caches (for tests and benchmarks)."""
        return self.correlator.cached()

    async def _record(self, event: Event) -> None:
        result = self.correlator.correlate(event)
        if result.skip:
            self.filtered += 1
            return
        for tries in range(1, MAX_TRIES_PER_EVENT + 1):
            try:
                await self._write(result.event, result.patch)
                return
            except (aiohttp.ClientError, OSError, TimeoutError) as err:
                # The server could not be reached (a rejection is an ApiError: not retried).
                if tries == MAX_TRIES_PER_EVENT:
                    raise
                self.log.info(
                    "unable to write event, retrying", reason=event.reason, error=str(err)
                )
                # The first wait is random so that clients do not retry in step.
                await self.clock.sleep(RETRY_SLEEP * (self._rand() if tries == 1 else 1.0))

    async def _write(self, event: Event, patch: bool) -> None:
        """client-go `recordEvent`: patch an existing Event (a create when it has gone), or create."""
        last = _seconds(format_micro_time(event.last_timestamp))
        if patch:
            try:
                await self.client.patch(
                    EVENTS,
                    event.name,
                    {"count": event.count, "lastTimestamp": last, "message": event.message},
                    namespace=event.namespace,
                    patch_type="strategic",
                )
                self._written(event)
                return
            except NotFoundError:
                pass
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": event.name, "namespace": event.namespace},
            "involvedObject": {k: v for k, v in event.involved.items() if v},
            "reason": event.reason,
            "message": event.message,
            "source": {"component": event.component, "host": event.host},
            "firstTimestamp": _seconds(format_micro_time(event.first_timestamp)),
            "lastTimestamp": last,
            "count": event.count,
            "type": event.type,
            "reportingComponent": event.component,
            "reportingInstance": event.host,
        }
        await self.client.create(EVENTS, body, event.namespace)
        self._written(event)

    def _written(self, event: Event) -> None:
        self.correlator.update_state(event)
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
        involved = involved_object(obj)
        now = self._broadcaster.clock.now()
        self._broadcaster._enqueue(
            Event(
                involved,
                str(event_type),
                reason,
                message,
                self.component,
                self.host,
                event_name(involved.get("name", ""), self._broadcaster.nanos(now)),
                involved.get("namespace") or "default",
                now,
                now,
            )
        )

    def eventf(self, obj: Any, event_type: str, reason: str, fmt: str, *args: Any) -> None:
        self.event(obj, event_type, reason, fmt % args if args else fmt)
