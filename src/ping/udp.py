"""The rate-limited UDP echo of the ping service (Agones `cmd/ping/udp.go`).

Contract: each datagram (only its first 1024 bytes are read, as Go's fixed read buffer does) is sent
back to its sender with trailing NUL bytes removed, unless that sender (address and port) is past its
rate limit, in which case nothing is sent and a warning is logged. Each sender gets a token bucket of
`rate` per second with a burst of `floor(rate)`, as Agones' does — so a rate below 1 (burst 0) never
answers, exactly like `rate.NewLimiter(r, 0)`. A sender silent for more than a minute is forgotten
(checked once a minute, on the injected clock). `healthy()` raises once the socket is closed.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import Any, cast

import structlog

from ..clock import Clock, RealClock
from ..flowcontrol import TokenBucketRateLimiter

MAX_DATAGRAM = 1024
"""Bytes of a datagram that are read and echoed (Go reads into a 1024-byte buffer)."""

VISITOR_TTL = 60.0
"""Seconds after which a sender's bucket is dropped (and the clean-up interval)."""

log = structlog.get_logger("agones.ping.udp")


@dataclass
class Visitor:
    """A sender: when it last sent, and its token bucket (None when the burst is 0)."""

    stamp: float
    limit: TokenBucketRateLimiter | None


class UDPEchoServer(asyncio.DatagramProtocol):
    def __init__(self, rate: float, clock: Clock | None = None) -> None:
        if rate < 0:
            raise ValueError("UDP Rate limit must be greater that or equal to zero")
        self.rate = rate
        self.burst = math.floor(rate)
        self.clock = clock or RealClock()
        self.visitors: dict[Any, Visitor] = {}
        self.transport: asyncio.DatagramTransport | None = None
        self._cleanup: Any = None
        self._closed = False

    # -- the protocol --------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # asyncio's datagram transport does not subclass DatagramTransport: it has its methods
        self.transport = cast(asyncio.DatagramTransport, transport)
        self._schedule_cleanup()

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        if self._cleanup is not None:
            self._cleanup.cancel()

    def error_received(self, exc: Exception) -> None:
        log.error("error reading udp packet", error=str(exc))

    def datagram_received(self, data: bytes, addr: Any) -> None:
        reply = self.answer(data, addr)
        if reply is not None and self.transport is not None:
            self.transport.sendto(reply, addr)

    # -- the rules (pure but for the visitor table) ---------------------------------------------

    def answer(self, data: bytes, addr: Any) -> bytes | None:
        """What to send back to `addr` for `data`, or None when it is rate limited."""
        visitor = self.visitors.get(addr)
        if visitor is None:
            limit = (
                TokenBucketRateLimiter(self.rate, self.burst, self.clock)
                if self.burst >= 1
                else None
            )
            visitor = Visitor(self.clock.now(), limit)
            self.visitors[addr] = visitor
        visitor.stamp = self.clock.now()
        if visitor.limit is None or not visitor.limit.try_accept():
            log.warning("rate limited. No response sent.", addr=str(addr))
            return None
        return data[:MAX_DATAGRAM].rstrip(b"\x00")

    def clean_up(self) -> None:
        """Forget senders silent for more than a minute."""
        now = self.clock.now()
        for addr in [a for a, v in self.visitors.items() if now - v.stamp > VISITOR_TTL]:
            del self.visitors[addr]

    def _schedule_cleanup(self) -> None:
        def tick() -> None:
            self.clean_up()
            if not self._closed:
                self._schedule_cleanup()

        self._cleanup = self.clock.call_later(VISITOR_TTL, tick)

    def healthy(self) -> None:
        if self._closed or self.transport is None:
            raise RuntimeError("UDP Server is unhealthy")

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
