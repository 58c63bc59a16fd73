"""simple-game-server: a toy UDP and/or TCP game server on the Agones SDK (Python port of Agones'
`examples/simple-game-server/main.go`).

It answers the text commands of `handlers.py` (one per UDP datagram or TCP line), pings health
every 2 s, marks itself Ready at start (after `-readyDelaySec`), and can shut itself down some
seconds after each allocation (`-automaticShutdownDelaySec`), going back to Ready
`-readyIterations` times first. On SIGTERM it waits `-gracefulTerminationDelaySec` and exits 0.

Flags are Go-style (`-port 7654`, `-ready=false`; `--port` works too); env vars PORT, PASSTHROUGH,
READY, UDP and TCP override them. The SDK sidecar is found through AGONES_SDK_GRPC_HOST/PORT.

    python examples/simple-game-server -udp -tcp
    cd examples/simple-game-server && python -m simple_game_server -port 7000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from handlers import fatal, handle_response

from agones.featuregates import parse_bool
from agones.sdk import AsyncSDK, GameServer, SDKError

log = logging.getLogger("simple-game-server")
HEALTH_INTERVAL = 2.0
LAST_ALLOCATED = "agones.dev/last-allocated"


def parse_flags(argv: Sequence[str] | None, environ: dict[str, str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="simple-game-server")

    def flag(name: str, default: object, helptext: str, kind: Callable[[str], object]) -> None:
        kwargs: dict[str, object] = {"dest": name, "default": default, "help": helptext}
        if kind is parse_bool:
            kwargs.update(nargs="?", const=True, type=parse_bool)
        else:
            kwargs.update(type=kind)
        parser.add_argument(f"-{name}", f"--{name}", **kwargs)  # type: ignore[arg-type]

    flag("port", "7654", "The port to listen to traffic on", str)
    flag(
        "passthrough", False, "Get listening port from the SDK, rather than use 'port'", parse_bool
    )
    flag("ready", True, "Mark this GameServer as Ready on startup", parse_bool)
    flag("automaticShutdownDelayMin", 0, "[Deprecated] shut down N minutes after allocation", int)
    flag("automaticShutdownDelaySec", 0, "shut down this many seconds after allocation", int)
    flag("readyDelaySec", 0, "wait this many seconds each time before marking Ready", int)
    flag("readyIterations", 0, "return to Ready this many times before shutting down", int)
    flag("gracefulTerminationDelaySec", 0, "delay after being asked to terminate", int)
    flag("udp", True, "Server will listen on UDP", parse_bool)
    flag("tcp", False, "Server will listen on TCP", parse_bool)
    args = parser.parse_args(argv)
    if environ.get("PORT"):
        args.port = environ["PORT"]
    for name, env in (
        ("passthrough", "PASSTHROUGH"),
        ("ready", "READY"),
        ("udp", "UDP"),
        ("tcp", "TCP"),
    ):
        if environ.get(env):
            setattr(args, name, environ[env].upper() == "TRUE")
    if args.automaticShutdownDelayMin > 0 and args.automaticShutdownDelaySec > 0:
        parser.error("Cannot set both --automaticShutdownDelayMin and --automaticShutdownDelaySec")
    if (
        args.readyIterations > 0
        and args.automaticShutdownDelayMin <= 0
        and args.automaticShutdownDelaySec <= 0
    ):
        parser.error("Must set a shutdown delay if using ready iterations")
    return args


class SimpleGameServer:
    def __init__(self, sdk: AsyncSDK) -> None:
        self.sdk = sdk
        self.unhealthy = asyncio.Event()
        self.tasks: set[asyncio.Task[object]] = set()

    def stop_health(self) -> None:
        self.unhealthy.set()

    def spawn(self, coro: object) -> None:
        task = asyncio.ensure_future(coro)  # type: ignore[arg-type]
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def do_health(self) -> None:
        while not self.unhealthy.is_set():
            log.debug("Health Ping")
            try:
                await self.sdk.health()
            except SDKError as err:
                fatal(f"Could not send health ping, {err}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.unhealthy.wait(), HEALTH_INTERVAL)
        log.info("Stopped health pings")

    async def exit(self) -> None:
        log.info("Received EXIT command. Exiting.")
        try:
            await self.sdk.shutdown()
        except SDKError:
            log.info("Could not shutdown")

    async def respond(self, text: str, ack_prefix: str) -> str:
        response, add_ack, error = await handle_response(text, self.sdk, self.stop_health)
        if error is not None:
            return "ERROR: " + response + "\n"
        if add_ack:
            return ack_prefix + response + "\n"
        return response

    async def shutdown_after_allocations(self, ready_iterations: int, delay: float) -> None:
        gs = await self.sdk.game_server()
        log.info("Initial game Server state = %s", gs.status.state)
        state = {
            "last": gs.object_meta.annotations.get(LAST_ALLOCATED, ""),
            "left": ready_iterations,
        }

        async def later(iterations: int) -> None:
            await asyncio.sleep(delay)
            try:
                if iterations > 0:
                    log.info("Moving Game Server back to Ready")
                    await self.sdk.ready()
                    return
                log.info("Moving Game Server to Shutdown")
                await self.sdk.shutdown()
            except SDKError as err:
                fatal(f"Could not move game server after allocation: {err}")

        def on_update(update: GameServer) -> None:
            allocated = update.object_meta.annotations.get(LAST_ALLOCATED, "")
            log.info(
                "Watch Game Server callback fired. State = %s, Last Allocated = %r",
                update.status.state,
                allocated,
            )
            if allocated != state["last"]:
                log.info("Game Server Allocated")
                state["last"] = allocated
                state["left"] = int(state["left"]) - 1
                self.spawn(later(int(state["left"])))

        await self.sdk.watch_game_server(on_update)


class UDPProtocol(asyncio.DatagramProtocol):
    def __init__(self, server: SimpleGameServer) -> None:
        self.server = server
        self.transport: asyncio.DatagramTransport | None = None
        self.lock = asyncio.Lock()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        self.server.spawn(self._handle(data, addr))

    async def _handle(self, data: bytes, addr: tuple[str, int]) -> None:
        async with self.lock:  # one command at a time, like the Go read loop
            text = data.decode(errors="replace").strip()
            log.info("Received UDP: %s", text)
            response = await self.server.respond(text, "ACK: ")
            assert self.transport is not None
            self.transport.sendto(response.encode(), addr)
            if text == "EXIT":
                await self.server.exit()


async def tcp_connection(
    server: SimpleGameServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    peer = writer.get_extra_info("peername")
    log.info("TCP Client %s connected", peer)
    try:
        while line := await reader.readline():
            text = line.decode(errors="replace").rstrip("\r\n")
            log.info("TCP txt: %s", text)
            response = await server.respond(text, "ACK TCP: ")
            writer.write((response + "\n").encode())
            await writer.drain()
            # Go compares the framed reply, so EXIT never triggers over TCP; kept as is.
            if response == "EXIT":
                await server.exit()
    except ConnectionError:
        pass
    finally:
        log.info("TCP Client %s disconnected", peer)
        writer.close()


async def run(args: argparse.Namespace) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    log.info("Creating SDK instance")
    sdk = AsyncSDK()
    try:
        await sdk.connect()
    except SDKError as err:
        fatal(f"Could not connect to sdk: {err}")
    server = SimpleGameServer(sdk)
    log.info("Starting Health Ping")
    server.spawn(server.do_health())

    port = str(args.port)
    if args.passthrough:
        gs = await sdk.game_server()
        port = str(gs.status.ports[0].port)
    if args.tcp:
        log.info("Starting TCP server, listening on port %s", port)
        await asyncio.start_server(lambda r, w: tcp_connection(server, r, w), port=int(port))
    if args.udp:
        log.info("Starting UDP server, listening on port %s", port)
        await loop.create_datagram_endpoint(
            lambda: UDPProtocol(server), local_addr=("0.0.0.0", int(port))
        )
    if args.automaticShutdownDelaySec > 0:
        await server.shutdown_after_allocations(
            args.readyIterations, args.automaticShutdownDelaySec
        )
    elif args.automaticShutdownDelayMin > 0:
        await server.shutdown_after_allocations(
            args.readyIterations, args.automaticShutdownDelayMin * 60
        )
    if args.ready:
        if args.readyDelaySec > 0:
            log.info("Waiting %d seconds before moving to ready", args.readyDelaySec)
            await asyncio.sleep(args.readyDelaySec)
        log.info("Marking this server as ready")
        try:
            await sdk.ready()
        except SDKError:
            fatal("Could not send ready message")
    await stop.wait()
    log.info("Waiting %d seconds before exiting", args.gracefulTerminationDelaySec)
    await asyncio.sleep(args.gracefulTerminationDelaySec)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stdout)
    args = parse_flags(argv, dict(os.environ))
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
