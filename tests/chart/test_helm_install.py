"""Real Helm (helm-python-sdk) installs, upgrades and uninstalls charts/agones on a local API server.

A private local API server per module (not the shared `cluster` fixture, nor `KUBECONFIG`'s cluster):
the chart registers cluster-wide CRDs, webhooks and an APIService, which must not meet the other
suites' objects, and a test must not install Agones into a developer's real cluster.

What Helm installed is then used as a cluster would: `agones extensions` runs with the serving
certificate from the chart's Secret, the chart's Service `agones-controller-service` is pointed at it
(`local.agones-py.dev/address`: the local server's stand-in for endpoints), and the API server calls
the chart's webhook configurations and APIService with the chart's generated `caBundle`.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from agones.localcluster import ServerOptions, ThreadedAPIServer
from tests.chart.helmobjects import manifest_objects, path_of
from tests.cluster import Cluster
from tests.sdkserver.harness import free_port
from tests.waiting import wait_for
from tools import helmchart

helm = pytest.importorskip("helm_python")

pytestmark = pytest.mark.slow
NS = helmchart.NAMESPACE
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agones"


@pytest.fixture(scope="module")
def local() -> Iterator[Cluster]:
    runner = ThreadedAPIServer(ServerOptions(bookmark_interval=0.5))
    srv = runner.start()
    try:
        yield Cluster(srv.kubeconfig, local=True, url=srv.url, ca_file=srv.ca_file)
    finally:
        runner.stop()


def helm_config(cluster: Cluster) -> Any:
    return helm.Config(namespace=NS, kubeconfig_path=cluster.kubeconfig)


def deployment_env(cluster: Cluster, name: str) -> dict[str, str]:
    dep = cluster.api.get(f"/apis/apps/v1/namespaces/{NS}/deployments/{name}").body
    return {
        e["name"]: e.get("value", "")
        for e in dep["spec"]["template"]["spec"]["containers"][0]["env"]
    }


@pytest.fixture(scope="module")
def installed(local: Cluster) -> Iterator[dict[str, Any]]:
    with helm_config(local) as cfg:
        release = cfg.install(
            str(helmchart.CHART_DIR), "agones", {}, namespace=NS, create_namespace=True, timeout=120
        )
    yield release


def test_install_creates_every_rendered_object(local: Cluster, installed: dict[str, Any]) -> None:
    assert (installed["revision"], installed["status"]) == (1, "deployed")
    objs = manifest_objects(installed)
    assert len(objs) == len(helmchart.objects())
    for obj in objs:
        assert local.api.get(path_of(obj)).status == 200, path_of(obj)
    assert local.api.get("/apis/agones.dev/v1/namespaces/default/gameservers").status == 200
    env = deployment_env(local, "agones-controller")
    assert env["LEADER_ELECTION"] == "true"


@pytest.fixture(scope="module")
def extensions(
    local: Cluster, installed: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[int]:
    secret = local.api.get(f"/api/v1/namespaces/{NS}/secrets/agones-cert").body["data"]
    certs = tmp_path_factory.mktemp("certs")
    for name in ("server.crt", "server.key"):
        (certs / name).write_bytes(base64.b64decode(secret[name]))
    webhook_port, http_port = free_port(), free_port()
    env = dict(
        os.environ,
        KUBECONFIG=local.kubeconfig,
        CERT_FILE=str(certs / "server.crt"),
        KEY_FILE=str(certs / "server.key"),
        WEBHOOK_PORT=str(webhook_port),
        HTTP_PORT=str(http_port),
        BIND="127.0.0.1",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "agones", "extensions"], env=env, stdout=subprocess.DEVNULL
    )
    try:
        patch = {
            "metadata": {
                "annotations": {"local.agones-py.dev/address": f"127.0.0.1:{webhook_port}"}
            }
        }
        resp = local.api.patch(f"/api/v1/namespaces/{NS}/services/agones-controller-service", patch)
        assert resp.status == 200, resp
        wait_for(lambda: ready(http_port), timeout=60, what="agones extensions to be ready")
        yield webhook_port
    finally:
        proc.terminate()
        assert proc.wait(timeout=30) == 0


def ready(port: int) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/ready", timeout=2) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


def test_chart_webhooks_default_and_validate_through_its_ca(
    local: Cluster, extensions: int
) -> None:
    body = yaml.safe_load((FIXTURES / "gameserver-dynamic.yaml").read_text())
    created = local.api.post("/apis/agones.dev/v1/namespaces/default/gameservers", body)
    assert created.status == 201, created
    assert created.body["status"]["state"] == "PortAllocation"  # written by the mutating webhook
    assert created.body["spec"]["container"] == "simple-game-server"
    # No controller runs here to honour the webhook's finalizer: lift it, or the CRD cannot go
    path = f"/apis/agones.dev/v1/namespaces/default/gameservers/{created.body['metadata']['name']}"
    assert local.api.patch(path, {"metadata": {"finalizers": None}}).status == 200
    assert local.api.delete(path).status == 200
    bad = yaml.safe_load((FIXTURES / "gameserver-invalid.yaml").read_text())
    rejected = local.api.post("/apis/agones.dev/v1/namespaces/default/gameservers", bad)
    assert rejected.status == 422, rejected
    assert (
        "HostPort cannot be specified with a Dynamic or Passthrough PortPolicy"
        in rejected.body["message"]
    )


def test_chart_apiservice_serves_allocation(local: Cluster, extensions: int) -> None:
    gsa = {"apiVersion": "allocation.agones.dev/v1", "kind": "GameServerAllocation", "spec": {}}
    resp = local.api.post(
        "/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations", gsa
    )
    assert resp.status == 201, resp
    assert resp.body["status"]["state"] == "UnAllocated"  # nothing is Ready: no node runs pods here


def test_upgrade_changes_the_deployments(
    local: Cluster, installed: dict[str, Any], extensions: int
) -> None:
    before = local.api.get(f"/apis/apps/v1/namespaces/{NS}/deployments/agones-extensions").body
    values = {"agones": {"controller": {"replicas": 1}, "featureGates": "PlayerTracking=true"}}
    with helm_config(local) as cfg:
        release = cfg.upgrade(str(helmchart.CHART_DIR), "agones", values, namespace=NS, timeout=120)
        assert (release["revision"], release["status"]) == (2, "deployed")
        assert cfg.get_values("agones") == values
    controller = local.api.get(f"/apis/apps/v1/namespaces/{NS}/deployments/agones-controller").body
    assert controller["spec"]["replicas"] == 1
    env = deployment_env(local, "agones-controller")
    assert (env["LEADER_ELECTION"], env["FEATURE_GATES"]) == ("false", "PlayerTracking=true")
    after = local.api.get(f"/apis/apps/v1/namespaces/{NS}/deployments/agones-extensions").body
    key = "agones.dev/cert-checksum"  # new certificates roll the extensions pods
    assert (
        before["spec"]["template"]["metadata"]["annotations"][key]
        != after["spec"]["template"]["metadata"]["annotations"][key]
    )


def test_uninstall_removes_everything_it_made(local: Cluster, installed: dict[str, Any]) -> None:
    objs = manifest_objects(installed)
    with helm_config(local) as cfg:
        cfg.uninstall("agones")
        assert [r["name"] for r in cfg.list()] == []
    for obj in objs:
        path = path_of(obj)
        wait_for(lambda p=path: local.api.get(p).status == 404, timeout=30, what=f"{path} deleted")
    releases = local.api.get(f"/api/v1/namespaces/{NS}/secrets", labelSelector="owner=helm").body
    assert releases["items"] == []
