"""The GameServer controller family (Agones `pkg/gameservers`)."""

from .controller import Controller, fast_rate_limiter
from .metrics import GameServerMetrics
from .pernodecounter import NodeCount, PerNodeCounter
from .pod import SidecarConfig, game_server_pod

__all__ = [
    "Controller",
    "GameServerMetrics",
    "NodeCount",
    "PerNodeCounter",
    "SidecarConfig",
    "fast_rate_limiter",
    "game_server_pod",
]
