"""Cluster mode against the project's local API server (`agones.localcluster`, merged separately).

The sidecar runs as a process with the local API server's kubeconfig (TLS, bearer token) and
serves one GameServer of a GameServer CRD: Ready → RequestReady written; 100 SetLabel calls in
100 ms → at most 2 writes; Reserve(1) → Reserved → back to RequestReady by itself; missed health
pings → Unhealthy, which sticks; counter errors as gRPC codes. Runs in the default suite.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import grpc
import pytest

from agones.client.config import load_kube_config
from agones.client.errors import NotFoundError
from agones.client.versioned.resources import CUSTOM_RESOURCE_DEFINITIONS, GAME_SERVERS
from agones.sdk import AsyncSDK, SDKError
from agones.sdkserver.kubestore import KubeGameServerStore
from tests.sdkserver.harness import free_port
from tests.waiting import wait_for_async

localcluster = pytest.importorskip("agones.localcluster.apiserver.server")

pytestmark = pytest.mark.slow

CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "gameservers.agones.dev"},
    "spec": {
        "group": "agones.dev",
        "scope": "Namespaced",
        "names": {"plural": "gameservers", "singular": "gameserver", "kind": "GameServer"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}
GS: dict[str, Any] = {
    "apiVersion": "agones.dev/v1",
    "kind": "GameServer",
    "metadata": {"name": "gs-1", "namespace": "default"},
    "spec": {"health": {"periodSeconds": 1, "failureThreshold": 2, "initialDelaySeconds": 0}},
    "status": {
        "state": "Scheduled",
        "reservedUntil": None,
        "counters": {"rooms": {"count": 0, "capacity": 5}},
        "lists": {},
    },
}


@contextlib.asynccontextmanager
async def api_with_game_server() -> AsyncIterator[str]:
    async with localcluster.LocalAPIServer(tls=True, token="sdk-token") as srv:
        store = KubeGameServerStore(load_kube_config(srv.kubeconfig), "default", "gs-1")
        crds = CUSTOM_RESOURCE_DEFINITIONS
        try:
            await store.rest.create(crds, CRD)
            for _ in range(100):  # the CRD's API appears shortly after
                with contextlib.suppress(NotFoundError):
                    await store.rest.create(GAME_SERVERS, GS, "default")
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("the GameServer CRD's API never appeared")
        finally:
            await store.close()
        yield str(srv.kubeconfig)


async def barrier(sdk: AsyncSDK, store: KubeGameServerStore, n: int) -> None:
    """Until an annotation set now is written: the sidecar's queue is fair and delays every key
    alike, so whatever it had queued before (a label, a state) has been handled."""
    await sdk.set_annotation("barrier", str(n))

    async def written() -> bool:
        annotations = (await store.get())["metadata"].get("annotations") or {}
        return bool(annotations.get("agones.dev/sdk-barrier") == str(n))

    await wait_for_async(written, 10, 0.05, f"barrier {n}")


async def test_sidecar_against_the_local_api_server() -> None:
    async with api_with_game_server() as kubeconfig:
        store = KubeGameServerStore(load_kube_config(kubeconfig), "default", "gs-1")
        grpc_port, health_port = free_port(), free_port()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agones", "sdkserver", f"--kubeconfig={kubeconfig}",
            "--gameserver-name=gs-1", "--pod-namespace=default", "--address=127.0.0.1",
            f"--grpc-port={grpc_port}", "--http-port=0", f"--health-port={health_port}",
            env=dict(os.environ), stdout=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        sdk = AsyncSDK("127.0.0.1", grpc_port)
        writes: list[dict[str, Any]] = []

        async def count_writes() -> None:
            async for gs in store.watch():
                writes.append(gs)

        watcher = asyncio.create_task(count_writes())
        try:
            await sdk.connect(20)

            async def state_is(state: str) -> bool:
                return bool((await store.get())["status"]["state"] == state)

            await sdk.ready()
            await wait_for_async(lambda: state_is("RequestReady"), 10, 0.05, "RequestReady")

            await barrier(sdk, store, 0)
            before = len(writes)
            for i in range(100):
                await sdk.set_label("round", str(i))
                await asyncio.sleep(0.001)

            async def last_label() -> bool:
                labels = (await store.get())["metadata"].get("labels") or {}
                return bool(labels.get("agones.dev/sdk-round") == "99")

            await barrier(sdk, store, 1)
            assert await last_label()
            rounds = [
                (gs["metadata"].get("labels") or {}).get("agones.dev/sdk-round") for gs in writes
            ]
            changes = sum(1 for a, b in itertools.pairwise(rounds[before - 1 :]) if a != b)
            assert changes <= 2

            await sdk.reserve(1)
            await wait_for_async(lambda: state_is("Reserved"), 10, 0.05, "Reserved")
            await wait_for_async(
                lambda: state_is("RequestReady"), 5, 0.05, "back to Ready after Reserve"
            )

            with pytest.raises(SDKError) as err:
                await sdk.beta.set_counter_count("rooms", 6)
            assert err.value.code == grpc.StatusCode.UNKNOWN

            async with (
                aiohttp.ClientSession() as http,
                http.get(f"http://127.0.0.1:{health_port}/gshealthz") as r,
            ):
                assert r.status == 200
            await wait_for_async(
                lambda: state_is("Unhealthy"), 10, 0.05, "Unhealthy after missed pings"
            )
            await sdk.health()
            await sdk.ready()
            await barrier(sdk, store, 2)  # the Ready was handled: Unhealthy sticks
            assert await state_is("Unhealthy")
        finally:
            watcher.cancel()
            await sdk.close()
            await store.close()
            proc.kill()
            await proc.wait()
