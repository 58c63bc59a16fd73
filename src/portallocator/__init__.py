"""Host-port allocation for GameServers (Agones `pkg/portallocator`)."""

from .portallocator import (
    PortAllocator,
    PortRange,
    PortRangeAllocator,
    parse_port_ranges,
    validate_port_ranges,
)

__all__ = [
    "PortAllocator",
    "PortRange",
    "PortRangeAllocator",
    "parse_port_ranges",
    "validate_port_ranges",
]
