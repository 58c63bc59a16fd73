"""The event correlator (client-go `tools/record/events_cache.go`, v1.28), a pure core on a clock.

`EventCorrelator.correlate(event)` runs client-go's three stages in client-go's order, each over an
LRU cache of 4,096 entries (a hit moves an entry to the front, as groupcache's `lru` does):

1. **aggregate** (`EventAggregate`), keyed by source + involved object (without `fieldPath`) +
   type + reason (client-go's key adds `reportingController` / `reportingInstance`, which the
   recorder sets to the source's component and host, so they add nothing here): the distinct
   messages seen within 10 minutes of the previous similar event are remembered; once there are
   10, one is forgotten (client-go pops any; here the oldest, so tests can tell) and the event
   becomes an aggregate one: a new name from the correlation time, both timestamps that time,
   count 1, message `"(combined from similar events): " + message`, correlated by the aggregate
   key instead of its own;
2. **observe** (`eventObserve`), keyed by source + object (with `fieldPath`) + type + reason +
   message (or the aggregate key): a key seen before gives the event the earlier one's name,
   first timestamp and count + 1, to be written as a patch; the cache is updated at once, whatever
   happens next;
3. **filter** (`EventSourceObjectSpamFilter`), keyed by source + involved object only (no type,
   no reason): a token bucket of 25 refilled one per 300 s; an event without a token is skipped,
   after stages 1 and 2 have counted it (so the next write carries the skipped ones in `count`).

`update_state(event)` records what the server stored under the event's own key, as client-go's
`UpdateState` does after each successful write (for an aggregate event that is the key of its
prefixed message). Every key holds the object's uid at `UID`, and `forget(uid)` drops every entry
of a deleted object, which client-go only loses by eviction.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any

from ..clock import Clock
from ..flowcontrol import Limiter

LRU_CACHE_SIZE = 4096
MAX_SIMILAR_EVENTS = 10
AGGREGATE_INTERVAL = 600.0
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
AGGREGATE_PREFIX = "(combined from similar events): "

UID = 5
"""Where the involved object's uid sits in every correlator key (after component, host, kind,
namespace, name)."""

Key = tuple[str, ...]


@dataclass(slots=True)
class Event:
    """The part of a core/v1 Event the correlator reads and rewrites (times in epoch seconds)."""

    involved: dict[str, str]
    type: str
    reason: str
    message: str
    component: str
    host: str
    name: str
    namespace: str
    first_timestamp: float
    last_timestamp: float
    count: int = 1


@dataclass(slots=True)
class CorrelateResult:
    """What to write: `event`, as a patch of an existing Event when `event.count > 1`; nothing
    at all when `skip` (the spam filter took it)."""

    event: Event
    skip: bool = False

    @property
    def patch(self) -> bool:
        return self.event.count > 1


@dataclass(slots=True)
class _AggregateRecord:
    last_timestamp: float
    local_keys: tuple[str, ...]


@dataclass(slots=True)
class _EventLog:
    count: int
    first_timestamp: float
    name: str


def spam_key(e: Event) -> Key:
    """client-go `getSpamKey`: source + involved object (no fieldPath, type or reason)."""
    i = e.involved
    return (
        e.component,
        e.host,
        i.get("kind", ""),
        i.get("namespace", ""),
        i.get("name", ""),
        i.get("uid", ""),
        i.get("apiVersion", ""),
    )


def aggregate_key(e: Event, source: Key | None = None) -> Key:
    """client-go `EventAggregatorByReasonFunc`'s aggregate key (the local key is the message);
    `source` is `spam_key(e)` when the caller has it."""
    return (*(source or spam_key(e)), e.type, e.reason)


def event_key(e: Event, source: Key | None = None) -> Key:
    """client-go `getEventKey`: source + involved object with fieldPath + type, reason, message."""
    fields = (e.involved.get("fieldPath", ""), e.type, e.reason, e.message)
    return (*(source or spam_key(e)), *fields)


def event_name(object_name: str, nanos: int) -> str:
    """`<object name>.<hex nanoseconds>`, as client-go names Events."""
    return f"{object_name}.{nanos:x}"


class UniqueNanos:
    """Nanoseconds of a time in epoch seconds, never the same twice: client-go's names come from
    `time.Now()` in nanoseconds, but a float of seconds since 1970 only resolves ~240 ns, so two
    events about one object recorded back to back ("Address and port populated", then "SDK.Ready()
    complete") got the same name, and the second create failed as AlreadyExists — lost. A
    repeat moves on by 1 ns."""

    def __init__(self) -> None:
        self._last = 0

    def __call__(self, at: float) -> int:
        nanos = int(at * 1e9)
        if nanos <= self._last:
            nanos = self._last + 1
        self._last = nanos
        return nanos


class EventCorrelator:
    """Aggregation, de-duplication and spam filtering of events before they are written."""

    def __init__(
        self, clock: Clock, cache_size: int = LRU_CACHE_SIZE, nanos: UniqueNanos | None = None
    ) -> None:
        self.clock = clock
        self.cache_size = cache_size
        self.nanos = nanos or UniqueNanos()
        self._aggregates: OrderedDict[Key, _AggregateRecord] = OrderedDict()
        self._logs: OrderedDict[Key, _EventLog] = OrderedDict()
        self._spam: OrderedDict[Key, Limiter] = OrderedDict()
        self._caches: tuple[OrderedDict[Key, Any], ...] = (self._aggregates, self._logs, self._spam)
        # uid -> (which of `_caches`, key) of each entry the object has (a list: a handful each)
        self._keys_of: dict[str, list[tuple[int, Key]]] = {}

    def correlate(self, event: Event) -> CorrelateResult:
        now = self.clock.now()
        source = spam_key(event)  # the same for the three stages: made once
        event, key = self._aggregate(event, source, now)
        event = self._observe(event, key)
        return CorrelateResult(event, skip=self._filter(source))

    def update_state(self, event: Event) -> None:
        """What the server holds now (client-go `EventCorrelator.UpdateState`)."""
        self._add(
            _LOGS, event_key(event), _EventLog(event.count, event.first_timestamp, event.name)
        )

    def forget(self, uid: str) -> None:
        """Drop every entry about the object with `uid` (it was deleted: nothing can match)."""
        for which, key in self._keys_of.pop(uid, ()):
            self._caches[which].pop(key, None)

    def cached(self) -> int:
        """Entries in the three caches (for tests and benchmarks)."""
        return sum(len(cache) for cache in self._caches)

    def _aggregate(self, event: Event, source: Key, now: float) -> tuple[Event, Key]:
        key = aggregate_key(event, source)
        record = self._get(_AGGREGATES, key)
        if record is None or now - record.last_timestamp > AGGREGATE_INTERVAL:
            record = _AggregateRecord(now, ())
        if event.message not in record.local_keys:
            record.local_keys = (*record.local_keys, event.message)
        record.last_timestamp = now
        self._add(_AGGREGATES, key, record)
        if len(record.local_keys) < MAX_SIMILAR_EVENTS:
            return event, event_key(event, source)
        record.local_keys = record.local_keys[1:]
        combined = replace(
            event,
            name=event_name(event.involved.get("name", ""), self.nanos(now)),
            message=AGGREGATE_PREFIX + event.message,
            first_timestamp=now,
            last_timestamp=now,
            count=1,
        )
        return combined, key

    def _observe(self, event: Event, key: Key) -> Event:
        last = self._get(_LOGS, key)
        if last is not None and last.count > 0:
            event = replace(
                event, name=last.name, first_timestamp=last.first_timestamp, count=last.count + 1
            )
        self._add(_LOGS, key, _EventLog(event.count, event.first_timestamp, event.name))
        return event

    def _filter(self, key: Key) -> bool:
        limiter = self._get(_SPAM, key)
        if limiter is None:
            limiter = Limiter(SPAM_QPS, SPAM_BURST, self.clock)
        accepted = limiter.tokens() >= 1.0
        if accepted:
            limiter.reserve()
        self._add(_SPAM, key, limiter)
        return not accepted

    def _get(self, which: int, key: Key) -> Any:
        cache = self._caches[which]
        value = cache.get(key)
        if value is not None:
            cache.move_to_end(key)
        return value

    def _add(self, which: int, key: Key, value: Any) -> None:
        cache = self._caches[which]
        if key in cache:
            cache.move_to_end(key)
        else:
            self._keys_of.setdefault(key[UID], []).append((which, key))
        cache[key] = value
        while len(cache) > self.cache_size:
            old, _ = cache.popitem(last=False)
            keys = self._keys_of.get(old[UID])
            if keys is not None:
                keys.remove((which, old))
                if not keys:
                    del self._keys_of[old[UID]]


_AGGREGATES, _LOGS, _SPAM = 0, 1, 2
"""Positions of the caches in `EventCorrelator._caches`."""
