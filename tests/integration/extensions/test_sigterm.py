"""`agones extensions` as a process: SIGTERM while allocations stream in through its HTTPS port →
`/ready` fails at once while the webhooks and the allocation API keep answering for
`--readiness-shutdown-duration` → the in-flight requests are answered → exit 0 within the chart's
grace period (30 s), and every GameServer it allocated was answered to its caller (nothing
allocated and lost, nothing allocated twice). Writes to the local API server are slowed so that
allocations are in flight when the signal comes."""

from __future__ import annotations

import asyncio
import os
import signal
import ssl
import sys
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import aiohttp
import pytest

from agones.client.versioned.resources import GAME_SERVERS
from tests.integration.gameserverallocations.harness import harness
from tests.sdkserver.harness import free_port
from tests.waiting import wait_for_async

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.timeout(180)]

GRACE_PERIOD = 30.0
"""The chart's extensions pods' grace period (Kubernetes' default)."""
SHUTDOWN_DURATION = 1.0
GSA = {"apiVersion": "allocation.agones.dev/v1", "kind": "GameServerAllocation", "spec": {}}
REVIEW = {
    "apiVersion": "admission.k8s.io/v1",
    "kind": "AdmissionReview",
    "request": {
        "uid": "u-1",
        "kind": {"group": "agones.dev", "version": "v1", "kind": "Fleet"},
        "resource": {"group": "agones.dev", "version": "v1", "resource": "fleets"},
        "operation": "CREATE",
        "namespace": "default",
        "object": {
            "apiVersion": "agones.dev/v1",
            "kind": "Fleet",
            "metadata": {"name": "f", "namespace": "default"},
            "spec": {"template": {"spec": {"template": {"spec": {"containers": []}}}}},
        },
    },
}


async def ready_status(port: int) -> int:
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{port}/ready") as response,
        ):
            return response.status
    except aiohttp.ClientError:
        return 0


async def test_sigterm_during_allocations_drains_and_loses_nothing(tmp_path: Path) -> None:
    port, health = free_port(), free_port()
    async with harness() as h:
        for i in range(200):
            await h.create_ready(f"gs-{i}")
        h.server.faults.set_write_latency(0.05)  # allocations last: SIGTERM finds some in flight
        log = (tmp_path / "extensions.log").open("wb")
        proc = await _start_extensions(h.server.kubeconfig, tmp_path, port, health, log)
        try:
            await wait_for_async(
                lambda: _ok(ready_status(health)), timeout=60, what="extensions /ready"
            )
            traffic = Traffic(
                f"https://127.0.0.1:{port}",
                ssl.create_default_context(cafile=str(tmp_path / "server.crt")),
            )
            code, sent, failed_ready = await _sigterm_under_load(proc, health, traffic)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            log.close()
        assert code == 0
        # The webhooks answered after /ready had failed: the Service stops routing first
        reviewed, refused, answered = traffic.reviewed, traffic.refused, traffic.answered
        assert any(t > failed_ready for t in reviewed), (sent, failed_ready, reviewed)
        # Refused only at the connection: a refused connect, a reset, or a connection the server
        # closed (an answer lost after allocating would show below as allocated but not answered)
        assert all(kind == "connection" for kind, _ in refused), refused
        assert len(set(answered)) == len(answered)
        stored = await h.rest.list(GAME_SERVERS, "default")
        allocated = {
            gs["metadata"]["name"] for gs in stored["items"] if gs["status"]["state"] == "Allocated"
        }
        assert allocated == set(answered)
        assert len(answered) < 200


async def _start_extensions(
    kubeconfig: str | None, tmp_path: Path, port: int, health: int, log: IO[bytes]
) -> asyncio.subprocess.Process:
    """`agones extensions` as a process, its certificate in `tmp_path`, its output to `log`."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agones",
        "extensions",
        f"--kubeconfig={kubeconfig}",
        f"--webhook-port={port}",
        f"--http-port={health}",
        "--bind=127.0.0.1",
        f"--cert-file={tmp_path / 'server.crt'}",
        f"--key-file={tmp_path / 'server.key'}",
        f"--readiness-shutdown-duration={SHUTDOWN_DURATION}s",
        stdout=log,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


@dataclass
class Traffic:
    """Clients of the extensions' HTTPS port until it closes: what each was answered or refused."""

    base: str
    tls: ssl.SSLContext
    answered: list[str] = field(default_factory=list)
    reviewed: list[float] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    signalled: asyncio.Event = field(default_factory=asyncio.Event)

    async def allocate(self) -> None:
        """Allocate one after the other, recording the GameServer of each answer."""
        url = f"{self.base}/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations"
        async with aiohttp.ClientSession() as session:
            while True:
                try:
                    async with session.post(url, json=GSA, ssl=self.tls) as resp:
                        body = await resp.json()
                except aiohttp.ClientError as err:
                    self.refused.append((_kind(err), repr(err)))
                    return
                assert resp.status == 201, body
                if body["status"]["state"] == "Allocated":
                    self.answered.append(body["status"]["gameServerName"])

    async def review(self) -> None:
        """Call the mutating webhook, recording when it answered after the signal."""
        async with aiohttp.ClientSession() as session:
            while True:
                try:
                    async with session.post(
                        f"{self.base}/mutate", json=REVIEW, ssl=self.tls
                    ) as resp:
                        body = await resp.json()
                except aiohttp.ClientError:
                    return
                assert body["response"]["allowed"] is True, body
                if self.signalled.is_set():
                    self.reviewed.append(time.monotonic())
                await asyncio.sleep(0.05)


async def _sigterm_under_load(
    proc: asyncio.subprocess.Process, health: int, traffic: Traffic
) -> tuple[int, float, float]:
    """SIGTERM once allocations are under way; returns the exit code, when the signal was sent
    and when `/ready` was seen failing."""
    workers = [asyncio.create_task(traffic.allocate()) for _ in range(6)]
    workers.append(asyncio.create_task(traffic.review()))
    await wait_for_async(lambda: len(traffic.answered) >= 20, what="allocations under way")
    proc.send_signal(signal.SIGTERM)
    traffic.signalled.set()
    sent = time.monotonic()
    await wait_for_async(lambda: _is(ready_status(health), 503), timeout=5, what="/ready to fail")
    failed_ready = time.monotonic()
    code = await asyncio.wait_for(proc.wait(), GRACE_PERIOD)
    await asyncio.wait_for(asyncio.gather(*workers), 30)
    return code, sent, failed_ready


def _kind(err: aiohttp.ClientError) -> str:
    """`connection` for an error of the connection itself (refused, reset by peer, closed by the
    server; a timeout is not one), `http` for anything said over it."""
    if isinstance(err, aiohttp.ClientConnectionError) and not isinstance(err, TimeoutError):
        return "connection"
    return "http"


async def _ok(value: Awaitable[int]) -> bool:
    return await value == 200


async def _is(value: Awaitable[int], expected: int) -> bool:
    return await value == expected
