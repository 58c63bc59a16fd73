"""The in-memory object store: one resourceVersion sequence, bounded history, watch fan-out.

Objects are JSON-able dicts keyed by (resource key, namespace, name), where the resource key is
`<group>/<plural>` (version-independent, as etcd keys are). Every write takes the next value of one
global counter as its resourceVersion, like an etcd revision. Stored objects are never mutated after
`put`: readers may share them; writers build a new dict. Each object's JSON encoding is kept beside it
so reads, lists and watch events do not re-encode.

Each resource keeps the last `history_size` events for watch replay. A watch from a resourceVersion
older than the resource's compaction point fails with 410 Expired, as etcd compaction does. The
history keeps each past version as its JSON bytes (`PastEvent`), decoded only when a watch replays
it or a list reads an old revision: held decoded, ten thousand versions of a resource would be
millions of containers for the cyclic garbage collector to walk at each full collection.
Everything runs on one asyncio loop: methods here never await, so each is atomic.
"""

from __future__ import annotations

import bisect
import builtins
import copy
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import msgspec

from . import errors
from .watch import Event, Obj, Predicate, Watcher

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


@dataclass(slots=True)
class Entry:
    obj: Obj
    raw: bytes
    rv: int


def copy_of(entry: Entry) -> Obj:
    """A private copy of a stored object for a writer to change: decoded from the JSON kept beside
    it (as the apiserver decodes what etcd holds; several times cheaper than a deep copy), or
    deep-copied when it has none (a dry run's, an old version's)."""
    if entry.raw:
        out: Obj = _decode(entry.raw)
        return out
    return copy.deepcopy(entry.obj)


def _raw_of(entry: Entry) -> bytes:
    """An entry's JSON bytes (encoded now for one kept without them)."""
    return entry.raw or _encode(entry.obj)


def json_copy(value: Obj) -> Obj:
    """A private deep copy of a JSON object, through its JSON encoding (as `copy_of`); a value that
    does not encode (not JSON: nothing the store would take) is deep-copied."""
    try:
        out: Obj = _decode(_encode(value))
    except (TypeError, ValueError, OverflowError):
        return copy.deepcopy(value)
    return out


class PastEvent:
    """An event as the history keeps it: its stored bytes and its previous version's (the same
    bytes objects the entries and the earlier event hold: nothing is copied), decoded on read."""

    __slots__ = ("name", "namespace", "prev_raw", "raw", "rv", "type")

    def __init__(self, event: Event, prev_raw: bytes | None) -> None:
        self.type = event.type
        self.rv = event.rv
        self.namespace = event.namespace
        self.name = event.name
        self.raw = event.raw
        self.prev_raw = prev_raw

    @property
    def obj(self) -> Obj:
        out: Obj = _decode(self.raw)
        return out

    @property
    def prev(self) -> Obj | None:
        if self.prev_raw is None:
            return None
        out: Obj = _decode(self.prev_raw)
        return out


@dataclass
class ResourceStore:
    """The objects, history and watchers of one resource (all namespaces)."""

    history_size: int
    objects: dict[tuple[str, str], Entry] = field(default_factory=dict)
    history: deque[PastEvent] = field(default_factory=deque)
    # Events with rv <= compacted_rv may be missing from `history`.
    compacted_rv: int = 0
    watchers: set[Watcher] = field(default_factory=set)
    _sorted_keys: list[tuple[str, str]] | None = None
    # Bumped by every write of this resource: what a reader may key a memo of its objects on.
    writes: int = 0

    def sorted_keys(self) -> list[tuple[str, str]]:
        if self._sorted_keys is None:
            self._sorted_keys = sorted(self.objects)
        return self._sorted_keys

    def record(self, event: Event, prev_raw: bytes | None) -> None:
        """Offer `event` to the watchers and keep it (as a `PastEvent`: `prev_raw` is the JSON
        of `event.prev`)."""
        self.writes += 1
        self.history.append(PastEvent(event, prev_raw))
        while len(self.history) > self.history_size:
            self.compacted_rv = self.history.popleft().rv
        dead = None
        for w in self.watchers:
            w.offer(event)
            if w.closed:
                dead = [w] if dead is None else [*dead, w]
        if dead is not None:
            self.watchers.difference_update(dead)


class Store:
    """All resources' objects under one resourceVersion counter."""

    def __init__(self, history_size: int = 10000, watcher_capacity: int = 10000) -> None:
        self.rv = 1
        self.history_size = history_size
        self.watcher_capacity = watcher_capacity
        self._resources: dict[str, ResourceStore] = {}

    def resource(self, key: str) -> ResourceStore:
        rs = self._resources.get(key)
        if rs is None:
            # A resource never written has no events to miss: nothing is compacted yet.
            rs = self._resources[key] = ResourceStore(self.history_size)
        return rs

    def get(self, key: str, namespace: str, name: str) -> Entry | None:
        return self.resource(key).objects.get((namespace, name))

    def list(
        self, key: str, namespace: str = "", start_after: tuple[str, str] | None = None
    ) -> Iterator[Entry]:
        """Entries in (namespace, name) order, optionally only one namespace, after a key."""
        rs = self.resource(key)
        keys = rs.sorted_keys()
        if namespace:
            lo = (namespace, "")
            if start_after is not None and start_after > lo:
                lo = start_after
                i = bisect.bisect_right(keys, lo)
            else:
                i = bisect.bisect_left(keys, lo)
        elif start_after is not None:
            i = bisect.bisect_right(keys, start_after)
        else:
            i = 0
        objects = rs.objects
        for k in keys[i:]:
            if namespace and k[0] != namespace:
                break
            yield objects[k]

    def list_at(
        self, key: str, namespace: str, rv: int, start_after: tuple[str, str] | None = None
    ) -> builtins.list[Entry]:
        """Entries as they were at resourceVersion `rv`, in key order, after `start_after`.

        Rebuilt from the current state by undoing the resource's later events; raises 410 Expired
        once the history no longer reaches back to `rv`.
        """
        rs = self.resource(key)
        if rv < rs.compacted_rv:
            raise errors.gone(f"too old resource version: {rv} ({rs.compacted_rv + 1})")
        if not rs.history or rs.history[-1].rv <= rv:
            return list(self.list(key, namespace, start_after))
        state = {k: e for k, e in rs.objects.items() if not namespace or k[0] == namespace}
        # Each object changed since `rv` was, at `rv`, what its first change after it replaced.
        first: dict[tuple[str, str], PastEvent] = {}
        for event in reversed(rs.history):
            if event.rv <= rv:
                break
            if not namespace or event.namespace == namespace:
                first[(event.namespace, event.name)] = event
        for k, event in first.items():
            if event.type == "ADDED" or event.prev_raw is None:
                state.pop(k, None)
            else:
                prev: Obj = _decode(event.prev_raw)
                state[k] = Entry(prev, event.prev_raw, int(prev["metadata"]["resourceVersion"]))
        return [state[k] for k in sorted(state) if start_after is None or k > start_after]

    def count(self, key: str) -> int:
        return len(self.resource(key).objects)

    def put(self, key: str, obj: Obj, prev: Entry | None) -> Entry:
        """Store `obj` (created when `prev` is None), stamping the next resourceVersion into it."""
        self.rv += 1
        rv = self.rv
        obj["metadata"]["resourceVersion"] = str(rv)
        entry = Entry(obj, _encode(obj), rv)
        meta = obj["metadata"]
        ns = meta.get("namespace", "")
        rs = self.resource(key)
        k = (ns, meta["name"])
        if prev is None:
            rs._sorted_keys = None
        rs.objects[k] = entry
        if prev is None:
            rs.record(Event("ADDED", rv, ns, obj, entry.raw), None)
        else:
            rs.record(Event("MODIFIED", rv, ns, obj, entry.raw, prev.obj), _raw_of(prev))
        return entry

    def delete(self, key: str, entry: Entry) -> Entry:
        """Remove an object; its DELETED event carries the deletion's resourceVersion."""
        self.rv += 1
        rv = self.rv
        obj = dict(entry.obj)
        obj["metadata"] = {**obj["metadata"], "resourceVersion": str(rv)}
        gone = Entry(obj, _encode(obj), rv)
        ns = obj["metadata"].get("namespace", "")
        rs = self.resource(key)
        del rs.objects[(ns, obj["metadata"]["name"])]
        rs._sorted_keys = None
        rs.record(Event("DELETED", rv, ns, obj, gone.raw, entry.obj), _raw_of(entry))
        return gone

    def watch(
        self,
        key: str,
        namespace: str,
        predicate: Predicate | None,
        since: int | None,
        name: str | None = None,
    ) -> Watcher:
        """Register a watcher; `since` None sends the current state as ADDED events first.
        `name`: the one object name `predicate` admits, if it admits only one (`Watcher.name`).

        Otherwise every event after resourceVersion `since` is replayed (410 if compacted).
        """
        rs = self.resource(key)
        w = Watcher(namespace, predicate, self.watcher_capacity)
        w.name = name
        if since is None:
            for entry in self.list(key, namespace):
                if predicate is None or predicate(entry.obj):
                    w.push(("ADDED", entry.obj, entry.raw))
        else:
            if since < rs.compacted_rv:
                raise errors.gone(f"too old resource version: {since} ({rs.compacted_rv + 1})")
            if rs.history and since < rs.history[-1].rv:
                start = bisect.bisect_right([e.rv for e in rs.history], since)
                for i in range(start, len(rs.history)):
                    w.offer(rs.history[i])
        if not w.closed:
            rs.watchers.add(w)
        return w

    def stop_watch(self, key: str, watcher: Watcher) -> None:
        watcher.close("stopped")
        self.resource(key).watchers.discard(watcher)

    def close_all_watches(self) -> int:
        n = 0
        for rs in self._resources.values():
            for w in rs.watchers:
                w.close("closed by fault injection")
                n += 1
            rs.watchers.clear()
        return n

    def compact(self) -> int:
        """Drop all history: a watch from any resourceVersion before now gets 410."""
        for rs in self._resources.values():
            rs.history.clear()
            rs.compacted_rv = self.rv
        return self.rv

    def watcher_count(self) -> int:
        return sum(len(rs.watchers) for rs in self._resources.values())

    def stats(self) -> dict[str, Any]:
        return {
            "resourceVersion": self.rv,
            "objects": {k: len(rs.objects) for k, rs in self._resources.items() if rs.objects},
            "watchers": self.watcher_count(),
        }
