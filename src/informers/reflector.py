"""The reflector (client-go `tools/cache/reflector.go`): keeps a store in step with the server.

Contract:
* First a paginated LIST (`page_size` items per page): from RV "0" (the watch cache) initially, from
  the last synced RV on a relist, and from "" (a consistent read) once that RV is known to be
  unavailable (a 410 on the list). A continue token that expires mid-list restarts the list.
  The whole list goes to `store.replace(items, rv)` in one call.
* Then WATCH from the list's RV with bookmarks and a random server timeout of 5-10 minutes; every
  event (bookmarks included) advances the last synced RV; a watch that ends is re-opened from there.
* A 410 (Expired/Gone) on the watch relists from the last synced RV; a 429 or a refused connection
  backs off and re-watches; a watch closing within 1 s with no events ("very short watch") and any
  other failure, a 500 included, relist after a back-off (client-go retries internal errors without
  relisting only when `MaxInternalErrorRetryDuration` is set, which informers never do).
* Back-off between list-and-watch rounds: 0.8 s doubling to 30 s, jitter 1.0, reset after 2 min
  without failures; a 429's Retry-After is honoured when longer.
`run()` loops until cancelled; the store sees a strictly ordered sequence of calls.
"""

from __future__ import annotations

import asyncio
import builtins
import random
from typing import Any, Protocol

import aiohttp
import msgspec
import structlog

from ..client.errors import (
    ApiError,
    GoneError,
    TooManyRequestsError,
    error_from_status,
)
from ..client.metrics import ClientMetrics
from ..clock import Clock, RealClock
from ..flowcontrol import ExponentialBackoffManager
from .listwatch import ListerWatcher
from .meta import get_resource_version

MIN_WATCH_TIMEOUT = 300  # seconds; the timeout is uniform in [5, 10) minutes


class ReflectorStore(Protocol):
    def add(self, obj: Any) -> None: ...

    def update(self, obj: Any) -> None: ...

    def delete(self, obj: Any) -> None: ...

    def replace(self, items: builtins.list[Any], resource_version: str) -> None: ...


class _Relist(Exception):
    """The watch ended in a way that needs a fresh list (after a back-off)."""


class Reflector:
    def __init__(
        self,
        lister_watcher: ListerWatcher,
        store: ReflectorStore,
        *,
        name: str = "reflector",
        page_size: int = 500,
        clock: Clock | None = None,
        rand: random.Random | None = None,
        backoff: ExponentialBackoffManager | None = None,
    ) -> None:
        self.lister_watcher = lister_watcher
        self.store = store
        self.name = name
        self.page_size = page_size
        self.clock = clock or RealClock()
        self.rand = rand or random.Random()
        self.backoff = backoff or ExponentialBackoffManager(
            0.8, 30.0, 120.0, 2.0, 1.0, self.clock, self.rand.random
        )
        self.last_sync_resource_version = ""
        self._last_rv_unavailable = False
        self.log = structlog.get_logger().bind(reflector=name)
        self.lists = 0
        self.watches = 0

    def relist_resource_version(self) -> str:
        if self._last_rv_unavailable:
            return ""
        return self.last_sync_resource_version or "0"

    async def run(self) -> None:
        """List and watch until cancelled, backing off between rounds."""
        while True:
            retry_after = 0.0
            try:
                await self.list_and_watch()
            except asyncio.CancelledError:
                raise
            except _Relist as err:
                self.log.info("relisting", reason=str(err))
            except TooManyRequestsError as err:
                retry_after = err.retry_after or 0.0
                self.log.warning("list throttled", error=str(err))
            except Exception as err:
                self.log.warning("list and watch failed", error=str(err))
            await self.clock.sleep(max(self.backoff.backoff(), retry_after))

    async def list_and_watch(self) -> None:
        await self.list()
        while True:
            await self.watch_once()

    async def list(self) -> None:
        rv = self.relist_resource_version()
        start = self.clock.monotonic()
        try:
            items, list_rv = await self._paginated_list(rv)
        except GoneError:
            if rv == "":
                raise
            # Our RV is too old for the server: fall back to a consistent read.
            self._last_rv_unavailable = True
            items, list_rv = await self._paginated_list("")
        self._last_rv_unavailable = False
        self.lists += 1
        ClientMetrics.list_done(self.clock.monotonic() - start, len(items))
        self.store.replace(items, list_rv)
        self._set_rv(list_rv)

    async def _paginated_list(self, rv: str) -> tuple[builtins.list[Any], str]:
        items: builtins.list[Any] = []
        continue_: str | None = None
        while True:
            page = await self.lister_watcher.list(rv, self.page_size, continue_)
            items.extend(page.items)
            if not page.continue_:
                return items, page.resource_version
            continue_ = page.continue_

    def _set_rv(self, rv: str) -> None:
        if rv:
            self.last_sync_resource_version = rv
            ClientMetrics.last_resource_version(rv)

    async def watch_once(self) -> None:
        """One watch request; returns when it ends normally, raises _Relist otherwise."""
        timeout = int(MIN_WATCH_TIMEOUT * (self.rand.random() + 1.0))
        start = self.clock.monotonic()
        events = 0
        self.watches += 1
        try:
            async for event in self.lister_watcher.watch(self.last_sync_resource_version, timeout):
                if event.type == "ERROR":
                    status = event.object if isinstance(event.object, dict) else {}
                    code = int(status.get("code") or 0)
                    raise error_from_status(code or 500, status)
                events += 1
                self._handle(event.type, event.object)
        except GoneError as err:
            raise _Relist(f"watch expired: {err.message}") from err
        except (TooManyRequestsError, aiohttp.ClientConnectorError) as err:
            # The server is throttling us, or cannot be reached: back off, re-watch.
            wait = self.backoff.backoff()
            if isinstance(err, ApiError) and err.retry_after:
                wait = max(wait, err.retry_after)
            self.log.info("watch refused, backing off", error=str(err), seconds=wait)
            await self.clock.sleep(wait)
            return
        except (ApiError, msgspec.DecodeError, msgspec.ValidationError) as err:
            raise _Relist(f"watch failed: {err}") from err
        except (TimeoutError, aiohttp.ClientError, OSError) as err:
            # The stream broke mid-way: re-watch from the last RV we saw.
            self.log.info("watch stream ended", error=str(err))
        finally:
            duration = self.clock.monotonic() - start
            ClientMetrics.watch_done(duration, events, duration < 1.0 and events == 0)
        if events == 0 and self.clock.monotonic() - start < 1.0:
            raise _Relist("very short watch: unexpected watch close")

    def _handle(self, type_: str, obj: Any) -> None:
        if type_ == "ADDED":
            self.store.add(obj)
        elif type_ == "MODIFIED":
            self.store.update(obj)
        elif type_ == "DELETED":
            self.store.delete(obj)
        elif type_ != "BOOKMARK":
            self.log.warning("unknown watch event type", type=type_)
            return
        self._set_rv(get_resource_version(obj))
