"""`agones controller` as a process, elected: SIGTERM while a GameServerSet is being filled →
`/ready` fails while the in-flight creations drain → the Lease is released → exit 0 within the
chart's grace period (30 s); a second controller then takes the Lease and the set ends
with exactly its replicas (nothing created twice, nothing lost).

Every write to the local API server is slowed (`faults.set_write_latency`) so the drain lasts long
enough to be observed on `/ready`.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from agones.client.config import load_kube_config
from agones.client.rest import RESTClient
from agones.client.versioned.resources import GAME_SERVER_SETS, GAME_SERVERS, LEASES
from agones.localcluster import LocalAPIServer
from agones.localcluster.stack_agones import install_crds
from tests.sdkserver.harness import free_port
from tests.waiting import wait_for_async

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.timeout(180)]

REPLICAS = 300
GRACE_PERIOD = 30.0
"""The chart's `agones.controller.terminationGracePeriodSeconds`."""
WRITE_LATENCY = 0.2
"""Seconds each write to the API server takes while the first controller runs."""


def game_server_set(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServerSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": REPLICAS,
            "template": {
                "spec": {
                    "ports": [{"name": "default", "containerPort": 7654}],
                    "template": {"spec": {"containers": [{"name": "game", "image": "game"}]}},
                }
            },
        },
    }


async def ready_status(port: int) -> int:
    """`/ready`'s status code; 0 when nothing answers."""
    try:
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{port}/ready") as response,
        ):
            return response.status
    except aiohttp.ClientError:
        return 0


async def start_controller(
    server: LocalAPIServer, http_port: int, log: Any
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agones",
        "controller",
        f"--kubeconfig={server.kubeconfig}",
        "--min-port=7000",
        "--max-port=8000",
        f"--http-port={http_port}",
        "--leader-election=true",
        "--pod-namespace=default",
        stdout=log,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


async def holder(rest: RESTClient) -> str:
    try:
        lease = await rest.get(LEASES, "agones-controller-lock", namespace="default")
    except Exception:
        return ""
    return str(lease["spec"].get("holderIdentity") or "")


async def count(rest: RESTClient) -> int:
    return len((await rest.list(GAME_SERVERS, "default"))["items"])


async def test_sigterm_drains_releases_the_lease_and_loses_nothing(tmp_path: Path) -> None:
    async with LocalAPIServer() as server, RESTClient(load_kube_config(server.kubeconfig)) as rest:
        await install_crds(rest)
        first_port, second_port = free_port(), free_port()
        log = (tmp_path / "controller.log").open("wb")
        first = await start_controller(server, first_port, log)
        second: asyncio.subprocess.Process | None = None
        try:
            await wait_for_async(lambda: holder(rest), timeout=60, what="the first to lead")
            await wait_for_async(
                lambda: _is(ready_status(first_port), 200), timeout=60, what="/ready"
            )
            server.faults.set_write_latency(WRITE_LATENCY)
            await rest.create(GAME_SERVER_SETS, game_server_set("busy"), namespace="default")
            await wait_for_async(lambda: _at_least(count(rest), 10), what="creations under way")
            first.send_signal(signal.SIGTERM)
            statuses = [await ready_status(first_port)]
            created_when_unready: int | None = None
            while first.returncode is None and statuses[-1] != 0:
                if statuses[-1] == 503 and created_when_unready is None:
                    created_when_unready = await count(rest)
                statuses.append(await ready_status(first_port))
            code = await asyncio.wait_for(first.wait(), GRACE_PERIOD)
            assert code == 0
            assert 503 in statuses and 200 not in statuses[statuses.index(503) :], statuses
            assert await holder(rest) == ""  # released, not left to expire
            left = await count(rest)
            assert left < REPLICAS  # stopped mid-way: the rest is the next leader's work
            # the creations in flight at SIGTERM were finished while /ready was failing
            assert created_when_unready is not None and left > created_when_unready
            server.faults.set_write_latency(0.0)
            second = await start_controller(server, second_port, log)
            await wait_for_async(lambda: holder(rest), timeout=30, what="the second to lead")
            await wait_for_async(
                lambda: _is(count(rest), REPLICAS), timeout=90, what="the set to fill"
            )
            await wait_for_async(
                lambda: _status_replicas(rest), timeout=30, what="the set's status"
            )
            names = [
                gs["metadata"]["name"] for gs in (await rest.list(GAME_SERVERS, "default"))["items"]
            ]
            assert len(set(names)) == len(names) == REPLICAS
        finally:
            for proc in (first, second):
                if proc is not None and proc.returncode is None:
                    proc.kill()
                    await proc.wait()
            log.close()


async def _is(value: Any, expected: Any) -> bool:
    return bool(await value == expected)


async def _at_least(value: Any, minimum: int) -> bool:
    return bool(await value >= minimum)


async def _status_replicas(rest: RESTClient) -> bool:
    gss = await rest.get(GAME_SERVER_SETS, "busy", namespace="default")
    return bool((gss.get("status") or {}).get("replicas") == REPLICAS)
