"""Pure parts of Services and pod files: Endpoints from pods, the proxy's listeners and picks,
volume contents and the mountPath rewrite of the no-mount-namespace fallback."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from agones.localcluster.controllers.endpoints import endpoint_slice, endpoint_subsets
from agones.localcluster.nodes.podfiles import (
    InCluster,
    MissingVolumeSource,
    PodFiles,
    volume_contents,
)
from agones.localcluster.nodes.serviceproxy import desired_listeners, pick_endpoint

SERVICE = {
    "metadata": {"name": "s", "namespace": "ns", "uid": "abcdef"},
    "spec": {
        "selector": {"app": "x"},
        "clusterIP": "127.253.0.9",
        "ports": [
            {"name": "http", "port": 80, "targetPort": "web", "protocol": "TCP"},
            {"name": "raw", "port": 81, "targetPort": 9000, "protocol": "TCP"},
        ],
    },
}


def pod(name: str, ip: str, ready: bool, **extra: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": name, "labels": {"app": "x"}, **extra},
        "spec": {
            "nodeName": "n1",
            "containers": [{"ports": [{"name": "web", "containerPort": 8080}]}],
        },
        "status": {
            "phase": "Running",
            "podIP": ip,
            "conditions": [
                {
                    "type": "Ready",
                    "status": str(ready),
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
        },
    }


def test_endpoints_split_ready_and_not_ready_and_resolve_named_ports() -> None:
    pods = [
        pod("a", "127.254.0.1", True),
        pod("b", "127.254.0.2", False),
        pod("c", "127.254.0.3", True, deletionTimestamp="2026-01-01T00:00:00Z"),
        {
            **pod("d", "127.254.0.4", True),
            "metadata": {"name": "d", "namespace": "ns", "labels": {}},
        },
    ]
    (subset,) = endpoint_subsets(SERVICE, pods)
    assert [a["ip"] for a in subset["addresses"]] == ["127.254.0.1"]
    assert [a["ip"] for a in subset["notReadyAddresses"]] == ["127.254.0.2"]
    assert subset["ports"] == [
        {"port": 8080, "protocol": "TCP", "name": "http"},
        {"port": 9000, "protocol": "TCP", "name": "raw"},
    ]
    slice_ = endpoint_slice(SERVICE, [subset])
    assert slice_["metadata"]["labels"]["kubernetes.io/service-name"] == "s"
    assert [e["conditions"]["ready"] for e in slice_["endpoints"]] == [True, False]
    assert endpoint_subsets(SERVICE, []) == []


def test_proxy_listens_on_loopback_cluster_ips_only() -> None:
    private = {**SERVICE, "spec": {**SERVICE["spec"], "clusterIP": "10.96.0.3"}}
    headless = {**SERVICE, "spec": {**SERVICE["spec"], "clusterIP": "None"}}
    assert desired_listeners([SERVICE, private, headless]) == {
        ("127.253.0.9", 80, "TCP", "ns/s", "http"),
        ("127.253.0.9", 81, "TCP", "ns/s", "raw"),
    }


@pytest.mark.parametrize(
    ("name", "protocol", "want"),
    [
        pytest.param("http", "TCP", ("127.254.0.1", 8080), id="by-name"),
        pytest.param("other", "UDP", ("127.254.0.1", 7000), id="only-udp-port"),
        pytest.param("other", "TCP", None, id="no-match"),
    ],
)
def test_pick_endpoint(name: str, protocol: str, want: Any) -> None:
    endpoints = {
        "subsets": [
            {
                "addresses": [{"ip": "127.254.0.1"}],
                "notReadyAddresses": [{"ip": "127.254.0.2"}],
                "ports": [
                    {"name": "http", "port": 8080, "protocol": "TCP"},
                    {"name": "raw", "port": 9000, "protocol": "TCP"},
                    {"name": "u", "port": 7000, "protocol": "UDP"},
                ],
            }
        ]
    }
    assert pick_endpoint(endpoints, name, protocol) == want


def test_volume_contents() -> None:
    secret = {
        "data": {"a": base64.b64encode(b"one").decode(), "b": base64.b64encode(b"two").decode()}
    }
    sources: dict[tuple[str, str], Any] = {
        ("secret", "s"): secret,
        ("configMap", "c"): {"data": {"k": "v"}},
    }
    assert volume_contents({"secret": {"secretName": "s"}}, sources) == {
        "a": (b"one", 0o644),
        "b": (b"two", 0o644),
    }
    items = {
        "secret": {"secretName": "s", "items": [{"key": "b", "path": "sub/b.txt", "mode": 0o600}]}
    }
    assert volume_contents(items, sources) == {"sub/b.txt": (b"two", 0o600)}
    assert volume_contents({"configMap": {"name": "c"}}, sources) == {"k": (b"v", 0o644)}
    assert volume_contents({"emptyDir": {}}, sources) == {}
    assert volume_contents({"hostPath": {"path": "/"}}, sources) is None
    assert volume_contents({"secret": {"secretName": "gone", "optional": True}}, sources) == {}
    with pytest.raises(MissingVolumeSource):
        volume_contents({"secret": {"secretName": "gone"}}, sources)


def test_pod_files_rewrite_mount_paths_and_give_in_cluster_config(tmp_path: Path) -> None:
    secret = {"data": {"tls.crt": base64.b64encode(b"CERT").decode(), "../escape": "eA=="}}
    container = {"name": "c", "volumeMounts": [{"name": "certs", "mountPath": "/certs"}]}
    the_pod = {
        "metadata": {"name": "p", "namespace": "ns", "uid": "u"},
        "spec": {
            "volumes": [{"name": "certs", "secret": {"secretName": "s"}}],
            "containers": [container],
        },
    }
    files = PodFiles.prepare(
        the_pod, tmp_path, {("secret", "s"): secret}, InCluster("127.0.0.1", 6443, b"CA", "tok")
    )
    local = files.volumes["certs"]
    assert (local / "tls.crt").read_bytes() == b"CERT"
    assert not (tmp_path / "ns_p_u" / "volumes" / "escape").exists()
    argv = files.container_argv(container, ["x", "--cert=/certs/tls.crt", "/certs", "/certs2/x"])
    assert argv == ["x", f"--cert={local}/tls.crt", str(local), "/certs2/x"]
    env = files.container_env(container, {"CERT": "/certs/tls.crt"})
    assert env["CERT"] == f"{local}/tls.crt"
    assert (env["KUBERNETES_SERVICE_HOST"], env["KUBERNETES_SERVICE_PORT"]) == ("127.0.0.1", "6443")
    sa = Path(env["AGONES_SERVICE_ACCOUNT_DIR"])
    assert [(sa / f).read_text() for f in ("token", "ca.crt", "namespace")] == ["tok", "CA", "ns"]
    files.remove()
    assert not files.root.exists()
