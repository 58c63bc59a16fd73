"""examples/simple-game-server driven over UDP and TCP against the SDK server in local mode.

The game server runs as its own process (as in a pod), talking to an in-process LocalSDKServer in
test mode so that every SDK call it makes is visible in `backend.requests`.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agones.featuregates import FeatureGates
from tests.sdkserver.harness import Running, free_port, running_local
from tests.waiting import wait_for_async

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "simple-game-server"
GATES = FeatureGates().with_values(PlayerTracking=True)

pytestmark = pytest.mark.slow


class UDPClient(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.replies: asyncio.Queue[str] = asyncio.Queue()

    def datagram_received(self, data: bytes, addr: object) -> None:
        self.replies.put_nowait(data.decode())


async def start_game_server(srv: Running, *flags: str) -> tuple[asyncio.subprocess.Process, int]:
    port = free_port()
    env = dict(
        os.environ,
        AGONES_SDK_GRPC_HOST="127.0.0.1",
        AGONES_SDK_GRPC_PORT=str(srv.grpc_port),
        PORT=str(port),
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(EXAMPLE), *flags, env=env, stdout=asyncio.subprocess.DEVNULL
    )
    await wait_for_async(
        lambda: "ready" in srv.backend.requests, 15, 0.02, "the game server to call Ready"
    )
    return proc, port


async def stop(proc: asyncio.subprocess.Process) -> int:
    if proc.returncode is None:
        proc.terminate()
    return await asyncio.wait_for(proc.wait(), 10)


@pytest.fixture
async def local_server() -> AsyncIterator[Running]:
    async with running_local(GATES, expected="") as srv:
        yield srv


# (command, reply) over UDP, in order: the whole text protocol against the local SDK server.
UDP_SCRIPT: list[tuple[str, str]] = [
    ("hello world", "ACK: hello world\n"),
    ("GAMESERVER", "NAME: local\n"),
    ("READY", "ACK: READY\n"),
    ("ALLOCATE", "ACK: ALLOCATE\n"),
    ("RESERVE 10s", "ACK: RESERVE 10s\n"),
    ("RESERVE", "ERROR: Invalid RESERVE, should have 1 argument\n"),
    ("RESERVE soon", 'ERROR: time: invalid duration "soon"\n\n'),
    ("LABEL mode ctf", "ACK: LABEL mode ctf\n"),
    ("LABEL mode", "ERROR: Invalid LABEL command, must use zero or 2 arguments\n"),
    ("ANNOTATION map dust", "ACK: ANNOTATION map dust\n"),
    ("PLAYER_CAPACITY 3", "ACK: PLAYER_CAPACITY 3\n"),
    ("PLAYER_CAPACITY", "3\n"),
    ("PLAYER_CAPACITY x", 'ERROR: strconv.Atoi: parsing "x": invalid syntax\n'),
    ("PLAYER_CONNECT p1", "ACK: PLAYER_CONNECT p1\n"),
    ("PLAYER_CONNECTED p1", "true\n"),
    ("PLAYER_CONNECTED p2", "false\n"),
    ("GET_PLAYERS", "p1\n"),
    ("PLAYER_COUNT", "1\n"),
    ("PLAYER_DISCONNECT p1", "ACK: PLAYER_DISCONNECT p1\n"),
    ("PLAYER_COUNT", "0\n"),
    ("GET_COUNTER_COUNT rooms", "COUNTER: 1\n"),
    ("INCREMENT_COUNTER rooms 2", "SUCCESS\n"),
    ("DECREMENT_COUNTER rooms 1", "SUCCESS\n"),
    ("GET_COUNTER_COUNT rooms", "COUNTER: 2\n"),
    ("SET_COUNTER_CAPACITY rooms 20", "SUCCESS\n"),
    ("SET_COUNTER_COUNT rooms 5", "SUCCESS\n"),
    ("GET_COUNTER_CAPACITY rooms", "CAPACITY: 20\n"),
    ("INCREMENT_COUNTER rooms x", 'ERROR: strconv.ParseInt: parsing "x": invalid syntax\n'),
    ("INCREMENT_COUNTER rooms", "ERROR: Invalid INCREMENT_COUNTER, should have 2 arguments\n"),
    ("GET_COUNTER_COUNT nope", "ERROR: -1\n"),
    (
        "SET_COUNTER_COUNT rooms 100",
        "ERROR: could not set Counter rooms count to amount 100: rpc error: code = Unknown "
        "desc = out of range. Count must be within range [0,Capacity]. Found Count: 100, "
        "Capacity: 20\n",
    ),
    ("GET_LIST_CAPACITY players", "CAPACITY: 100\n"),
    ("LIST_CONTAINS players test1", "FOUND: true\n"),
    ("LIST_CONTAINS players nope", "FOUND: false\n"),
    ("GET_LIST_LENGTH players", "LENGTH: 3\n"),
    ("APPEND_LIST_VALUE players test9", "SUCCESS\n"),
    ("DELETE_LIST_VALUE players test0", "SUCCESS\n"),
    ("GET_LIST_VALUES players", "VALUES: test1,test2,test9\n"),
    ("SET_LIST_CAPACITY players 2", "SUCCESS\n"),
    ("GET_LIST_VALUES players", "VALUES: test1,test2\n"),
    ("GET_LIST_VALUES nope", "ERROR: INVALID LIST NAME\n"),
    ("WATCH", "ACK: WATCH\n"),
    ("UNHEALTHY", "ACK: UNHEALTHY\n"),
    ("EXIT", "ACK: EXIT\n"),
]


async def test_udp_text_protocol(local_server: Running) -> None:
    srv = local_server
    proc, port = await start_game_server(srv)
    loop = asyncio.get_running_loop()
    transport, client = await loop.create_datagram_endpoint(
        UDPClient, remote_addr=("127.0.0.1", port)
    )
    try:
        await wait_for_async(lambda: "health" in srv.backend.requests, 15, 0.02, "a health ping")
        for command, reply in UDP_SCRIPT:
            transport.sendto(command.encode())
            got = await asyncio.wait_for(client.replies.get(), 10)
            assert got == reply, command
        gs = srv.backend.gs
        assert gs.object_meta.labels["agones.dev/sdk-mode"] == "ctf"
        assert gs.object_meta.annotations["agones.dev/sdk-map"] == "dust"
        await wait_for_async(
            lambda: gs.status.state == "Shutdown", 15, 0.02, "EXIT to shut the server down"
        )
        assert srv.backend.requests.count("allocate") == 1
        assert "reserve" in srv.backend.requests
    finally:
        transport.close()
        await stop(proc)


async def test_tcp_framing_and_crash(local_server: Running) -> None:
    srv = local_server
    proc, port = await start_game_server(srv, "-tcp", "-udp=false")
    reader, writer = await asyncio.open_connection("127.0.0.1", port)

    async def send(command: str) -> list[str]:
        writer.write(f"{command}\n".encode())
        await writer.drain()
        lines = [await asyncio.wait_for(reader.readline(), 10)]
        # replies that carry their own newline get a second one from the TCP writer
        lines.append(await asyncio.wait_for(reader.readline(), 10))
        return [line.decode() for line in lines]

    try:
        assert await send("hello") == ["ACK TCP: hello\n", "\n"]
        assert await send("GAMESERVER") == ["NAME: local\n", "\n"]
        assert await send("ALLOCATE") == ["ACK TCP: ALLOCATE\n", "\n"]
        assert srv.backend.gs.status.state == "Allocated"
        # Agones' TCP handler compares the framed reply with "EXIT": it never shuts down
        assert await send("EXIT") == ["ACK TCP: EXIT\n", "\n"]
        assert "shutdown" not in srv.backend.requests
        writer.write(b"CRASH 3\n")
        await writer.drain()
        assert await asyncio.wait_for(proc.wait(), 10) == 3
    finally:
        writer.close()
        await stop(proc)


async def test_automatic_shutdown_after_ready_iterations(local_server: Running) -> None:
    srv = local_server
    proc, _ = await start_game_server(
        srv, "-automaticShutdownDelaySec=1", "-readyIterations", "2", "-udp=false"
    )
    gs = srv.backend.gs
    try:
        # the allocator marks each allocation with agones.dev/last-allocated
        gs.object_meta.annotations["agones.dev/last-allocated"] = "t1"
        gs.status.state = "Allocated"
        srv.backend._notify()
        await wait_for_async(
            lambda: srv.backend.requests.count("ready") == 2, 15, 0.02, "back to Ready"
        )
        assert gs.status.state == "Ready"
        gs.object_meta.annotations["agones.dev/last-allocated"] = "t2"
        srv.backend._notify()
        await wait_for_async(
            lambda: gs.status.state == "Shutdown", 15, 0.02, "shutdown after 2nd allocation"
        )
    finally:
        assert await stop(proc) == 0


def test_bad_flag_combinations_are_refused() -> None:
    import subprocess

    result = subprocess.run(
        [sys.executable, str(EXAMPLE), "-readyIterations=2"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 2
    assert "Must set a shutdown delay if using ready iterations" in result.stderr


async def test_passthrough_listens_on_the_port_from_the_game_server(local_server: Running) -> None:
    srv = local_server
    port = free_port()
    srv.backend.gs.status.ports[0].port = port
    proc, _ = await start_game_server(srv, "-passthrough")
    loop = asyncio.get_running_loop()
    transport, client = await loop.create_datagram_endpoint(
        UDPClient, remote_addr=("127.0.0.1", port)
    )
    try:
        transport.sendto(b"GAMESERVER")
        assert await asyncio.wait_for(client.replies.get(), 10) == "NAME: local\n"
    finally:
        transport.close()
        await stop(proc)
