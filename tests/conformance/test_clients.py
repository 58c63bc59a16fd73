"""The official clients' typed APIs and watch helpers work unchanged; HTTPS with a bearer token."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import urllib.error
import urllib.request

import kubernetes
import kubernetes_asyncio
import pytest

from agones.localcluster import ServerOptions, ThreadedAPIServer
from tests.cluster import Cluster
from tests.conformance.conftest import CRD


def _sync_client(kubeconfig: str) -> kubernetes.client.ApiClient:
    config = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=kubeconfig, client_configuration=config)
    return kubernetes.client.ApiClient(config)


def test_sync_client_typed_api_and_watch(cluster: Cluster, namespace: str) -> None:
    api = kubernetes.client.CoreV1Api(_sync_client(cluster.kubeconfig))
    body = kubernetes.client.V1ConfigMap(
        metadata=kubernetes.client.V1ObjectMeta(name="typed", labels={"t": "1"}), data={"a": "b"}
    )
    created = api.create_namespaced_config_map(namespace, body)
    assert created.metadata.uid
    listed = api.list_namespaced_config_map(namespace, label_selector="t=1")
    assert [c.metadata.name for c in listed.items] == ["typed"]
    with pytest.raises(kubernetes.client.ApiException) as err:
        api.read_namespaced_config_map("absent", namespace)
    assert err.value.status == 404
    api.patch_namespaced_config_map("typed", namespace, {"data": {"a": "c"}})
    w = kubernetes.watch.Watch()
    seen = []
    for event in w.stream(
        api.list_namespaced_config_map,
        namespace,
        label_selector="t=1",
        resource_version=listed.metadata.resource_version,
        timeout_seconds=10,
    ):
        seen.append(event)
        if event["type"] == "MODIFIED":
            w.stop()
    assert seen[-1]["type"] == "MODIFIED"
    assert seen[-1]["object"].data == {"a": "c"}


def test_sync_client_custom_objects(cluster: Cluster, namespace: str, widgets: CRD) -> None:
    api = kubernetes.client.CustomObjectsApi(_sync_client(cluster.kubeconfig))
    obj = api.create_namespaced_custom_object(
        widgets.group, widgets.version, namespace, widgets.plural, widgets.obj("co")
    )
    assert obj["spec"]["color"] == "blue"
    got = api.get_namespaced_custom_object(
        widgets.group, widgets.version, namespace, widgets.plural, "co"
    )
    assert got["metadata"]["uid"] == obj["metadata"]["uid"]
    api.patch_namespaced_custom_object_status(
        widgets.group, widgets.version, namespace, widgets.plural, "co", {"status": {"state": "Up"}}
    )
    assert (
        api.get_namespaced_custom_object_status(
            widgets.group, widgets.version, namespace, widgets.plural, "co"
        )["status"]["state"]
        == "Up"
    )
    api.delete_namespaced_custom_object(
        widgets.group, widgets.version, namespace, widgets.plural, "co"
    )


async def test_asyncio_client_typed_api_and_watch(cluster: Cluster, namespace: str) -> None:
    config = kubernetes_asyncio.client.Configuration()
    await kubernetes_asyncio.config.load_kube_config(
        config_file=cluster.kubeconfig, client_configuration=config
    )
    async with kubernetes_asyncio.client.ApiClient(config) as client:
        api = kubernetes_asyncio.client.CoreV1Api(client)
        await api.create_namespaced_config_map(
            namespace, {"metadata": {"name": "async-cm", "labels": {"async": "yes"}}}
        )
        listed = await api.list_namespaced_config_map(namespace, label_selector="async=yes")
        assert [c.metadata.name for c in listed.items] == ["async-cm"]
        await api.patch_namespaced_config_map("async-cm", namespace, {"data": {"x": "y"}})
        w = kubernetes_asyncio.watch.Watch()
        async with w:
            async for event in w.stream(
                api.list_namespaced_config_map,
                namespace,
                label_selector="async=yes",
                resource_version=listed.metadata.resource_version,
                timeout_seconds=10,
            ):
                if event["type"] == "MODIFIED":
                    assert event["object"].data == {"x": "y"}
                    break
            else:
                pytest.fail("no MODIFIED event")


def test_https_with_bearer_token(local_only: Cluster) -> None:
    runner = ThreadedAPIServer(ServerOptions(tls=True, token="s3cret-token"))
    srv = runner.start()
    try:
        assert srv.url.startswith("https://")
        api = kubernetes.client.CoreV1Api(_sync_client(srv.kubeconfig))
        names = {n.metadata.name for n in api.list_namespace().items}
        assert {"default", "kube-system"} <= names
        assert srv.ca_file is not None
        ctx = ssl.create_default_context(cafile=srv.ca_file)
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            req = urllib.request.Request(f"{srv.url}/api/v1/namespaces", headers=headers)
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(req, context=ctx, timeout=10)
            assert err.value.code == 401
        req = urllib.request.Request(
            f"{srv.url}/api/v1/namespaces", headers={"Authorization": "Bearer s3cret-token"}
        )
        with urllib.request.urlopen(req, context=ctx, timeout=10) as resp:
            assert resp.status == 200
        if shutil.which("kubectl"):
            out = subprocess.run(
                ["kubectl", "--kubeconfig", srv.kubeconfig, "get", "ns", "default", "-o", "name"],
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert out.stdout.strip() == "namespace/default", out.stderr
    finally:
        runner.stop()
