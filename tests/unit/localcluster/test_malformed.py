"""Malformed bodies of every shape, on every verb, get a 4xx Status from the local server: never a
500 (the conformance suite checks the common cases against real clusters too)."""

import json
from collections.abc import Iterator

import pytest

from agones.localcluster import ServerOptions, ThreadedAPIServer
from tests.cluster import Cluster
from tests.conformance.conftest import install_crd, new_crd

BODIES = [
    [],
    "str",
    1,
    None,
    {"metadata": []},
    {"metadata": {"name": 1}},
    {"metadata": {"name": "x", "labels": 5}},
    {"metadata": {"name": "x", "finalizers": [1]}},
    {"metadata": {"name": "x", "ownerReferences": [1]}},
    {"metadata": {"name": "x", "managedFields": [1]}},
    {"$patch": "delete", "metadata": {"name": "x"}},
    {"metadata": {"name": "x"}, "spec": 1},
    {"metadata": {"name": "x"}, "spec": {"containers": [1], "ports": "a", "group": 1}},
    {"metadata": {"name": "x"}, "data": [], "webhooks": [1], "target": 1, "deleteOptions": 1},
]
OPS = [
    ("POST", "application/json", ""),
    ("PUT", "application/json", "/fz"),
    ("PATCH", "application/merge-patch+json", "/fz"),
    ("PATCH", "application/strategic-merge-patch+json", "/fz"),
    ("PATCH", "application/json-patch+json", "/fz"),
    ("PATCH", "application/apply-patch+yaml", "/fz?fieldManager=f"),
    ("PUT", "application/json", "/fz/status"),
    ("POST", "application/json", "/fz/binding"),
    ("POST", "application/json", "/fz/eviction"),
    ("PATCH", "application/merge-patch+json", "/fz/scale"),
    ("DELETE", "application/json", "/fz"),
]


@pytest.fixture(scope="module")
def local() -> Iterator[Cluster]:
    runner = ThreadedAPIServer(ServerOptions())
    srv = runner.start()
    yield Cluster(srv.kubeconfig, local=True, url=srv.url)
    runner.stop()


def test_no_body_shape_crashes_the_server(local: Cluster) -> None:
    crd = new_crd()
    install_crd(local, crd)
    ns = local.create_namespace()
    paths = [
        f"/api/v1/namespaces/{ns}/pods",
        f"/api/v1/namespaces/{ns}/services",
        f"/api/v1/namespaces/{ns}/secrets",
        "/api/v1/namespaces",
        f"/apis/events.k8s.io/v1/namespaces/{ns}/events",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
        crd.path(ns),
    ]
    seed = {
        "metadata": {"name": "fz"},
        "spec": {"containers": [{"name": "c", "image": "i"}], "ports": [{"port": 1}]},
    }
    crashes = []
    for path in paths:
        local.api.raw("POST", path, json.dumps(seed).encode(), "application/json")
        for body in BODIES:
            for method, ctype, suffix in OPS:
                resp = local.api.raw(method, path + suffix, json.dumps(body).encode(), ctype)
                if resp.status >= 500:
                    crashes.append((method, path + suffix, ctype, body, resp.body))
                if method == "DELETE" and resp.status < 300:
                    local.api.raw("POST", path, json.dumps(seed).encode(), "application/json")
    assert crashes == []
