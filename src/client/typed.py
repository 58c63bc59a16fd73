"""Typed clients, listers and informer accessors over the raw REST client (client-go's generated
`typed/<group>/<version>` clients and `listers`, as one generic class each).

`TypedClient(rest, resource, T)` decodes every response straight from JSON bytes into `T` (a msgspec
Struct such as `GameServer`, or `dict[str, Any]`) and encodes `T` bodies with msgspec, so no
intermediate dicts are built. `update_status` exists only when the resource has a status
subresource (`has_status=True`); otherwise it raises `TypeError` (Agones' GameServer has none: its
status is written with `update`). `TypedInformer` pairs a shared informer with a `TypedLister[T]`;
both decode with the same type. Generated per-resource clients (`tools/codegen`) are thin
subclasses that fix `resource` and `T`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Generic, TypeVar

import msgspec

from ..informers.factory import SharedInformerFactory
from ..informers.lister import GenericLister
from ..informers.listwatch import StructDecoder, WatchEvent
from ..informers.shared_informer import SharedIndexInformer
from .rest import PATCH_CONTENT_TYPES, PatchType, Resource, RESTClient, _name_namespace

T = TypeVar("T")


class TypedClient(Generic[T]):
    def __init__(
        self,
        rest: RESTClient,
        resource: Resource,
        item_type: Any,
        *,
        namespace: str | None = None,
        has_status: bool = False,
    ) -> None:
        self.rest = rest
        self.resource = resource
        self.namespace = namespace
        self.has_status = has_status
        self.decoder = StructDecoder[T](item_type)
        self._item = msgspec.json.Decoder(item_type)

    def _ns(self, namespace: str | None) -> str | None:
        return namespace if namespace is not None else self.namespace

    def _decode(self, raw: bytes) -> T:
        item: T = self._item.decode(raw)
        return item

    async def get(self, name: str, namespace: str | None = None) -> T:
        path = self.resource.path(self._ns(namespace), name)
        return self._decode(
            await self.rest.request(
                "GET", path, endpoint=self.resource.template(namespace, name, None)
            )
        )

    async def list(self, namespace: str | None = None, **kw: Any) -> tuple[list[T], str, str]:
        """`(items, resourceVersion, continue)`; `kw` as `RESTClient.list_raw`."""
        result = self.decoder.decode_list(
            await self.rest.list_raw(self.resource, self._ns(namespace), **kw)
        )
        return result.items, result.resource_version, result.continue_

    async def watch(self, namespace: str | None = None, **kw: Any) -> AsyncIterator[WatchEvent]:
        async for line in self.rest.watch(self.resource, self._ns(namespace), **kw):
            yield self.decoder.decode_event(line)

    async def _write(
        self, method: str, body: Any, namespace: str | None, name: str | None, sub: str | None
    ) -> T:
        ns = self._ns(namespace)
        raw = await self.rest.request(
            method,
            self.resource.path(ns, name, sub),
            body=body,
            endpoint=self.resource.template(ns, name, sub),
        )
        return self._decode(raw)

    async def create(self, obj: T, namespace: str | None = None) -> T:
        return await self._write("POST", obj, namespace, None, None)

    async def update(self, obj: T, namespace: str | None = None) -> T:
        name, ns = _name_namespace(obj)
        return await self._write("PUT", obj, namespace or ns, name, None)

    async def update_status(self, obj: T, namespace: str | None = None) -> T:
        if not self.has_status:
            raise TypeError(f"{self.resource.plural} has no status subresource; use update()")
        name, ns = _name_namespace(obj)
        return await self._write("PUT", obj, namespace or ns, name, "status")

    async def patch(
        self,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType = "merge",
        subresource: str | None = None,
    ) -> T:
        ns = self._ns(namespace)
        raw = await self.rest.request(
            "PATCH",
            self.resource.path(ns, name, subresource),
            body=patch,
            content_type=PATCH_CONTENT_TYPES[patch_type],
            endpoint=self.resource.template(ns, name, subresource),
        )
        return self._decode(raw)

    async def delete(self, name: str, namespace: str | None = None, **kw: Any) -> dict[str, Any]:
        return await self.rest.delete(self.resource, name, self._ns(namespace), **kw)


class TypedLister(GenericLister, Generic[T]):
    """A GenericLister whose objects are `T` (typing only: the cache already holds `T`)."""

    def list(self, selector: Any = None) -> list[T]:
        items: list[T] = super().list(selector)
        return items


class TypedInformer(Generic[T]):
    """`informer()` and `lister()` of one resource, decoding into `T` (client-go's informer accessors)."""

    def __init__(
        self, factory: SharedInformerFactory, resource: Resource, item_type: Any, **kw: Any
    ) -> None:
        generic = factory.for_resource(resource, decoder=StructDecoder[T](item_type), **kw)
        self._informer = generic.informer()
        self._lister: TypedLister[T] = TypedLister(self._informer.indexer, resource.plural)

    def informer(self) -> SharedIndexInformer:
        return self._informer

    def lister(self) -> TypedLister[T]:
        return self._lister
