"""List and watch for informers living in the local API server's own process, without HTTP.

`InProcessListWatches(registry, bookmark_interval)` is a `ListWatchSource` for the framework's
`SharedInformerFactory`: each informer's `InProcessListWatch` reads the registry's lists and
registers a `Watcher` on the store's fan-out directly, so an event is neither framed, written to a
socket, read back nor decoded as an envelope. Only list and watch are in-process: clients still
write through their REST client (the whole HTTP path, validated, admitted and counted).

It answers what the HTTP list and watch verbs answer for the same request:
* a list at resourceVersion "" (a consistent read), "0" (any state) or N (with a limit, exactly the
  state at N: a 410 Expired once compacted), a page of `limit` items with a continue token that
  resumes the snapshot (410 once expired), a 504 ResourceVersionTooLarge for a version not yet
  stored; items as the HTTP list's (a built-in kind's without apiVersion and kind);
* a watch from resourceVersion N replays every event after N (a 410 Expired `ERROR` event once
  compacted, so the Reflector relists), from "" or "0" the current state as ADDED; a BOOKMARK
  carrying the store's resourceVersion every `bookmark_interval` seconds while nothing is queued;
  the stream ends at `timeout_seconds` or when the store closes the watcher (overrun, fault
  injection), and the Reflector re-watches from the last version it saw;
* label and field selectors and namespaces as the HTTP verbs parse them (400 for a bad one), with
  an object that stops matching a selector reported DELETED; DELETED events carry the final object;
* an unknown resource (a CRD not yet established) is a 404, as over HTTP.
Failures are raised as the REST client raises them (`agones.client.errors`), so the Reflector
handles both paths alike. Every object handed out is decoded by the informer's decoder from the
stored JSON: a private copy, never the store's own dict.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from ...client.errors import ApiError, error_from_status
from ...client.rest import Resource
from ...informers.listwatch import Decoder, ListResult, RawDecoder, WatchEvent
from . import errors
from .registry import Registry
from .requests import (
    entry_bytes,
    exact_list_version,
    list_item_bytes,
    only_name,
    selectors,
    watch_predicate,
)
from .resources import ResourceInfo
from .selectors import FieldSelector, LabelSelector
from .store import Entry
from .watch import Watcher

_NOT_FOUND = "the server could not find the requested resource"


def client_error(err: errors.StatusError) -> ApiError:
    """The error the REST client raises for the response carrying `err`'s Status."""
    return error_from_status(err.code, err.status())


class InProcessListWatches:
    """The `ListWatchSource` of the local API server's in-process informers."""

    def __init__(self, registry: Registry, bookmark_interval: float) -> None:
        self.registry = registry
        self.bookmark_interval = bookmark_interval

    def list_watch(
        self,
        resource: Resource,
        namespace: str | None,
        *,
        label_selector: str | None,
        field_selector: str | None,
        decoder: Decoder | None,
    ) -> InProcessListWatch:
        return InProcessListWatch(
            self,
            resource,
            namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            decoder=decoder,
        )


class InProcessListWatch:
    """One informer's list and watch, straight from the registry and store."""

    def __init__(
        self,
        source: InProcessListWatches,
        resource: Resource,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        decoder: Decoder | None = None,
    ) -> None:
        self.registry = source.registry
        self.bookmark_interval = source.bookmark_interval
        self.resource = resource
        self.namespace = namespace or ""
        self.query = {"labelSelector": label_selector or "", "fieldSelector": field_selector or ""}
        self.decoder: Decoder = decoder or RawDecoder()

    def _target(self) -> tuple[ResourceInfo, str, LabelSelector, FieldSelector]:
        """The resource's current registration (CRDs come and go), namespace and selectors."""
        r = self.resource
        info = self.registry.lookup(r.group, r.version, r.plural)
        if info is None:
            raise errors.StatusError(404, "NotFound", _NOT_FOUND, {})
        labels, fields = selectors(info, self.query)
        return info, self.namespace if info.namespaced else "", labels, fields

    async def list(
        self, resource_version: str, limit: int | None, continue_: str | None
    ) -> ListResult:
        try:
            info, ns, labels, fields = self._target()
            page = max(limit or 0, 0)
            exact = (
                None
                if continue_
                else exact_list_version(resource_version, "", page, self.registry.store.rv)
            )
            result = self.registry.list_entries(
                info, ns, labels, fields, page, continue_ or "", exact
            )
        except errors.StatusError as err:
            raise client_error(err) from None
        decode = self.decoder.decode_object
        items = [decode(list_item_bytes(entry, info)) for entry in result.entries]
        return ListResult(items, str(result.rv), result.continue_token)

    async def watch(self, resource_version: str, timeout_seconds: int) -> AsyncIterator[WatchEvent]:
        try:
            info, ns, labels, fields = self._target()
            since = None if resource_version in ("", "0") else int(resource_version)
        except errors.StatusError as err:
            raise client_error(err) from None
        except ValueError:
            raise client_error(
                errors.bad_request(f'invalid resource version "{resource_version}"')
            ) from None
        store = self.registry.store
        try:
            watcher = store.watch(
                info.key, ns, watch_predicate(info, labels, fields), since, only_name(fields)
            )
        except errors.StatusError as err:
            yield WatchEvent("ERROR", err.status())
            return
        try:
            async for event in self._stream(info, watcher, float(timeout_seconds or 1800)):
                yield event
        finally:
            store.stop_watch(info.key, watcher)

    async def _stream(
        self, info: ResourceInfo, watcher: Watcher, timeout: float
    ) -> AsyncIterator[WatchEvent]:
        """The watcher's events, decoded, and bookmarks, until the timeout or the watcher closes."""
        store = self.registry.store
        decode = self.decoder.decode_object
        now = time.monotonic()
        deadline, next_bookmark = now + timeout, now + self.bookmark_interval
        while now < deadline:
            batch = await watcher.next_batch(max(min(deadline, next_bookmark) - now, 0.0))
            if watcher.closed:
                return
            for typ, obj, raw in batch:
                body = raw if obj is None else entry_bytes(Entry(obj, raw, 0), info)
                yield WatchEvent(typ, decode(body))
            now = time.monotonic()
            if now >= next_bookmark and not len(watcher):
                # Every event up to the store's version is already queued (writes never await),
                # and none is waiting: the mark passes nothing this stream has not delivered.
                mark = {
                    "kind": info.kind,
                    "apiVersion": info.api_version,
                    "metadata": {"resourceVersion": str(store.rv)},
                }
                yield WatchEvent("BOOKMARK", mark)
                now = time.monotonic()
                next_bookmark = now + self.bookmark_interval
