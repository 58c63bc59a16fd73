"""Patch: JSON patch (with `test`), merge patch, strategic merge patch with merge keys."""

from __future__ import annotations

from tests.cluster import Cluster
from tests.conformance.conftest import CRD


def test_json_patch_with_test_op(cluster: Cluster, namespace: str, widgets: CRD) -> None:
    cluster.api.post(widgets.path(namespace), widgets.obj("jp", {"replicas": 1}))
    ok = cluster.api.patch(
        widgets.path(namespace, "jp"),
        [
            {"op": "test", "path": "/spec/replicas", "value": 1},
            {"op": "replace", "path": "/spec/replicas", "value": 5},
        ],
        "json",
    )
    assert ok.status == 200, ok
    assert ok.body["spec"]["replicas"] == 5
    failed = cluster.api.patch(
        widgets.path(namespace, "jp"),
        [
            {"op": "test", "path": "/spec/replicas", "value": 1},
            {"op": "replace", "path": "/spec/replicas", "value": 9},
        ],
        "json",
    )
    assert failed.status == 422
    assert failed.body["kind"] == "Status"
    assert cluster.api.get(widgets.path(namespace, "jp")).body["spec"]["replicas"] == 5


def test_json_patch_add_remove_on_labels(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    cluster.api.post(
        path,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "jpl", "labels": {"a": "1"}},
        },
    )
    resp = cluster.api.patch(
        f"{path}/jpl",
        [
            {"op": "add", "path": "/metadata/labels/b~1c", "value": "2"},
            {"op": "remove", "path": "/metadata/labels/a"},
        ],
        "json",
    )
    assert resp.status == 200
    assert resp.body["metadata"]["labels"] == {"b/c": "2"}


def test_merge_patch_sets_and_deletes(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    cluster.api.post(
        path,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "mp"},
            "data": {"a": "1", "b": "2"},
        },
    )
    resp = cluster.api.patch(f"{path}/mp", {"data": {"a": None, "c": "3"}})
    assert resp.status == 200
    assert resp.body["data"] == {"b": "2", "c": "3"}


def test_merge_patch_with_stale_resource_version_conflicts(
    cluster: Cluster, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = cluster.api.post(
        path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "mprv"}}
    ).body
    cluster.api.patch(f"{path}/mprv", {"data": {"x": "1"}})
    resp = cluster.api.patch(
        f"{path}/mprv",
        {
            "metadata": {"resourceVersion": created["metadata"]["resourceVersion"]},
            "data": {"x": "2"},
        },
    )
    assert resp.status == 409


def test_patch_missing_object_is_404(cluster: Cluster, namespace: str) -> None:
    assert (
        cluster.api.patch(f"/api/v1/namespaces/{namespace}/configmaps/absent", {"data": {}}).status
        == 404
    )


def _pod(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "schedulerName": "agones-py-none",
            "containers": [
                {
                    "name": "a",
                    "image": "registry.k8s.io/pause:3.9",
                    "ports": [{"containerPort": 80}, {"containerPort": 81}],
                    "env": [{"name": "X", "value": "1"}],
                },
                {"name": "b", "image": "registry.k8s.io/pause:3.9"},
            ],
        },
    }


def test_strategic_merge_patch_merges_lists_by_key(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/pods"
    assert cluster.api.post(path, _pod("smp")).status == 201
    # Only images may change in a pod's containers: the list merges by name.
    patch = {
        "metadata": {"labels": {"l": "v"}},
        "spec": {"containers": [{"name": "b", "image": "registry.k8s.io/pause:3.10"}]},
    }
    resp = cluster.api.patch(f"{path}/smp", patch, "strategic")
    assert resp.status == 200, resp
    containers = resp.body["spec"]["containers"]
    assert [c["name"] for c in containers] == ["a", "b"]
    assert [c["image"] for c in containers] == [
        "registry.k8s.io/pause:3.9",
        "registry.k8s.io/pause:3.10",
    ]
    assert containers[0]["env"] == [{"name": "X", "value": "1"}]
    assert [p["containerPort"] for p in containers[0]["ports"]] == [80, 81]
    assert resp.body["metadata"]["labels"] == {"l": "v"}
    merged = cluster.api.patch(f"{path}/smp", {"metadata": {"labels": {"l": None}}})
    assert "l" not in (merged.body["metadata"].get("labels") or {})
    cluster.api.delete(f"{path}/smp", gracePeriodSeconds=0)


def test_pod_spec_is_immutable_but_for_images(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/pods"
    assert cluster.api.post(path, _pod("immut")).status == 201
    patch = {"spec": {"containers": [{"name": "a", "env": [{"name": "Y", "value": "2"}]}]}}
    resp = cluster.api.patch(f"{path}/immut", patch, "strategic")
    assert resp.status == 422
    assert resp.body["reason"] == "Invalid"
    assert resp.body["details"]["causes"][0]["field"] == "spec"
    assert resp.body["details"]["causes"][0]["reason"] == "FieldValueForbidden"
    cluster.api.delete(f"{path}/immut", gracePeriodSeconds=0)


def test_strategic_merge_patch_of_service_account_pull_secrets(
    cluster: Cluster, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/serviceaccounts"
    sa = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "smpsa"},
        "imagePullSecrets": [{"name": "one"}],
    }
    assert cluster.api.post(path, sa).status == 201
    resp = cluster.api.patch(f"{path}/smpsa", {"imagePullSecrets": [{"name": "two"}]}, "strategic")
    assert resp.status == 200
    assert resp.body["imagePullSecrets"] == [{"name": "one"}, {"name": "two"}]
    replaced = cluster.api.patch(f"{path}/smpsa", {"imagePullSecrets": [{"name": "three"}]})
    assert replaced.body["imagePullSecrets"] == [{"name": "three"}]


def test_strategic_merge_patch_delete_directive_and_finalizers(
    cluster: Cluster, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/services"
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "smps", "finalizers": ["a.example.com/x"]},
        "spec": {
            "ports": [{"name": "p1", "port": 80}, {"name": "p2", "port": 81}],
            "selector": {"app": "x"},
        },
    }
    assert cluster.api.post(path, svc).status == 201
    patch = {
        "metadata": {"finalizers": ["b.example.com/y"]},
        "spec": {"ports": [{"port": 80, "$patch": "delete"}, {"name": "p3", "port": 82}]},
    }
    resp = cluster.api.patch(f"{path}/smps", patch, "strategic")
    assert resp.status == 200, resp
    assert [p["port"] for p in resp.body["spec"]["ports"]] == [81, 82]
    assert resp.body["metadata"]["finalizers"] == ["a.example.com/x", "b.example.com/y"]
    cluster.api.patch(f"{path}/smps", {"metadata": {"finalizers": None}})


def test_strategic_merge_patch_is_refused_for_custom_resources(
    cluster: Cluster, namespace: str, widgets: CRD
) -> None:
    cluster.api.post(widgets.path(namespace), widgets.obj("nosmp"))
    resp = cluster.api.patch(
        widgets.path(namespace, "nosmp"), {"spec": {"replicas": 2}}, "strategic"
    )
    assert resp.status == 415
    assert resp.body["reason"] == "UnsupportedMediaType"


def test_status_patch_only_changes_status(cluster: Cluster, namespace: str, widgets: CRD) -> None:
    cluster.api.post(widgets.path(namespace), widgets.obj("sp", {"replicas": 1}))
    resp = cluster.api.patch(
        widgets.path(namespace, "sp", "status"),
        {"spec": {"replicas": 9}, "status": {"state": "Up"}},
    )
    assert resp.status == 200
    assert resp.body["status"]["state"] == "Up"
    assert resp.body["spec"]["replicas"] == 1
