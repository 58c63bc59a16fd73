"""Discovery: /version, /api, /apis, resource lists, and a new CRD becoming discoverable."""

from __future__ import annotations

import re

from tests.cluster import Cluster
from tests.conformance.conftest import CRD


def test_version_reports_a_kubernetes_release(cluster: Cluster) -> None:
    body = cluster.api.get("/version").body
    assert re.match(r"^v1\.\d+\.\d+", body["gitVersion"])
    assert body["major"] == "1"
    assert body["minor"].rstrip("+").isdigit()
    assert body["platform"]


def test_core_group_versions(cluster: Cluster) -> None:
    body = cluster.api.get("/api").body
    assert body["kind"] == "APIVersions"
    assert "v1" in body["versions"]


def test_core_resource_list_has_kinds_and_subresources(cluster: Cluster) -> None:
    body = cluster.api.get("/api/v1").body
    assert body["kind"] == "APIResourceList"
    assert body["groupVersion"] == "v1"
    by_name = {r["name"]: r for r in body["resources"]}
    for name, kind, namespaced in [
        ("pods", "Pod", True),
        ("namespaces", "Namespace", False),
        ("nodes", "Node", False),
        ("services", "Service", True),
        ("configmaps", "ConfigMap", True),
        ("secrets", "Secret", True),
        ("serviceaccounts", "ServiceAccount", True),
        ("events", "Event", True),
    ]:
        assert by_name[name]["kind"] == kind
        assert by_name[name]["namespaced"] is namespaced
        assert {"get", "list", "watch", "create"} <= set(by_name[name]["verbs"])
    assert "pods/status" in by_name
    assert "pods/binding" in by_name
    assert "po" in by_name["pods"]["shortNames"]


def test_group_list_includes_builtin_groups(cluster: Cluster) -> None:
    body = cluster.api.get("/apis").body
    assert body["kind"] == "APIGroupList"
    groups = {g["name"]: g for g in body["groups"]}
    for group in (
        "apiextensions.k8s.io",
        "coordination.k8s.io",
        "events.k8s.io",
        "admissionregistration.k8s.io",
        "apiregistration.k8s.io",
    ):
        assert group in groups, group
        assert groups[group]["preferredVersion"]["version"] == "v1"


def test_group_document(cluster: Cluster) -> None:
    body = cluster.api.get("/apis/coordination.k8s.io").body
    assert body["kind"] == "APIGroup"
    assert body["name"] == "coordination.k8s.io"
    assert {"groupVersion": "coordination.k8s.io/v1", "version": "v1"} in body["versions"]


def test_crd_is_discoverable(cluster: Cluster, widgets: CRD) -> None:
    groups = {g["name"] for g in cluster.api.get("/apis").body["groups"]}
    assert widgets.group in groups
    body = cluster.api.get(f"/apis/{widgets.group}/{widgets.version}").body
    by_name = {r["name"]: r for r in body["resources"]}
    res = by_name[widgets.plural]
    assert res["kind"] == widgets.kind
    assert res["namespaced"] is True
    assert widgets.short in res["shortNames"]
    assert widgets.category in res["categories"]
    assert f"{widgets.plural}/status" in by_name
    scale = by_name[f"{widgets.plural}/scale"]
    assert (scale.get("group"), scale.get("version"), scale["kind"]) == (
        "autoscaling",
        "v1",
        "Scale",
    )


def test_unknown_group_is_404(cluster: Cluster) -> None:
    assert cluster.api.get("/apis/nonexistent.agones-py.test/v1").status == 404
    assert cluster.api.get("/api/v1/namespaces/default/nonexistentthings").status == 404


def test_version_is_the_release_reproduced(cluster: Cluster) -> None:
    # The local server reproduces kube-apiserver v1.28; the conformance runs use a v1.28 server.
    info = cluster.api.get("/version").body
    assert (info["major"], info["minor"].rstrip("+")) == ("1", "28")
    assert info["gitVersion"].startswith("v1.28.")
