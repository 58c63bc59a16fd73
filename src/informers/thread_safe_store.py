"""The indexed object cache (client-go `tools/cache/thread_safe_store.go` + `store.go`'s `cache`).

Objects are stored by key; each named index maps index values to the set of keys whose objects
produce that value, and is kept exact on every add/update/delete/replace. Stored objects are shared:
callers must never mutate what `get`/`list`/`by_index` return (copy first). asyncio-only.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable
from typing import Any

from .index import IndexError_, Indexers
from .store import meta_namespace_key


class Indexer:
    def __init__(
        self,
        key_func: Callable[[Any], str] = meta_namespace_key,
        indexers: Indexers | None = None,
    ) -> None:
        self.key_func = key_func
        self._items: dict[str, Any] = {}
        self._indexers: Indexers = dict(indexers or {})
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}

    # -- Store ---------------------------------------------------------------------------------

    def add(self, obj: Any) -> None:
        self.update(obj)

    def update(self, obj: Any) -> None:
        key = self.key_func(obj)
        old = self._items.get(key)
        self._items[key] = obj
        self._update_indices(old, obj, key)

    def delete(self, obj: Any) -> None:
        self.delete_by_key(self.key_func(obj))

    def delete_by_key(self, key: str) -> None:
        old = self._items.pop(key, None)
        if old is not None:
            self._update_indices(old, None, key)

    def list(self) -> builtins.list[Any]:
        return list(self._items.values())

    def list_keys(self) -> builtins.list[str]:
        return list(self._items)

    def get(self, obj: Any) -> Any | None:
        return self._items.get(self.key_func(obj))

    def get_by_key(self, key: str) -> Any | None:
        return self._items.get(key)

    def __contains__(self, key: str) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def replace(self, objs: Iterable[Any], resource_version: str = "") -> None:
        self._items = {self.key_func(o): o for o in objs}
        self._indices = {name: {} for name in self._indexers}
        for key, obj in self._items.items():
            self._update_indices(None, obj, key)

    # -- Indexer -------------------------------------------------------------------------------

    def _update_indices(self, old: Any, new: Any, key: str) -> None:
        for name, func in self._indexers.items():
            old_values = func(old) if old is not None else []
            new_values = func(new) if new is not None else []
            if old_values == new_values:
                continue
            index = self._indices[name]
            for value in old_values:
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
            for value in new_values:
                index.setdefault(value, set()).add(key)

    def _index(self, name: str) -> dict[str, set[str]]:
        index = self._indices.get(name)
        if index is None:
            raise IndexError_(f"index with name {name} does not exist")
        return index

    def index(self, name: str, obj: Any) -> builtins.list[Any]:
        """Objects sharing any index value with `obj` under index `name`."""
        values = self._indexers[name](obj) if name in self._indexers else None
        if values is None:
            raise IndexError_(f"index with name {name} does not exist")
        index = self._indices[name]
        keys: set[str] = set()
        for value in values:
            keys |= index.get(value, set())
        return [self._items[k] for k in keys]

    def index_keys(self, name: str, value: str) -> builtins.list[str]:
        return list(self._index(name).get(value, ()))

    def list_index_func_values(self, name: str) -> builtins.list[str]:
        return list(self._index(name))

    def by_index(self, name: str, value: str) -> builtins.list[Any]:
        return [self._items[k] for k in self._index(name).get(value, ())]

    def get_indexers(self) -> Indexers:
        return dict(self._indexers)

    def add_indexers(self, indexers: Indexers) -> None:
        clash = set(indexers) & set(self._indexers)
        if clash:
            raise IndexError_(f"indexer conflict: {sorted(clash)}")
        self._indexers.update(indexers)
        for name in indexers:
            self._indices[name] = {}
        for key, obj in self._items.items():
            for name, func in indexers.items():
                for value in func(obj):
                    self._indices[name].setdefault(value, set()).add(key)
