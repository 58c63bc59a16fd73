"""Delete: finalizers, preconditions, propagation (Background, Foreground, Orphan), owner-reference
garbage collection, deletecollection."""

from __future__ import annotations

from tests.cluster import Cluster
from tests.waiting import wait_for


def _cm(name: str, **meta: object) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}}


def _owner_ref(owner: dict, block: bool = False) -> dict:
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
    }
    if block:
        ref["blockOwnerDeletion"] = True
    return ref


def test_finalizer_sets_deletion_timestamp_until_removed(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    cluster.api.post(path, _cm("fin", finalizers=["example.com/hold"]))
    try:
        resp = cluster.api.delete(f"{path}/fin")
        assert resp.status == 200, resp
        obj = cluster.api.get(f"{path}/fin").body
        assert obj["metadata"]["deletionTimestamp"]
        assert obj["metadata"]["finalizers"] == ["example.com/hold"]
        # Adding a finalizer while being deleted is forbidden.
        bad = cluster.api.patch(
            f"{path}/fin", {"metadata": {"finalizers": ["example.com/hold", "example.com/new"]}}
        )
        assert bad.status == 422
    finally:
        cluster.api.patch(f"{path}/fin", {"metadata": {"finalizers": None}})
    wait_for(lambda: cluster.api.get(f"{path}/fin").status == 404, what="finalized object gone")


def test_unfinished_deletion_is_202_only_for_orphan_dependents_false(
    cluster: Cluster, namespace: str
) -> None:
    # kube-apiserver keeps 200 for every deletion still waiting on finalizers, except the
    # deprecated orphanDependents=false, which gets 202 Accepted.
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    cluster.api.post(path, _cm("fin-202", finalizers=["example.com/hold"]))
    try:
        resp = cluster.api.delete(f"{path}/fin-202", orphanDependents="false")
        assert resp.status == 202, resp
        assert resp.body["metadata"]["deletionTimestamp"]
    finally:
        cluster.api.patch(f"{path}/fin-202", {"metadata": {"finalizers": None}})
    wait_for(lambda: cluster.api.get(f"{path}/fin-202").status == 404, what="finalized object gone")


def test_delete_returns_404_for_missing(cluster: Cluster, namespace: str) -> None:
    resp = cluster.api.delete(f"/api/v1/namespaces/{namespace}/configmaps/never")
    assert resp.status == 404
    assert resp.body["reason"] == "NotFound"


def test_preconditions(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    obj = cluster.api.post(path, _cm("pre")).body
    bad_uid = {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "preconditions": {"uid": "00000000-0000-0000-0000-000000000000"},
    }
    resp = cluster.api.delete(f"{path}/pre", bad_uid)
    assert resp.status == 409
    assert resp.body["reason"] == "Conflict"
    bad_rv = {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "preconditions": {"resourceVersion": "1"},
    }
    assert cluster.api.delete(f"{path}/pre", bad_rv).status == 409
    good = {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "preconditions": {
            "uid": obj["metadata"]["uid"],
            "resourceVersion": obj["metadata"]["resourceVersion"],
        },
    }
    assert cluster.api.delete(f"{path}/pre", good).status == 200
    assert cluster.api.get(f"{path}/pre").status == 404


def test_dry_run_delete_keeps_object(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    cluster.api.post(path, _cm("drydel"))
    assert cluster.api.delete(f"{path}/drydel", dryRun="All").status == 200
    assert cluster.api.get(f"{path}/drydel").status == 200


def test_background_propagation_collects_dependents(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    owner = cluster.api.post(path, _cm("bg-owner")).body
    cluster.api.post(path, _cm("bg-child", ownerReferences=[_owner_ref(owner)]))
    cluster.api.delete(f"{path}/bg-owner", propagationPolicy="Background")
    wait_for(lambda: cluster.api.get(f"{path}/bg-owner").status == 404, what="owner gone")
    wait_for(lambda: cluster.api.get(f"{path}/bg-child").status == 404, what="dependent collected")


def test_orphan_propagation_keeps_dependents(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    owner = cluster.api.post(path, _cm("or-owner")).body
    cluster.api.post(path, _cm("or-child", ownerReferences=[_owner_ref(owner)]))
    cluster.api.delete(f"{path}/or-owner", propagationPolicy="Orphan")
    wait_for(lambda: cluster.api.get(f"{path}/or-owner").status == 404, what="owner gone")
    child = wait_for(
        lambda: (
            (r := cluster.api.get(f"{path}/or-child")).status == 200
            and not r.body["metadata"].get("ownerReferences")
            and r
        ),
        what="orphaned dependent",
    )
    assert child.body["metadata"]["name"] == "or-child"


def test_foreground_propagation_waits_for_dependents(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    owner = cluster.api.post(path, _cm("fg-owner")).body
    cluster.api.post(
        path,
        _cm(
            "fg-child",
            ownerReferences=[_owner_ref(owner, block=True)],
            finalizers=["example.com/slow"],
        ),
    )
    resp = cluster.api.delete(f"{path}/fg-owner", propagationPolicy="Foreground")
    assert resp.status == 200, resp
    # The owner waits, marked for foreground deletion, while its dependent is being deleted.
    held = cluster.api.get(f"{path}/fg-owner").body
    assert held["metadata"]["deletionTimestamp"]
    assert "foregroundDeletion" in held["metadata"]["finalizers"]
    wait_for(
        lambda: cluster.api.get(f"{path}/fg-child").body["metadata"].get("deletionTimestamp"),
        what="dependent deleting",
    )
    assert cluster.api.get(f"{path}/fg-owner").status == 200
    cluster.api.patch(f"{path}/fg-child", {"metadata": {"finalizers": None}})
    wait_for(lambda: cluster.api.get(f"{path}/fg-child").status == 404, what="dependent gone")
    wait_for(
        lambda: cluster.api.get(f"{path}/fg-owner").status == 404,
        what="owner gone after dependents",
    )


def test_dependent_of_missing_owner_is_collected(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    ghost = {"metadata": {"name": "ghost", "uid": "4f1c9b9e-0000-4000-8000-000000000001"}}
    cluster.api.post(path, _cm("dangling", ownerReferences=[_owner_ref(ghost)]))
    wait_for(
        lambda: cluster.api.get(f"{path}/dangling").status == 404,
        timeout=60,
        what="dangling dependent collected",
    )


def test_delete_collection_with_label_selector(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    for i in range(3):
        cluster.api.post(path, _cm(f"dc-{i}", labels={"batch": "dc"}))
    cluster.api.post(path, _cm("dc-keep", labels={"batch": "other"}))
    resp = cluster.api.delete(path, labelSelector="batch=dc")
    assert resp.status == 200
    left = [
        i["metadata"]["name"] for i in cluster.api.get(path, labelSelector="batch").body["items"]
    ]
    assert left == ["dc-keep"]


def test_namespace_deletion_removes_contents(cluster: Cluster) -> None:
    ns = cluster.create_namespace("nsdel")
    cluster.api.post(f"/api/v1/namespaces/{ns}/configmaps", _cm("inside"))
    resp = cluster.api.delete(f"/api/v1/namespaces/{ns}")
    assert resp.status == 200, resp
    body = cluster.api.get(f"/api/v1/namespaces/{ns}").body
    if body and body.get("kind") == "Namespace":
        assert body["status"]["phase"] == "Terminating"
        denied = cluster.api.post(f"/api/v1/namespaces/{ns}/configmaps", _cm("late"))
        assert denied.status in (403, 404)
    wait_for(
        lambda: cluster.api.get(f"/api/v1/namespaces/{ns}").status == 404,
        timeout=120,
        what="namespace gone",
    )


def test_pod_eviction(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/pods"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "evictee"},
        "spec": {
            "schedulerName": "agones-py-none",
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}],
        },
    }
    assert cluster.api.post(path, pod).status == 201
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "evictee", "namespace": namespace},
    }
    resp = cluster.api.post(f"{path}/evictee/eviction", eviction)
    assert resp.status == 201, resp
    wait_for(lambda: cluster.api.get(f"{path}/evictee").status == 404, what="evicted pod gone")


def test_namespace_finalize_subresource(cluster: Cluster) -> None:
    ns = cluster.create_namespace("fin")
    try:
        body = cluster.api.get(f"/api/v1/namespaces/{ns}").body
        body["spec"]["finalizers"] = ["kubernetes", "example.com/extra"]
        resp = cluster.api.put(f"/api/v1/namespaces/{ns}/finalize", body)
        assert resp.status == 200, resp
        assert resp.body["spec"]["finalizers"] == ["kubernetes", "example.com/extra"]
        body = resp.body
        body["spec"]["finalizers"] = ["kubernetes"]
        assert cluster.api.put(f"/api/v1/namespaces/{ns}/finalize", body).body["spec"][
            "finalizers"
        ] == ["kubernetes"]
    finally:
        cluster.delete_namespace(ns)
