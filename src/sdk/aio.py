"""The asyncio game-server SDK: `AsyncSDK` talks to the SDK sidecar over gRPC (grpc.aio).

Mirrors Agones' Go SDK (`sdks/go`): one method per RPC with the same behaviour and error
wrapping, `alpha` (player tracking) and `beta` (counters and lists) as attributes. The sidecar
address comes from `AGONES_SDK_GRPC_HOST` (default `localhost`) and `AGONES_SDK_GRPC_PORT`
(default 9357) unless given. Every failure raises `SDKError`.

    sdk = AsyncSDK()
    await sdk.connect()            # waits for the sidecar (30 s by default)
    await sdk.ready()
    await sdk.health()             # call periodically, e.g. every 2 s
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import grpc
from google.protobuf import field_mask_pb2, wrappers_pb2

from .errors import SDKError
from .proto import sdk_pb2, sdk_pb2_grpc
from .proto.alpha import alpha_pb2, alpha_pb2_grpc
from .proto.beta import beta_pb2, beta_pb2_grpc

DEFAULT_HOST = "localhost"
DEFAULT_PORT = 9357
GameServer = sdk_pb2.GameServer
T = TypeVar("T")


def sidecar_address(host: str | None = None, port: int | None = None) -> str:
    """`host:port` of the sidecar, from the arguments or `AGONES_SDK_GRPC_HOST/PORT`."""
    host = host or os.environ.get("AGONES_SDK_GRPC_HOST") or DEFAULT_HOST
    if port is None:
        port = int(os.environ.get("AGONES_SDK_GRPC_PORT") or DEFAULT_PORT)
    return f"{host}:{port}"


async def _call(what: str, call: Awaitable[T]) -> T:
    try:
        return await call
    except grpc.aio.AioRpcError as err:
        raise SDKError.from_rpc(what, err) from None


class AsyncSDK:
    """A connection to the SDK sidecar; create it inside the event loop that uses it."""

    def __init__(self, host: str | None = None, port: int | None = None) -> None:
        self.address = sidecar_address(host, port)
        self.channel = grpc.aio.insecure_channel(self.address)
        self._client = sdk_pb2_grpc.SDKStub(self.channel)  # type: ignore[no-untyped-call]
        self.alpha = AsyncAlpha(self.channel)
        self.beta = AsyncBeta(self.channel)
        self._health: Any = None
        self._watches: set[asyncio.Task[None]] = set()

    async def connect(self, timeout: float = 30.0) -> None:
        """Wait until the sidecar answers (Agones' SDKs wait up to 30 s)."""
        try:
            await asyncio.wait_for(self.channel.channel_ready(), timeout)
        except TimeoutError:
            raise SDKError(f"could not connect to {self.address}") from None

    async def close(self) -> None:
        """Close the health stream, stop watches and close the channel."""
        watches = list(self._watches)
        for task in watches:
            task.cancel()
        # let them finish before the channel goes, so none is left pending or unretrieved
        await asyncio.gather(*watches, return_exceptions=True)
        if self._health is not None:
            # half-close, then wait for the sidecar's reply so no ping is lost in flight
            with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError, TimeoutError):
                await self._health.done_writing()
                await asyncio.wait_for(self._health, 2)
            self._health.cancel()
            self._health = None
        await self.channel.close()

    async def __aenter__(self) -> AsyncSDK:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def ready(self) -> None:
        """Mark the GameServer Ready (the sidecar writes RequestReady)."""
        await _call("could not send Ready", self._client.Ready(sdk_pb2.Empty()))

    async def allocate(self) -> None:
        """Mark the GameServer Allocated."""
        await _call("could not mark self Allocated", self._client.Allocate(sdk_pb2.Empty()))

    async def shutdown(self) -> None:
        """Ask for the GameServer to be shut down."""
        await _call("could not send Shutdown", self._client.Shutdown(sdk_pb2.Empty()))

    async def reserve(self, seconds: float) -> None:
        """Reserve the GameServer for `seconds` (whole seconds; 0 keeps it Reserved)."""
        request = sdk_pb2.Duration(seconds=int(seconds))
        await _call("could not send Reserve", self._client.Reserve(request))

    async def health(self) -> None:
        """Send one health ping on the (lazily opened) health stream."""
        if self._health is None or self._health.done():
            self._health = self._client.Health()
        try:
            await self._health.write(sdk_pb2.Empty())
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError) as err:
            self._health = None
            if isinstance(err, grpc.aio.AioRpcError):
                raise SDKError.from_rpc("could not send Health ping", err) from None
            raise SDKError("could not send Health ping: stream closed") from None

    async def set_label(self, key: str, value: str) -> None:
        """Set label `agones.dev/sdk-<key>` on the GameServer."""
        request = sdk_pb2.KeyValue(key=key, value=value)
        await _call("could not set label", self._client.SetLabel(request))

    async def set_annotation(self, key: str, value: str) -> None:
        """Set annotation `agones.dev/sdk-<key>` on the GameServer."""
        request = sdk_pb2.KeyValue(key=key, value=value)
        await _call("could not set annotation", self._client.SetAnnotation(request))

    async def game_server(self) -> GameServer:
        """The backing GameServer as the sidecar sees it now."""
        result: GameServer = await _call(
            "could not retrieve gameserver", self._client.GetGameServer(sdk_pb2.Empty())
        )
        return result

    async def watch(self) -> AsyncIterator[GameServer]:
        """The GameServer now and after every change, until the stream ends."""
        call = self._client.WatchGameServer(sdk_pb2.Empty())
        try:
            async for gs in call:
                yield gs
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.CANCELLED:
                raise SDKError.from_rpc("could not watch gameserver", err) from None
        finally:
            call.cancel()

    async def watch_game_server(self, callback: Callable[[GameServer], Any]) -> asyncio.Task[None]:
        """Call `callback(gs)` for every update in a background task (the Go SDK's form)."""

        async def run() -> None:
            async for gs in self.watch():
                result = callback(gs)
                if asyncio.iscoroutine(result):
                    await result

        task = asyncio.create_task(run())
        self._watches.add(task)
        task.add_done_callback(self._watches.discard)
        return task


class AsyncAlpha:
    """Player tracking (Alpha, gate PlayerTracking)."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._client = alpha_pb2_grpc.SDKStub(channel)  # type: ignore[no-untyped-call]

    async def player_connect(self, player_id: str) -> bool:
        """Record a connected player; False if already connected, `SDKError` at capacity."""
        result = await _call(
            "could not register connected player",
            self._client.PlayerConnect(alpha_pb2.PlayerID(playerID=player_id)),
        )
        return bool(result.bool)

    async def player_disconnect(self, player_id: str) -> bool:
        """Forget a connected player; False if it was not connected."""
        result = await _call(
            "could not register disconnected player",
            self._client.PlayerDisconnect(alpha_pb2.PlayerID(playerID=player_id)),
        )
        return bool(result.bool)

    async def set_player_capacity(self, capacity: int) -> None:
        await _call(
            "could not set player capacity",
            self._client.SetPlayerCapacity(alpha_pb2.Count(count=capacity)),
        )

    async def get_player_capacity(self) -> int:
        result = await _call(
            "could not get player capacity", self._client.GetPlayerCapacity(alpha_pb2.Empty())
        )
        return int(result.count)

    async def get_player_count(self) -> int:
        result = await _call(
            "could not get player count", self._client.GetPlayerCount(alpha_pb2.Empty())
        )
        return int(result.count)

    async def is_player_connected(self, player_id: str) -> bool:
        result = await _call(
            "could not get if player is connected",
            self._client.IsPlayerConnected(alpha_pb2.PlayerID(playerID=player_id)),
        )
        return bool(result.bool)

    async def get_connected_players(self) -> list[str]:
        result = await _call(
            "could not get connected players", self._client.GetConnectedPlayers(alpha_pb2.Empty())
        )
        return list(result.list)


class AsyncBeta:
    """Counters and lists (Beta, gate CountsAndLists)."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self._client = beta_pb2_grpc.SDKStub(channel)  # type: ignore[no-untyped-call]

    async def _counter(self, key: str, what: str) -> beta_pb2.Counter:
        counter: beta_pb2.Counter = await _call(
            what, self._client.GetCounter(beta_pb2.GetCounterRequest(name=key))
        )
        return counter

    async def _update_counter(self, what: str, update: beta_pb2.CounterUpdateRequest) -> None:
        request = beta_pb2.UpdateCounterRequest(counterUpdateRequest=update)
        await _call(what, self._client.UpdateCounter(request))

    async def get_counter_count(self, key: str) -> int:
        counter = await self._counter(key, f"could not get Counter {key} count")
        return int(counter.count)

    async def get_counter_capacity(self, key: str) -> int:
        counter = await self._counter(key, f"could not get Counter {key} capacity")
        return int(counter.capacity)

    async def increment_counter(self, key: str, amount: int) -> None:
        """Add a non-negative `amount` to the Counter's count."""
        if amount < 0:
            raise SDKError(f"amount must be a positive int64, found {amount}")
        await self._update_counter(
            f"could not increment Counter {key} by amount {amount}",
            beta_pb2.CounterUpdateRequest(name=key, countDiff=amount),
        )

    async def decrement_counter(self, key: str, amount: int) -> None:
        """Subtract a non-negative `amount` from the Counter's count."""
        if amount < 0:
            raise SDKError(f"amount must be a positive int64, found {amount}")
        await self._update_counter(
            f"could not decrement Counter {key} by amount {amount}",
            beta_pb2.CounterUpdateRequest(name=key, countDiff=-amount),
        )

    async def set_counter_count(self, key: str, amount: int) -> None:
        await self._update_counter(
            f"could not set Counter {key} count to amount {amount}",
            beta_pb2.CounterUpdateRequest(name=key, count=wrappers_pb2.Int64Value(value=amount)),
        )

    async def set_counter_capacity(self, key: str, amount: int) -> None:
        await self._update_counter(
            f"could not set Counter {key} capacity to amount {amount}",
            beta_pb2.CounterUpdateRequest(name=key, capacity=wrappers_pb2.Int64Value(value=amount)),
        )

    async def _list(self, key: str) -> beta_pb2.List:
        lst: beta_pb2.List = await _call(
            f"could not get List {key}", self._client.GetList(beta_pb2.GetListRequest(name=key))
        )
        return lst

    async def get_list_capacity(self, key: str) -> int:
        return int((await self._list(key)).capacity)

    async def set_list_capacity(self, key: str, amount: int) -> None:
        request = beta_pb2.UpdateListRequest(
            list=beta_pb2.List(name=key, capacity=amount),
            update_mask=field_mask_pb2.FieldMask(paths=["capacity"]),
        )
        await _call(
            f"could not set List {key} capacity to amount {amount}",
            self._client.UpdateList(request),
        )

    async def list_contains(self, key: str, value: str) -> bool:
        return value in (await self._list(key)).values

    async def get_list_length(self, key: str) -> int:
        return len((await self._list(key)).values)

    async def get_list_values(self, key: str) -> list[str]:
        return list((await self._list(key)).values)

    async def append_list_value(self, key: str, value: str) -> None:
        request = beta_pb2.AddListValueRequest(name=key, value=value)
        await _call(f"could not get List {key}", self._client.AddListValue(request))

    async def delete_list_value(self, key: str, value: str) -> None:
        request = beta_pb2.RemoveListValueRequest(name=key, value=value)
        await _call(f"could not get List {key}", self._client.RemoveListValue(request))
