"""A newer view of objects this process just wrote (client-go `tools/cache/mutation_cache.go`).

An informer's cache lags the API server: right after a controller updates an object, the lister
still returns the version the update replaced, and acting on it means a 409 Conflict or, worse, doing
the same step twice. `mutation(obj)` remembers the object a write returned; `get_by_key(key)` and
`by_index(name, value)` then return, per key, the **newer** of the cached object and the remembered
one, comparing resourceVersions as integers (what etcd, and the local API server, hand out).

Guarantees, as client-go's:

* a read never returns something older than the backing cache holds: once the cache has caught up
  (its resourceVersion is equal or newer), the remembered object is dropped;
* a remembered object is kept for at most `ttl` seconds (on the injected clock) and at most
  `max_entries` of them (least recently used first out): it is a "nice to have", never the truth;
* a key absent from the backing cache reads as absent unless `include_adds` is set, because "not
  seen created yet" and "deleted after the create" cannot be told apart; with `include_adds`,
  callers must tolerate an entry outliving its object by up to `ttl`;
* `mutation` of an object older than the one remembered is ignored; concurrent mutations of one key
  leave one of them (either is valid at some point in time).

Objects are returned as stored, shared with the cache and with every other reader: never mutate them.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import structlog

from ..clock import Clock, RealClock
from .meta import get_resource_version
from .store import KeyError_, deletion_handling_meta_namespace_key
from .thread_safe_store import Indexer

DEFAULT_TTL = 60.0
"""Seconds a remembered write outlives its write when the cache never catches up (a missed event)."""

DEFAULT_MAX_ENTRIES = 100
"""client-go's LRU size; controllers writing many objects in a burst pass a larger one."""

_log = structlog.get_logger(__name__)


def compare_resource_version(lhs: Any, rhs: Any) -> int:
    """-1, 0 or 1 as `lhs`'s resourceVersion is older, equal or newer than `rhs`'s; "" counts as 0.

    Raises ValueError for a resourceVersion that is not an unsigned integer (a coder error, as in Go).
    """
    left, right = _version(lhs), _version(rhs)
    return (left > right) - (left < right)


def _version(obj: Any) -> int:
    version = get_resource_version(obj)
    if not version:
        return 0
    if not version.isdigit():
        raise ValueError(f"resourceVersion {version!r} is not an unsigned integer")
    return int(version)


class MutationCache:
    """The newer of an indexer's objects and the results of this process's own writes."""

    def __init__(
        self,
        backing: Indexer,
        *,
        ttl: float = DEFAULT_TTL,
        include_adds: bool = False,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        clock: Clock | None = None,
    ) -> None:
        self.backing = backing
        self.ttl = ttl
        self.include_adds = include_adds
        self.max_entries = max_entries
        self.clock = clock or RealClock()
        # key -> (expiry on the monotonic clock, object); oldest use first
        self._mutations: OrderedDict[str, tuple[float, Any]] = OrderedDict()

    # -- the LRU with expiry (apimachinery util/cache.LRUExpireCache) ---------------------------

    def _remembered(self, key: str) -> Any | None:
        entry = self._mutations.get(key)
        if entry is None:
            return None
        expiry, obj = entry
        if self.clock.monotonic() >= expiry:
            del self._mutations[key]
            return None
        self._mutations.move_to_end(key)
        return obj

    def _remember(self, key: str, obj: Any) -> None:
        self._mutations[key] = (self.clock.monotonic() + self.ttl, obj)
        self._mutations.move_to_end(key)
        while len(self._mutations) > self.max_entries:
            self._mutations.popitem(last=False)

    # -- reads ---------------------------------------------------------------------------------

    def _newer_object(self, key: str, backing: Any) -> Any:
        mutated = self._remembered(key)
        if mutated is None:
            return backing
        if compare_resource_version(backing, mutated) >= 0:
            del self._mutations[key]  # the cache caught up
            return backing
        return mutated

    def get_by_key(self, key: str) -> Any | None:
        """The newer of the cached object and our last write of it; None when absent."""
        obj = self.backing.get_by_key(key)
        if obj is None:
            return self._remembered(key) if self.include_adds else None
        return self._newer_object(key, obj)

    def by_index(self, index_name: str, value: str) -> list[Any]:
        """The objects of an index, each the newer of cached and written.

        With `include_adds`, remembered objects the cache has not seen yet are added when the
        index function puts them under `value`.
        """
        keys = self.backing.index_keys(index_name, value)
        items = []
        for key in keys:
            obj = self.backing.get_by_key(key)
            if obj is not None:
                items.append(self._newer_object(key, obj))
        if self.include_adds:
            index_func = self.backing.get_indexers()[index_name]
            seen = set(keys)
            for key in list(self._mutations):
                obj = self._remembered(key)
                if obj is None or key in seen:
                    continue
                try:
                    values = index_func(obj)
                except Exception as err:  # a nice-to-have: skip what cannot be indexed
                    _log.debug("cannot index a mutation cache entry", key=key, error=str(err))
                    continue
                if value in values:
                    items.append(obj)
        return items

    # -- writes --------------------------------------------------------------------------------

    def mutation(self, obj: Any) -> None:
        """Remember `obj` (what a write returned) unless a newer one is remembered already."""
        try:
            key = deletion_handling_meta_namespace_key(obj)
        except KeyError_ as err:
            _log.debug("cannot key a mutation", error=str(err))
            return
        current = self._remembered(key)
        if current is not None and compare_resource_version(obj, current) < 0:
            return
        self._remember(key, obj)

    def forget(self, key: str) -> None:
        """Drop what is remembered of `key` (e.g. once the object is deleted)."""
        self._mutations.pop(key, None)

    def __len__(self) -> int:
        return len(self._mutations)
