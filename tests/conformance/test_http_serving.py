"""The HTTP layer as Go's net/http serves it for kube-apiserver: `Expect` headers on writes."""

from __future__ import annotations

import json
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cluster import Cluster


def configmaps(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/configmaps"


def configmap(name: str) -> bytes:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "b"}}
    return json.dumps(body).encode()


@pytest.mark.parametrize("expect", ["100-continue", "100-Continue"], ids=["lower", "mixed-case"])
def test_expect_continue_write_is_served(cluster: Cluster, namespace: str, expect: str) -> None:
    name = f"expecting-{uuid.uuid4().hex[:10]}"
    resp = cluster.api.raw(
        "POST",
        configmaps(namespace),
        configmap(name),
        "application/json",
        headers={"Expect": expect},
    )
    assert resp.status == 201, resp
    assert resp.body["metadata"]["name"] == name
    assert cluster.api.get(f"{configmaps(namespace)}/{name}").status == 200


def test_unknown_expectation_is_417_and_writes_nothing(cluster: Cluster, namespace: str) -> None:
    resp = cluster.api.raw(
        "POST",
        configmaps(namespace),
        configmap("unexpected"),
        "application/json",
        headers={"Expect": "teapot"},
    )
    assert resp.status == 417, resp
    assert cluster.api.get(f"{configmaps(namespace)}/unexpected").status == 404


HEADER_TEXT = st.text(
    st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=40
).map(str.strip)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expect=HEADER_TEXT)
def test_any_expect_header_is_served_or_417(cluster: Cluster, expect: str) -> None:
    name = f"expect-{uuid.uuid4().hex[:10]}"
    path = configmaps("default")
    resp = cluster.api.raw(
        "POST", path, configmap(name), "application/json", headers={"Expect": expect}
    )
    try:
        if expect.lower() == "100-continue" or not expect:
            assert resp.status == 201, resp
        else:
            assert resp.status == 417, resp
            assert cluster.api.get(f"{path}/{name}").status == 404
    finally:
        cluster.api.delete(f"{path}/{name}")
