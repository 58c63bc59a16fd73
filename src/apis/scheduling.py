"""Scheduling strategies shared by GameServer, GameServerSet, Fleet and allocation (Go `pkg/apis`)."""

from __future__ import annotations

import enum


class SchedulingStrategy(enum.StrEnum):
    """How GameServers are spread over nodes; `Packed` is every kind's default."""

    PACKED = "Packed"
    DISTRIBUTED = "Distributed"
