"""The GameServerSet controller family (Agones `pkg/gameserversets`)."""

from .allocation_overflow import AllocationOverflowController
from .controller import (
    Controller,
    GameServerSetSettings,
    ReconciliationAction,
    compute_reconciliation_action,
)
from .gameserver_state_cache import GameServerStateCache
from .status import compute_status

__all__ = [
    "AllocationOverflowController",
    "Controller",
    "GameServerSetSettings",
    "GameServerStateCache",
    "ReconciliationAction",
    "compute_reconciliation_action",
    "compute_status",
]
