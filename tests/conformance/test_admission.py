"""Admission webhooks called with AdmissionReview v1: mutation by JSON patch, denial messages,
failurePolicy, and webhooks reached through a Service. Local only: the webhook backend listens on
127.0.0.1, which a remote kube-apiserver cannot reach."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from agones.localcluster.apiserver.services import ADDRESS_ANNOTATION
from tests.cluster import Cluster
from tests.conformance.backend import Backend

MWC = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"


def _hook(
    name: str, client_config: dict, namespace: str, failure: str = "Fail", timeout: int = 10
) -> dict:
    return {
        "name": name,
        "clientConfig": client_config,
        "rules": [
            {
                "operations": ["CREATE", "UPDATE"],
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "resources": ["configmaps"],
                "scope": "Namespaced",
            }
        ],
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
        "objectSelector": {"matchLabels": {"admission-test": "yes"}},
        "failurePolicy": failure,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": timeout,
    }


@pytest.fixture
def backend(local_only: Cluster, namespace: str) -> Iterator[Backend]:
    with Backend("unused.agones-py.test", (f"hooks.{namespace}.svc",)) as b:
        yield b


@pytest.fixture
def configs(local_only: Cluster) -> Iterator[list[str]]:
    created: list[str] = []
    yield created
    for path in created:
        local_only.api.delete(path)


def _cm(name: str, **labels: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"admission-test": "yes", **labels}},
    }


def _install(cluster: Cluster, configs: list[str], path: str, kind: str, hooks: list[dict]) -> None:
    name = f"adm-{uuid.uuid4().hex[:8]}"
    resp = cluster.api.post(
        path,
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": name},
            "webhooks": hooks,
        },
    )
    assert resp.status == 201, resp
    configs.append(f"{path}/{name}")


def test_mutating_and_validating_webhooks(
    local_only: Cluster, namespace: str, backend: Backend, configs: list[str]
) -> None:
    cluster = local_only
    url = f"https://127.0.0.1:{backend.port}"
    _install(
        cluster,
        configs,
        MWC,
        "MutatingWebhookConfiguration",
        [
            _hook(
                "mutate.agones-py.test",
                {"url": f"{url}/mutate", "caBundle": backend.ca_bundle},
                namespace,
            )
        ],
    )
    _install(
        cluster,
        configs,
        VWC,
        "ValidatingWebhookConfiguration",
        [
            _hook(
                "validate.agones-py.test",
                {"url": f"{url}/validate", "caBundle": backend.ca_bundle},
                namespace,
            )
        ],
    )
    path = f"/api/v1/namespaces/{namespace}/configmaps"

    ok = cluster.api.post(path, _cm("adm-ok"))
    assert ok.status == 201, ok
    assert ok.body["metadata"]["labels"]["mutated"] == "yes"
    review = next(
        r for r in backend.reviews if r["request"]["object"]["metadata"].get("name") == "adm-ok"
    )
    req = review["request"]
    assert review["apiVersion"] == "admission.k8s.io/v1" and review["kind"] == "AdmissionReview"
    assert req["operation"] == "CREATE"
    assert req["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert req["resource"] == {"group": "", "version": "v1", "resource": "configmaps"}
    assert req["namespace"] == namespace
    assert req["oldObject"] is None

    denied = cluster.api.post(path, _cm("adm-no", deny="yes"))
    assert denied.status == 422
    assert denied.body["reason"] == "Invalid"
    assert (
        denied.body["message"]
        == 'admission webhook "validate.agones-py.test" denied the request: label deny=yes is not allowed'
    )
    assert cluster.api.get(f"{path}/adm-no").status == 404

    upd = cluster.api.patch(f"{path}/adm-ok", {"metadata": {"labels": {"deny": "yes"}}})
    assert upd.status == 422
    assert any(
        r["request"]["operation"] == "UPDATE" and r["request"]["oldObject"] for r in backend.reviews
    )

    unmatched = cluster.api.post(
        path,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "adm-skip", "labels": {"deny": "yes"}},
        },
    )
    assert unmatched.status == 201
    assert "mutated" not in unmatched.body["metadata"]["labels"]


def test_failure_policy(local_only: Cluster, namespace: str, configs: list[str]) -> None:
    cluster = local_only
    dead = {"url": "https://127.0.0.1:9/validate"}
    _install(
        cluster,
        configs,
        VWC,
        "ValidatingWebhookConfiguration",
        [_hook("ignore.agones-py.test", dead, namespace, failure="Ignore")],
    )
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    assert cluster.api.post(path, _cm("fp-ignore")).status == 201
    _install(
        cluster,
        configs,
        VWC,
        "ValidatingWebhookConfiguration",
        [_hook("fail.agones-py.test", dead, namespace, failure="Fail")],
    )
    resp = cluster.api.post(path, _cm("fp-fail"))
    assert resp.status == 500
    assert resp.body["reason"] == "InternalError"
    assert 'failed calling webhook "fail.agones-py.test"' in resp.body["message"]


def test_webhook_timeout(
    local_only: Cluster, namespace: str, backend: Backend, configs: list[str]
) -> None:
    cluster = local_only
    hook = _hook(
        "slow.agones-py.test",
        {"url": f"https://127.0.0.1:{backend.port}/slow", "caBundle": backend.ca_bundle},
        namespace,
        timeout=1,
    )
    _install(cluster, configs, VWC, "ValidatingWebhookConfiguration", [hook])
    resp = cluster.api.post(f"/api/v1/namespaces/{namespace}/configmaps", _cm("slow"))
    assert resp.status == 500
    assert 'failed calling webhook "slow.agones-py.test"' in resp.body["message"]


def test_webhook_through_a_service(
    local_only: Cluster, namespace: str, backend: Backend, configs: list[str]
) -> None:
    cluster = local_only
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "hooks",
            "annotations": {ADDRESS_ANNOTATION: f"127.0.0.1:{backend.port}"},
        },
        "spec": {"ports": [{"port": 443}]},
    }
    assert cluster.api.post(f"/api/v1/namespaces/{namespace}/services", svc).status == 201
    client = {
        "service": {"namespace": namespace, "name": "hooks", "path": "/mutate", "port": 443},
        "caBundle": backend.ca_bundle,
    }
    _install(
        cluster,
        configs,
        MWC,
        "MutatingWebhookConfiguration",
        [_hook("svc.agones-py.test", client, namespace)],
    )
    resp = cluster.api.post(f"/api/v1/namespaces/{namespace}/configmaps", _cm("via-svc"))
    assert resp.status == 201, resp
    assert resp.body["metadata"]["labels"]["mutated"] == "yes"
