"""The shared informer factory (client-go `informers/factory.go`, `dynamicinformer`).

One informer per (resource, namespace, selectors): `for_resource()` returns the existing one or
creates it with the factory's default resync (Agones: 30 s), listing and watching through the
factory's `ListWatchSource` (by default `RESTListWatches` over `client`). `start()` runs every informer not yet
running (call it again after adding informers); `wait_for_cache_sync(timeout)` waits for every
started informer's first list and reports which synced; `running()` gives the informers' tasks (one
that ends has failed); `shutdown()` stops them all and waits.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

from ..client.rest import Resource
from ..clock import Clock
from .index import Indexers
from .lister import GenericLister
from .listwatch import Decoder, ListWatchSource, RawClient, RESTListWatches
from .shared_informer import SharedIndexInformer


@dataclass(frozen=True)
class InformerKey:
    resource: Resource
    namespace: str | None
    label_selector: str | None
    field_selector: str | None


class GenericInformer:
    """An informer plus its lister (what `factory.ForResource()` returns in Go)."""

    def __init__(self, informer: SharedIndexInformer, resource: Resource) -> None:
        self._informer = informer
        self._lister = GenericLister(informer.indexer, resource.plural, resource.group)

    def informer(self) -> SharedIndexInformer:
        return self._informer

    def lister(self) -> GenericLister:
        return self._lister


class SharedInformerFactory:
    def __init__(
        self,
        client: RawClient,
        default_resync: float = 30.0,
        *,
        namespace: str | None = None,
        clock: Clock | None = None,
        list_watches: ListWatchSource | None = None,
    ) -> None:
        self.client = client
        self.list_watches: ListWatchSource = list_watches or RESTListWatches(client)
        self.default_resync = default_resync
        self.namespace = namespace
        self.clock = clock
        self._informers: dict[InformerKey, GenericInformer] = {}
        self._tasks: dict[InformerKey, asyncio.Task[None]] = {}

    def for_resource(
        self,
        resource: Resource,
        *,
        decoder: Decoder | None = None,
        indexers: Indexers | None = None,
        resync_period: float | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> GenericInformer:
        key = InformerKey(resource, self.namespace, label_selector, field_selector)
        existing = self._informers.get(key)
        if existing is not None:
            if indexers:
                existing.informer().add_indexers(indexers)
            return existing
        lw = self.list_watches.list_watch(
            resource,
            self.namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            decoder=decoder,
        )
        informer = SharedIndexInformer(
            lw,
            resync_period=self.default_resync if resync_period is None else resync_period,
            indexers=indexers,
            name=resource.plural + (f".{resource.group}" if resource.group else ""),
            clock=self.clock,
        )
        generic = GenericInformer(informer, resource)
        self._informers[key] = generic
        return generic

    def informers(self) -> list[SharedIndexInformer]:
        return [g.informer() for g in self._informers.values()]

    def start(self) -> None:
        for key, generic in self._informers.items():
            if key not in self._tasks:
                informer = generic.informer()
                self._tasks[key] = asyncio.create_task(
                    informer.run(), name=f"informer {informer.name}"
                )

    def running(self) -> list[asyncio.Task[None]]:
        return list(self._tasks.values())

    async def wait_for_cache_sync(self, timeout: float | None = None) -> dict[str, bool]:
        started = [self._informers[k].informer() for k in self._tasks]

        async def wait_all() -> None:
            await asyncio.gather(*(i.wait_for_sync() for i in started))

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wait_all(), timeout)
        return {i.name: i.has_synced() for i in started}

    async def shutdown(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks.clear()
