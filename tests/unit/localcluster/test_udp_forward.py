"""The host side of a UDP host-port forward: which client's pod-side socket goes when full."""

from __future__ import annotations

import asyncio
from typing import Any

from agones.localcluster.nodes.netns import _UDPHostSide


class _NeverNet:
    async def new_socket(self, kind: str) -> Any:
        await asyncio.Event().wait()


async def test_full_forward_drops_the_oldest_client() -> None:
    side = _UDPHostSide(_NeverNet(), 7654)  # type: ignore[arg-type]
    side.MAX_CLIENTS = 3
    for port in (1, 2, 3, 4):
        side.datagram_received(b"x", ("127.0.0.1", port))
    try:
        assert [addr[1] for addr in side.clients] == [2, 3, 4]
    finally:
        for fut in side.clients.values():
            fut.cancel()
        await asyncio.gather(*side.clients.values(), return_exceptions=True)
