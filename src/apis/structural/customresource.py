"""What the API server does to a custom resource with its version's structural schema.

`decode(obj, version)`: defaults, then prunes unknown fields (in place; returns the pruned paths,
which strict field validation reports). `validate(obj, version)`: the schema's errors plus the
scale subresource's, in the API server's words. Both take a `Version` (schema and scale of one
served CRD version).
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


def decode(obj: dict[str, Any], version: Version) -> list[str]:
    """Default and prune `obj` in place, as decoding does; returns the pruned fields' paths."""
    if version.schema is None:
        return []
    defaulting.apply_defaults(obj, version.schema)
    return defaulting.prune(obj, version.schema, root=True)


def validate(obj: dict[str, Any], version: Version) -> list[FieldError]:
    """Every schema and scale-subresource error of `obj` (already decoded)."""
    errs = (
        [] if version.schema is None else validation.validate_custom_resource(obj, version.schema)
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
