"""Python game-server SDK for Agones (guide: docs/sdk.md).

`AsyncSDK` (asyncio, grpc.aio) and `SDK` (blocking wrapper) talk to the SDK sidecar; both cover
every RPC of `agones.dev.sdk.SDK`, `.alpha.SDK` (player tracking) and `.beta.SDK` (counters and
lists). Failures raise `SDKError`.
"""

from .aio import AsyncAlpha, AsyncBeta, AsyncSDK, GameServer, sidecar_address
from .blocking import SDK
from .errors import SDKError

__all__ = [
    "SDK",
    "AsyncAlpha",
    "AsyncBeta",
    "AsyncSDK",
    "GameServer",
    "SDKError",
    "sidecar_address",
]
