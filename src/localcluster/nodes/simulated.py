"""Simulated game servers: the SDK sidecar's logic and a scripted game in-process, per pod.

A simulated pod runs no process: its sidecar is the real `SDKServer` over `SharedGameServerStore`
(one GameServer informer and the REST client shared by every simulated pod, JSON patches as the
sidecar writes them), and its game is `SimulatedGame`, which calls the SDK backend the way
simple-game-server calls the SDK: Ready after `-readyDelaySec`, a health ping every 2 s, Shutdown
`-automaticShutdownDelaySec` seconds after each allocation (`-readyIterations` times back to Ready
first). `game_options(container)` reads those simple-game-server flags (and env `READY`) from the
game container, so the same manifest means the same thing on a real cluster. Cost per pod: the
sidecar's write queue and watch (two tasks), its health-check timer, no sockets; the games' health
pings are one `HealthPings` timer per store, which pings every game still healthy each
`health_interval` (what each game's ping stream into the SDK's Health RPC would do, without a task
and a timer per game).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import structlog

from ...client.errors import ApiError
from ...client.rest import RESTClient
from ...client.versioned.resources import GAME_SERVERS
from ...clock import Clock, RealClock, TimerHandle
from ...featuregates import FeatureGates
from ...informers import GenericInformer, ResourceEventHandlerFuncs, SharedInformerFactory
from ...jsonpatch import Patch
from ...sdk.proto import sdk_pb2
from ...sdkserver.sdkserver import SDKServer, SDKServerOptions
from ...sdkserver.store import ConflictError

log = structlog.get_logger("agones.localcluster.nodes.simulated")
LAST_ALLOCATED = "agones.dev/last-allocated"


@dataclass(frozen=True)
class GameOptions:
    """What a simulated simple-game-server does (its flags' names and defaults)."""

    ready: bool = True
    ready_delay: float = 0.0
    automatic_shutdown_delay: float = 0.0
    ready_iterations: int = 0
    health_interval: float = 2.0


def _bool(text: str) -> bool:
    return text.strip().lower() in ("1", "t", "true")


def game_options(container: Mapping[str, Any]) -> GameOptions:
    """simple-game-server's flags (`-ready=false`, `-readyDelaySec 3`, ...) and env `READY`."""
    values: dict[str, str] = {}
    args = [str(a) for a in (container.get("args") or [])]
    i = 0
    while i < len(args):
        arg = args[i].lstrip("-")
        if "=" in arg:
            key, _, value = arg.partition("=")
        elif i + 1 < len(args) and not args[i + 1].startswith("-"):
            key, value = arg, args[i + 1]
            i += 1
        else:
            key, value = arg, "true"
        values[key] = value
        i += 1
    for env in container.get("env") or []:
        if env.get("name") == "READY" and "value" in env:
            values["ready"] = str(env["value"])
    try:
        delay = float(values.get("automaticShutdownDelaySec", 0)) or 60 * float(
            values.get("automaticShutdownDelayMin", 0)
        )
        return GameOptions(
            ready=_bool(values.get("ready", "true")),
            ready_delay=float(values.get("readyDelaySec", 0)),
            automatic_shutdown_delay=delay,
            ready_iterations=int(values.get("readyIterations", 0)),
        )
    except ValueError:
        return GameOptions()


class Pinged(Protocol):
    def ping(self) -> None: ...


class HealthPings:
    """Every `interval` seconds, a health ping (`SimulatedGame.ping`: what the Health RPC does
    per message, for a game still `healthy`) for each game added; one timer on `clock` for all,
    running while any game is added. A game is pinged once when added, as a stream's first
    message arrives at once."""

    def __init__(
        self, interval: float = GameOptions.health_interval, clock: Clock | None = None
    ) -> None:
        self.interval = interval
        self.clock = clock or RealClock()
        self.games: set[Pinged] = set()
        self._timer: TimerHandle | None = None

    def add(self, game: Pinged) -> None:
        self.games.add(game)
        game.ping()
        if self._timer is None:
            self._timer = self.clock.call_later(self.interval, self._tick)

    def discard(self, game: Pinged) -> None:
        self.games.discard(game)

    def _tick(self) -> None:
        self._timer = None
        for game in list(self.games):
            game.ping()
        if self.games:
            self._timer = self.clock.call_later(self.interval, self._tick)


class SharedGameServerStore:
    """`GameServerStore`s for many sidecars over one REST client and one GameServer informer,
    and their games' `HealthPings`.

    The informer starts with the first simulated game (`start`): a real sidecar watches only its
    own GameServer, so kubelets running no simulated game hold no watch of every GameServer (nor
    decode each of their updates, in the process that is also the local API server)."""

    def __init__(self, client: RESTClient, factory: SharedInformerFactory) -> None:
        self.client = client
        self.factory = factory
        self.pings = HealthPings()
        self.informer: GenericInformer | None = None
        """The GameServer informer, once a simulated game has started."""
        self._watchers: dict[tuple[str, str], set[asyncio.Queue[dict[str, Any]]]] = {}
        self._subscribers: dict[tuple[str, str], list[Callable[[dict[str, Any]], None]]] = {}

    async def start(self) -> None:
        """Start the GameServer informer if it is not running yet, and wait for its cache."""
        if self.informer is None:
            self.informer = self.factory.for_resource(GAME_SERVERS)
            self.informer.informer().add_event_handler(
                ResourceEventHandlerFuncs(
                    add_func=self._notify, update_func=lambda _old, new: self._notify(new)
                )
            )
            self.factory.start()
        await self.informer.informer().wait_for_sync()

    def _notify(self, gs: Any) -> None:
        md = gs.get("metadata") or {}
        key = (md.get("namespace", ""), md.get("name", ""))
        for callback in self._subscribers.get(key, ()):
            callback(gs)
        for queue in self._watchers.get(key, ()):
            queue.put_nowait(gs)

    def for_game_server(self, namespace: str, name: str) -> _OneGameServer:
        return _OneGameServer(self, namespace, name)


class _OneGameServer:
    def __init__(self, shared: SharedGameServerStore, namespace: str, name: str) -> None:
        self.shared = shared
        self.namespace = namespace
        self.name = name

    async def get(self) -> dict[str, Any]:
        informer = self.shared.informer
        if informer is not None:
            with contextlib.suppress(ApiError):
                return dict(informer.lister().by_namespace(self.namespace).get(self.name))
        return await self.shared.client.get(GAME_SERVERS, self.name, self.namespace)

    async def patch(self, patch: Patch) -> dict[str, Any]:
        try:
            return await self.shared.client.patch(
                GAME_SERVERS, self.name, patch, namespace=self.namespace, patch_type="json"
            )
        except ApiError as err:
            if err.status_code in (409, 422):
                raise ConflictError(str(err)) from err
            raise

    def subscribe(self, callback: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        """`store.SubscribableStore`: `callback` with every version the informer delivers."""
        key = (self.namespace, self.name)
        self.shared._subscribers.setdefault(key, []).append(callback)

        def unsubscribe() -> None:
            callbacks = self.shared._subscribers.get(key, [])
            if callback in callbacks:
                callbacks.remove(callback)
            if not callbacks:
                self.shared._subscribers.pop(key, None)

        return unsubscribe

    async def watch(self) -> AsyncIterator[dict[str, Any]]:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        key = (self.namespace, self.name)
        self.shared._watchers.setdefault(key, set()).add(queue)
        try:
            while True:
                yield await queue.get()
        finally:
            watchers = self.shared._watchers.get(key)
            if watchers is not None:
                watchers.discard(queue)
                if not watchers:
                    del self.shared._watchers[key]


class SimulatedGame:
    """One simulated pod: the SDK server and the scripted game (see the module docstring)."""

    def __init__(
        self,
        store: SharedGameServerStore,
        namespace: str,
        name: str,
        options: GameOptions,
        gates: FeatureGates,
        rate_limit: float = 0.5,
    ) -> None:
        self.options = options
        self.store = store
        self.pings = store.pings
        self.server = SDKServer(
            store.for_game_server(namespace, name),
            gates,
            options=SDKServerOptions(
                request_rate_limit=rate_limit, first_write_immediately=True, health_autostart=True
            ),
        )
        self.healthy = True
        """Set False to stop health pings (the GameServer then goes Unhealthy)."""
        self._tasks: list[asyncio.Task[Any]] = []

    async def start(self) -> None:
        await self.store.start()
        await self.server.run()
        self.pings.add(self)
        opts = self.options
        if opts.automatic_shutdown_delay > 0:
            self._tasks.append(asyncio.create_task(self._shutdown_after_allocations()))
        if opts.ready and opts.ready_delay > 0:
            self._tasks.append(asyncio.create_task(self._ready_after(opts.ready_delay)))
        elif opts.ready:
            await self.server.ready(sdk_pb2.Empty())

    def ping(self) -> None:
        """One health ping, while the game is `healthy`."""
        if self.healthy:
            self.server.touch_health_last_updated()

    async def _ready_after(self, delay: float) -> None:
        await asyncio.sleep(delay)
        await self.server.ready(sdk_pb2.Empty())

    async def _shutdown_after_allocations(self) -> None:
        opts = self.options
        left = opts.ready_iterations
        last: str | None = None
        async for gs in self.server.watch_game_server(sdk_pb2.Empty()):
            allocated = gs.object_meta.annotations.get(LAST_ALLOCATED, "")
            if last is None:
                last = allocated
                continue
            if allocated != last:
                last = allocated
                left -= 1
                self._tasks.append(asyncio.create_task(self._after_allocation(left)))

    async def _after_allocation(self, left: int) -> None:
        await asyncio.sleep(self.options.automatic_shutdown_delay)
        if left > 0:
            await self.server.ready(sdk_pb2.Empty())
        else:
            await self.server.shutdown(sdk_pb2.Empty())

    async def stop(self) -> None:
        self.pings.discard(self)
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        with contextlib.suppress(Exception):
            await self.server.stop()
