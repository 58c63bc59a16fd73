"""Lease-based leader election (client-go `tools/leaderelection`)."""

from .leaderelection import (
    JITTER_FACTOR,
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaderElector,
    new_leader_elector,
)
from .resourcelock import LeaderElectionRecord, LeaseLock, ResourceLock

__all__ = [
    "JITTER_FACTOR",
    "LeaderCallbacks",
    "LeaderElectionConfig",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseLock",
    "ResourceLock",
    "new_leader_elector",
]
