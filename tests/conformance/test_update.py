"""Update: optimistic concurrency, generation, and the main resource versus the status subresource."""

from __future__ import annotations

import copy

from tests.cluster import Cluster
from tests.conformance.conftest import CRD


def test_stale_resource_version_conflicts(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = cluster.api.post(
        path,
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "occ"}, "data": {"a": "1"}},
    ).body
    first = copy.deepcopy(created)
    first["data"]["a"] = "2"
    updated = cluster.api.put(f"{path}/occ", first)
    assert updated.status == 200
    assert int(updated.body["metadata"]["resourceVersion"]) > int(
        created["metadata"]["resourceVersion"]
    )
    stale = copy.deepcopy(created)
    stale["data"]["a"] = "3"
    resp = cluster.api.put(f"{path}/occ", stale)
    assert resp.status == 409
    assert resp.body["reason"] == "Conflict"
    assert "the object has been modified" in resp.body["message"]
    assert cluster.api.get(f"{path}/occ").body["data"]["a"] == "2"


def test_update_of_missing_object_is_404(cluster: Cluster, namespace: str) -> None:
    resp = cluster.api.put(
        f"/api/v1/namespaces/{namespace}/configmaps/nope",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "nope", "resourceVersion": "1"},
        },
    )
    assert resp.status == 404


def test_name_mismatch_is_400(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = cluster.api.post(
        path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "nm"}}
    ).body
    created["metadata"]["name"] = "other"
    assert cluster.api.put(f"{path}/nm", created).status == 400


def test_noop_update_keeps_resource_version(cluster: Cluster, namespace: str, widgets: CRD) -> None:
    created = cluster.api.post(widgets.path(namespace), widgets.obj("noop", {"replicas": 2})).body
    again = cluster.api.put(widgets.path(namespace, "noop"), created)
    assert again.status == 200
    assert again.body["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_generation_bumps_on_spec_change_only(
    cluster: Cluster, namespace: str, widgets: CRD
) -> None:
    obj = cluster.api.post(widgets.path(namespace), widgets.obj("gen", {"replicas": 1})).body
    assert obj["metadata"]["generation"] == 1
    obj["metadata"].setdefault("labels", {})["x"] = "y"
    obj = cluster.api.put(widgets.path(namespace, "gen"), obj).body
    assert obj["metadata"]["generation"] == 1
    obj["spec"]["replicas"] = 3
    obj = cluster.api.put(widgets.path(namespace, "gen"), obj).body
    assert obj["metadata"]["generation"] == 2
    obj["status"] = {"state": "Ready"}
    obj = cluster.api.put(widgets.path(namespace, "gen", "status"), obj).body
    assert obj["metadata"]["generation"] == 2


def test_main_resource_ignores_status_and_status_ignores_spec(
    cluster: Cluster, namespace: str, widgets: CRD
) -> None:
    body = widgets.obj("split", {"replicas": 1})
    body["status"] = {"state": "FromCreate"}
    obj = cluster.api.post(widgets.path(namespace), body).body
    assert "status" not in obj or obj["status"].get("state") != "FromCreate"
    obj["status"] = {"state": "Main"}
    obj["spec"]["replicas"] = 2
    obj = cluster.api.put(widgets.path(namespace, "split"), obj).body
    assert obj["spec"]["replicas"] == 2
    assert (obj.get("status") or {}).get("state") != "Main"
    obj["status"] = {"state": "Ready", "replicas": 2}
    obj["spec"]["replicas"] = 7
    obj = cluster.api.put(widgets.path(namespace, "split", "status"), obj).body
    assert obj["status"] == {"state": "Ready", "replicas": 2}
    assert obj["spec"]["replicas"] == 2
    got = cluster.api.get(widgets.path(namespace, "split", "status")).body
    assert got["status"]["state"] == "Ready"


def test_custom_resource_update_requires_resource_version(
    cluster: Cluster, namespace: str, widgets: CRD
) -> None:
    obj = cluster.api.post(widgets.path(namespace), widgets.obj("needrv")).body
    del obj["metadata"]["resourceVersion"]
    obj["spec"]["replicas"] = 4
    resp = cluster.api.put(widgets.path(namespace, "needrv"), obj)
    assert resp.status == 422
    assert resp.body["reason"] == "Invalid"


def test_configmap_unconditional_update(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    cluster.api.post(
        path,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "uncond"},
            "data": {"a": "1"},
        },
    )
    resp = cluster.api.put(
        f"{path}/uncond",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "uncond"},
            "data": {"a": "9"},
        },
    )
    assert resp.status == 200
    assert resp.body["data"] == {"a": "9"}
