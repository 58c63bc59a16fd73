"""`multicluster.agones.dev/v1`: GameServerAllocationPolicy (a CRD with no Agones webhook).

Importing this package registers GameServerAllocationPolicy on `SCHEME` (schema defaults only).
"""

from __future__ import annotations

from ...scheme import SCHEME, Kind
from .gameserverallocationpolicy import (
    API_VERSION,
    GROUP,
    KIND,
    VERSION,
    ClusterConnectionInfo,
    ConnectionInfoIterator,
    GameServerAllocationPolicy,
    GameServerAllocationPolicyList,
    GameServerAllocationPolicySpec,
    connection_order,
    select_random_weighted,
    validate,
)

SCHEME.register(
    Kind(
        group=GROUP,
        version=VERSION,
        kind=KIND,
        plural="gameserverallocationpolicies",
        type=GameServerAllocationPolicy,
        validate=validate,
        short_names=("gsap",),
    )
)

__all__ = [
    "API_VERSION",
    "GROUP",
    "KIND",
    "VERSION",
    "ClusterConnectionInfo",
    "ConnectionInfoIterator",
    "GameServerAllocationPolicy",
    "GameServerAllocationPolicyList",
    "GameServerAllocationPolicySpec",
    "connection_order",
    "select_random_weighted",
    "validate",
]
