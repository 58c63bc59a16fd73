"""`allocation.agones.dev/v1`: GameServerAllocation (served by the allocation endpoint, not a CRD).

Importing this package registers GameServerAllocation on `SCHEME`.
"""

from __future__ import annotations

from ...scheme import SCHEME, Kind
from .gameserverallocation import (
    API_VERSION,
    GROUP,
    KIND,
    VERSION,
    CounterAction,
    CounterSelector,
    GameServerAllocation,
    GameServerAllocationList,
    GameServerAllocationSpec,
    GameServerAllocationState,
    GameServerAllocationStatus,
    GameServerMetadata,
    GameServerSelector,
    ListAction,
    ListSelector,
    MetaPatch,
    MultiClusterSetting,
    PlayerSelector,
    Priority,
    apply_defaults,
    converter,
)
from .validation import validate

SCHEME.register(
    Kind(
        group=GROUP,
        version=VERSION,
        kind=KIND,
        plural="gameserverallocations",
        type=GameServerAllocation,
        validate=validate,
        apply_defaults=apply_defaults,
        short_names=("gsa",),
    )
)

__all__ = [
    "API_VERSION",
    "GROUP",
    "KIND",
    "VERSION",
    "CounterAction",
    "CounterSelector",
    "GameServerAllocation",
    "GameServerAllocationList",
    "GameServerAllocationSpec",
    "GameServerAllocationState",
    "GameServerAllocationStatus",
    "GameServerMetadata",
    "GameServerSelector",
    "ListAction",
    "ListSelector",
    "MetaPatch",
    "MultiClusterSetting",
    "PlayerSelector",
    "Priority",
    "apply_defaults",
    "converter",
    "validate",
]
