"""StatefulSets on the local cluster with real processes, driven through kubectl and the official
client: ordinals created in order (OrderedReady) or all at once (Parallel), a rolling update by
ordinal from the highest down to the partition, claims whose data outlives a pod, and the cluster
DNS seen from inside a process pod (through its resolv.conf and the relay in its namespace).

The observations are the order of watch events (ADDED, Ready, DELETED), never wall-clock time.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import urllib3

from tests.e2e.framework import Framework

SERVER = r"""
import http.server, os, pathlib, socket
data = pathlib.Path("/data")
boots = data / "boots"
boots.write_text(boots.read_text() + socket.gethostname() + "\n" if boots.exists() else socket.gethostname() + "\n")
http.server.ThreadingHTTPServer(("0.0.0.0", 8080), http.server.SimpleHTTPRequestHandler).serve_forever()
"""


def kubectl(fw: Framework, *args: str, stdin: str | None = None, check: bool = True) -> str:
    out = subprocess.run(
        ["kubectl", "--kubeconfig", fw.kubeconfig, "-n", fw.namespace, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert out.returncode == 0 or not check, out.stderr
    return out.stdout


def manifests(
    name: str,
    replicas: int,
    policy: str = "OrderedReady",
    ready: bool = True,
    retention: str = "Retain",
) -> str:
    """A headless Service and a StatefulSet of HTTP servers recording each boot on their claim;
    `ready=False` probes a port nothing serves (the pods never become Ready); `retention` is the
    claims' `whenDeleted` and `whenScaled` policy."""
    probe_port = 8080 if ready else 9
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {
            "clusterIP": "None",
            "selector": {"app": name},
            "ports": [{"name": "http", "port": 8080}],
        },
    }
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "serviceName": name,
            "replicas": replicas,
            "podManagementPolicy": policy,
            "persistentVolumeClaimRetentionPolicy": {
                "whenDeleted": retention,
                "whenScaled": retention,
            },
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "terminationGracePeriodSeconds": 2,
                    "containers": [
                        {
                            "name": "server",
                            "image": "python",
                            "command": [sys.executable, "-c", SERVER],
                            "env": [{"name": "VERSION", "value": "1"}],
                            "ports": [{"name": "http", "containerPort": 8080}],
                            "volumeMounts": [{"name": "data", "mountPath": "/data"}],
                            "readinessProbe": {
                                "httpGet": {"path": "/", "port": probe_port},
                                "periodSeconds": 1,
                            },
                        }
                    ],
                },
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                }
            ],
        },
    }
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [service, sts]})


class PodEvents:
    """Records, in order, `(event, pod)` for the pods of one app: ADDED, READY (the first time a
    pod of that uid is Ready), DELETED."""

    def __init__(self, core: kubernetes.client.CoreV1Api, namespace: str, app: str) -> None:
        self.events: list[tuple[str, str]] = []
        self._ready: set[str] = set()
        self._watch = kubernetes.watch.Watch()
        self._lock = threading.Lock()
        self._stopped = False
        stream = self._watch.stream(
            core.list_namespaced_pod, namespace, label_selector=f"app={app}", timeout_seconds=240
        )
        self._thread = threading.Thread(target=self._run, args=(stream,), daemon=True)
        self._thread.start()

    def _run(self, stream: Iterator[dict[str, Any]]) -> None:
        try:
            self._record(stream)
        except urllib3.exceptions.HTTPError:
            if not self._stopped:
                raise

    def _record(self, stream: Iterator[dict[str, Any]]) -> None:
        for event in stream:
            pod = event["object"]
            name, uid = pod.metadata.name, pod.metadata.uid
            with self._lock:
                if event["type"] in ("ADDED", "DELETED"):
                    self.events.append((event["type"], name))
                conditions = (pod.status.conditions if pod.status else None) or []
                ready = any(c.type == "Ready" and c.status == "True" for c in conditions)
                if ready and uid not in self._ready and event["type"] != "DELETED":
                    self._ready.add(uid)
                    self.events.append(("READY", name))

    def seen(self) -> list[tuple[str, str]]:
        with self._lock:
            return list(self.events)

    def stop(self) -> None:
        self._stopped = True
        self._watch.stop()


@pytest.fixture
def core(framework: Framework) -> kubernetes.client.CoreV1Api:
    return kubernetes.client.CoreV1Api(
        kubernetes.config.new_client_from_config(config_file=framework.kubeconfig)
    )


@pytest.fixture
def apps(framework: Framework) -> kubernetes.client.AppsV1Api:
    return kubernetes.client.AppsV1Api(
        kubernetes.config.new_client_from_config(config_file=framework.kubeconfig)
    )


def replaced_and_ready(
    core: kubernetes.client.CoreV1Api, namespace: str, name: str, old_uid: str
) -> bool:
    """Whether a pod of that name, not the one of `old_uid`, is Ready (the name may be briefly
    free between the two)."""
    pods = core.list_namespaced_pod(namespace, field_selector=f"metadata.name={name}").items
    return any(
        p.metadata.uid != old_uid
        and any(c.type == "Ready" and c.status == "True" for c in p.status.conditions or [])
        for p in pods
    )


def _boots(core: kubernetes.client.CoreV1Api, fw: Framework, claim: str) -> list[str]:
    pvc = core.read_namespaced_persistent_volume_claim(claim, fw.namespace)
    pv = core.read_persistent_volume(pvc.spec.volume_name)
    path = Path(pv.spec.host_path.path) / "boots"
    return path.read_text().split() if path.exists() else []


@pytest.mark.timeout(300)
def test_ordered_ready_creation_rolling_update_by_ordinal_and_claims(
    framework: Framework,
    local_stack: Any,
    core: kubernetes.client.CoreV1Api,
    apps: kubernetes.client.AppsV1Api,
) -> None:
    fw = framework
    events = PodEvents(core, fw.namespace, "web")
    try:
        first = _created_in_order(fw, core, apps, events)
        second = _canary_above_partition(fw, core, apps, first)
        _rollout_completes_from_highest_ordinal(fw, core, apps, events, first, second)
    finally:
        events.stop()
    _deleted_set_keeps_claims(fw, core)


def _created_in_order(
    fw: Framework,
    core: kubernetes.client.CoreV1Api,
    apps: kubernetes.client.AppsV1Api,
    events: PodEvents,
) -> str:
    """OrderedReady creates each ordinal once the one below is Ready; returns the revision."""
    kubectl(fw, "apply", "-f", "-", stdin=manifests("web", 3))
    out = kubectl(fw, "rollout", "status", "sts/web", "--timeout=120s")
    assert "roll out complete" in out
    created = [e for e in events.seen() if e[0] in ("ADDED", "READY")]
    assert created[:6] == [
        ("ADDED", "web-0"),
        ("READY", "web-0"),
        ("ADDED", "web-1"),
        ("READY", "web-1"),
        ("ADDED", "web-2"),
        ("READY", "web-2"),
    ]
    pod = core.read_namespaced_pod("web-1", fw.namespace)
    assert pod.metadata.labels["statefulset.kubernetes.io/pod-name"] == "web-1"
    assert pod.metadata.labels["apps.kubernetes.io/pod-index"] == "1"
    assert (pod.spec.hostname, pod.spec.subdomain) == ("web-1", "web")
    sts = apps.read_namespaced_stateful_set("web", fw.namespace)
    first: str = sts.status.update_revision
    assert pod.metadata.labels["controller-revision-hash"] == first
    assert (sts.status.ready_replicas, sts.status.current_replicas) == (3, 3)
    assert kubectl(fw, "get", "sts", "web", "--no-headers").split()[:2] == ["web", "3/3"]
    assert _boots(core, fw, "data-web-1") == ["web-1"]
    return first


def _canary_above_partition(
    fw: Framework, core: kubernetes.client.CoreV1Api, apps: kubernetes.client.AppsV1Api, first: str
) -> str:
    """A canary: only the ordinals at or above the partition take the new template; returns its
    revision."""
    _set_partition(fw, 1)
    kubectl(fw, "set", "env", "sts/web", "VERSION=2")
    fw.wait(
        "ordinals 1 and 2 updated",
        lambda: apps.read_namespaced_stateful_set("web", fw.namespace).status.updated_replicas == 2,
        timeout=120,
    )
    kubectl(fw, "rollout", "status", "sts/web", "--timeout=60s")
    second: str = apps.read_namespaced_stateful_set("web", fw.namespace).status.update_revision
    assert second != first
    by_pod = {
        p.metadata.name: p.metadata.labels["controller-revision-hash"]
        for p in core.list_namespaced_pod(fw.namespace, label_selector="app=web").items
    }
    assert by_pod == {"web-0": first, "web-1": second, "web-2": second}
    return second


def _rollout_completes_from_highest_ordinal(
    fw: Framework,
    core: kubernetes.client.CoreV1Api,
    apps: kubernetes.client.AppsV1Api,
    events: PodEvents,
    first: str,
    second: str,
) -> None:
    """Partition 0 replaces the rest, highest ordinal first; each pod keeps its claim's data."""
    _set_partition(fw, 0)
    fw.wait(
        "the rollout completes",
        lambda: (
            apps.read_namespaced_stateful_set("web", fw.namespace).status.current_revision == second
        ),
        timeout=120,
    )
    deleted = [name for kind, name in events.seen() if kind == "DELETED"]
    assert deleted == ["web-2", "web-1", "web-0"]
    # each pod came back under its name and found its claim's earlier boots
    assert _boots(core, fw, "data-web-0") == ["web-0", "web-0"]
    assert _boots(core, fw, "data-web-2") == ["web-2", "web-2"]
    revisions = kubectl(fw, "get", "controllerrevisions", "-o", "name").split()
    assert sorted(revisions) == sorted(f"controllerrevision.apps/{r}" for r in (first, second))


def _set_partition(fw: Framework, partition: int) -> None:
    """Patch the rolling update's partition of the `web` StatefulSet."""
    kubectl(
        fw,
        "patch",
        "sts",
        "web",
        "-p",
        json.dumps({"spec": {"updateStrategy": {"rollingUpdate": {"partition": partition}}}}),
    )


def _deleted_set_keeps_claims(fw: Framework, core: kubernetes.client.CoreV1Api) -> None:
    """Deleting the set removes its pods and, with the Retain policy, keeps its claims."""
    kubectl(fw, "delete", "sts", "web", "--wait=false")
    fw.wait(
        "pods gone",
        lambda: not core.list_namespaced_pod(fw.namespace, label_selector="app=web").items,
        timeout=60,
    )
    claims = core.list_namespaced_persistent_volume_claim(fw.namespace).items
    assert {c.metadata.name for c in claims} >= {"data-web-0", "data-web-1", "data-web-2"}


@pytest.mark.timeout(240)
def test_parallel_creates_every_ordinal_at_once_and_deletes_claims_by_policy(
    framework: Framework, local_stack: Any, core: kubernetes.client.CoreV1Api
) -> None:
    fw = framework
    kubectl(
        fw,
        "apply",
        "-f",
        "-",
        stdin=manifests("par", 3, "Parallel", ready=False, retention="Delete"),
    )

    def names() -> list[str]:
        pods = core.list_namespaced_pod(fw.namespace, label_selector="app=par").items
        return sorted(p.metadata.name for p in pods if not p.metadata.deletion_timestamp)

    # no pod is ever Ready, so OrderedReady would stop at par-0
    fw.wait("three pods", lambda: names() == ["par-0", "par-1", "par-2"], timeout=60)
    fw.wait(
        "three claims bound",
        lambda: (
            sorted(
                c.metadata.name
                for c in core.list_namespaced_persistent_volume_claim(fw.namespace).items
                if c.metadata.name.startswith("data-par-") and c.status.phase == "Bound"
            )
            == ["data-par-0", "data-par-1", "data-par-2"]
        ),
        timeout=60,
    )
    kubectl(fw, "scale", "sts", "par", "--replicas=1")
    fw.wait("scaled to one", lambda: names() == ["par-0"], timeout=60)

    def claims() -> list[str]:
        return sorted(
            c.metadata.name
            for c in core.list_namespaced_persistent_volume_claim(fw.namespace).items
            if c.metadata.name.startswith("data-par-") and not c.metadata.deletion_timestamp
        )

    # whenScaled: Delete: the condemned pods owned their claims, the garbage collector took them
    fw.wait("the scaled-down claims deleted", lambda: claims() == ["data-par-0"], timeout=60)
    kubectl(fw, "delete", "sts", "par")
    fw.wait("the set's claims deleted (whenDeleted: Delete)", lambda: claims() == [], timeout=60)


@pytest.mark.timeout(240)
def test_claim_data_survives_a_pod_delete(
    framework: Framework, local_stack: Any, core: kubernetes.client.CoreV1Api
) -> None:
    fw = framework
    kubectl(fw, "apply", "-f", "-", stdin=manifests("keep", 1))
    kubectl(fw, "rollout", "status", "sts/keep", "--timeout=90s")
    before = core.read_namespaced_pod("keep-0", fw.namespace)
    volume = core.read_namespaced_persistent_volume_claim("data-keep-0", fw.namespace)
    assert _boots(core, fw, "data-keep-0") == ["keep-0"]
    kubectl(fw, "delete", "pod", "keep-0")
    fw.wait(
        "keep-0 recreated and Ready",
        lambda: replaced_and_ready(core, fw.namespace, "keep-0", before.metadata.uid),
        timeout=90,
    )
    after = core.read_namespaced_persistent_volume_claim("data-keep-0", fw.namespace)
    assert after.spec.volume_name == volume.spec.volume_name
    assert _boots(core, fw, "data-keep-0") == ["keep-0", "keep-0"]
    kubectl(fw, "delete", "sts", "keep")
