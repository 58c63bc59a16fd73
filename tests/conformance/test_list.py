"""List: label selectors (every operator), field selectors, limit/continue, resourceVersion."""

from __future__ import annotations

import pytest

from tests.cluster import Cluster
from tests.conformance.conftest import CRD

LABELS = {
    "s-a": {"app": "web", "tier": "front", "rank": "1"},
    "s-b": {"app": "web", "tier": "back", "rank": "5"},
    "s-c": {"app": "db", "rank": "10"},
    "s-d": {},
}


@pytest.fixture(scope="module")
def labelled(cluster: Cluster, namespace: str) -> str:
    for name, labels in LABELS.items():
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels},
        }
        assert cluster.api.post(f"/api/v1/namespaces/{namespace}/configmaps", body).status == 201
    return namespace


def names(resp: object) -> list[str]:
    return sorted(
        i["metadata"]["name"] for i in resp.body["items"] if i["metadata"]["name"].startswith("s-")
    )  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param("app=web", ["s-a", "s-b"], id="equals"),
        pytest.param("app==web", ["s-a", "s-b"], id="double-equals"),
        pytest.param("app!=web", ["s-c", "s-d"], id="not-equals-includes-missing"),
        pytest.param("tier in (front,back)", ["s-a", "s-b"], id="in"),
        pytest.param("tier notin (front)", ["s-b", "s-c", "s-d"], id="notin-includes-missing"),
        pytest.param("tier", ["s-a", "s-b"], id="exists"),
        pytest.param("!tier", ["s-c", "s-d"], id="does-not-exist"),
        pytest.param("rank>4", ["s-b", "s-c"], id="greater-than"),
        pytest.param("rank<5", ["s-a"], id="less-than"),
        pytest.param("app=web,tier=back", ["s-b"], id="and"),
        pytest.param("app in (web, db),!tier", ["s-c"], id="in-and-not-exists"),
    ],
)
def test_label_selector(
    cluster: Cluster, labelled: str, selector: str, expected: list[str]
) -> None:
    resp = cluster.api.get(f"/api/v1/namespaces/{labelled}/configmaps", labelSelector=selector)
    assert resp.status == 200, resp
    assert names(resp) == expected


def test_bad_label_selector_is_400(cluster: Cluster, labelled: str) -> None:
    resp = cluster.api.get(f"/api/v1/namespaces/{labelled}/configmaps", labelSelector="app in (web")
    assert resp.status == 400
    assert resp.body["reason"] == "BadRequest"


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param("metadata.name=s-b", ["s-b"], id="name"),
        pytest.param("metadata.name!=s-b", ["s-a", "s-c", "s-d"], id="name-not"),
    ],
)
def test_field_selector_metadata(
    cluster: Cluster, labelled: str, selector: str, expected: list[str]
) -> None:
    resp = cluster.api.get(f"/api/v1/namespaces/{labelled}/configmaps", fieldSelector=selector)
    assert names(resp) == expected


def test_field_selector_namespace_across_namespaces(cluster: Cluster, labelled: str) -> None:
    resp = cluster.api.get("/api/v1/configmaps", fieldSelector=f"metadata.namespace={labelled}")
    assert resp.status == 200
    assert names(resp) == ["s-a", "s-b", "s-c", "s-d"]
    assert {i["metadata"]["namespace"] for i in resp.body["items"]} == {labelled}


def test_unsupported_field_selector_is_400(cluster: Cluster, labelled: str) -> None:
    resp = cluster.api.get(f"/api/v1/namespaces/{labelled}/configmaps", fieldSelector="data.x=1")
    assert resp.status == 400
    assert resp.body["reason"] == "BadRequest"


def test_pod_field_selectors(cluster: Cluster, namespace: str) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "fs-pod"},
        "spec": {
            "schedulerName": "agones-py-none",
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}],
        },
    }
    assert cluster.api.post(f"/api/v1/namespaces/{namespace}/pods", pod).status == 201
    path = f"/api/v1/namespaces/{namespace}/pods"
    assert [
        p["metadata"]["name"]
        for p in cluster.api.get(path, fieldSelector="status.phase=Pending").body["items"]
    ] == ["fs-pod"]
    assert cluster.api.get(path, fieldSelector="status.phase=Running").body["items"] == []
    assert [
        p["metadata"]["name"]
        for p in cluster.api.get(path, fieldSelector="spec.nodeName=").body["items"]
    ] == ["fs-pod"]
    cluster.api.delete(f"{path}/fs-pod", gracePeriodSeconds=0)


def test_event_field_selectors(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/events"
    for name, obj, reason in (("ev-1", "obj-a", "Started"), ("ev-2", "obj-b", "Stopped")):
        ev = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name},
            "involvedObject": {"kind": "ConfigMap", "name": obj, "namespace": namespace},
            "reason": reason,
            "message": "m",
            "type": "Normal",
            "source": {"component": "tester"},
        }
        assert cluster.api.post(path, ev).status == 201
    got = cluster.api.get(path, fieldSelector="involvedObject.name=obj-b").body["items"]
    assert [e["metadata"]["name"] for e in got] == ["ev-2"]
    got = cluster.api.get(path, fieldSelector="reason=Started,involvedObject.kind=ConfigMap").body[
        "items"
    ]
    assert [e["metadata"]["name"] for e in got] == ["ev-1"]


def test_limit_and_continue(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    for i in range(7):
        cluster.api.post(
            path,
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"page-{i}", "labels": {"paged": "yes"}},
            },
        )
    seen: list[str] = []
    token = ""
    pages = 0
    while True:
        query = {"limit": 3, "labelSelector": "paged=yes"}
        if token:
            query["continue"] = token
        resp = cluster.api.get(path, **query)
        assert resp.status == 200
        assert len(resp.body["items"]) <= 3
        seen += [i["metadata"]["name"] for i in resp.body["items"]]
        pages += 1
        token = resp.body["metadata"].get("continue", "")
        if not token:
            break
    assert sorted(seen) == [f"page-{i}" for i in range(7)]
    assert len(seen) == len(set(seen))
    assert pages == 3


def test_remaining_item_count_without_selectors(cluster: Cluster) -> None:
    ns = cluster.create_namespace("remain")
    try:
        path = f"/api/v1/namespaces/{ns}/configmaps"
        for i in range(5):
            cluster.api.post(
                path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"r-{i}"}}
            )
        # A real cluster adds its own objects to a new namespace (kube-root-ca.crt), possibly
        # while this runs: count everything, and retry if the namespace changed meanwhile.
        for _ in range(5):
            before = len(cluster.api.get(path).body["items"])
            resp = cluster.api.get(path, limit=2)
            if len(cluster.api.get(path).body["items"]) == before:
                break
        assert len(resp.body["items"]) == 2
        assert resp.body["metadata"]["remainingItemCount"] == before - 2
        assert resp.body["metadata"]["continue"]
    finally:
        cluster.delete_namespace(ns)


def test_invalid_continue_token_is_400_or_410(cluster: Cluster, namespace: str) -> None:
    resp = cluster.api.get(
        f"/api/v1/namespaces/{namespace}/configmaps", limit=1, **{"continue": "not-a-token"}
    )
    assert resp.status in (400, 410)


def test_list_resource_version_is_current(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = cluster.api.post(
        path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "lrv"}}
    ).body
    resp = cluster.api.get(path)
    assert int(resp.body["metadata"]["resourceVersion"]) >= int(
        created["metadata"]["resourceVersion"]
    )
    assert resp.body["kind"] == "ConfigMapList"
    assert resp.body["apiVersion"] == "v1"
    at_least = cluster.api.get(
        path,
        resourceVersion=created["metadata"]["resourceVersion"],
        resourceVersionMatch="NotOlderThan",
    )
    assert at_least.status == 200
    assert "lrv" in [i["metadata"]["name"] for i in at_least.body["items"]]
    any_version = cluster.api.get(path, resourceVersion="0")
    assert any_version.status == 200


def test_table_output_for_builtins(cluster: Cluster, namespace: str) -> None:
    resp = cluster.api.request(
        "GET",
        f"/api/v1/namespaces/{namespace}/configmaps",
        accept="application/json;as=Table;v=v1;g=meta.k8s.io",
    )
    assert resp.status == 200
    assert resp.body["kind"] == "Table"
    assert resp.body["columnDefinitions"][0]["name"] == "Name"
    assert all(len(r["cells"]) == len(resp.body["columnDefinitions"]) for r in resp.body["rows"])


def test_continue_resumes_a_consistent_snapshot(cluster: Cluster) -> None:
    ns = cluster.create_namespace("snap")
    try:
        path = f"/api/v1/namespaces/{ns}/configmaps"
        for i in range(4):
            cluster.api.post(
                path,
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": f"snap-{i}", "labels": {"snap": "y"}},
                },
            )
        first = cluster.api.get(path, limit=2, labelSelector="snap=y")
        assert [i["metadata"]["name"] for i in first.body["items"]] == ["snap-0", "snap-1"]
        # Changes after the first page are not seen by the rest of the list.
        cluster.api.post(
            path,
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "snap-9", "labels": {"snap": "y"}},
            },
        )
        cluster.api.delete(f"{path}/snap-3")
        rest = cluster.api.get(
            path,
            limit=10,
            labelSelector="snap=y",
            **{"continue": first.body["metadata"]["continue"]},
        )
        assert rest.status == 200, rest
        assert [i["metadata"]["name"] for i in rest.body["items"]] == ["snap-2", "snap-3"]
        assert rest.body["metadata"]["resourceVersion"] == first.body["metadata"]["resourceVersion"]
    finally:
        cluster.delete_namespace(ns)


def test_resource_version_match_exact(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = cluster.api.post(
        path,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "exact", "labels": {"exact": "y"}},
            "data": {"v": "1"},
        },
    ).body
    rv = created["metadata"]["resourceVersion"]
    cluster.api.patch(f"{path}/exact", {"data": {"v": "2"}})
    past = cluster.api.get(
        path, labelSelector="exact=y", resourceVersion=rv, resourceVersionMatch="Exact"
    )
    assert past.status == 200, past
    assert past.body["metadata"]["resourceVersion"] == rv
    assert [i["data"] for i in past.body["items"]] == [{"v": "1"}]


def test_limit_with_a_resource_version_reads_that_version(cluster: Cluster, namespace: str) -> None:
    # With a limit and no resourceVersionMatch, a non-zero resourceVersion means Exact.
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    created = cluster.api.post(
        path,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "legacy", "labels": {"legacy": "y"}},
            "data": {"v": "1"},
        },
    ).body
    rv = created["metadata"]["resourceVersion"]
    cluster.api.patch(f"{path}/legacy", {"data": {"v": "2"}})
    past = cluster.api.get(path, labelSelector="legacy=y", resourceVersion=rv, limit=10)
    assert past.status == 200, past
    assert past.body["metadata"]["resourceVersion"] == rv
    assert [i["data"] for i in past.body["items"]] == [{"v": "1"}]


def test_negative_limit_lists_everything(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    everything = cluster.api.get(path).body["items"]
    resp = cluster.api.get(path, limit=-1)
    assert resp.status == 200
    assert len(resp.body["items"]) == len(everything)
    assert not resp.body["metadata"].get("continue")


def test_future_resource_version_is_too_large(cluster: Cluster, namespace: str) -> None:
    # The watch cache waits briefly for the version, then answers 504 with the cause client-go's
    # reflector looks for (kube-apiserver waits about 3 s first).
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    current = int(cluster.api.get(path).body["metadata"]["resourceVersion"])
    resp = cluster.api.get(path, resourceVersion=str(current + 10_000_000))
    assert resp.status == 504, resp
    assert resp.body["reason"] == "Timeout"
    assert "Too large resource version" in resp.body["message"]
    causes = [c["reason"] for c in resp.body["details"]["causes"]]
    assert causes == ["ResourceVersionTooLarge"]


def test_items_of_built_in_lists_carry_no_type(
    cluster: Cluster, labelled: str, widgets: CRD
) -> None:
    # Go's typed list items have no TypeMeta; unstructured custom resources keep theirs.
    items = cluster.api.get(f"/api/v1/namespaces/{labelled}/configmaps").body["items"]
    assert items
    assert all("apiVersion" not in i and "kind" not in i for i in items)
    cluster.api.post(widgets.path(labelled), widgets.obj("typed"))
    custom = cluster.api.get(widgets.path(labelled)).body["items"]
    assert {(i["apiVersion"], i["kind"]) for i in custom} == {(widgets.api_version, widgets.kind)}
