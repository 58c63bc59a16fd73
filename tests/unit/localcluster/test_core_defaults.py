"""core/v1 defaults (`apiserver/coredefaults.py`) by tables: what kube-apiserver fills in on pods and
on the pod templates of the built-in kinds, and that it is idempotent."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agones.localcluster.apiserver.coredefaults import (
    image_pull_policy,
    set_object_defaults,
)


@pytest.mark.parametrize(
    ("image", "policy"),
    [
        pytest.param("nginx", "Always", id="no-tag"),
        pytest.param("nginx:latest", "Always", id="latest"),
        pytest.param("nginx:1.25", "IfNotPresent", id="tag"),
        pytest.param("nginx@sha256:abc", "IfNotPresent", id="digest"),
        pytest.param("localhost:5000/game", "Always", id="registry-port-no-tag"),
        pytest.param("localhost:5000/game:v2", "IfNotPresent", id="registry-port-tag"),
        pytest.param("ghcr.io/x/y:latest@sha256:abc", "Always", id="latest-and-digest"),
    ],
)
def test_image_pull_policy(image: str, policy: str) -> None:
    assert image_pull_policy(image) == policy


def pod(**spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "i"}], **spec},
    }


def defaulted(group: str, kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    set_object_defaults(group, kind, out)
    again = copy.deepcopy(out)
    set_object_defaults(group, kind, again)
    assert again == out, "defaulting must be idempotent"
    return out


def test_pod_spec_defaults() -> None:
    spec = defaulted("", "Pod", pod())["spec"]
    assert {k: v for k, v in spec.items() if k != "containers"} == {
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "securityContext": {},
        "schedulerName": "default-scheduler",
        "enableServiceLinks": True,
    }
    assert spec["containers"][0] == {
        "name": "c",
        "image": "i",
        "imagePullPolicy": "Always",
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
        "resources": {},
    }


PROBE_DEFAULTS = {
    "timeoutSeconds": 1,
    "periodSeconds": 10,
    "successThreshold": 1,
    "failureThreshold": 3,
}


@pytest.mark.parametrize(
    ("container", "path", "expected"),
    [
        pytest.param(
            {"livenessProbe": {"httpGet": {"port": 8080}}},
            ("livenessProbe",),
            {**PROBE_DEFAULTS, "httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"}},
            id="http-liveness",
        ),
        pytest.param(
            {"readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 2}},
            ("readinessProbe",),
            {**PROBE_DEFAULTS, "periodSeconds": 2, "tcpSocket": {"port": 80}},
            id="tcp-readiness-keeps-period",
        ),
        pytest.param(
            {"startupProbe": {"grpc": {"port": 9000}}},
            ("startupProbe",),
            {**PROBE_DEFAULTS, "grpc": {"port": 9000, "service": ""}},
            id="grpc-startup",
        ),
        pytest.param(
            {"lifecycle": {"preStop": {"httpGet": {"port": 80}}}},
            ("lifecycle", "preStop"),
            {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}},
            id="prestop-http",
        ),
        pytest.param(
            {"ports": [{"containerPort": 7654}]},
            ("ports",),
            [{"containerPort": 7654, "protocol": "TCP"}],
            id="port-protocol",
        ),
        pytest.param(
            {"env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]},
            ("env",),
            [
                {
                    "name": "N",
                    "valueFrom": {"fieldRef": {"fieldPath": "metadata.name", "apiVersion": "v1"}},
                }
            ],
            id="field-ref-api-version",
        ),
        pytest.param(
            {"resources": {"limits": {"cpu": "1"}}},
            ("resources",),
            {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}},
            id="requests-from-limits",
        ),
    ],
)
def test_container_defaults(
    container: dict[str, Any], path: tuple[str, ...], expected: Any
) -> None:
    obj = pod()
    obj["spec"]["containers"][0].update(container)
    node: Any = defaulted("", "Pod", obj)["spec"]["containers"][0]
    for key in path:
        node = node[key]
    assert node == expected


@pytest.mark.parametrize(
    ("volume", "expected"),
    [
        pytest.param({"name": "v"}, {"name": "v", "emptyDir": {}}, id="no-source-emptydir"),
        pytest.param(
            {"name": "v", "configMap": {"name": "cm"}},
            {"name": "v", "configMap": {"name": "cm", "defaultMode": 420}},
            id="configmap-mode",
        ),
        pytest.param(
            {"name": "v", "secret": {"secretName": "s", "defaultMode": 256}},
            {"name": "v", "secret": {"secretName": "s", "defaultMode": 256}},
            id="secret-keeps-mode",
        ),
        pytest.param(
            {"name": "v", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
            {
                "name": "v",
                "projected": {
                    "sources": [{"serviceAccountToken": {"path": "t", "expirationSeconds": 3600}}],
                    "defaultMode": 420,
                },
            },
            id="projected-token",
        ),
    ],
)
def test_volume_defaults(volume: dict[str, Any], expected: dict[str, Any]) -> None:
    assert defaulted("", "Pod", pod(volumes=[volume]))["spec"]["volumes"] == [expected]


def test_host_network_copies_container_ports_to_host_ports() -> None:
    obj = pod(hostNetwork=True)
    obj["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]
    port = defaulted("", "Pod", obj)["spec"]["containers"][0]["ports"][0]
    assert port == {"containerPort": 80, "hostPort": 80, "protocol": "TCP"}


@pytest.mark.parametrize(
    ("group", "kind", "path"),
    [
        pytest.param("apps", "Deployment", ("spec", "template"), id="deployment"),
        pytest.param("apps", "StatefulSet", ("spec", "template"), id="statefulset"),
        pytest.param("batch", "Job", ("spec", "template"), id="job"),
        pytest.param("batch", "CronJob", ("spec", "jobTemplate", "spec", "template"), id="cronjob"),
        pytest.param("", "PodTemplate", ("template",), id="podtemplate"),
    ],
)
def test_pod_templates_are_defaulted_without_pod_only_defaults(
    group: str, kind: str, path: tuple[str, ...]
) -> None:
    obj: dict[str, Any] = {"metadata": {"name": "x"}}
    node = obj
    for key in path:
        node = node.setdefault(key, {})
    template_spec = pod()["spec"]
    template_spec["containers"][0]["resources"] = {"limits": {"cpu": "1"}}
    node["spec"] = template_spec
    out: Any = defaulted(group, kind, obj)
    for key in path:
        out = out[key]
    assert out["spec"]["restartPolicy"] == "Always"
    assert out["spec"]["containers"][0]["terminationMessagePolicy"] == "File"
    assert "requests" not in out["spec"]["containers"][0]["resources"]


def test_other_kinds_and_malformed_shapes_are_left_alone() -> None:
    cm = {"metadata": {"name": "c"}, "data": {"spec": "x"}}
    assert defaulted("", "ConfigMap", cm) == cm
    weird = {"metadata": {"name": "p"}, "spec": {"containers": "no", "volumes": [1]}}
    assert defaulted("", "Pod", weird)["spec"]["containers"] == "no"
