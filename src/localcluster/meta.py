"""ObjectMeta rules shared by every kind: names, generateName, uid, timestamps, immutables.

Pure functions over object dicts, following apimachinery's `ValidateObjectMeta` and the generic
registry's `BeforeCreate`/`BeforeUpdate`.
"""

from __future__ import annotations

import random
import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from ..apis import field
from ..apis.field import FieldError

_DNS1123_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")

# The alphabet and length apimachinery's `utilrand.String` uses for generateName suffixes.
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_after(seconds: int) -> str:
    return (datetime.now(UTC) + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_uid() -> str:
    return str(uuid.uuid4())


def generate_name(base: str) -> str:
    base = base[: 63 - 5]
    return base + "".join(random.choices(_SUFFIX_ALPHABET, k=5))


def subdomain_errors(value: str) -> list[str]:
    out = []
    if len(value) > 253:
        out.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN.match(value):
        out.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
            "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
            "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        )
    return out


def label_errors(value: str) -> list[str]:
    out = []
    if len(value) > 63:
        out.append("must be no more than 63 characters")
    if not _DNS1123_LABEL.match(value):
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
    if not _DNS1035_LABEL.match(value):
        out.append(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
            "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "
            "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
        )
    return out


# Which name rule each kind follows (default: DNS subdomain).
NAME_RULES = {"Namespace": label_errors, "Service": dns1035_errors}


def validate_object_meta(kind: str, meta: dict[str, Any], namespaced: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    name = meta.get("name", "")
    if not name:
        errs.append(field.required("metadata.name", "name or generateName is required"))
    else:
        for msg in NAME_RULES.get(kind, subdomain_errors)(name):
            errs.append(field.invalid("metadata.name", name, msg))
    ns = meta.get("namespace", "")
    if namespaced and not ns:
        errs.append(field.required("metadata.namespace", ""))
    if not namespaced and ns:
        errs.append(field.forbidden("metadata.namespace", "not allowed on this type"))
    for what in ("labels", "annotations"):
        value = meta.get(what)
        if value is not None and not isinstance(value, dict):
            errs.append(field.invalid(f"metadata.{what}", str(value), "must be a map of strings"))
        elif value:
            for k, v in value.items():
                if not isinstance(v, str):
                    errs.append(field.invalid(f"metadata.{what}", str(v), "values must be strings"))
                elif what == "labels" and (
                    len(v) > 63 or not re.match(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$", v)
                ):
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
                del k
    finalizers = meta.get("finalizers")
    if finalizers is not None and not isinstance(finalizers, list):
        errs.append(field.invalid("metadata.finalizers", str(finalizers), "must be a list"))
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
