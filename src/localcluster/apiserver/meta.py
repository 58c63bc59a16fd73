"""ObjectMeta rules shared by every kind: names, generateName, uid, timestamps, immutables.

Pure functions over object dicts, following apimachinery's `ValidateObjectMeta` and the generic
registry's `BeforeCreate`/`BeforeUpdate`.
"""

from __future__ import annotations

import functools
import random
import re
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from ...apis import field
from ...apis.field import FieldError
from ...apis.meta.objectmeta import format_time

_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")

# The alphabet and length apimachinery's `utilrand.String` uses for generateName suffixes.
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


_last_stamp: tuple[int, str] = (-1, "")


def now_rfc3339() -> str:
    """Now as `metav1.Time` on the wire (what every timestamp the local cluster writes uses),
    formatted once a second (every write stamps creationTimestamp or managedFields, and
    formatting is not cheap)."""
    global _last_stamp
    second = int(time.time())
    if _last_stamp[0] != second:
        _last_stamp = (second, format_time(datetime.fromtimestamp(second, UTC)))
    return _last_stamp[1]


def rfc3339_after(seconds: int) -> str:
    return format_time(datetime.now(UTC) + timedelta(seconds=seconds))


def new_uid() -> str:
    return str(uuid.uuid4())


def generate_name(base: str) -> str:
    base = base[: 63 - 5]
    return base + "".join(random.choices(_SUFFIX_ALPHABET, k=5))


# The rules below are pure functions of one string, and every write checks its object's name,
# label and annotation keys and label values, which repeat across writes: their answers are kept
# (a bounded memo per rule).
_memo = functools.lru_cache(maxsize=8192)


def subdomain_errors(value: str) -> list[str]:
    return list(_subdomain_messages(value))


@_memo
def _subdomain_messages(value: str) -> tuple[str, ...]:
    out = []
    if len(value) > 253:
        out.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        out.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
            "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
            "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        )
    return tuple(out)


def label_errors(value: str) -> list[str]:
    out = []
    if len(value) > 63:
        out.append("must be no more than 63 characters")
    if not _DNS1123_LABEL.fullmatch(value):
        out.append(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
            "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
            "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        )
    return out


def dns1035_errors(value: str) -> list[str]:
    out = []
    if len(value) > 63:
        out.append("must be no more than 63 characters")
    if not _DNS1035_LABEL.fullmatch(value):
        out.append(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
            "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
            "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
        )
    return out


# Which name rule each kind follows (default: DNS subdomain).
NAME_RULES = {"Namespace": label_errors, "Service": dns1035_errors}


_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def qualified_name_errors(value: str) -> list[str]:
    """apimachinery's IsQualifiedName: an optional DNS-subdomain prefix and a short name."""
    return list(_qualified_name_messages(value))


@_memo
def _qualified_name_messages(value: str) -> tuple[str, ...]:
    prefix, slash, name = value.rpartition("/")
    out = []
    if slash and not prefix:
        out.append("prefix part must be non-empty")
    elif slash:
        out.extend(f"prefix part {m}" for m in _subdomain_messages(prefix))
    if not name:
        out.append("name part must be non-empty")
    else:
        if len(name) > 63:
            out.append("name part must be no more than 63 characters")
        if not _QUALIFIED_NAME.fullmatch(name):
            out.append(
                "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
                "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
                "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            )
    return tuple(out)


@_memo
def _label_value_ok(value: str) -> bool:
    return len(value) <= 63 and _LABEL_VALUE.fullmatch(value) is not None


def _map_errors(meta: dict[str, Any], what: str) -> list[FieldError]:
    errs: list[FieldError] = []
    value = meta.get(what)
    if value is None:
        return errs
    if not isinstance(value, dict):
        return [field.invalid(f"metadata.{what}", str(value), "must be a map of strings")]
    for k, v in value.items():
        for msg in _qualified_name_messages(k):
            errs.append(field.invalid(f"metadata.{what}", k, msg))
        if not isinstance(v, str):
            errs.append(field.invalid(f"metadata.{what}", str(v), "values must be strings"))
        elif what == "labels" and not _label_value_ok(v):
            errs.append(
                field.invalid(
                    "metadata.labels",
                    v,
                    "a valid label must be an empty string or consist of alphanumeric "
                    "characters, '-', '_' or '.', and must start and end with an alphanumeric "
                    "character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for "
                    "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
                )
            )
    return errs


def _owner_reference_errors(refs: Any) -> list[FieldError]:
    if refs is None:
        return []
    if not isinstance(refs, list):
        return [field.invalid("metadata.ownerReferences", str(refs), "must be a list")]
    errs: list[FieldError] = []
    controllers = 0
    for ref in refs:
        if not isinstance(ref, dict):
            errs.append(field.invalid("metadata.ownerReferences", str(ref), "must be an object"))
            continue
        for key, what in (
            ("apiVersion", "version"),
            ("kind", "kind"),
            ("name", "name"),
            ("uid", "uid"),
        ):
            if not ref.get(key):
                errs.append(
                    field.invalid(
                        f"metadata.ownerReferences.{key}", "", f"{what} must not be empty"
                    )
                )
        controllers += 1 if ref.get("controller") is True else 0
    if controllers > 1:
        errs.append(
            field.invalid(
                "metadata.ownerReferences",
                field.GoValue("[...]"),
                "Only one reference can have Controller set to true",
            )
        )
    return errs


def validate_object_meta(
    kind: str, meta: dict[str, Any], namespaced: bool, stored: dict[str, Any] | None = None
) -> list[FieldError]:
    """The ObjectMeta errors of a write; `stored` (an update's stored metadata, which passed these
    very checks) lets labels and annotations equal to its go unchecked: maps of strings equal to
    maps of strings, whose errors depend on nothing else."""
    errs: list[FieldError] = []
    name = meta.get("name", "")
    if not name:
        errs.append(field.required("metadata.name", "name or generateName is required"))
    elif not isinstance(name, str):
        errs.append(field.invalid("metadata.name", str(name), "must be a string"))
    else:
        for msg in NAME_RULES.get(kind, subdomain_errors)(name):
            errs.append(field.invalid("metadata.name", name, msg))
    ns = meta.get("namespace", "")
    if namespaced and not ns:
        errs.append(field.required("metadata.namespace", ""))
    if not namespaced and ns:
        errs.append(field.forbidden("metadata.namespace", "not allowed on this type"))
    for what in ("labels", "annotations"):
        if stored is None or meta.get(what) != stored.get(what):
            errs.extend(_map_errors(meta, what))
    errs.extend(_owner_reference_errors(meta.get("ownerReferences")))
    finalizers = meta.get("finalizers")
    if finalizers is not None and not isinstance(finalizers, list):
        errs.append(field.invalid("metadata.finalizers", str(finalizers), "must be a list"))
    elif finalizers:
        for i, fin in enumerate(finalizers):
            for msg in _qualified_name_messages(str(fin)):
                errs.append(field.invalid(f"metadata.finalizers[{i}]", fin, msg))
    return errs


def prepare_create(meta: dict[str, Any], generation: bool) -> None:
    """Stamp what the server owns on a new object's metadata."""
    meta["uid"] = new_uid()
    meta["creationTimestamp"] = now_rfc3339()
    meta.pop("deletionTimestamp", None)
    meta.pop("deletionGracePeriodSeconds", None)
    meta.pop("selfLink", None)
    if generation:
        meta["generation"] = 1
    else:
        meta.pop("generation", None)


def keep_immutable(meta: dict[str, Any], old: dict[str, Any]) -> None:
    """Fields an update cannot change: taken from the stored object."""
    for k in (
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
        "namespace",
        "name",
    ):
        if k in old:
            meta[k] = old[k]
        else:
            meta.pop(k, None)
    meta.pop("selfLink", None)
    # An update that leaves managedFields out keeps the recorded ownership.
    if "managedFields" not in meta and "managedFields" in old:
        meta["managedFields"] = old["managedFields"]
