"""Pods as kube-apiserver admits them: ServiceAccount admission, container state transitions on
status updates, bindings in a terminating namespace, quantities stored canonically."""

from __future__ import annotations

from tests.cluster import Cluster
from tests.waiting import wait_for


def _pod(name: str, **spec: object) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": "agones-py-none",
            "containers": [{"name": "a", "image": "registry.k8s.io/pause:3.9"}],
            **spec,
        },
    }


def test_pod_of_a_missing_service_account_is_forbidden(cluster: Cluster, namespace: str) -> None:
    resp = cluster.api.post(
        f"/api/v1/namespaces/{namespace}/pods", _pod("sa-missing", serviceAccountName="nobody")
    )
    assert resp.status == 403, resp
    assert resp.body["reason"] == "Forbidden"
    assert resp.body["message"] == (
        f'pods "sa-missing" is forbidden: error looking up service account {namespace}/nobody: '
        'serviceaccount "nobody" not found'
    )


def _status(state: dict) -> dict:
    return {
        "name": "a",
        "image": "registry.k8s.io/pause:3.9",
        "imageID": "",
        "ready": False,
        "restartCount": 0,
        "state": state,
    }


def test_terminated_container_stays_terminated_without_restarts(
    cluster: Cluster, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/pods"
    created = cluster.api.post(path, _pod("never", restartPolicy="Never"))
    assert created.status == 201, created
    pod = created.body
    pod["status"]["containerStatuses"] = [
        _status({"terminated": {"exitCode": 0, "reason": "Completed"}})
    ]
    done = cluster.api.put(f"{path}/never/status", pod)
    assert done.status == 200, done
    back = done.body
    back["status"]["containerStatuses"] = [_status({"running": {}})]
    resp = cluster.api.put(f"{path}/never/status", back)
    assert resp.status == 422, resp
    assert resp.body["reason"] == "Invalid"
    assert [(c["reason"], c["field"]) for c in resp.body["details"]["causes"]] == [
        ("FieldValueForbidden", "status.containerStatuses[0].state")
    ]
    assert "may not be transitioned to non-terminated state" in resp.body["message"]


def test_binding_in_a_terminating_namespace_is_forbidden(cluster: Cluster) -> None:
    ns = cluster.create_namespace("bind")
    path = f"/api/v1/namespaces/{ns}/pods"
    pod = _pod("held")
    pod["metadata"]["finalizers"] = ["example.com/hold"]
    assert cluster.api.post(path, pod).status == 201
    try:
        cluster.delete_namespace(ns)
        wait_for(
            lambda: cluster.api.get(f"{path}/held").body["metadata"].get("deletionTimestamp"),
            what="pod marked for deletion",
        )
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": "held"},
            "target": {"apiVersion": "v1", "kind": "Node", "name": "somewhere"},
        }
        resp = cluster.api.post(f"{path}/held/binding", binding)
        assert resp.status == 403, resp
        assert resp.body["reason"] == "Forbidden"
        assert "because it is being terminated" in resp.body["message"]
    finally:
        cluster.api.patch(f"{path}/held", {"metadata": {"finalizers": None}})


def test_quantities_are_stored_canonically(cluster: Cluster, namespace: str) -> None:
    pod = _pod("quantities")
    pod["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": 0.5, "memory": "1000", "ephemeral-storage": "1000"},
        "limits": {"cpu": "2000m", "memory": "1024Mi", "ephemeral-storage": "1Ki"},
    }
    resp = cluster.api.post(f"/api/v1/namespaces/{namespace}/pods", pod)
    assert resp.status == 201, resp
    assert resp.body["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "500m", "memory": "1k", "ephemeral-storage": "1k"},
        "limits": {"cpu": "2", "memory": "1Gi", "ephemeral-storage": "1Ki"},
    }
    bad = _pod("not-a-quantity")
    bad["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "lots"}}
    refused = cluster.api.post(f"/api/v1/namespaces/{namespace}/pods", bad)
    assert refused.status == 400, refused
    assert "quantities must match the regular expression" in refused.body["message"]
