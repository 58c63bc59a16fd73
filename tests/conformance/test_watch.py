"""Watch: event types, replay from a resourceVersion, selectors, bookmarks, timeouts, 410 Gone."""

from __future__ import annotations

import json

import pytest

from tests.cluster import Cluster
from tests.conformance.watching import WatchCollector, is_event


def _cm(name: str, labels: dict[str, str] | None = None) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels or {}},
        "data": {"v": "0"},
    }


def test_added_modified_deleted_in_order(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    start = cluster.api.get(path).body["metadata"]["resourceVersion"]
    watch = WatchCollector(cluster.api, path, resourceVersion=start, timeoutSeconds=30)
    created = cluster.api.post(path, _cm("w1")).body
    patched = cluster.api.patch(f"{path}/w1", {"data": {"v": "1"}}).body
    cluster.api.delete(f"{path}/w1")
    added = watch.wait_for(is_event("ADDED", "w1"))
    modified = watch.wait_for(is_event("MODIFIED", "w1"))
    deleted = watch.wait_for(is_event("DELETED", "w1"))
    assert added["object"]["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    assert modified["object"]["data"] == {"v": "1"}
    assert (
        modified["object"]["metadata"]["resourceVersion"] == patched["metadata"]["resourceVersion"]
    )
    assert int(deleted["object"]["metadata"]["resourceVersion"]) > int(
        patched["metadata"]["resourceVersion"]
    )
    assert added["object"]["kind"] == "ConfigMap"


def test_replay_from_resource_version(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    first = cluster.api.post(path, _cm("r1")).body
    cluster.api.post(path, _cm("r2"))
    cluster.api.patch(f"{path}/r1", {"data": {"v": "9"}})
    watch = WatchCollector(
        cluster.api, path, resourceVersion=first["metadata"]["resourceVersion"], timeoutSeconds=30
    )
    watch.wait_for(is_event("ADDED", "r2"))
    replayed = watch.wait_for(is_event("MODIFIED", "r1"))
    assert replayed["object"]["data"] == {"v": "9"}
    assert not any(is_event("ADDED", "r1")(e) for e in watch.seen)


def test_watch_without_resource_version_starts_with_current_state(
    cluster: Cluster, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    cluster.api.post(path, _cm("st-1", {"state": "yes"}))
    watch = WatchCollector(cluster.api, path, labelSelector="state=yes", timeoutSeconds=30)
    watch.wait_for(is_event("ADDED", "st-1"))


def test_label_selector_watch_reports_leaving_and_entering(
    cluster: Cluster, namespace: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    start = cluster.api.post(path, _cm("sel", {"color": "red"})).body["metadata"]["resourceVersion"]
    watch = WatchCollector(
        cluster.api, path, resourceVersion=start, labelSelector="color=red", timeoutSeconds=30
    )
    cluster.api.patch(f"{path}/sel", {"metadata": {"labels": {"color": "blue"}}})
    left = watch.wait_for(lambda e: e["object"]["metadata"].get("name") == "sel")
    assert left["type"] == "DELETED"
    cluster.api.patch(f"{path}/sel", {"metadata": {"labels": {"color": "red"}}})
    entered = watch.wait_for(lambda e: e["object"]["metadata"].get("name") == "sel")
    assert entered["type"] == "ADDED"


def test_field_selector_watch_on_name(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    start = cluster.api.get(path).body["metadata"]["resourceVersion"]
    watch = WatchCollector(
        cluster.api,
        path,
        resourceVersion=start,
        fieldSelector="metadata.name=only",
        timeoutSeconds=30,
    )
    cluster.api.post(path, _cm("other"))
    cluster.api.post(path, _cm("only"))
    watch.wait_for(is_event("ADDED", "only"))
    assert not any(e["object"]["metadata"].get("name") == "other" for e in watch.seen)


def test_timeout_seconds_ends_the_stream(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    start = cluster.api.get(path).body["metadata"]["resourceVersion"]
    watch = WatchCollector(cluster.api, path, resourceVersion=start, timeoutSeconds=1)
    assert watch.ended.wait(15)
    assert watch.error is None


def test_bookmarks_carry_only_a_resource_version(local_only: Cluster, namespace: str) -> None:
    # Bookmark timing is the server's choice (about a minute on kube-apiserver): local only.
    cluster = local_only
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    start = cluster.api.get(path).body["metadata"]["resourceVersion"]
    watch = WatchCollector(
        cluster.api, path, resourceVersion=start, allowWatchBookmarks="true", timeoutSeconds=30
    )
    cluster.api.post(path, _cm("bm"))
    watch.wait_for(is_event("ADDED", "bm"))
    mark = watch.wait_for(lambda e: e["type"] == "BOOKMARK")
    assert mark["object"]["kind"] == "ConfigMap"
    assert set(mark["object"]["metadata"]) == {"resourceVersion"}
    assert int(mark["object"]["metadata"]["resourceVersion"]) >= int(start)


def test_send_initial_events_ends_with_bookmark(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    cluster.api.post(path, _cm("init-1", {"init": "yes"}))
    watch = WatchCollector(
        cluster.api,
        path,
        labelSelector="init=yes",
        sendInitialEvents="true",
        allowWatchBookmarks="true",
        resourceVersionMatch="NotOlderThan",
        timeoutSeconds=30,
    )
    first = watch.next()
    if first is None or first["type"] == "ERROR":
        pytest.skip("the cluster does not serve watch-list (sendInitialEvents)")
    assert is_event("ADDED", "init-1")(first)
    mark = watch.wait_for(lambda e: e["type"] == "BOOKMARK")
    assert mark["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"] == "true"


def test_too_old_resource_version_is_410_gone(local_only: Cluster, namespace: str) -> None:
    cluster = local_only
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    old = cluster.api.post(path, _cm("gone-1")).body["metadata"]["resourceVersion"]
    cluster.api.post(path, _cm("gone-2"))
    cluster.fault("compact")
    watch = WatchCollector(cluster.api, path, resourceVersion=old, timeoutSeconds=30)
    event = watch.next()
    assert event is not None
    assert event["type"] == "ERROR"
    assert event["object"]["code"] == 410
    assert event["object"]["reason"] == "Expired"
    assert watch.next() is None


def test_table_watch_for_kubectl_get_watch(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    start = cluster.api.get(path).body["metadata"]["resourceVersion"]
    params = {"watch": "true", "resourceVersion": start, "timeoutSeconds": "2"}
    cluster.api.post(path, _cm("tw"))
    resp = cluster.api.request(
        "GET", path, query=params, accept="application/json;as=Table;v=v1;g=meta.k8s.io"
    )
    assert resp.status == 200
    events = (
        [json.loads(line) for line in resp.body.splitlines()]
        if isinstance(resp.body, str)
        else [resp.body]
    )
    added = next(e for e in events if e["type"] == "ADDED")
    assert added["object"]["kind"] == "Table"
    assert added["object"]["rows"][0]["cells"][0] == "tw"
