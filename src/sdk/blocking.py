"""`SDK`: a thin blocking wrapper over `AsyncSDK` for game servers that are not asyncio programs.

The async SDK runs on an event loop in a daemon thread owned by the wrapper; each method submits
the coroutine there and waits for its result. `watch_game_server(callback)` calls `callback` on
that thread for every update. Methods and errors are those of `AsyncSDK` (`alpha`, `beta` too).

    sdk = SDK()                    # connects, waiting up to 30 s for the sidecar
    sdk.ready()
    sdk.health()
    sdk.beta.increment_counter("rooms", 1)
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from .aio import AsyncAlpha, AsyncBeta, AsyncSDK, GameServer

T = TypeVar("T")


class _Loop:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="agones-sdk", daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


class _Proxy:
    """Forwards method calls to an async object, running them on the wrapper's loop."""

    def __init__(self, loop: _Loop, target: AsyncAlpha | AsyncBeta) -> None:
        self._loop = loop
        self._target = target

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self._target, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            return self._loop.run(method(*args, **kwargs))

        return call


class SDK:
    """Blocking SDK; see `AsyncSDK` for each method's meaning."""

    def __init__(
        self, host: str | None = None, port: int | None = None, connect_timeout: float = 30.0
    ) -> None:
        self._loop = _Loop()

        async def make() -> AsyncSDK:
            return AsyncSDK(host, port)

        self._sdk = self._loop.run(make())
        self.alpha: Any = _Proxy(self._loop, self._sdk.alpha)
        self.beta: Any = _Proxy(self._loop, self._sdk.beta)
        try:
            self._loop.run(self._sdk.connect(connect_timeout))
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._loop.loop.is_running():
            self._loop.run(self._sdk.close())
            self._loop.stop()

    def __enter__(self) -> SDK:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def ready(self) -> None:
        self._loop.run(self._sdk.ready())

    def allocate(self) -> None:
        self._loop.run(self._sdk.allocate())

    def shutdown(self) -> None:
        self._loop.run(self._sdk.shutdown())

    def reserve(self, seconds: float) -> None:
        self._loop.run(self._sdk.reserve(seconds))

    def health(self) -> None:
        self._loop.run(self._sdk.health())

    def set_label(self, key: str, value: str) -> None:
        self._loop.run(self._sdk.set_label(key, value))

    def set_annotation(self, key: str, value: str) -> None:
        self._loop.run(self._sdk.set_annotation(key, value))

    def game_server(self) -> GameServer:
        return self._loop.run(self._sdk.game_server())

    def watch_game_server(self, callback: Callable[[GameServer], Any]) -> None:
        """Call `callback(gs)` (on the SDK's thread) for the GameServer and every change."""

        async def start() -> None:
            await self._sdk.watch_game_server(callback)

        self._loop.run(start())
