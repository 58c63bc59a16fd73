"""What a Helm chart installs, run by the local cluster: Deployments → ReplicaSets → pods of
agones-py's own images, Services on loopback addresses, mounted Secrets and in-cluster config.

Driven through kubectl and the official `kubernetes` client; the same assertions hold on a real
cluster but for the image mapping (agones-py's images run as `agones` sub-commands here), so the
tests that run those images need the local stack.
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
import sys
import urllib.request
from typing import Any

import kubernetes
import pytest

from tests.e2e.framework import Framework, udp

PING_IMAGE = "us-docker.pkg.dev/agones-images/release/agones-ping:1.40.0"


def kubectl(fw: Framework, *args: str, stdin: str | None = None) -> str:
    out = subprocess.run(
        ["kubectl", "--kubeconfig", fw.kubeconfig, "-n", fw.namespace, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def ping_manifests(name: str, replicas: int, response: str) -> str:
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {
                            "name": "ping",
                            "image": PING_IMAGE,
                            "env": [{"name": "HTTP_RESPONSE", "value": response}],
                            "ports": [
                                {"name": "http", "containerPort": 8080},
                                {"name": "udp", "containerPort": 8080, "protocol": "UDP"},
                            ],
                            "readinessProbe": {
                                "httpGet": {"path": "/live", "port": 8080},
                                "periodSeconds": 1,
                            },
                        }
                    ]
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {
            "selector": {"app": name},
            "ports": [
                {"name": "http", "port": 80, "targetPort": "http"},
                {"name": "udp", "port": 50000, "targetPort": 8080, "protocol": "UDP"},
            ],
        },
    }
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [deployment, service]})


@pytest.fixture
def apps(framework: Framework) -> kubernetes.client.AppsV1Api:
    return kubernetes.client.AppsV1Api(
        kubernetes.config.new_client_from_config(config_file=framework.kubeconfig)
    )


@pytest.fixture
def core(framework: Framework) -> kubernetes.client.CoreV1Api:
    return kubernetes.client.CoreV1Api(
        kubernetes.config.new_client_from_config(config_file=framework.kubeconfig)
    )


def _pods(core: kubernetes.client.CoreV1Api, fw: Framework, app: str) -> list[Any]:
    pods = core.list_namespaced_pod(fw.namespace, label_selector=f"app={app}").items
    return list(pods)


def _http(ip: str, port: int) -> str:
    with urllib.request.urlopen(f"http://{ip}:{port}/", timeout=5) as resp:
        return str(resp.read().decode())


@pytest.mark.timeout(240)
def test_ping_deployment_scales_rolls_out_and_is_deleted(
    framework: Framework,
    local_stack: Any,
    apps: kubernetes.client.AppsV1Api,
    core: kubernetes.client.CoreV1Api,
) -> None:
    fw = framework
    kubectl(fw, "apply", "-f", "-", stdin=ping_manifests("ping", 3, "first"))
    assert "successfully rolled out" in kubectl(
        fw, "rollout", "status", "deploy/ping", "--timeout=90s"
    )
    deploy = apps.read_namespaced_deployment("ping", fw.namespace)
    assert (deploy.status.ready_replicas, deploy.status.available_replicas) == (3, 3)
    assert deploy.status.observed_generation == deploy.metadata.generation
    (rs,) = apps.list_namespaced_replica_set(fw.namespace, label_selector="app=ping").items
    pod_hash = rs.metadata.labels["pod-template-hash"]
    assert rs.metadata.name == f"ping-{pod_hash}"
    assert rs.metadata.owner_references[0].uid == deploy.metadata.uid
    pods = _pods(core, fw, "ping")
    assert len(pods) == 3
    assert {p.metadata.owner_references[0].name for p in pods} == {rs.metadata.name}

    svc = core.read_namespaced_service("ping", fw.namespace)
    ip = svc.spec.cluster_ip
    assert ipaddress.ip_address(ip).is_loopback
    fw.wait(
        "3 ready endpoints",
        lambda: (
            len(
                (core.read_namespaced_endpoints("ping", fw.namespace).subsets or [None])[
                    0
                ].addresses
                or []
            )
            == 3
        ),
    )
    assert _http(ip, 80) == "first"
    assert udp(ip, 50000, "hello") == "hello"
    slices = kubectl(
        fw, "get", "endpointslices", "-l", "kubernetes.io/service-name=ping", "-o", "json"
    )
    assert len(json.loads(slices)["items"][0]["endpoints"]) == 3

    kubectl(fw, "scale", "deploy/ping", "--replicas=1")
    fw.wait("one pod left", lambda: len(_pods(core, fw, "ping")) == 1, timeout=60)
    kubectl(fw, "rollout", "status", "deploy/ping", "--timeout=60s")
    assert apps.read_namespaced_deployment("ping", fw.namespace).status.replicas == 1

    kubectl(fw, "set", "env", "deploy/ping", "HTTP_RESPONSE=second")
    assert "successfully rolled out" in kubectl(
        fw, "rollout", "status", "deploy/ping", "--timeout=90s"
    )
    sets = apps.list_namespaced_replica_set(fw.namespace, label_selector="app=ping").items
    by_revision = {s.metadata.annotations["deployment.kubernetes.io/revision"]: s for s in sets}
    assert set(by_revision) == {"1", "2"}
    assert by_revision["1"].spec.replicas == 0 and by_revision["2"].spec.replicas == 1
    fw.wait("the new pod answers", lambda: _http(ip, 80) == "second", timeout=30)

    kubectl(fw, "delete", "deploy", "ping")
    fw.wait(
        "replica sets and pods gone",
        lambda: (
            not apps.list_namespaced_replica_set(fw.namespace, label_selector="app=ping").items
            and not _pods(core, fw, "ping")
        ),
        timeout=60,
    )


READER = r"""
import asyncio, pathlib
from agones.client.config import in_cluster_config
from agones.client.rest import RESTClient
from agones.client.versioned.resources import CONFIG_MAPS, NAMESPACES

async def main():
    password = pathlib.Path("/etc/creds/password").read_text()
    async with RESTClient(in_cluster_config()) as client:
        listed = await client.list(NAMESPACES)
        names = ",".join(sorted(n["metadata"]["name"] for n in listed["items"]))
        body = {"metadata": {"name": "result"}, "data": {"password": password, "namespaces": names}}
        await client.create(CONFIG_MAPS, body, namespace=pathlib.Path(
            "/var/run/secrets/kubernetes.io/serviceaccount/namespace").read_text())

asyncio.run(main())
"""


@pytest.mark.timeout(120)
def test_pod_reads_mounted_secret_and_lists_namespaces_in_cluster(
    framework: Framework, local_stack: Any, core: kubernetes.client.CoreV1Api
) -> None:
    fw = framework
    kubectl(fw, "create", "secret", "generic", "creds", "--from-literal=password=s3cret")
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "reader"},
        "spec": {
            "restartPolicy": "Never",
            "volumes": [{"name": "creds", "secret": {"secretName": "creds"}}],
            "containers": [
                {
                    "name": "reader",
                    "image": "python:3.11",
                    "command": [sys.executable, "-c", READER],
                    "volumeMounts": [{"name": "creds", "mountPath": "/etc/creds"}],
                }
            ],
        },
    }
    kubectl(fw, "apply", "-f", "-", stdin=json.dumps(pod))
    phase = fw.wait(
        "the reader finished",
        lambda: (
            (core.read_namespaced_pod("reader", fw.namespace).status.phase or "")
            if core.read_namespaced_pod("reader", fw.namespace).status.phase
            in ("Succeeded", "Failed")
            else None
        ),
        timeout=60,
    )
    assert phase == "Succeeded"
    result = core.read_namespaced_config_map("result", fw.namespace).data
    assert result["password"] == "s3cret"
    assert fw.namespace in result["namespaces"].split(",")
