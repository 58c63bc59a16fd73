"""What the API server does to a custom resource with its version's structural schema.

`decode(obj, version)`: defaults, then prunes unknown fields (in place; returns the pruned paths,
which strict field validation reports). `validate(obj, version)`: the schema's errors plus the
scale subresource's, in the API server's words. Both take a `Version` (schema and scale of one
served CRD version) and, on an update, may take `old`: the stored object, when it is known to be
what these two passes of this very `Version` made of a write, with no error (the caller keys that
on the `Version` object: a changed schema is a new one). Subtrees equal to `old`'s are then not
walked: the passes would leave them as they are and find nothing (kube-apiserver v1.28 validates
the whole object on update; this finds the same, from less work). The result is the full pass's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..field import FieldError
from . import defaulting, validation
from .scale import scale_errors
from .types import Schema


@dataclass(frozen=True)
class Version:
    """One served version of a CRD as the schema passes need it."""

    schema: Schema | None
    scale: dict[str, Any] | None = None
    status_subresource: bool = False
    """With a status subresource, a write of the main resource never sets the status: a create
    drops it, an update keeps the stored one (`with_stored_status`)."""


def decode(obj: dict[str, Any], version: Version, old: dict[str, Any] | None = None) -> list[str]:
    """Default and prune `obj` in place, as decoding does; returns the pruned fields' paths."""
    if version.schema is None:
        return []
    defaulting.apply_defaults(obj, version.schema, old)
    return defaulting.prune(obj, version.schema, root=True, old=old)


def validate(
    obj: dict[str, Any], version: Version, old: dict[str, Any] | None = None
) -> list[FieldError]:
    """Every schema and scale-subresource error of `obj` (already decoded)."""
    errs = (
        []
        if version.schema is None
        else validation.validate_custom_resource(obj, version.schema, old)
    )
    return errs + scale_errors(obj, version.scale)


def with_stored_status(obj: dict[str, Any], version: Version, old: dict[str, Any] | None) -> None:
    """Replace `obj`'s status, in place, with what the main resource's write stores: none on a
    create (`old` None), the stored object's on an update (only with a status subresource)."""
    if not version.status_subresource:
        return
    if old is not None and "status" in old:
        obj["status"] = old["status"]
    else:
        obj.pop("status", None)


class Admitted:
    """The last objects the schema passes admitted, each with the `Version` that admitted it: what
    an update may pass as `old` to `decode` and `validate` (for the API server's registry).

    Keyed by the object's identity (each held, so its id is not reused): stored objects are never
    changed in place, and one the passes made is stored as it is (the steps after them write only
    metadata, which they do not walk). A different `Version` (a changed schema) or an object not
    seen (written another way, or evicted) means the full pass. Bounded; an entry goes when used.
    """

    LIMIT = 4096

    def __init__(self) -> None:
        self._by_id: dict[int, tuple[dict[str, Any], Version]] = {}

    def put(self, obj: dict[str, Any], version: Version) -> None:
        if len(self._by_id) >= self.LIMIT:
            del self._by_id[next(iter(self._by_id))]
        self._by_id[id(obj)] = (obj, version)

    def take(self, stored: dict[str, Any] | None, version: Version) -> dict[str, Any] | None:
        """`stored` when this very `version` admitted it, else None."""
        if stored is None:
            return None
        hit = self._by_id.pop(id(stored), None)
        if hit is None or hit[0] is not stored or hit[1] is not version:
            return None
        return stored
