"""`agones sdkserver` in cluster mode, as a process, against a kube-apiserver (fakeapi here).

What the issue asks cluster mode to show: Ready → RequestReady written; 100 SetLabel calls in
100 ms → at most 2 writes; Reserve → Reserved → back to RequestReady by itself; missed health
pings → Unhealthy, which sticks; counter errors as gRPC codes; graceful termination waits for the
GameServer to go away.
"""

from __future__ import annotations

import asyncio
import copy
import os
import signal
import sys
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest

from agones.client.config import load_kube_config
from agones.client.errors import NotFoundError
from agones.sdk import AsyncSDK, SDKError
from agones.sdkserver.kubestore import KubeGameServerStore
from agones.sdkserver.store import ConflictError
from tests.sdkserver.fakeapi import FakeAPI, fake_api
from tests.sdkserver.harness import free_port
from tests.waiting import wait_for_async

GS: dict[str, Any] = {
    "apiVersion": "agones.dev/v1",
    "kind": "GameServer",
    "metadata": {
        "name": "gs-1",
        "namespace": "games",
        "uid": "uid-1",
        "resourceVersion": "5",
        "generation": 1,
        "creationTimestamp": "2024-01-01T00:00:00Z",
    },
    "spec": {"health": {"periodSeconds": 1, "failureThreshold": 2, "initialDelaySeconds": 0}},
    "status": {
        "state": "Scheduled",
        "reservedUntil": None,
        "counters": {"rooms": {"count": 0, "capacity": 5}},
        "lists": {},
    },
}


async def test_kube_store_get_patch_conflict_and_watch(tmp_path: Path) -> None:
    async with fake_api(copy.deepcopy(GS)) as api:
        store = KubeGameServerStore(load_kube_config(api.kubeconfig(tmp_path)), "games", "gs-1")
        try:
            gs = await store.get()
            assert gs["metadata"]["name"] == "gs-1"
            watch = store.watch()
            changed = asyncio.ensure_future(anext(watch))
            result = await store.patch(
                [
                    {"op": "test", "path": "/metadata/resourceVersion", "value": "5"},
                    {"op": "replace", "path": "/status/state", "value": "RequestReady"},
                ]
            )
            assert result["status"]["state"] == "RequestReady"
            assert (await asyncio.wait_for(changed, 5))["status"]["state"] == "RequestReady"
            with pytest.raises(ConflictError):
                await store.patch(
                    [{"op": "test", "path": "/metadata/resourceVersion", "value": "5"}]
                )
            # a dropped watch, then 410 Gone: the informer lists again and keeps following
            api.server.gone_next_watch = True
            api.server.drop_watches()
            await wait_for_async(
                lambda: not api.server.gone_next_watch, 10, 0.02, "the watch that is answered 410"
            )
            api.store.update(lambda gs: gs["status"].update(state="Ready"))
            states = []
            while "Ready" not in states:
                states.append((await asyncio.wait_for(anext(watch), 10))["status"]["state"])
            assert store.informer.reflector.lists == 2
            api.store.update(lambda gs: gs["status"].update(state="Allocated"))
            while states[-1] != "Allocated":
                states.append((await asyncio.wait_for(anext(watch), 10))["status"]["state"])
            assert api.server.watch_requests == 3
            await watch.aclose()
        finally:
            await store.close()


async def test_kube_store_get_survives_a_list_timeout(tmp_path: Path) -> None:
    async with fake_api(copy.deepcopy(GS)) as api:
        store = KubeGameServerStore(load_kube_config(api.kubeconfig(tmp_path)), "games", "gs-1")
        lister_watcher: Any = store.informer.lister_watcher
        real_list, calls = lister_watcher.list, []

        async def flaky_list(*args: Any) -> Any:
            calls.append(1)
            if len(calls) == 1:
                raise TimeoutError  # what aiohttp raises when the session's total timeout passes
            return await real_list(*args)

        lister_watcher.list = flaky_list
        try:
            gs = await asyncio.wait_for(store.get(), 10)
            assert gs["metadata"]["name"] == "gs-1"
            assert len(calls) == 2  # the reflector backed off and listed again
        finally:
            await store.close()


async def test_kube_store_get_of_a_missing_game_server_is_not_found(tmp_path: Path) -> None:
    async with fake_api(copy.deepcopy(GS)) as api:
        config = load_kube_config(api.kubeconfig(tmp_path))
        store = KubeGameServerStore(config, "games", "gs-2")
        try:
            await store.connect()  # the list answers, empty
            with pytest.raises(NotFoundError):
                await asyncio.wait_for(store.get(), 10)
        finally:
            await store.close()


async def test_kube_store_close_lets_the_last_event_go_out(tmp_path: Path) -> None:
    async with fake_api(copy.deepcopy(GS)) as api:
        store = KubeGameServerStore(load_kube_config(api.kubeconfig(tmp_path)), "games", "gs-1")
        gs = await store.get()
        store.record_event(gs, "Normal", "Shutdown", "SDK state change")
        await store.close()
        assert [e["reason"] for e in api.events] == ["Shutdown"]


async def barrier(sdk: AsyncSDK, api: FakeAPI, n: int) -> None:
    """Until a barrier annotation, set now, is written: the sidecar's queue is fair and delays
    every key alike, so whatever it had queued before (a label, a state) has been handled."""
    await sdk.set_annotation("barrier", str(n))
    annotations = lambda: api.store.current["metadata"].get("annotations") or {}  # noqa: E731
    await wait_for_async(
        lambda: annotations().get("agones.dev/sdk-barrier") == str(n), 10, 0.02, "the barrier"
    )


async def log_line(proc: asyncio.subprocess.Process, text: str, timeout: float = 10) -> None:
    """Until the sidecar logs `text` (what it says when it decides to wait, not to act)."""

    async def read() -> None:
        assert proc.stdout is not None
        while line := await proc.stdout.readline():
            if text in line.decode(errors="replace"):
                return
        raise AssertionError(f"the sidecar exited before logging {text!r}")

    await asyncio.wait_for(read(), timeout)


async def ready_writes_request_ready_and_an_event(sdk: AsyncSDK, api: FakeAPI) -> None:
    await sdk.ready()
    await wait_for_async(lambda: state(api) == "RequestReady", 10, 0.02, "RequestReady")
    assert api.store.patches[0][0]["op"] == "test"
    await wait_for_async(lambda: api.events, 10, 0.02, "the state change event")
    event = api.events[0]
    assert (event["reason"], event["message"], event["type"]) == (
        "RequestReady",
        "SDK state change",
        "Normal",
    )
    assert event["involvedObject"]["name"] == "gs-1"
    assert event["source"] == {"component": "gameserver-sidecar"}


async def a_hundred_labels_make_at_most_two_writes(sdk: AsyncSDK, api: FakeAPI) -> None:
    """The sidecar's 200 ms request rate limit batches the hundred calls: at most one write per
    200 ms the calls took, plus the first and the last (two when they take under 200 ms, as
    they do on a quiet machine; a slow one may stretch them over another window)."""
    before = len(api.store.patches)
    loop = asyncio.get_running_loop()
    started = loop.time()
    for i in range(100):
        await sdk.set_label("round", str(i))
        await asyncio.sleep(0.001)
    windows = int((loop.time() - started) / 0.2)
    await barrier(sdk, api, 1)
    labels = api.store.current["metadata"].get("labels", {})
    assert labels.get("agones.dev/sdk-round") == "99"
    writes = [p for p in api.store.patches[before:] if any("/labels" in op["path"] for op in p)]
    assert len(writes) <= 2 + windows


async def reserve_returns_to_ready_by_itself(sdk: AsyncSDK, api: FakeAPI) -> None:
    await sdk.reserve(1)
    await wait_for_async(lambda: state(api) == "Reserved", 10, 0.02, "Reserved")
    assert api.store.current["status"]["reservedUntil"]
    await wait_for_async(
        lambda: state(api) == "RequestReady", 5, 0.02, "back to Ready after Reserve"
    )


async def counter_errors_and_health(sdk: AsyncSDK, api: FakeAPI, health_port: int) -> None:
    with pytest.raises(SDKError) as err:
        await sdk.beta.set_counter_count("rooms", 6)
    assert err.value.code == grpc.StatusCode.UNKNOWN
    with pytest.raises(SDKError) as err:
        await sdk.beta.get_counter_count("nope")
    assert err.value.code == grpc.StatusCode.UNKNOWN
    async with aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{health_port}/healthz") as r:
            assert (r.status, await r.text()) == (200, "ok")
        async with http.get(f"http://127.0.0.1:{health_port}/gshealthz") as r:
            assert r.status == 200  # the first probe starts health checking
        await wait_for_async(
            lambda: state(api) == "Unhealthy", 10, 0.02, "Unhealthy after missed pings"
        )
        async with http.get(f"http://127.0.0.1:{health_port}/gshealthz") as r:
            assert r.status == 500
    await sdk.health()
    await sdk.ready()
    await barrier(sdk, api, 2)  # the Ready was handled: Unhealthy sticks
    assert state(api) == "Unhealthy"


def state(api: FakeAPI) -> str:
    return str(api.store.current["status"]["state"])


@pytest.mark.slow
async def test_sidecar_process_in_cluster_mode(tmp_path: Path) -> None:
    async with fake_api(copy.deepcopy(GS)) as api:
        grpc_port, http_port, health_port = free_port(), free_port(), free_port()
        env = dict(
            os.environ,
            GAMESERVER_NAME="gs-1",
            POD_NAMESPACE="games",
            FEATURE_GATES="SidecarContainers=false",
        )
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "agones", "sdkserver",
            f"--kubeconfig={api.kubeconfig(tmp_path)}",
            "--address=127.0.0.1",
            f"--grpc-port={grpc_port}", f"--http-port={http_port}", f"--health-port={health_port}",
            "--request-rate-limit=200ms",
            env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        sdk = AsyncSDK("127.0.0.1", grpc_port)
        try:
            await sdk.connect(20)
            await ready_writes_request_ready_and_an_event(sdk, api)
            await a_hundred_labels_make_at_most_two_writes(sdk, api)
            await reserve_returns_to_ready_by_itself(sdk, api)
            await counter_errors_and_health(sdk, api, health_port)

            # graceful termination: SIGTERM keeps it serving until the GameServer goes away
            proc.send_signal(signal.SIGTERM)
            await log_line(proc, "waiting for game server shutdown")
            assert proc.returncode is None
            assert (await sdk.game_server()).status.state == "Unhealthy"
            api.store.update(
                lambda gs: gs["metadata"].update(deletionTimestamp="2024-01-01T00:01:00Z")
            )
            assert await asyncio.wait_for(proc.wait(), 10) == 0
        finally:
            await sdk.close()
            if proc.returncode is None:
                proc.kill()
                await proc.wait()


async def test_a_port_in_use_is_an_error_exit_not_a_crash(tmp_path: Path) -> None:
    from agones.cmd.sdkserver import SDKServerSettings
    from agones.featuregates import FeatureGates
    from agones.sdkserver.cluster import run_cluster

    async with fake_api(copy.deepcopy(GS)) as api:
        busy = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        try:
            taken = busy.sockets[0].getsockname()[1]
            settings = SDKServerSettings(
                gameserver_name="gs-1",
                pod_namespace="games",
                kubeconfig=str(api.kubeconfig(tmp_path)),
                address="127.0.0.1",
                grpc_port=free_port(),
                http_port=taken,
                health_port=free_port(),
            )
            assert await asyncio.wait_for(run_cluster(settings, FeatureGates()), 10) == 1
        finally:
            busy.close()
            await busy.wait_closed()
