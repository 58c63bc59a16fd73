"""Pieces shared by GameServer, GameServerSet and Fleet (Go `pkg/apis/agones/v1/common.go`).

Error texts Agones puts in validation causes, the CountsAndLists `Priority`, the
`AllocationOverflow` labels/annotations, aggregated player/counter/list status, `validate_name`
(names must fit in a label value) and `validate_object_meta` (labels and annotations of a template).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Annotated, Any

from msgspec import UNSET, Struct, UnsetType

from ...field import FieldError, Path, too_long
from ...meta.schema import crd
from ...meta.validation import LABEL_VALUE_MAX_LENGTH, validate_annotations, validate_labels

GROUP = "agones.dev"
VERSION = "v1"
API_VERSION = f"{GROUP}/{VERSION}"

# The annotation holding the SDK (sidecar) version, set by the GameServer and Fleet webhooks.
VERSION_ANNOTATION = "agones.dev/sdk-version"

ERR_CONTAINER_REQUIRED = "Container is required when using multiple containers in the pod template"
ERR_HOST_PORT = "HostPort cannot be specified with a Dynamic or Passthrough PortPolicy"
ERR_PORT_POLICY_STATIC = "PortPolicy must be Static"
ERR_CONTAINER_PORT_REQUIRED = "ContainerPort must be defined for Dynamic and Static PortPolicies"
ERR_CONTAINER_PORT_PASSTHROUGH = "ContainerPort cannot be specified with Passthrough PortPolicy"
ERR_CONTAINER_NAME_INVALID = (
    "Container must be empty or the name of a container in the pod template"
)


class PriorityType(enum.StrEnum):
    COUNTER = "Counter"
    LIST = "List"


class PriorityOrder(enum.StrEnum):
    ASCENDING = "Ascending"
    DESCENDING = "Descending"


class CounterAction(enum.StrEnum):
    """Counter actions at allocation (`GameServerPriorityIncrement` / `...Decrement` in Go)."""

    INCREMENT = "Increment"
    DECREMENT = "Decrement"


class Priority(Struct, rename="camel", omit_defaults=True):
    """Sort GameServers by the available capacity of a Counter or List (CountsAndLists)."""

    type: Annotated[PriorityType, crd(go="always")] | UnsetType = UNSET
    key: Annotated[str, crd(go="always")] | UnsetType = UNSET
    order: Annotated[PriorityOrder, crd(go="always", default="Ascending")] | UnsetType = UNSET


class AllocationOverflow(Struct, rename="camel", omit_defaults=True):
    """Labels/annotations applied to Allocated GameServers beyond a GameServerSet's replicas."""

    labels: dict[str, str] | UnsetType = UNSET
    annotations: dict[str, str] | UnsetType = UNSET

    def validate(self, path: Path) -> list[FieldError]:
        errs = validate_labels(_or_empty(self.labels), path.child("labels"))
        errs += validate_annotations(_or_empty(self.annotations), path.child("annotations"))
        return errs

    def apply(self, labels: dict[str, str], annotations: dict[str, str]) -> None:
        """Write the overflow labels and annotations into a GameServer's maps."""
        labels.update(_or_empty(self.labels))
        annotations.update(_or_empty(self.annotations))


class AggregatedPlayerStatus(Struct, rename="camel", omit_defaults=True):
    count: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET
    capacity: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET


class AggregatedCounterStatus(Struct, rename="camel", omit_defaults=True):
    allocated_count: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET
    allocated_capacity: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET
    count: Annotated[int, crd(go="always", default=0, minimum=0)] | UnsetType = UNSET
    capacity: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET


class AggregatedListStatus(Struct, rename="camel", omit_defaults=True):
    allocated_count: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET
    allocated_capacity: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET
    count: Annotated[int, crd(go="always", default=0, minimum=0)] | UnsetType = UNSET
    capacity: Annotated[int, crd(go="always", minimum=0)] | UnsetType = UNSET


MAX_INT64 = 2**63 - 1


def safe_add(x: int, y: int) -> int:
    """Go `SafeAdd`: x + y, saturating at the int64 maximum instead of overflowing."""
    if x > MAX_INT64 - y:
        return MAX_INT64
    return x + y


def _or_empty(m: Mapping[str, str] | UnsetType | None) -> dict[str, str]:
    return dict(m) if isinstance(m, Mapping) else {}


def validate_name(name: str | UnsetType | None, path: Path) -> list[FieldError]:
    """`metadata.name` must fit a label value (≤ 63 bytes): it is copied into labels."""
    if isinstance(name, str) and len(name.encode()) > LABEL_VALUE_MAX_LENGTH:
        return [too_long(path.child("name"), LABEL_VALUE_MAX_LENGTH)]
    return []


def validate_object_meta(labels: Any, annotations: Any, path: Path) -> list[FieldError]:
    """Labels and annotations of a template's metadata (`validateObjectMeta`)."""
    errs = validate_labels(_or_empty(labels), path.child("labels"))
    errs += validate_annotations(_or_empty(annotations), path.child("annotations"))
    return errs
