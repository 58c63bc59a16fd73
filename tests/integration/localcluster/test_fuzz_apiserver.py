"""Property: whatever a client sends to the local API server (any verb, path, subresource, query
parameter, content type and body), the answer is below 500 and, when an error, a `Status`; the
server logs no traceback; and a seeded object changes only when the request succeeded.

Requests go over real HTTP (keep-alive `http.client`) to an in-process `ThreadedAPIServer`. Each
example is two requests, each built from a seeded target (so bodies reach deep into validation)
with one part made malformed. After a successful write the seeds are restored for the next one.
"""

from __future__ import annotations

import http.client
import json
import logging
import os
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.localcluster import ServerOptions, ThreadedAPIServer
from agones.localcluster.apiserver.server import LocalAPIServer
from tests.cluster import Cluster
from tests.conformance.conftest import CRD, install_crd, new_crd
from tests.fuzzing import (
    REQUIRED_PER_SURFACE,
    LogRecorder,
    count,
    examples,
    json_values,
    mutated,
    texts,
)
from tests.waiting import wait_for

NAME = "target"
DEFAULT_EXAMPLES = 5000
FUZZ_EXAMPLES = int(os.environ.get("FUZZ_APISERVER_EXAMPLES", str(DEFAULT_EXAMPLES)))
REQUESTS_PER_EXAMPLE = 2
"""ci: 5,000 examples of 2 requests each over one keep-alive connection, 10,000 requests."""
SURFACE = "local API server"


@dataclass(frozen=True)
class Seed:
    """An object kept in place for the requests to aim at."""

    group: str
    version: str
    resource: str
    namespaced: bool
    body: dict[str, Any]

    def collection(self, ns: str) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        return (
            f"{base}/namespaces/{ns}/{self.resource}"
            if self.namespaced
            else (f"{base}/{self.resource}")
        )


def _seeds(crd: CRD) -> list[Seed]:
    meta = {"name": NAME, "labels": {"app": "fz"}}
    pod_spec = {
        "schedulerName": "agones-py-none",
        "containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}],
    }
    claim_spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    return [
        Seed("", "v1", "configmaps", True, {"metadata": meta, "data": {"k": "v"}}),
        Seed("", "v1", "secrets", True, {"metadata": meta, "stringData": {"k": "v"}}),
        Seed("", "v1", "pods", True, {"metadata": meta, "spec": pod_spec}),
        Seed("", "v1", "services", True, {"metadata": meta, "spec": {"ports": [{"port": 80}]}}),
        Seed("", "v1", "serviceaccounts", True, {"metadata": meta}),
        Seed("", "v1", "nodes", False, {"metadata": {"name": NAME}}),
        Seed("", "v1", "namespaces", False, {"metadata": {"name": "fz-target"}}),
        Seed(
            "coordination.k8s.io",
            "v1",
            "leases",
            True,
            {"metadata": meta, "spec": {"holderIdentity": "me"}},
        ),
        Seed(
            "events.k8s.io",
            "v1",
            "events",
            True,
            {
                "metadata": meta,
                "eventTime": "2024-01-01T00:00:00.000000Z",
                "reportingController": "fz",
                "reportingInstance": "fz-1",
                "action": "Fuzz",
                "reason": "Fuzzed",
                "type": "Normal",
                "regarding": {"kind": "ConfigMap", "name": NAME},
            },
        ),
        Seed(crd.group, crd.version, crd.plural, True, {"metadata": meta, "spec": {"replicas": 1}}),
        Seed(
            "apps",
            "v1",
            "statefulsets",
            True,
            {
                "metadata": meta,
                "spec": {
                    "serviceName": "fz",
                    "selector": {"matchLabels": {"app": "fz"}},
                    "template": {"metadata": {"labels": {"app": "fz"}}, "spec": pod_spec},
                    "volumeClaimTemplates": [{"metadata": {"name": "d"}, "spec": claim_spec}],
                },
            },
        ),
        Seed("", "v1", "persistentvolumeclaims", True, {"metadata": meta, "spec": claim_spec}),
    ]


CONTENT_TYPES = [
    "application/json",
    "application/yaml",
    "application/merge-patch+json",
    "application/json-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "application/vnd.kubernetes.protobuf",
    "text/plain",
    "",
]
QUERY_KEYS = [
    "labelSelector",
    "fieldSelector",
    "limit",
    "continue",
    "resourceVersion",
    "resourceVersionMatch",
    "timeoutSeconds",
    "watch",
    "allowWatchBookmarks",
    "sendInitialEvents",
    "dryRun",
    "fieldValidation",
    "fieldManager",
    "force",
    "gracePeriodSeconds",
    "propagationPolicy",
    "orphanDependents",
    "pretty",
    "includeObject",
]
PLAUSIBLE = {
    "dryRun": ["All"],
    "fieldValidation": ["Strict", "Warn", "Ignore"],
    "fieldManager": ["fz"],
    "watch": ["true", "false", "1"],
    "resourceVersion": ["0", "1", "999999"],
    "resourceVersionMatch": ["Exact", "NotOlderThan"],
    "propagationPolicy": ["Foreground", "Background", "Orphan"],
    "labelSelector": ["app=fz", "app in (fz,x)", "!app"],
    "fieldSelector": ["metadata.name=target", "metadata.namespace!=x"],
    "limit": ["1", "0", "-1"],
    "timeoutSeconds": ["1", "0"],
}
SUBRESOURCES = ["", "", "", "status", "scale", "binding", "eviction", "finalize", "nope"]


class Client:
    """A keep-alive HTTP/1.1 connection that reconnects after a streamed (watch) answer."""

    def __init__(self, srv: LocalAPIServer) -> None:
        self.host, self.port = "127.0.0.1", srv.port
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)

    def send(
        self, method: str, path: str, body: bytes | None, ctype: str
    ) -> tuple[int, bytes | None]:
        headers = {"Accept": "application/json"}
        if ctype:
            headers["Content-Type"] = ctype
        try:
            self.conn.request(method, path, body=body, headers=headers)
            resp = self.conn.getresponse()
        except BaseException:
            self.conn.close()
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
            raise
        streamed = resp.getheader("Transfer-Encoding") == "chunked" and resp.status == 200
        if streamed and "watch" in path:
            self.conn.close()  # a watch: its status is what matters; do not wait for the stream
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
            return resp.status, None
        return resp.status, resp.read()


@dataclass
class World:
    srv: LocalAPIServer
    client: Client
    ns: str
    seeds: list[Seed]
    log: LogRecorder

    def entry(self, seed: Seed) -> Any:
        info = self.srv.registry.lookup(seed.group, seed.version, seed.resource)
        assert info is not None
        name = seed.body["metadata"]["name"]
        return self.srv.store.get(info.key, self.ns if seed.namespaced else "", name)

    def reseed(self) -> None:
        for seed in self.seeds:
            name = seed.body["metadata"]["name"]
            path = f"{seed.collection(self.ns)}/{name}"
            current = self.entry(seed)
            if current is not None and current.obj["metadata"].get("deletionTimestamp"):
                patch = json.dumps({"metadata": {"finalizers": None}}).encode()
                self.client.send("PATCH", path, patch, "application/merge-patch+json")
                if seed.resource == "namespaces":
                    self.client.send(
                        "PUT",
                        f"{path}/finalize",
                        json.dumps(
                            {"metadata": {"name": name}, "spec": {"finalizers": []}}
                        ).encode(),
                        "application/json",
                    )
                wait_for(lambda s=seed: self.entry(s) is None, what=f"{seed.resource} gone")
            if self.entry(seed) is None:
                status, raw = self.client.send(
                    "POST",
                    seed.collection(self.ns),
                    json.dumps(seed.body).encode(),
                    "application/json",
                )
                assert status == 201, (seed.resource, status, raw)


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    runner = ThreadedAPIServer(ServerOptions())
    srv = runner.start()
    cluster = Cluster(srv.kubeconfig, local=True, url=srv.url)
    crd = new_crd()
    install_crd(cluster, crd)
    ns = cluster.create_namespace("fz")
    recorder = LogRecorder()
    loggers = [logging.getLogger(n) for n in ("agones", "aiohttp")]
    for logger in loggers:
        logger.addHandler(recorder)
    w = World(srv, Client(srv), ns, _seeds(crd), recorder)
    w.reseed()
    try:
        yield w
    finally:
        for logger in loggers:
            logger.removeHandler(recorder)
        runner.stop()


def _encode(body: Any, ctype: str) -> bytes:
    if isinstance(body, bytes):
        return body
    if ctype.endswith("yaml"):
        return yaml.safe_dump(body).encode()
    return json.dumps(body).encode()


# Strategies built once: a strategy built inside each draw is validated and has its properties
# worked out again every time, which cost hypothesis more than the requests themselves.
METHODS = st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE"])
SUBRESOURCE = st.sampled_from(SUBRESOURCES)
CONTENT_TYPE = st.sampled_from(CONTENT_TYPES)
QUERY = st.lists(st.sampled_from(QUERY_KEYS), max_size=3, unique=True)
QUERY_VALUE = {k: st.one_of(st.sampled_from(PLAUSIBLE.get(k, ["true"])), texts) for k in QUERY_KEYS}
JSON_PATCH = st.lists(
    st.fixed_dictionaries(
        {
            "op": st.sampled_from(["add", "remove", "replace", "test", "move", "x"]),
            "path": st.sampled_from(["/metadata/labels/a", "/spec", "", "/x/0", "nope"]),
            "value": json_values,
        }
    ),
    max_size=3,
)
OTHER_BODIES = [json_values, st.binary(max_size=64), JSON_PATCH]
"""Bodies not built from a seed (a seed's own, one node changed, is `mutated`)."""


@st.composite
def requests(
    draw: st.DrawFn, seeds: st.SearchStrategy[Seed], ns: str
) -> tuple[str, str, bytes | None, str]:
    seed = draw(seeds)
    method = draw(METHODS)
    name = [seed.body["metadata"]["name"], "missing", None][draw(st.integers(0, 2))]
    name = draw(texts) if name is None else name
    sub = draw(SUBRESOURCE)
    namespace = draw(texts) if draw(st.integers(0, 2)) == 2 else ns
    path = seed.collection(urllib.parse.quote(namespace, safe=""))
    if method in ("PUT", "PATCH") or sub or draw(st.booleans()):
        path += "/" + urllib.parse.quote(name, safe="")
        if sub:
            path += "/" + sub
    keys = draw(QUERY)
    query = {k: draw(QUERY_VALUE[k]) for k in keys}
    if query:
        path += "?" + urllib.parse.urlencode(query)
    ctype = draw(CONTENT_TYPE)
    if method in ("GET", "DELETE") and draw(st.booleans()):
        return method, path, None, ctype
    valid = {**seed.body, "metadata": {**seed.body["metadata"], "name": name}}
    which = draw(st.integers(0, len(OTHER_BODIES)))
    body = draw(mutated(valid)) if which == 0 else draw(OTHER_BODIES[which - 1])
    return method, path, _encode(body, ctype), ctype


def _too_large_resource_version(status: int, raw: bytes | None) -> bool:
    """The one 5xx kube-apiserver gives a well-formed request on purpose: a read newer than the
    store is a 504 that client-go's reflector retries (storage.NewTooLargeResourceVersionError)."""
    if status != 504 or not raw:
        return False
    causes = (json.loads(raw).get("details") or {}).get("causes") or []
    return [c.get("reason") for c in causes] == ["ResourceVersionTooLarge"]


def test_no_request_gets_a_5xx_or_breaks_a_stored_object(world: World) -> None:
    sent = 0

    @settings(max_examples=examples(FUZZ_EXAMPLES))
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        for _ in range(REQUESTS_PER_EXAMPLE):
            one(data)

    seeds = st.sampled_from(world.seeds)

    def one(data: st.DataObject) -> None:
        nonlocal sent
        method, path, body, ctype = data.draw(requests(seeds, world.ns))
        world.log.records.clear()
        before = [world.entry(s) for s in world.seeds]
        status, raw = world.client.send(method, path, body, ctype)
        sent += 1
        count(SURFACE)
        assert status < 500 or _too_large_resource_version(status, raw), (
            method,
            path,
            ctype,
            body,
            status,
            raw,
        )
        if status >= 400 and raw is not None and raw:
            decoded = json.loads(raw)
            assert decoded.get("kind") == "Status", (method, path, raw)
        if status >= 300:
            after = [world.entry(s) for s in world.seeds]
            changed = [
                s.resource for s, a, b in zip(world.seeds, after, before, strict=True) if a is not b
            ]
            assert not changed, (method, path, ctype, body, status, raw, changed)
        else:
            world.reseed()
        assert world.log.problems() == [], (method, path, body)

    run()
    assert sent >= examples(FUZZ_EXAMPLES) * REQUESTS_PER_EXAMPLE
    if FUZZ_EXAMPLES == DEFAULT_EXAMPLES:
        assert sent >= examples(REQUIRED_PER_SURFACE)
