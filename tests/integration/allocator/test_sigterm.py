"""`agones allocator` as a process: SIGTERM while allocations stream in → exit 0, and every
GameServer it allocated was answered to its caller (nothing allocated and lost)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import aiohttp
import grpc
import pytest

from agones.allocator.proto import allocation_pb2 as pb
from tests.allocator.harness import apply_policy_crd, free_port, grpc_channel, make_certs
from tests.integration.gameserverallocations.harness import GAME_SERVERS, harness
from tests.waiting import wait_for_async

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

METHOD = "/allocation.AllocationService/Allocate"


async def _ready(port: int) -> bool:
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{port}/ready") as response,
        ):
            return response.status == 200
    except aiohttp.ClientError:
        return False


async def test_sigterm_during_allocations_exits_0_and_loses_nothing(tmp_path: Path) -> None:
    certs = make_certs(tmp_path)
    port, health = free_port(), free_port()
    async with harness() as h:
        await apply_policy_crd(h.rest)
        for i in range(200):
            await h.create_ready(f"gs-{i}")
        log = (tmp_path / "allocator.log").open("wb")
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "agones",
            "allocator",
            f"--kubeconfig={h.server.kubeconfig}",
            f"--http-port={port}",
            f"--grpc-port={port}",
            f"--health-port={health}",
            "--address=127.0.0.1",
            f"--tls-dir={certs.tls_dir}",
            f"--client-ca-dir={certs.ca_dir}",
            "--allocation-batch-wait-time=0s",
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            await wait_for_async(lambda: _ready(health), timeout=60, what="the allocator /ready")
            answered: list[str] = []
            refused: list[grpc.StatusCode] = []

            async def worker() -> None:
                async with grpc_channel(port, certs, certs.client) as channel:
                    call = channel.unary_unary(
                        METHOD,
                        request_serializer=pb.AllocationRequest.SerializeToString,
                        response_deserializer=pb.AllocationResponse.FromString,
                    )
                    while True:
                        try:
                            response = await call(
                                pb.AllocationRequest(namespace="default"), timeout=20
                            )
                        except grpc.aio.AioRpcError as err:
                            refused.append(err.code())
                            return
                        answered.append(response.gameServerName)

            workers = [asyncio.create_task(worker()) for _ in range(8)]
            await wait_for_async(lambda: len(answered) >= 20, what="allocations under way")
            proc.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(proc.wait(), 60)
            await asyncio.wait_for(asyncio.gather(*workers), 30)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            log.close()
        assert code == 0
        assert set(refused) <= {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED}, refused
        assert len(set(answered)) == len(answered)
        stored = await h.rest.list(GAME_SERVERS, "default")
        allocated = {
            gs["metadata"]["name"] for gs in stored["items"] if gs["status"]["state"] == "Allocated"
        }
        assert allocated == set(answered)
        assert len(answered) < 200
