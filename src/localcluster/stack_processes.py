"""The local stack's child processes (controller, allocator service, extensions, nodes).

`spawn(argv, log_dir, log_name)` starts one with stdin closed and stdout and stderr appended to
`<log_dir>/<log_name>` (discarded without a `log_dir`), `PYTHONUNBUFFERED=1` in its environment;
`terminate(proc, kill, timeout)` stops one (SIGTERM, or SIGKILL with `kill`; SIGKILL when it
outlives `timeout`); `free_port()` is a port free on 127.0.0.1 for one to bind.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
from pathlib import Path
from typing import Any

from .nodes.spawn import start_process


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (for a child process to bind)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def terminate(proc: asyncio.subprocess.Process | None, kill: bool, timeout: float) -> None:
    """SIGTERM (or SIGKILL) a child and wait for it; SIGKILL when it outlives `timeout`."""
    if proc is None or proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()


async def spawn(argv: list[str], log_dir: str | None, log_name: str) -> asyncio.subprocess.Process:
    out: Any = asyncio.subprocess.DEVNULL
    if log_dir:
        Path(log_dir).mkdir(parents=True, exist_ok=True)
        out = open(Path(log_dir) / log_name, "ab")  # noqa: SIM115
    try:
        return await start_process(
            argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out,
            stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    finally:
        if out is not asyncio.subprocess.DEVNULL:
            out.close()
