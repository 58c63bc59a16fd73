"""Informer transforms (client-go `cache.TransformFunc`, `TransformStripManagedFields`).

A transform runs on every object an informer receives from a list or a watch, before the object is
stored, indexed or handed to a handler (tombstones excepted), and on every object written into the
informer's shared MutationCache; so a cache holds only what its readers need. A transform must
return the object to keep (it may be a different one) and must not mutate its input: objects a
write returned are still in the caller's hands. It must keep what keys the object (namespace,
name), its resourceVersion, and every field any reader of that cache uses; a writer must then
write with patches, or full updates of fields the cache keeps, never a full update of an object
whose other fields were dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import msgspec

TransformFunc = Callable[[Any], Any]


def transform_strip_managed_fields(obj: Any) -> Any:
    """Drop `metadata.managedFields` (server-side apply bookkeeping no controller reads; an update
    that leaves it out keeps what the apiserver recorded), from JSON dicts and typed objects."""
    if isinstance(obj, Mapping):
        meta = obj.get("metadata")
        if not isinstance(meta, Mapping) or "managedFields" not in meta:
            return obj
        return {
            **obj,
            "metadata": {k: v for k, v in meta.items() if k != "managedFields"},
        }
    meta = getattr(obj, "metadata", None)
    if isinstance(meta, msgspec.Struct) and getattr(meta, "managed_fields", msgspec.UNSET) not in (
        msgspec.UNSET,
        None,
    ):
        return msgspec.structs.replace(
            obj,
            metadata=msgspec.structs.replace(meta, managed_fields=msgspec.UNSET),
        )
    return obj
