"""core/v1 Pods and Nodes as the controllers read them (`types.py`)."""

from .types import (
    ContainerState,
    ContainerStateRunning,
    ContainerStateTerminated,
    ContainerStatus,
    Node,
    NodeAddress,
    NodeSpec,
    NodeStatus,
    Pod,
    PodCondition,
    PodIP,
    PodSpec,
    PodStatus,
)

__all__ = [
    "ContainerState",
    "ContainerStateRunning",
    "ContainerStateTerminated",
    "ContainerStatus",
    "Node",
    "NodeAddress",
    "NodeSpec",
    "NodeStatus",
    "Pod",
    "PodCondition",
    "PodIP",
    "PodSpec",
    "PodStatus",
]
