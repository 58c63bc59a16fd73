"""GameServer allocation (Agones `pkg/gameserverallocations`): the cache of allocatable
GameServers, the batching `Allocator`, selector matching and sorting, replica partitioning."""

from .allocation_cache import AllocationCache, ConflictInGameServerSelection
from .allocator import (
    LAST_ALLOCATED_ANNOTATION_KEY,
    Allocator,
    AllocatorSettings,
    GameServerAllocationInvalid,
    LocalAllocate,
    MultiClusterAllocate,
    NoGameServer,
)
from .partition import Partition

__all__ = [
    "LAST_ALLOCATED_ANNOTATION_KEY",
    "AllocationCache",
    "Allocator",
    "AllocatorSettings",
    "ConflictInGameServerSelection",
    "GameServerAllocationInvalid",
    "LocalAllocate",
    "MultiClusterAllocate",
    "NoGameServer",
    "Partition",
]
