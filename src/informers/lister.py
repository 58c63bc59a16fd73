"""Listers over an informer's indexer (client-go `tools/cache/listers.go`, `GenericLister`).

`list(selector)` and `by_namespace(ns).list(selector)` return cached objects whose labels match
(the namespace index makes the latter proportional to the namespace); `get(name)` raises the API's
`NotFoundError` (404 Status) when absent, like the generated Go listers. Returned objects are shared
with the cache: never mutate them.
"""

from __future__ import annotations

from typing import Any

from ..client.errors import NotFoundError
from .index import NAMESPACE_INDEX
from .labels import Selector, everything, parse
from .meta import get_labels
from .thread_safe_store import Indexer


def _selector(selector: Selector | str | None) -> Selector:
    if selector is None:
        return everything()
    if isinstance(selector, str):
        return parse(selector)
    return selector


def _not_found(resource: str, group: str, name: str) -> NotFoundError:
    """`errors.NewNotFound(GroupResource{group, resource}, name)`: `<resource>.<group> "<name>"`."""
    qualified = f"{resource}.{group}" if group else resource
    details = (
        {"name": name, "group": group, "kind": resource}
        if group
        else {"name": name, "kind": resource}
    )
    return NotFoundError(
        404,
        {
            "kind": "Status",
            "apiVersion": "v1",
            "status": "Failure",
            "reason": "NotFound",
            "code": 404,
            "message": f'{qualified} "{name}" not found',
            "details": details,
        },
    )


def _filter(objs: list[Any], selector: Selector) -> list[Any]:
    if selector.empty():
        return objs
    return [o for o in objs if selector.matches(get_labels(o))]


class GenericLister:
    """`resource` and `group` name the GroupResource a NotFound reports, as Go's listers do: the
    generic lister the plural (`gameservers.agones.dev`), generated listers the singular."""

    def __init__(self, indexer: Indexer, resource: str, group: str = "") -> None:
        self.indexer = indexer
        self.resource = resource
        self.group = group

    def list(self, selector: Selector | str | None = None) -> list[Any]:
        return _filter(self.indexer.list(), _selector(selector))

    def get(self, name: str) -> Any:
        """A cluster-scoped object by name (use `by_namespace(ns).get(name)` for namespaced)."""
        obj = self.indexer.get_by_key(name)
        if obj is None:
            raise _not_found(self.resource, self.group, name)
        return obj

    def by_namespace(self, namespace: str) -> GenericNamespaceLister:
        return GenericNamespaceLister(self.indexer, self.resource, namespace, self.group)


class GenericNamespaceLister:
    def __init__(self, indexer: Indexer, resource: str, namespace: str, group: str = "") -> None:
        self.indexer = indexer
        self.resource = resource
        self.namespace = namespace
        self.group = group

    def list(self, selector: Selector | str | None = None) -> list[Any]:
        return _filter(self.indexer.by_index(NAMESPACE_INDEX, self.namespace), _selector(selector))

    def get(self, name: str) -> Any:
        obj = self.indexer.get_by_key(f"{self.namespace}/{name}")
        if obj is None:
            raise _not_found(self.resource, self.group, name)
        return obj
