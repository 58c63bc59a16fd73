"""The local stack's extensions as child processes (`StackOptions(extensions_process=True)`).

`ExtensionsChildren(spawn, free_port, kubeconfig, replicas, batch_wait, gates, extra_args).start(
cert, key, tls_dir)`
writes the stack's webhook certificate into `tls_dir`, starts `replicas` `agones extensions`
processes (webhooks and the allocation API on 127.0.0.1, replica i with `--allocation-partition
i/replicas`, then `extra_args`: the stack gives its client budget), each on a free port (`ports`, for the Service's addresses) with its health port, and
returns once every one answers `/ready` (its informers synced, its ports bound); `RuntimeError`
when one exits or is not ready in time. `procs` are the processes, for the stack to stop.
`wait_ready(proc, health_port, what, timeout)` is that wait, shared with the allocator service.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import aiohttp

Spawn = Callable[[list[str], str], Awaitable[asyncio.subprocess.Process]]
"""(argv, log file name) -> the started process (the stack's `_spawn`)."""


async def wait_ready(
    proc: asyncio.subprocess.Process, health_port: int, what: str, timeout: float
) -> None:
    """Until the child's `/ready` on `health_port` answers 200; `RuntimeError` when it exits or
    `timeout` passes first."""
    url = f"http://127.0.0.1:{health_port}/ready"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    async with aiohttp.ClientSession() as session:
        while True:
            if proc.returncode is not None:
                raise RuntimeError(f"{what} exited ({proc.returncode})")
            with contextlib.suppress(aiohttp.ClientError):
                async with session.get(url) as response:
                    if response.status == 200:
                        return
            if loop.time() > deadline:
                raise RuntimeError(f"{what} did not become ready")
            await asyncio.sleep(0.1)


class ExtensionsChildren:
    def __init__(
        self,
        spawn: Spawn,
        free_port: Callable[[], int],
        kubeconfig: str,
        replicas: int,
        batch_wait: float,
        gates: str,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.spawn = spawn
        self.free_port = free_port
        self.kubeconfig = kubeconfig
        self.replicas = replicas
        self.batch_wait = batch_wait
        self.gates = gates
        self.extra_args = list(extra_args)
        self.procs: list[asyncio.subprocess.Process] = []
        self.ports: list[int] = []

    def argv(self, index: int, port: int, http_port: int, tls: Path) -> list[str]:
        return [
            sys.executable,
            "-m",
            "agones",
            "extensions",
            f"--kubeconfig={self.kubeconfig}",
            "--bind=127.0.0.1",
            f"--webhook-port={port}",
            f"--http-port={http_port}",
            f"--cert-file={tls / 'tls.crt'}",
            f"--key-file={tls / 'tls.key'}",
            f"--allocation-batch-wait-time={self.batch_wait}s",
            f"--allocation-partition={index}/{self.replicas}",
            "--log-level=warn",
            *([f"--feature-gates={self.gates}"] if self.gates else []),
            *self.extra_args,
        ]

    async def start(self, cert: bytes, key: bytes, tls: Path, timeout: float = 60.0) -> None:
        (tls / "tls.crt").write_bytes(cert)
        (tls / "tls.key").write_bytes(key)
        (tls / "tls.key").chmod(0o600)
        health = []
        for index in range(self.replicas):
            port, http_port = self.free_port(), self.free_port()
            proc = await self.spawn(
                self.argv(index, port, http_port, tls), f"extensions-{index}.log"
            )
            self.procs.append(proc)
            self.ports.append(port)
            health.append(http_port)
        for proc, http_port in zip(self.procs, health, strict=True):
            await wait_ready(proc, http_port, "agones extensions", timeout)
