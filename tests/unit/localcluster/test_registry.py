"""Registry semantics that need no HTTP: graceful pod deletion, no-op updates, dry run."""

import asyncio
import json
import urllib.error
import urllib.request
from datetime import UTC, datetime, timedelta

import aiohttp
import pytest
from aiohttp import web

from agones.localcluster import LocalAPIServer, ThreadedAPIServer
from agones.localcluster.apiserver import errors
from agones.localcluster.apiserver.deletion import DeleteOptions


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


def test_fault_handle_refuses_a_knob_it_does_not_have() -> None:
    """A misspelt or removed knob (`write_latency = ...` once was one) fails loudly."""
    runner = ThreadedAPIServer()
    srv = runner.start()
    try:
        with pytest.raises(AttributeError):
            srv.faults.write_latency = 0.5  # type: ignore[attr-defined]
        srv.faults.set_write_latency(0.0)
    finally:
        runner.stop()


class _FailFirstDelete(_YieldingAdmission):
    def __init__(self) -> None:
        self.deletes = 0

    async def validate(self, op: str, *args: object) -> None:
        if op == "DELETE":
            self.deletes += 1
            if self.deletes == 2:  # the owner's own delete is the first
                raise errors.internal("webhook down")


async def test_garbage_collector_retries_failed_deletes() -> None:
    async with LocalAPIServer() as srv:
        reg = srv.registry
        admission = _FailFirstDelete()
        reg.admission = admission
        cms = reg.lookup("", "v1", "configmaps")
        assert cms is not None
        owner = await reg.create(cms, "default", {"metadata": {"name": "owner"}})
        ref = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "owner",
            "uid": owner.obj["metadata"]["uid"],
        }
        await reg.create(cms, "default", {"metadata": {"name": "child", "ownerReferences": [ref]}})
        await reg.delete(cms, "default", "owner", DeleteOptions())
        watch = reg.store.watch(cms.key, "default", None, reg.store.rv)
        async with asyncio.timeout(10):
            while reg.store.get(cms.key, "default", "child") is not None:
                await watch.next_batch(1)
        assert admission.deletes >= 3


async def test_event_reaper_deletes_events_after_their_ttl() -> None:
    async with LocalAPIServer(event_ttl=3600) as srv:
        reg = srv.registry
        events = reg.lookup("", "v1", "events")
        assert events is not None
        old = {
            "metadata": {"name": "old"},
            "involvedObject": {},
            "lastTimestamp": "2020-01-01T00:00:00Z",
        }
        await reg.create(events, "default", old)
        await reg.create(events, "default", {"metadata": {"name": "new"}, "involvedObject": {}})
        later = datetime.now(UTC) + timedelta(minutes=30)
        # Both were written just now (their creationTimestamp is their latest timestamp).
        assert srv.events.reap(later) == 0
        assert srv.events.reap(later + timedelta(hours=1)) == 2
        assert reg.store.count(events.key) == 0


async def test_components_can_serve_a_subresource() -> None:
    async def logs(request: web.Request, info: object, ns: str, name: str) -> web.Response:
        return web.Response(text=f"log of {ns}/{name}\n")

    async with LocalAPIServer() as srv, aiohttp.ClientSession() as session:
        srv.add_subresource("", "pods", "log", logs)
        async with session.get(f"{srv.url}/api/v1") as resp:
            names = {r["name"] for r in (await resp.json())["resources"]}
        assert "pods/log" in names
        async with session.get(f"{srv.url}/api/v1/namespaces/default/pods/p/log") as resp:
            assert resp.status == 200
            assert await resp.text() == "log of default/p\n"


@pytest.mark.parametrize(
    ("rv", "created"),
    [("", True), ("0", True), ("abc", True), ("-1", True), ("7", False)],
    ids=["unset", "zero", "not-a-number", "negative", "a-version"],
)
async def test_create_refuses_only_a_parsable_nonzero_resource_version(
    rv: str, created: bool
) -> None:
    async with LocalAPIServer() as srv:
        cms = srv.registry.lookup("", "v1", "configmaps")
        assert cms is not None
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
        if rv:
            cm["metadata"]["resourceVersion"] = rv
        if created:
            entry = await srv.registry.create(cms, "default", cm)
            assert entry.obj["metadata"]["resourceVersion"] == str(entry.rv)
        else:
            with pytest.raises(errors.StatusError) as err:
                await srv.registry.create(cms, "default", cm)
            assert err.value.code == 500


@pytest.mark.parametrize("value", ["nan", "inf", "1.5", "x"])
async def test_watch_timeout_seconds_must_be_an_integer(value: str) -> None:
    async with LocalAPIServer() as srv, aiohttp.ClientSession() as session:
        url = f"{srv.url}/api/v1/namespaces/default/configmaps"
        params = {"watch": "true", "timeoutSeconds": value}
        async with session.get(url, params=params) as resp:
            assert resp.status == 400
            body = await asyncio.wait_for(resp.json(), 5)
            assert body["reason"] == "BadRequest"


@pytest.mark.parametrize(
    ("group", "version", "resource", "body"),
    [
        pytest.param(
            "", "v1", "configmaps", {"binaryData": {"k": "!!"}}, id="configmap-binary-data"
        ),
        pytest.param(
            "apiregistration.k8s.io",
            "v1",
            "apiservices",
            {
                "metadata": {"name": "v1.x.example.com"},
                "spec": {"group": "x.example.com", "version": "v1", "caBundle": "not base64!"},
            },
            id="apiservice-ca-bundle",
        ),
        pytest.param(
            "admissionregistration.k8s.io",
            "v1",
            "validatingwebhookconfigurations",
            {"webhooks": [{"name": "w.example.com", "clientConfig": {"caBundle": "a"}}]},
            id="webhook-ca-bundle",
        ),
    ],
)
async def test_bytes_fields_must_be_base64(
    group: str, version: str, resource: str, body: dict
) -> None:
    async with LocalAPIServer() as srv:
        info = srv.registry.lookup(group, version, resource)
        assert info is not None
        obj = {"metadata": {"name": "b"}, **body}
        with pytest.raises(errors.StatusError) as err:
            await srv.registry.create(info, "default" if info.namespaced else "", obj)
        assert err.value.code == 400
        assert "illegal base64 data at input byte" in err.value.message
