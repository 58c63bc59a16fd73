"""Keys and the Store interface (client-go `tools/cache/store.go`).

An object's key is `namespace/name`, or `name` for cluster-scoped objects (`meta_namespace_key`);
`split_meta_namespace_key` inverts it. A `DeletedFinalStateUnknown` tombstone stands for an object
that was deleted while we were not watching: its `obj` is the last state we knew, possibly stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .meta import get_name, get_namespace


class KeyError_(ValueError):
    """An object has no usable key (no name)."""


@dataclass(frozen=True, slots=True)
class ExplicitKey:
    """A key passed where an object is expected (cache.ExplicitKey)."""

    key: str


@dataclass(frozen=True, slots=True)
class DeletedFinalStateUnknown:
    """Tombstone for an object whose delete was missed; `obj` may be stale."""

    key: str
    obj: Any


def meta_namespace_key(obj: Any) -> str:
    """`namespace/name` (or `name` when cluster-scoped); strings and ExplicitKeys pass through."""
    if isinstance(obj, str):
        return obj
    if isinstance(obj, ExplicitKey | DeletedFinalStateUnknown):
        return obj.key
    name = get_name(obj)
    if not name:
        raise KeyError_(f"object has no name: {obj!r:.200}")
    namespace = get_namespace(obj)
    return f"{namespace}/{name}" if namespace else name


def deletion_handling_meta_namespace_key(obj: Any) -> str:
    return meta_namespace_key(obj)


def split_meta_namespace_key(key: str) -> tuple[str, str]:
    """`(namespace, name)`; namespace is "" for cluster-scoped keys."""
    parts = key.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2 and parts[1]:
        return parts[0], parts[1]
    raise ValueError(f"unexpected key format: {key!r}")
