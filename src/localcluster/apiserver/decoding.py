"""Decoding an object the way kube-apiserver's decoders do before any registry logic: a body of the
wrong JSON shape is a 400 in Go's words, and built-in kinds lose (or, with fieldValidation=Strict,
are refused for) the fields their Go types do not have.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...apis.field import FieldError
from ...apis.structural.defaulting import prune_object_meta
from . import errors
from .crdschema import prune_crd_schema_fields
from .resources import ResourceInfo

Obj = dict[str, Any]


def cannot_handle(info: ResourceInfo, detail: str) -> errors.StatusError:
    """The 400 a decoding failure gives, in the apiserver's words."""
    return errors.bad_request(
        f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: {detail}'
    )


def guarded(
    info: ResourceInfo, check: Callable[[Obj], list[FieldError]], obj: Obj
) -> list[FieldError]:
    """Run a kind's hook; a body of the wrong shape deep inside is a 400, not a crash."""
    try:
        return check(obj)
    except (AttributeError, TypeError, KeyError, ValueError, IndexError) as err:
        raise cannot_handle(info, f"malformed object: {type(err).__name__}: {err}") from None


def drop_unknown_fields(info: ResourceInfo, obj: Obj, strict: bool) -> None:
    """Drop (or, when strict, reject) the fields a built-in kind does not have (for a CRD, also
    those inside its schemas)."""
    assert info.top_fields is not None
    unknown = [k for k in obj if k not in info.top_fields]
    md = obj.get("metadata")
    unknown_meta = prune_object_meta(md) if isinstance(md, dict) else []
    if (info.group, info.kind) == ("apiextensions.k8s.io", "CustomResourceDefinition"):
        unknown_meta += prune_crd_schema_fields(obj)  # nested, and already dropped in place
    if strict and (unknown or unknown_meta):
        listed = ", ".join(f'unknown field "{p}"' for p in [*unknown, *unknown_meta])
        raise errors.bad_request(
            f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: '
            f"strict decoding error: {listed}"
        )
    for k in unknown:
        del obj[k]
