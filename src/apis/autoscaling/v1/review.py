"""The webhook autoscaler's wire format (Go `FleetAutoscaleReview`).

The FleetAutoscaler controller POSTs a review with `request` set and expects the same shape back
with `response` set. `request.labels` / `request.annotations` (the Fleet's) are sent only with the
FleetAutoscaleRequestMetaData gate; both are omitted when empty. Go writes `request` and
`response` even when nil (`null`), and every scalar field even when zero.
"""

from __future__ import annotations

from typing import Annotated

from msgspec import UNSET, Struct, UnsetType

from ...agones.v1.fleet import FleetStatus
from ...meta.schema import crd


class FleetAutoscaleRequest(Struct, rename="camel", omit_defaults=True):
    # Identifies one request/response round trip (not the user's request).
    uid: Annotated[str, crd(go="always")] | UnsetType = UNSET
    # The Fleet being scaled, its namespace and status.
    name: Annotated[str, crd(go="always")] | UnsetType = UNSET
    namespace: Annotated[str, crd(go="always")] | UnsetType = UNSET
    status: Annotated[FleetStatus, crd(go="value")] | UnsetType = UNSET
    labels: dict[str, str] | UnsetType | None = UNSET
    annotations: dict[str, str] | UnsetType | None = UNSET


class FleetAutoscaleResponse(Struct, rename="camel", omit_defaults=True):
    # Copied from the request.
    uid: Annotated[str, crd(go="always")] | UnsetType = UNSET
    # False: leave the Fleet as it is.
    scale: Annotated[bool, crd(go="always")] | UnsetType = UNSET
    # The wanted replica count (when `scale`).
    replicas: Annotated[int, crd(go="always")] | UnsetType = UNSET


class FleetAutoscaleReview(Struct, rename="camel", omit_defaults=True):
    request: Annotated[FleetAutoscaleRequest, crd(go="always")] | UnsetType | None = UNSET
    response: Annotated[FleetAutoscaleResponse, crd(go="always")] | UnsetType | None = UNSET
