"""Generic typed clients and listers behind the generated ones (client-go `gentype`, `listers`).

`Client[T]` is the typed, async client of one resource in one namespace (or cluster-wide) over the
raw-JSON `RESTClient`: `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`,
`delete_collection`; `ClientWithStatus[T]` adds `update_status` for resources with a status
subresource. Objects are decoded straight from the response bytes into `T` (a msgspec Struct of
`agones.apis`, decoded like `Scheme.decode_json`, or `dict[str, Any]` for the core kinds) and
encoded from `T`; API failures raise the typed `ApiError`s of `errors`. `delete` and
`delete_collection` return nothing, as in Go.

`ResourceIndexer[T]` / `NamespaceIndexer[T]` are typed views of an informer's indexer (cached
objects are shared: never mutate them; copy, change, write). `get` raises `NotFoundError`.

The generated `versioned`, `listers` and `informers` packages only bind these to resources.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

import msgspec

from ..informers.labels import Selector
from ..informers.lister import GenericLister, GenericNamespaceLister
from ..informers.thread_safe_store import Indexer
from .errors import error_from_status
from .rest import (
    PATCH_CONTENT_TYPES,
    PatchType,
    Resource,
    RESTClient,
    delete_options,
    name_namespace,
)

T = TypeVar("T")

_encoder = msgspec.json.Encoder()


class ListMeta(msgspec.Struct, rename="camel", omit_defaults=True):
    resource_version: str = ""
    continue_: str = msgspec.field(default="", name="continue")
    remaining_item_count: int | None = None


class ObjectList(msgspec.Struct, Generic[T], rename="camel", omit_defaults=True):
    """A `<Kind>List`: `items` decoded as `T`, plus the list's `metadata`."""

    items: list[T] = msgspec.field(default_factory=list)
    metadata: ListMeta = msgspec.field(default_factory=ListMeta)
    api_version: str = ""
    kind: str = ""


class _RawEvent(msgspec.Struct):
    type: str
    object: msgspec.Raw


@dataclass(frozen=True, slots=True)
class Event(Generic[T]):
    """A watch event: ADDED, MODIFIED, DELETED or BOOKMARK carry a `T`."""

    type: str
    object: T


class _Codec(Generic[T]):
    def __init__(self, item_type: type[T]) -> None:
        self.item = msgspec.json.Decoder(item_type)
        self.list = msgspec.json.Decoder(ObjectList[item_type])  # type: ignore[valid-type]
        self.event = msgspec.json.Decoder(_RawEvent)
        self.status = msgspec.json.Decoder(dict[str, Any])


_codecs: dict[Any, _Codec[Any]] = {}


def _codec(item_type: type[T]) -> _Codec[T]:
    codec = _codecs.get(item_type)
    if codec is None:
        codec = _codecs[item_type] = _Codec(item_type)
    return cast(_Codec[T], codec)


def _options(**values: Any) -> dict[str, str]:
    """Query parameters for the options that are set (client-go's `metav1.*Options`)."""
    names = {
        "label_selector": "labelSelector",
        "field_selector": "fieldSelector",
        "limit": "limit",
        "continue_": "continue",
        "resource_version": "resourceVersion",
        "resource_version_match": "resourceVersionMatch",
        "timeout_seconds": "timeoutSeconds",
        "field_manager": "fieldManager",
    }
    params: dict[str, str] = {}
    for key, value in values.items():
        if value is None or value == "" or value is False:
            continue
        if key == "dry_run":
            params["dryRun"] = "All"
        elif key == "force":
            params["force"] = "true"
        else:
            params[names[key]] = str(value)
    return params


class Client(Generic[T]):
    """Typed verbs on one resource, in `namespace` (ignored for cluster-scoped resources)."""

    def __init__(
        self, rest: RESTClient, resource: Resource, namespace: str | None, item_type: type[T]
    ) -> None:
        self.rest = rest
        self.resource = resource
        self.namespace = namespace if resource.namespaced else None
        self.item_type = item_type
        self._codec = _codec(item_type)

    def _path(self, name: str | None = None, subresource: str | None = None) -> tuple[str, str]:
        res, ns = self.resource, self.namespace
        return res.path(ns, name, subresource), res.template(ns, name, subresource)

    async def _call(
        self,
        method: str,
        name: str | None = None,
        subresource: str | None = None,
        *,
        params: dict[str, str] | None = None,
        body: Any = None,
        content_type: str | None = None,
    ) -> bytes:
        path, endpoint = self._path(name, subresource)
        if body is not None and not isinstance(body, bytes):
            body = _encoder.encode(body)
        return await self.rest.request(
            method,
            path,
            params=params or None,
            body=body,
            content_type=content_type,
            endpoint=endpoint,
        )

    def _decode(self, raw: bytes) -> T:
        return self._codec.item.decode(raw)

    async def get(self, name: str, *, resource_version: str | None = None) -> T:
        params = _options(resource_version=resource_version)
        return self._decode(await self._call("GET", name, params=params))

    async def list(
        self,
        *,
        label_selector: str | Selector | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
    ) -> ObjectList[T]:
        params = _options(
            label_selector=None if label_selector is None else str(label_selector),
            field_selector=field_selector,
            limit=limit,
            continue_=continue_,
            resource_version=resource_version,
            resource_version_match=resource_version_match,
        )
        return self._codec.list.decode(await self._call("GET", params=params))

    async def watch(
        self,
        *,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
        label_selector: str | Selector | None = None,
        field_selector: str | None = None,
        allow_watch_bookmarks: bool = True,
    ) -> AsyncIterator[Event[T]]:
        """Events until the server ends the stream; an ERROR event raises its `ApiError`."""
        stream = self.rest.watch(
            self.resource,
            self.namespace,
            resource_version=resource_version,
            timeout_seconds=timeout_seconds,
            allow_watch_bookmarks=allow_watch_bookmarks,
            label_selector=None if label_selector is None else str(label_selector),
            field_selector=field_selector,
        )
        async for line in stream:
            event = self._codec.event.decode(line)
            if event.type == "ERROR":
                status = self._codec.status.decode(event.object)
                code = status.get("code")
                raise error_from_status(code if isinstance(code, int) else 500, status)
            yield Event(event.type, self._codec.item.decode(event.object))

    async def create(self, obj: T, *, dry_run: bool = False, field_manager: str | None = None) -> T:
        params = _options(dry_run=dry_run, field_manager=field_manager)
        return self._decode(await self._call("POST", params=params, body=obj))

    async def update(self, obj: T, *, dry_run: bool = False, field_manager: str | None = None) -> T:
        """Replace the object (optimistic concurrency on its resourceVersion: 409 if stale)."""
        params = _options(dry_run=dry_run, field_manager=field_manager)
        return self._decode(
            await self._call("PUT", name_namespace(obj)[0], params=params, body=obj)
        )

    async def patch(
        self,
        name: str,
        patch: Any,
        patch_type: PatchType = "merge",
        *,
        subresource: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        force: bool = False,
    ) -> T:
        """Patch with a JSON (list of ops), merge, strategic-merge or apply patch."""
        params = _options(dry_run=dry_run, field_manager=field_manager, force=force)
        raw = await self._call(
            "PATCH",
            name,
            subresource,
            params=params,
            body=patch,
            content_type=PATCH_CONTENT_TYPES[patch_type],
        )
        return self._decode(raw)

    async def delete(
        self,
        name: str,
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Mapping[str, str] | None = None,
        dry_run: bool = False,
    ) -> None:
        body = delete_options(propagation_policy, grace_period_seconds, preconditions)
        await self._call("DELETE", name, params=_options(dry_run=dry_run), body=body)

    async def delete_collection(
        self,
        *,
        label_selector: str | Selector | None = None,
        field_selector: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> None:
        params = _options(
            label_selector=None if label_selector is None else str(label_selector),
            field_selector=field_selector,
            dry_run=dry_run,
        )
        body = delete_options(propagation_policy, grace_period_seconds, None)
        await self._call("DELETE", params=params, body=body)


class ClientWithStatus(Client[T]):
    """A resource with a status subresource: `update` ignores status, `update_status` writes it."""

    async def update_status(
        self, obj: T, *, dry_run: bool = False, field_manager: str | None = None
    ) -> T:
        params = _options(dry_run=dry_run, field_manager=field_manager)
        raw = await self._call("PUT", name_namespace(obj)[0], "status", params=params, body=obj)
        return self._decode(raw)


class CreateOnlyClient(Generic[T]):
    """A resource whose only verb is `create` (GameServerAllocation)."""

    def __init__(
        self, rest: RESTClient, resource: Resource, namespace: str | None, item_type: type[T]
    ) -> None:
        self._client = Client(rest, resource, namespace, item_type)

    async def create(self, obj: T, *, dry_run: bool = False, field_manager: str | None = None) -> T:
        return await self._client.create(obj, dry_run=dry_run, field_manager=field_manager)


# ---------------------------------------------------------------------------------------------
# Listers


class ResourceIndexer(Generic[T]):
    """A typed lister over an informer's indexer (client-go `listers.ResourceIndexer`)."""

    def __init__(self, indexer: Indexer, resource: Resource) -> None:
        # Generated Go listers report the singular resource: `gameserver.agones.dev "x" not found`.
        self._lister = GenericLister(
            indexer, resource.kind.lower() or resource.plural, resource.group
        )
        self.resource = resource

    def list(self, selector: Selector | str | None = None) -> list[T]:
        """Every cached object (in all namespaces) whose labels match."""
        return cast(list[T], self._lister.list(selector))

    def get(self, name: str) -> T:
        """A cluster-scoped object by name; `NotFoundError` when absent."""
        return cast(T, self._lister.get(name))

    def namespaced(self, namespace: str) -> NamespaceIndexer[T]:
        return NamespaceIndexer(self._lister.by_namespace(namespace))


class NamespaceIndexer(Generic[T]):
    def __init__(self, lister: GenericNamespaceLister) -> None:
        self._lister = lister

    def list(self, selector: Selector | str | None = None) -> list[T]:
        """Cached objects of this namespace whose labels match."""
        return cast(list[T], self._lister.list(selector))

    def get(self, name: str) -> T:
        """The cached object; `NotFoundError` when absent."""
        return cast(T, self._lister.get(name))
