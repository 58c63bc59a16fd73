"""The ping service (Agones `cmd/ping`): HTTP answer and rate-limited UDP echo for latency probes."""

from .ping import PingServer, PingSettings
from .udp import UDPEchoServer

__all__ = ["PingServer", "PingSettings", "UDPEchoServer"]
