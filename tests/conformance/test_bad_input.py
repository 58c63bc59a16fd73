"""Malformed requests get a 4xx Status explaining the problem, never a 500."""

from __future__ import annotations

import json

import pytest

from tests.cluster import Cluster
from tests.conformance.conftest import CRD


@pytest.mark.parametrize(
    ("method", "suffix", "body", "content_type"),
    [
        pytest.param("POST", "", "not json", "application/json", id="undecodable-body"),
        pytest.param("POST", "", [1, 2], "application/json", id="body-not-an-object"),
        pytest.param(
            "POST", "", {"metadata": "x"}, "application/json", id="metadata-not-an-object"
        ),
        pytest.param(
            "POST",
            "",
            {"metadata": {"name": "l", "labels": ["a"]}},
            "application/json",
            id="labels-not-a-map",
        ),
        pytest.param(
            "POST",
            "",
            {"metadata": {"name": "l", "labels": {"a": 1}}},
            "application/json",
            id="label-value-not-a-string",
        ),
        pytest.param(
            "POST",
            "",
            {"kind": "Secret", "metadata": {"name": "k"}},
            "application/json",
            id="wrong-kind",
        ),
        pytest.param(
            "PATCH",
            "/target",
            {"data": {"a": "b"}},
            "application/x-unknown",
            id="unknown-patch-type",
        ),
        pytest.param(
            "PATCH",
            "/target",
            {"op": "add"},
            "application/json-patch+json",
            id="json-patch-not-a-list",
        ),
        pytest.param(
            "POST", "", b"\x00\x01", "application/vnd.kubernetes.protobuf", id="bad-protobuf"
        ),
        pytest.param(
            "PATCH",
            "/target",
            [{"op": "add", "path": "nope", "value": 1}],
            "application/json-patch+json",
            id="json-patch-bad-pointer",
        ),
        pytest.param(
            "PATCH",
            "/target",
            [{"op": "replace", "path": "/metadata", "value": 5}],
            "application/json-patch+json",
            id="patch-breaks-metadata",
        ),
        pytest.param(
            "PATCH",
            "/target",
            {"metadata": {"name": "other"}},
            "application/merge-patch+json",
            id="patch-renames",
        ),
        pytest.param(
            "PUT",
            "/target",
            {"metadata": {"name": "target", "resourceVersion": "x"}},
            "application/json",
            id="bad-resource-version",
        ),
    ],
)
def test_bad_configmap_requests(
    cluster: Cluster, namespace: str, method: str, suffix: str, body: object, content_type: str
) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    if cluster.api.get(f"{path}/target").status == 404:
        cluster.api.post(
            path, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "target"}}
        )
    if isinstance(body, bytes):
        data = body
    elif isinstance(body, str):
        data = body.encode()
    else:
        data = json.dumps(body).encode()
    resp = cluster.api.raw(method, path + suffix, data, content_type)
    assert 400 <= resp.status < 500, resp
    assert isinstance(resp.body, dict) and resp.body.get("kind") == "Status", resp
    assert resp.body["message"]


@pytest.mark.parametrize(
    "query",
    [
        pytest.param({"labelSelector": "a in (b"}, id="label-selector"),
        pytest.param({"fieldSelector": "spec.nope=1"}, id="field-selector"),
        pytest.param({"limit": "lots"}, id="limit"),
        pytest.param({"resourceVersion": "abc"}, id="resource-version"),
        pytest.param({"resourceVersionMatch": "Exact"}, id="match-without-version"),
        pytest.param({"watch": "true", "resourceVersion": "abc"}, id="watch-resource-version"),
    ],
)
def test_bad_list_queries(cluster: Cluster, namespace: str, query: dict) -> None:
    resp = cluster.api.get(f"/api/v1/namespaces/{namespace}/configmaps", **query)
    assert 400 <= resp.status < 500, resp
    assert resp.body["kind"] == "Status"


def test_bad_custom_resource_body(cluster: Cluster, namespace: str, widgets: CRD) -> None:
    body = widgets.obj("bad")
    body["spec"] = ["not", "an", "object"]
    resp = cluster.api.post(widgets.path(namespace), body)
    assert resp.status == 422, resp
    assert resp.body["details"]["causes"][0]["field"] == "spec"
