"""Registry semantics that need no HTTP: graceful pod deletion, no-op updates, dry run."""

import asyncio
import json
import urllib.error
import urllib.request

import aiohttp
import pytest

from agones.localcluster import LocalAPIServer, ThreadedAPIServer, errors
from agones.localcluster.deletion import DeleteOptions


def _pod(node: str = "") -> dict:
    spec: dict = {
        "containers": [{"name": "c", "image": "x:1"}],
        "terminationGracePeriodSeconds": 30,
    }
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


async def test_graceful_pod_deletion_waits_for_grace_zero() -> None:
    async with LocalAPIServer(graceful_pod_deletion=True) as srv:
        reg = srv.registry
        pods = reg.lookup("", "v1", "pods")
        assert pods is not None
        await reg.create(pods, "default", _pod("node-1"))
        entry, gone = await reg.delete(pods, "default", "p", DeleteOptions())
        assert not gone
        assert entry.obj["metadata"]["deletionGracePeriodSeconds"] == 30
        assert entry.obj["metadata"]["deletionTimestamp"]
        _, gone = await reg.delete(pods, "default", "p", DeleteOptions(grace_period=0))
        assert gone
        assert reg.store.get(pods.key, "default", "p") is None


async def test_unscheduled_pod_is_deleted_at_once() -> None:
    async with LocalAPIServer(graceful_pod_deletion=True) as srv:
        pods = srv.registry.lookup("", "v1", "pods")
        assert pods is not None
        await srv.registry.create(pods, "default", _pod())
        _, gone = await srv.registry.delete(pods, "default", "p", DeleteOptions())
        assert gone


async def test_in_loop_server_serves_http() -> None:
    async with LocalAPIServer() as srv, aiohttp.ClientSession() as session:
        async with session.get(f"{srv.url}/api/v1/namespaces/default") as resp:
            assert resp.status == 200
            body = await resp.json()
            assert body["metadata"]["name"] == "default"
        async with session.post(f"{srv.url}/_faults/fail-writes?count=1&code=429") as resp:
            assert resp.status == 200
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
        async with session.post(f"{srv.url}/api/v1/namespaces/default/configmaps", json=cm) as resp:
            assert resp.status == 429
            assert resp.headers["Retry-After"] == "1"
        async with session.post(f"{srv.url}/api/v1/namespaces/default/configmaps", json=cm) as resp:
            assert resp.status == 201


class _YieldingAdmission:
    """Admission that lets other writes run while it 'calls' its webhooks."""

    def mutating_configured(self) -> bool:
        return False

    async def mutate(self, *args: object) -> None:
        return None

    async def validate(self, *args: object) -> None:
        await asyncio.sleep(0)


async def test_concurrent_patches_without_precondition_both_apply() -> None:
    async with LocalAPIServer() as srv:
        reg = srv.registry
        reg.admission = _YieldingAdmission()
        cms = reg.lookup("", "v1", "configmaps")
        assert cms is not None
        await reg.create(cms, "default", {"metadata": {"name": "c"}, "data": {}})
        await asyncio.gather(
            reg.patch(cms, "default", "c", "merge", {"data": {"a": "1"}}),
            reg.patch(cms, "default", "c", "merge", {"data": {"b": "2"}}),
        )
        entry = reg.store.get(cms.key, "default", "c")
        assert entry is not None
        assert entry.obj["data"] == {"a": "1", "b": "2"}


async def test_concurrent_patch_with_precondition_conflicts() -> None:
    async with LocalAPIServer() as srv:
        reg = srv.registry
        reg.admission = _YieldingAdmission()
        cms = reg.lookup("", "v1", "configmaps")
        assert cms is not None
        created = await reg.create(cms, "default", {"metadata": {"name": "c"}, "data": {}})
        rv = created.obj["metadata"]["resourceVersion"]
        results = await asyncio.gather(
            reg.patch(
                cms,
                "default",
                "c",
                "merge",
                {"metadata": {"resourceVersion": rv}, "data": {"a": "1"}},
            ),
            reg.patch(
                cms,
                "default",
                "c",
                "merge",
                {"metadata": {"resourceVersion": rv}, "data": {"b": "2"}},
            ),
            return_exceptions=True,
        )
        conflicts = [r for r in results if isinstance(r, errors.StatusError) and r.code == 409]
        assert len(conflicts) == 1


def test_threaded_server_runs_fault_injection_on_its_loop() -> None:
    runner = ThreadedAPIServer()
    srv = runner.start()
    try:
        runner.call(srv.faults.fail_next_writes, 1, 500)
        body = json.dumps(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "t"}}
        ).encode()
        req = urllib.request.Request(
            f"{srv.url}/api/v1/namespaces/default/configmaps",
            data=body,
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=10)
        assert err.value.code == 500
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert resp.status == 201
        assert runner.call(lambda: srv.faults.injected) == 1
    finally:
        runner.stop()
