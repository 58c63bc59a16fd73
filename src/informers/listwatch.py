"""ListWatch: list and watch one resource over the REST client, decoding raw JSON (`listwatch.go`).

`ListerWatcher` is what a Reflector lists and watches through; `ListWatchSource` makes one per
(resource, namespace, selectors, decoder) for the informer factory: `RESTListWatches` (the
default) over a REST client, or another source of the same list and watch semantics (the local
API server's in-process one, for clients living in its own process).

The decoder is pluggable: `RawDecoder` (default) yields plain dicts; `StructDecoder(T)` decodes
items and watch objects straight into msgspec Structs of type `T`. A watch event is decoded in one
pass, envelope and object together (the bytes are scanned once; a read model such as `Pod` skips
what it does not declare as it goes); only an event whose object is not a `T` — `ERROR` events,
which always carry a `Status` dict, and `BOOKMARK` events, a plain dict (only its resourceVersion
matters) — is decoded again, the slow way. Objects are decoded once, here, and shared by the cache
and every handler afterwards.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import msgspec

from ..client.rest import Resource

T = TypeVar("T")


@dataclass(slots=True)
class ListResult:
    items: list[Any]
    resource_version: str
    continue_: str = ""


@dataclass(slots=True)
class WatchEvent:
    type: str  # ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
    object: Any


class Decoder(Protocol):
    def decode_list(self, raw: bytes) -> ListResult: ...

    def decode_event(self, raw: bytes) -> WatchEvent: ...

    def decode_object(self, raw: bytes) -> Any: ...


class _ListMeta(msgspec.Struct):
    resourceVersion: str = ""
    continue_: str = msgspec.field(name="continue", default="")


class _List(msgspec.Struct, Generic[T]):
    items: list[T] | None = None
    metadata: _ListMeta = msgspec.field(default_factory=_ListMeta)


class _Event(msgspec.Struct):
    type: str
    object: msgspec.Raw


class _TypedEvent(msgspec.Struct, Generic[T]):
    type: str
    object: T


_NOT_ITEMS = ("ERROR", "BOOKMARK")


_status_decoder = msgspec.json.Decoder(dict[str, Any])


class StructDecoder(Generic[T]):
    """Decodes into `item_type` (a msgspec Struct, or `dict[str, Any]` for raw JSON)."""

    def __init__(self, item_type: Any) -> None:
        self._list = msgspec.json.Decoder(_List[item_type])
        self._typed_event = msgspec.json.Decoder(_TypedEvent[item_type])
        self._event = msgspec.json.Decoder(_Event)
        self._item = msgspec.json.Decoder(item_type)

    def decode_list(self, raw: bytes) -> ListResult:
        decoded = self._list.decode(raw)
        return ListResult(
            decoded.items or [], decoded.metadata.resourceVersion, decoded.metadata.continue_
        )

    def decode_event(self, raw: bytes) -> WatchEvent:
        try:
            typed = self._typed_event.decode(raw)
        except msgspec.ValidationError:
            typed = None  # e.g. an ERROR's Status does not fit the item type
        if typed is not None and typed.type not in _NOT_ITEMS:
            return WatchEvent(typed.type, typed.object)
        return self._decode_other_event(raw)

    def _decode_other_event(self, raw: bytes) -> WatchEvent:
        event = self._event.decode(raw)
        if event.type in _NOT_ITEMS:
            # A Status, or a bare object carrying only a resourceVersion: never the item type.
            return WatchEvent(event.type, _status_decoder.decode(event.object))
        return WatchEvent(event.type, self._item.decode(event.object))

    def decode_object(self, raw: bytes) -> Any:
        """One object's JSON (a list item, a watch event's object) as the item type."""
        return self._item.decode(raw)


class RawDecoder(StructDecoder[dict[str, Any]]):
    """Plain dicts, exactly as the server sent them."""

    def __init__(self) -> None:
        super().__init__(dict[str, Any])


class RawClient(Protocol):
    """What ListWatch needs of a client (RESTClient, or an in-memory fake)."""

    async def list_raw(
        self,
        res: Resource,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
    ) -> bytes: ...

    def watch(
        self,
        res: Resource,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
        allow_watch_bookmarks: bool = True,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> AsyncIterator[bytes]: ...


class ListerWatcher(Protocol):
    async def list(
        self, resource_version: str, limit: int | None, continue_: str | None
    ) -> ListResult: ...

    def watch(self, resource_version: str, timeout_seconds: int) -> AsyncIterator[WatchEvent]: ...


class ListWatch:
    def __init__(
        self,
        client: RawClient,
        resource: Resource,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        decoder: Decoder | None = None,
    ) -> None:
        self.client = client
        self.resource = resource
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.decoder: Decoder = decoder or RawDecoder()

    async def list(
        self, resource_version: str, limit: int | None, continue_: str | None
    ) -> ListResult:
        raw = await self.client.list_raw(
            self.resource,
            self.namespace,
            resource_version=None if continue_ else resource_version,
            limit=limit,
            continue_=continue_,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
        )
        return self.decoder.decode_list(raw)

    async def watch(self, resource_version: str, timeout_seconds: int) -> AsyncIterator[WatchEvent]:
        stream = self.client.watch(
            self.resource,
            self.namespace,
            resource_version=resource_version,
            timeout_seconds=timeout_seconds,
            allow_watch_bookmarks=True,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
        )
        async for line in stream:
            yield self.decoder.decode_event(line)


class ListWatchSource(Protocol):
    """Makes the ListerWatcher of one informer (what the factory calls for each new informer)."""

    def list_watch(
        self,
        resource: Resource,
        namespace: str | None,
        *,
        label_selector: str | None,
        field_selector: str | None,
        decoder: Decoder | None,
    ) -> ListerWatcher: ...


class RESTListWatches:
    """`ListWatch`es over one REST client (the factory's default source)."""

    def __init__(self, client: RawClient) -> None:
        self.client = client

    def list_watch(
        self,
        resource: Resource,
        namespace: str | None,
        *,
        label_selector: str | None,
        field_selector: str | None,
        decoder: Decoder | None,
    ) -> ListerWatcher:
        return ListWatch(
            self.client,
            resource,
            namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            decoder=decoder,
        )
