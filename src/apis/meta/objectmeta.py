"""Typed `metadata` (Go `metav1.ObjectMeta`) and RFC 3339 times (Go `metav1.Time`).

Every ObjectMeta field is kept, `managedFields` as raw JSON. Times stay the strings the apiserver sent
(`Time`), so a decode → encode round trip is byte-exact; `parse_time` / `format_time` convert when a
value is needed. Go writes `metav1.Time` as RFC 3339 in UTC with whole seconds (`2024-07-04T23:04:04Z`)
and `metav1.MicroTime` (Leases, events.k8s.io) with microseconds (`format_micro_time`).
`validate_create_metadata` is the apiserver's own create-time check of any custom resource's metadata.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Annotated, Any

from msgspec import UNSET, Struct, UnsetType

from ..field import FieldError, Path
from .schema import crd
from .validation import validate_annotations, validate_labels, validate_object_meta_name

Time = Annotated[str, crd(format="date-time")]

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))"
)


def parse_time(text: str) -> datetime:
    """Parse RFC 3339 (with optional fractional seconds) to an aware UTC datetime; `ValueError` else."""
    m = _RFC3339.fullmatch(text)
    if m is None:
        raise ValueError(f'parsing time "{text}" as "2006-01-02T15:04:05Z07:00": cannot parse')
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    frac = m.group(7) or ""
    micro = int((frac + "000000")[:6]) if frac else 0
    if m.group(8):
        tz = UTC
    else:
        sign = 1 if m.group(9) == "+" else -1
        tz = timezone(sign * timedelta(hours=int(m.group(10)), minutes=int(m.group(11))))
    return datetime(year, month, day, hour, minute, second, micro, tzinfo=tz).astimezone(UTC)


def format_rfc3339_nano(when: datetime) -> str:
    """Go's `time.RFC3339Nano` in UTC (trailing zeros of the fraction trimmed)."""
    when = when.astimezone(UTC)
    text = when.strftime("%Y-%m-%dT%H:%M:%S")
    if when.microsecond:
        text += "." + f"{when.microsecond:06d}".rstrip("0")
    return text + "Z"


def format_time(when: datetime) -> str:
    """`metav1.Time` on the wire: UTC, whole seconds, `Z`."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def format_micro_time(ts: float | None) -> str | None:
    """`metav1.MicroTime` on the wire (Go's RFC3339Micro): UTC, six fractional digits, `Z`."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_micro_time(value: str | None) -> float | None:
    """Epoch seconds of a `metav1.MicroTime` (or any RFC 3339 time); None for an absent one."""
    if not value:
        return None
    return parse_time(value).timestamp()


class OwnerReference(Struct, rename="camel", omit_defaults=True):
    api_version: Annotated[str, crd(go="always")] | UnsetType = UNSET
    kind: Annotated[str, crd(go="always")] | UnsetType = UNSET
    name: Annotated[str, crd(go="always")] | UnsetType = UNSET
    uid: Annotated[str, crd(go="always")] | UnsetType = UNSET
    controller: Annotated[bool, crd(go="ptr")] | UnsetType = UNSET
    block_owner_deletion: Annotated[bool, crd(go="ptr")] | UnsetType = UNSET


class ObjectMeta(Struct, rename="camel", omit_defaults=True):
    """Standard object metadata; every field optional, absent fields stay absent."""

    name: str | UnsetType = UNSET
    generate_name: str | UnsetType = UNSET
    namespace: str | UnsetType = UNSET
    self_link: str | UnsetType = UNSET
    uid: str | UnsetType = UNSET
    resource_version: str | UnsetType = UNSET
    generation: int | UnsetType = UNSET
    creation_timestamp: Time | UnsetType | None = UNSET
    deletion_timestamp: Annotated[Time, crd(go="ptr")] | UnsetType | None = UNSET
    deletion_grace_period_seconds: Annotated[int, crd(go="ptr")] | UnsetType | None = UNSET
    labels: dict[str, str] | UnsetType = UNSET
    annotations: dict[str, str] | UnsetType = UNSET
    owner_references: list[OwnerReference] | UnsetType = UNSET
    finalizers: list[str] | UnsetType = UNSET
    managed_fields: Annotated[list[dict[str, Any]], crd(preserve_unknown=True)] | UnsetType = UNSET

    def get_labels(self) -> dict[str, str]:
        """The labels, or an empty dict (not attached) when absent."""
        return self.labels if self.labels is not UNSET else {}

    def get_annotations(self) -> dict[str, str]:
        return self.annotations if self.annotations is not UNSET else {}

    def get_name(self) -> str:
        return self.name if self.name is not UNSET else ""

    def get_namespace(self) -> str:
        return self.namespace if self.namespace is not UNSET else ""

    def is_being_deleted(self) -> bool:
        """True once `deletionTimestamp` is set."""
        return self.deletion_timestamp is not UNSET and self.deletion_timestamp is not None

    def set_label(self, key: str, value: str) -> None:
        if self.labels is UNSET:
            self.labels = {}
        self.labels[key] = value

    def set_annotation(self, key: str, value: str) -> None:
        if self.annotations is UNSET:
            self.annotations = {}
        self.annotations[key] = value


def new_controller_ref(api_version: str, kind: str, owner: ObjectMeta) -> OwnerReference:
    """An owner reference marking `owner` as the controller (Go `metav1.NewControllerRef`)."""
    return OwnerReference(
        api_version=api_version,
        kind=kind,
        name=owner.get_name(),
        uid=owner.uid if isinstance(owner.uid, str) else "",
        controller=True,
        block_owner_deletion=True,
    )


def controller_of(meta: ObjectMeta) -> OwnerReference | None:
    """The owner reference with `controller: true`, if any (Go `metav1.GetControllerOf`)."""
    for ref in meta.owner_references or []:
        if ref.controller is True:
            return ref
    return None


def validate_create_metadata(meta: ObjectMeta | UnsetType | None) -> list[FieldError]:
    """The apiserver's checks of a created custom resource's metadata, whatever its kind: name or
    generateName, label and annotation syntax."""
    m = meta if isinstance(meta, ObjectMeta) else ObjectMeta()
    path = Path("metadata")
    errs = validate_object_meta_name(
        m.name if isinstance(m.name, str) else None,
        m.generate_name if isinstance(m.generate_name, str) else None,
        path,
    )
    errs += validate_labels(m.labels if isinstance(m.labels, dict) else None, path.child("labels"))
    annotations = m.annotations if isinstance(m.annotations, dict) else None
    return errs + validate_annotations(annotations, path.child("annotations"))
