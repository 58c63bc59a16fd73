"""`exec` into a process pod's container over the Kubernetes websocket streaming protocol.

The protocol (`k8s.io/apimachinery/pkg/util/httpstream/wsstream`, `remotecommand`): a websocket
with subprotocol `v5.channel.k8s.io` (kubectl 1.30 and later) or `v4.channel.k8s.io` (the
official clients' `stream()`); each binary message is one channel byte and data: 0 stdin, 1
stdout, 2 stderr, 3 the final `Status` (JSON: Success, or Failure with reason `NonZeroExitCode`
and the exit code as the `ExitCode` cause), 4 terminal resize (`{"Width": w, "Height": h}`); in v5,
`[255, channel]` closes that channel (the client's stdin EOF).

The command runs as a container's process does: in the pod's namespaces (`argv_prefix`, the
`nsenter` prefix of its network namespace) with the container's environment; with `tty=true` on
a pseudo-terminal (stderr joins stdout, resizes apply to it). A command still running when its
websocket closes (the client went away, the kubelet stops) is killed. SPDY/3.1, which kubectl before 1.30
speaks, is not served: such a request gets a 400 saying so (`SPDY_UNSUPPORTED`).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import signal
import struct
import termios
from collections.abc import Callable
from typing import Any

from aiohttp import WSMsgType, web

from .spawn import start_process

PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
SPDY_UNSUPPORTED = (
    "exec on the local cluster speaks the websocket streaming protocol (v5.channel.k8s.io, "
    "v4.channel.k8s.io: kubectl 1.30 or later, the official clients' stream()); this request "
    "asked for SPDY/3.1 (kubectl before 1.30, such as the one matching this 1.28 server), which "
    "the local kubelet does not serve: run kubectl 1.30+ (e.g. kubectl.1.31) or the command on "
    "this machine"
)


def _flag(query: Any, name: str) -> bool:
    return str(query.get(name, "")).lower() in ("1", "true")


def exec_status(code: int | None, command: list[str], error: str = "") -> dict[str, Any]:
    """The `Status` sent on the error channel when the command has ended."""
    if error:
        return {"metadata": {}, "status": "Failure", "message": error, "reason": "InternalError"}
    if code == 0:
        return {"metadata": {}, "status": "Success"}
    return {
        "metadata": {},
        "status": "Failure",
        "message": (
            f"command terminated with non-zero exit code: error executing command "
            f"[{' '.join(command)}], exit code {code}"
        ),
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": str(code)}]},
    }


async def refuse_exec(request: web.Request, message: str) -> web.StreamResponse:
    """Answer an exec that cannot run: a Failure `Status` on the error channel of the websocket
    (as the runtime's streaming server does), or a 400 to a request that is not one."""
    if not is_websocket(request):
        return web.Response(status=400, text=SPDY_UNSUPPORTED + "\n")
    ws = web.WebSocketResponse(protocols=PROTOCOLS)
    await ws.prepare(request)
    status = {"metadata": {}, "status": "Failure", "message": message, "reason": "BadRequest"}
    with contextlib.suppress(ConnectionResetError):
        await ws.send_bytes(bytes([ERROR]) + json.dumps(status).encode())
    await ws.close()
    return ws


def is_websocket(request: web.Request) -> bool:
    return request.headers.get("Upgrade", "").lower() == "websocket"


async def serve_exec(
    request: web.Request, argv_prefix: list[str], env: dict[str, str]
) -> web.StreamResponse:
    """Run `command` (from the query) for one websocket session (see the module docstring)."""
    command = request.query.getall("command", [])
    if not is_websocket(request):
        return web.Response(status=400, text=SPDY_UNSUPPORTED + "\n")
    if not command:
        return web.Response(status=400, text="you must specify at least 1 command\n")
    ws = web.WebSocketResponse(protocols=PROTOCOLS, autoping=True)
    await ws.prepare(request)
    tty = _flag(request.query, "tty")
    session = _Session(ws, ws.ws_protocol == PROTOCOLS[0], tty)
    try:
        code = await session.run([*argv_prefix, *command], env, _flag(request.query, "stdin"))
        status = exec_status(code, command)
    except OSError as err:
        status = exec_status(None, command, f"exec failed: {err}")
    with contextlib.suppress(ConnectionResetError):
        await ws.send_bytes(bytes([ERROR]) + json.dumps(status).encode())
    await ws.close()
    return ws


class _Session:
    def __init__(self, ws: web.WebSocketResponse, v5: bool, tty: bool) -> None:
        self.ws = ws
        self.v5 = v5
        self.tty = tty

    async def run(self, argv: list[str], env: dict[str, str], stdin: bool) -> int:
        master = slave = -1
        if self.tty:
            master, slave = os.openpty()
        pipe = asyncio.subprocess.PIPE
        try:
            proc = await start_process(
                argv,
                env=env,
                stdin=slave if self.tty else (pipe if stdin else asyncio.subprocess.DEVNULL),
                stdout=slave if self.tty else pipe,
                stderr=slave if self.tty else pipe,
            )
        except OSError:
            for fd in (master, slave):
                if fd >= 0:
                    os.close(fd)
            raise
        if self.tty:
            os.close(slave)
        pumps = self._pumps(proc, master)
        reader = asyncio.create_task(self._read_client(proc, master))
        waiter = asyncio.create_task(proc.wait())
        await asyncio.wait([waiter, reader], return_when=asyncio.FIRST_COMPLETED)
        if not waiter.done():
            # The client went away (or the kubelet stops): nobody is left to read the command,
            # so it is killed rather than left running in the pod.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        code = await waiter
        await asyncio.gather(*pumps, return_exceptions=True)
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
        if master >= 0:
            os.close(master)
        return code if code >= 0 else 128 - code

    def _pumps(self, proc: asyncio.subprocess.Process, master: int) -> list[asyncio.Task[None]]:
        if self.tty:
            return [asyncio.create_task(self._pump_fd(master))]
        streams = [(proc.stdout, STDOUT), (proc.stderr, STDERR)]
        return [asyncio.create_task(self._pump(s, ch)) for s, ch in streams if s is not None]

    async def _send(self, channel: int, data: bytes) -> None:
        with contextlib.suppress(ConnectionResetError):
            await self.ws.send_bytes(bytes([channel]) + data)

    async def _pump(self, stream: asyncio.StreamReader, channel: int) -> None:
        while chunk := await stream.read(32768):
            await self._send(channel, chunk)

    async def _pump_fd(self, fd: int) -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[bytes] = asyncio.Queue()

        def readable() -> None:
            try:
                queue.put_nowait(os.read(fd, 32768))
            except OSError:
                queue.put_nowait(b"")

        loop.add_reader(fd, readable)
        try:
            while chunk := await queue.get():
                await self._send(STDOUT, chunk)
        finally:
            loop.remove_reader(fd)

    async def _read_client(self, proc: asyncio.subprocess.Process, master: int) -> None:
        write: Callable[[bytes], None] = (
            (lambda data: _write_all(master, data)) if self.tty else _stdin_writer(proc)
        )
        async for msg in self.ws:
            # Text frames carry the same channel byte (the Python client sends str as text).
            if msg.type == WSMsgType.TEXT:
                payload = msg.data.encode()
            elif msg.type == WSMsgType.BINARY:
                payload = msg.data
            else:
                continue
            if not payload:
                continue
            channel, data = payload[0], payload[1:]
            if channel == STDIN:
                write(data)
            elif channel == RESIZE and self.tty:
                _resize(master, data)
            elif channel == CLOSE and self.v5 and data[:1] == bytes([STDIN]):
                if self.tty:
                    _write_all(master, b"\x04")  # EOF at the terminal
                elif proc.stdin is not None:
                    proc.stdin.close()


def _stdin_writer(proc: asyncio.subprocess.Process) -> Callable[[bytes], None]:
    def write(data: bytes) -> None:
        if proc.stdin is not None and not proc.stdin.is_closing():
            proc.stdin.write(data)

    return write


def _write_all(fd: int, data: bytes) -> None:
    with contextlib.suppress(OSError):
        while data:
            data = data[os.write(fd, data) :]


def _resize(fd: int, data: bytes) -> None:
    try:
        size = json.loads(data)
        width, height = int(size.get("Width", 0)), int(size.get("Height", 0))
    except (ValueError, TypeError, AttributeError):
        return
    if 0 < width < 65536 and 0 < height < 65536:
        with contextlib.suppress(OSError):
            fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))
