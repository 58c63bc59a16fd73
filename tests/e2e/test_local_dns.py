"""The cluster DNS from inside a process pod, as a program there sees it: through the libc
resolver, the pod's /etc/resolv.conf (search list, ndots:5) and the relay at the nameserver's
address in the pod's network namespace. A Service's short name, `svc.ns` and FQDN resolve to its
ClusterIP; a StatefulSet pod's stable name to that pod's address; a name nobody serves is
NXDOMAIN; and the addresses answer from inside the pod. The program reports what it resolved in a ConfigMap through its in-cluster config."""

from __future__ import annotations

import json
import sys
from typing import Any

import kubernetes
import pytest

from tests.e2e.framework import Framework
from tests.e2e.test_local_statefulsets import kubectl, manifests

PROBE = r"""
import asyncio, json, pathlib, socket
import dns.message, dns.query, dns.rcode
from agones.client.config import in_cluster_config
from agones.client.rest import RESTClient
from agones.client.versioned.resources import CONFIG_MAPS

ns = pathlib.Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace").read_text()

def lookup(name):
    try:
        return socket.gethostbyname(name)
    except socket.gaierror as err:
        return "gaierror:%d" % err.errno

names = ["db", "db." + ns, "db.%s.svc.cluster.local" % ns, "gate-0.gate",
         "gate-1.gate.%s.svc.cluster.local" % ns, "nope"]
result = {name: lookup(name) for name in names}
conf = pathlib.Path("/etc/resolv.conf").read_text()
server = [line.split()[1] for line in conf.splitlines() if line.startswith("nameserver")][0]
query = dns.message.make_query("nope.%s.svc.cluster.local" % ns, "A")
result["nope-rcode"] = dns.rcode.to_text(dns.query.udp(query, server, timeout=5).rcode())
result["nope-rcode-tcp"] = dns.rcode.to_text(dns.query.tcp(query, server, timeout=5).rcode())
result["nameserver"] = server

def http_status(url):
    import urllib.request
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status
    except OSError as err:
        return str(err)

result["http-pod"] = http_status("http://gate-0.gate:8080/")
result["http-service"] = http_status("http://db:5432/")

async def main():
    async with RESTClient(in_cluster_config()) as client:
        body = {"metadata": {"name": "dns-result"}, "data": {"result": json.dumps(result)}}
        await client.create(CONFIG_MAPS, body, namespace=ns)

asyncio.run(main())
"""


@pytest.fixture
def core(framework: Framework) -> kubernetes.client.CoreV1Api:
    return kubernetes.client.CoreV1Api(
        kubernetes.config.new_client_from_config(config_file=framework.kubeconfig)
    )


@pytest.mark.timeout(240)
def test_names_resolve_inside_a_process_pod(
    framework: Framework, local_stack: Any, core: kubernetes.client.CoreV1Api
) -> None:
    fw = framework
    kubectl(fw, "apply", "-f", "-", stdin=manifests("gate", 2, "Parallel"))
    db = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "db"},
        "spec": {"selector": {"app": "gate"}, "ports": [{"port": 5432, "targetPort": 8080}]},
    }
    kubectl(fw, "apply", "-f", "-", stdin=json.dumps(db))
    kubectl(fw, "rollout", "status", "sts/gate", "--timeout=90s")
    probe = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "dns-probe"},
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {"name": "probe", "image": "python", "command": [sys.executable, "-c", PROBE]}
            ],
        },
    }
    kubectl(fw, "apply", "-f", "-", stdin=json.dumps(probe))

    def result() -> dict[str, str] | None:
        try:
            cm = core.read_namespaced_config_map("dns-result", fw.namespace)
        except kubernetes.client.ApiException as err:
            if err.status == 404:
                return None
            raise
        found: dict[str, str] = json.loads(cm.data["result"])
        return found

    seen = fw.wait("the probe's report", result, timeout=90)
    cluster_ip = core.read_namespaced_service("db", fw.namespace).spec.cluster_ip
    pod_ips = {
        p.metadata.name: p.status.pod_ip
        for p in core.list_namespaced_pod(fw.namespace, label_selector="app=gate").items
    }
    assert seen["db"] == cluster_ip
    assert seen[f"db.{fw.namespace}"] == cluster_ip
    assert seen[f"db.{fw.namespace}.svc.cluster.local"] == cluster_ip
    assert seen["gate-0.gate"] == pod_ips["gate-0"]
    assert seen[f"gate-1.gate.{fw.namespace}.svc.cluster.local"] == pod_ips["gate-1"]
    assert seen["nope"].startswith("gaierror:")
    assert (seen["nope-rcode"], seen["nope-rcode-tcp"]) == ("NXDOMAIN", "NXDOMAIN")
    assert seen["nameserver"] == "127.0.0.10"
    # and the addresses answer: a pod by its stable name, a Service by its ClusterIP (podmesh)
    assert (seen["http-pod"], seen["http-service"]) == (200, 200)
    kubectl(fw, "delete", "sts", "gate")


def _ready_since(pod: Any) -> Any:
    return next(c.last_transition_time for c in pod.status.conditions if c.type == "Ready")


@pytest.mark.timeout(240)
def test_an_init_container_waits_until_the_service_has_a_ready_pod(
    framework: Framework, local_stack: Any, core: kubernetes.client.CoreV1Api
) -> None:
    """`until getent hosts waitdb; do sleep 1; done` (the libc resolver, as `nslookup` would ask):
    a headless Service has no address until its pod is Ready, so the client's init container
    finishes only after that."""
    fw = framework
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "waitdb"},
        "spec": {"clusterIP": "None", "selector": {"app": "waitdb"}, "ports": [{"port": 8080}]},
    }
    client = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "waiting-client"},
        "spec": {
            "initContainers": [
                {
                    "name": "wait-for-db",
                    "image": "busybox",
                    "command": ["sh", "-c", "until getent hosts waitdb; do sleep 1; done"],
                }
            ],
            "containers": [
                {
                    "name": "app",
                    "image": "python",
                    "command": [sys.executable, "-c", "import signal; signal.pause()"],
                }
            ],
        },
    }
    kubectl(fw, "apply", "-f", "-", stdin=json.dumps(service))
    kubectl(fw, "apply", "-f", "-", stdin=json.dumps(client))

    def init_state() -> Any:
        pod = core.read_namespaced_pod("waiting-client", fw.namespace)
        statuses = pod.status.init_container_statuses or []
        return statuses[0].state if statuses else None

    fw.wait("the init container runs", lambda: (s := init_state()) and s.running, timeout=60)
    assert core.read_namespaced_pod("waiting-client", fw.namespace).status.phase == "Pending"
    kubectl(fw, "apply", "-f", "-", stdin=manifests("waitdb", 1))
    kubectl(fw, "rollout", "status", "sts/waitdb", "--timeout=90s")
    fw.wait(
        "the client runs",
        lambda: core.read_namespaced_pod("waiting-client", fw.namespace).status.phase == "Running",
        timeout=60,
    )
    done = init_state().terminated
    assert (done.exit_code, done.reason) == (0, "Completed")
    db_ready = _ready_since(core.read_namespaced_pod("waitdb-0", fw.namespace))
    assert done.finished_at >= db_ready
    kubectl(fw, "delete", "pod", "waiting-client", "--wait=false")
    kubectl(fw, "delete", "sts", "waitdb")
