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
    # The apiserver wraps the patch library's error in NewGenericServerResponse: its own words,
    # empty details.
    assert failed.body["kind"] == "Status"
    assert failed.body["reason"] == "Invalid"
    assert failed.body["message"] == (
        "the server rejected our request due to an error in our request"
    )
    assert failed.body["details"] == {}
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
        "secrets": [{"name": "one"}],
        "imagePullSecrets": [{"name": "one"}],
    }
    assert cluster.api.post(path, sa).status == 201
    # `secrets` merges by name; `imagePullSecrets` has no patch strategy on a ServiceAccount
    # (k8s.io/api core/v1 ServiceAccount: listType=atomic), so a strategic patch replaces it.
    patch = {"secrets": [{"name": "two"}], "imagePullSecrets": [{"name": "two"}]}
    resp = cluster.api.patch(f"{path}/smpsa", patch, "strategic")
    assert resp.status == 200
    # Without $setElementOrder the patch's items come first (strategicpatch's mergeSortedSlice).
    assert resp.body["secrets"] == [{"name": "two"}, {"name": "one"}]
    assert resp.body["imagePullSecrets"] == [{"name": "two"}]
    replaced = cluster.api.patch(f"{path}/smpsa", {"secrets": [{"name": "three"}]})
    assert replaced.body["secrets"] == [{"name": "three"}]


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
    try:
        resp = cluster.api.patch(f"{path}/smps", patch, "strategic")
        assert resp.status == 200, resp
        # The patch's items first, then the live ones it did not name.
        assert [p["port"] for p in resp.body["spec"]["ports"]] == [82, 81]
        assert resp.body["metadata"]["finalizers"] == ["b.example.com/y", "a.example.com/x"]
    finally:
        # Even when an assertion fails: a finalizer left behind keeps the namespace Terminating.
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


def test_server_side_apply_owns_fields(cluster: Cluster, namespace: str, widgets: CRD) -> None:
    path = widgets.path(namespace, "ssa")

    def config(labels: dict, spec: dict) -> dict:
        return {
            "apiVersion": widgets.api_version,
            "kind": widgets.kind,
            "metadata": {"name": "ssa", "labels": labels},
            "spec": spec,
        }

    first = cluster.api.patch(
        path,
        config({"a": "1", "b": "2"}, {"replicas": 2, "color": "red"}),
        "apply",
        fieldManager="tester",
    )
    assert first.status == 201, first
    managers = [(m["manager"], m["operation"]) for m in first.body["metadata"]["managedFields"]]
    assert ("tester", "Apply") in managers
    # Another writer's change stays; fields the applier stops setting go away.
    cluster.api.patch(path, {"metadata": {"labels": {"other": "x"}}})
    second = cluster.api.patch(
        path, config({"a": "1"}, {"replicas": 3}), "apply", fieldManager="tester"
    )
    assert second.status == 200, second
    assert second.body["metadata"]["labels"] == {"a": "1", "other": "x"}
    assert second.body["spec"]["replicas"] == 3
    assert second.body["spec"]["color"] == "blue"  # dropped by the applier, then defaulted
    missing = cluster.api.patch(path, config({}, {}), "apply")
    assert missing.status == 422


def test_server_side_apply_conflicts_between_managers(
    cluster: Cluster, namespace: str, widgets: CRD
) -> None:
    path = widgets.path(namespace, "ssa-conflict")
    body = {
        "apiVersion": widgets.api_version,
        "kind": widgets.kind,
        "metadata": {"name": "ssa-conflict"},
        "spec": {"replicas": 2},
    }
    assert cluster.api.patch(path, body, "apply", fieldManager="alpha").status == 201
    body["spec"]["replicas"] = 3
    conflict = cluster.api.patch(path, body, "apply", fieldManager="beta")
    assert conflict.status == 409, conflict
    assert conflict.body["reason"] == "Conflict"
    assert [c["field"] for c in conflict.body["details"]["causes"]] == [".spec.replicas"]
    forced = cluster.api.patch(path, body, "apply", fieldManager="beta", force="true")
    assert forced.status == 200, forced
    assert forced.body["spec"]["replicas"] == 3


def test_server_side_apply_keys_ports_by_number_and_protocol(
    cluster: Cluster, namespace: str
) -> None:
    """Ports are list maps keyed by (containerPort, protocol) for apply: 8080/TCP and 8080/UDP
    are two ports (what Helm 4's server-side apply of Agones' ping Deployment relies on)."""
    ports = [
        {"name": "http", "containerPort": 8080, "protocol": "TCP"},
        {"name": "udp", "containerPort": 8080, "protocol": "UDP"},
    ]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "ssa-ports"},
        "spec": {"containers": [{"name": "c", "image": "busybox", "ports": ports}]},
    }
    path = f"/api/v1/namespaces/{namespace}/pods/ssa-ports"
    applied = cluster.api.patch(path, pod, "apply", fieldManager="tester")
    assert applied.status == 201, applied
    assert applied.body["spec"]["containers"][0]["ports"] == ports
    (entry,) = [m for m in applied.body["metadata"]["managedFields"] if m["manager"] == "tester"]
    container = entry["fieldsV1"]["f:spec"]["f:containers"]['k:{"name":"c"}']
    assert 'k:{"containerPort":8080,"protocol":"UDP"}' in container["f:ports"]
    cluster.api.delete(path, gracePeriodSeconds="0")
