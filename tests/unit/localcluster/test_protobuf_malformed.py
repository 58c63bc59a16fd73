"""Malformed protobuf bodies (hypothesis) at create, update and delete on the local API server:
truncated varints and fields, wrong wire types, bad magic, lengths past the end, unknown kinds,
flipped bytes. Every answer is a 4xx Status, the server logs no traceback, and the stored objects
keep their resourceVersions."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agones.localcluster import ServerOptions, ThreadedAPIServer
from agones.localcluster.apiserver.protobuf import (
    CONTENT_TYPE,
    MAGIC,
    ProtobufError,
    decode_object,
    encode_object,
)
from agones.localcluster.apiserver.protowire import length_delimited, varint
from tests.cluster import Cluster

NS = "pb-fuzz"
SEEDS: dict[str, tuple[str, dict[str, Any]]] = {
    "pods": (
        f"/api/v1/namespaces/{NS}/pods",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "seed", "namespace": NS, "labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 1}]}]},
        },
    ),
    "roles": (
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/roles",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "seed", "namespace": NS},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
        },
    ),
    "configmaps": (
        f"/api/v1/namespaces/{NS}/configmaps",
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "seed", "namespace": NS},
            "data": {"k": "v"},
        },
    ),
}
DELETE_OPTIONS = encode_object(
    {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0, "dryRun": ["All"]}
)


class _Tracebacks(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info or record.levelno >= logging.ERROR:
            self.records.append(record)


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[Cluster, _Tracebacks]]:
    runner = ThreadedAPIServer(ServerOptions())
    srv = runner.start()
    cluster = Cluster(srv.kubeconfig, local=True, url=srv.url)
    assert cluster.api.post("/api/v1/namespaces", {"metadata": {"name": NS}}).status == 201
    for path, obj in SEEDS.values():
        assert cluster.api.post(path, obj).status == 201
    tracebacks = _Tracebacks()
    logging.getLogger().addHandler(tracebacks)
    yield cluster, tracebacks
    logging.getLogger().removeHandler(tracebacks)
    runner.stop()


def _envelope(api_version: bytes, kind: bytes, raw: bytes) -> bytes:
    return (
        MAGIC
        + length_delimited(1, length_delimited(1, api_version) + length_delimited(2, kind))
        + length_delimited(2, raw)
    )


_VALID = [encode_object(obj) for _, obj in SEEDS.values()] + [DELETE_OPTIONS]


@st.composite
def malformed(draw: st.DrawFn) -> bytes:
    base = draw(st.sampled_from(_VALID))
    shape = draw(
        st.sampled_from(
            ["truncate", "flip", "magic", "huge-length", "unknown-kind", "wire-type", "varint"]
        )
    )
    if shape == "truncate":
        body = base[: draw(st.integers(0, len(base) - 1))]
    elif shape == "flip":
        i = draw(st.integers(len(MAGIC), len(base) - 1))
        body = base[:i] + bytes([draw(st.integers(0, 255))]) + base[i + 1 :]
    elif shape == "magic":
        prefix = draw(st.binary(min_size=4, max_size=4).filter(lambda b: b != MAGIC))
        body = prefix + base[len(MAGIC) :]
    elif shape == "huge-length":
        length = draw(st.integers(len(base), 2**63))
        body = MAGIC + b"\x12" + varint(length) + base[len(MAGIC) : len(MAGIC) + 8]
    elif shape == "unknown-kind":
        kind = draw(st.text(min_size=1, max_size=12)).encode()
        group = draw(st.sampled_from([b"v1", b"apps/v1", b"widgets.example.com/v1", b""]))
        body = _envelope(group, kind + b"X", base[len(MAGIC) + 20 :])
    elif shape == "wire-type":
        num, wire = draw(st.integers(1, 20)), draw(st.sampled_from([0, 1, 2, 3, 4, 5, 6, 7]))
        raw = varint(num << 3 | wire) + draw(st.binary(max_size=12))
        body = _envelope(
            b"v1", draw(st.sampled_from([b"Pod", b"ConfigMap", b"DeleteOptions"])), raw
        )
    else:
        body = MAGIC + b"\x0a" + b"\xff" * draw(st.integers(1, 12))
    try:
        decode_object(body)
    except ProtobufError:
        return body
    assume(False)
    return body


def _versions(cluster: Cluster) -> dict[str, str]:
    return {
        name: cluster.api.get(f"{path}/seed").body["metadata"]["resourceVersion"]
        for name, (path, _) in SEEDS.items()
    }


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much],
)
@given(
    body=malformed(),
    resource=st.sampled_from(list(SEEDS)),
    verb=st.sampled_from(["POST", "PUT", "DELETE"]),
)
def test_malformed_protobuf_gets_a_4xx_and_changes_nothing(
    server: tuple[Cluster, _Tracebacks], body: bytes, resource: str, verb: str
) -> None:
    cluster, tracebacks = server
    before = _versions(cluster)
    path = SEEDS[resource][0] + ("" if verb == "POST" else "/seed")
    resp = cluster.api.raw(verb, path, body, CONTENT_TYPE)
    assert 400 <= resp.status < 500, (resp, body)
    assert isinstance(resp.body, dict) and resp.body.get("kind") == "Status", resp
    assert tracebacks.records == []
    assert _versions(cluster) == before


_MEDIA = st.sampled_from(
    [
        CONTENT_TYPE,
        "application/json",
        "application/yaml",
        "*/*",
        "application/*",
        "text/plain",
        "application/json;as=Table;v=v1;g=meta.k8s.io",
        f"{CONTENT_TYPE};stream=watch",
    ]
)
_CLAUSE = st.tuples(_MEDIA, st.sampled_from(["", ";q=0", ";q=0.5", ";q=x", ";q=1"])).map("".join)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    # Printable ASCII: control bytes in a header are the HTTP parser's (aiohttp answers them 400
    # but logs a traceback; issue 15 item 3), not negotiation's.
    accept=st.one_of(
        st.lists(_CLAUSE, max_size=4).map(", ".join),
        st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40),
    ),
    target=st.sampled_from(["/seed", "", "/missing"]),
)
def test_any_accept_header_gets_an_answer_not_a_crash(
    server: tuple[Cluster, _Tracebacks], accept: str, target: str
) -> None:
    cluster, tracebacks = server
    path = SEEDS["pods"][0] + target
    resp = cluster.api.raw("GET", path, None, "application/json", accept=accept)
    assert resp.status < 500, resp
    if isinstance(resp.body, bytes):
        assert decode_object(resp.body)["kind"] in ("Pod", "PodList", "Status")
    assert tracebacks.records == []
