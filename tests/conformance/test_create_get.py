"""Create and get: server-set metadata, generateName, dry run, namespaces, error Statuses."""

from __future__ import annotations

import uuid

from tests.cluster import Cluster


def cm(name: str, **meta: object) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, **meta},
        "data": {"k": "v"},
    }


def test_create_sets_server_fields(cluster: Cluster, namespace: str) -> None:
    resp = cluster.api.post(f"/api/v1/namespaces/{namespace}/configmaps", cm("created"))
    assert resp.status == 201
    md = resp.body["metadata"]
    assert md["namespace"] == namespace
    assert uuid.UUID(md["uid"])
    assert md["creationTimestamp"].endswith("Z")
    assert int(md["resourceVersion"]) > 0
    got = cluster.api.get(f"/api/v1/namespaces/{namespace}/configmaps/created")
    assert got.status == 200
    assert got.body["metadata"]["uid"] == md["uid"]
    assert got.body["data"] == {"k": "v"}
    assert got.body["kind"] == "ConfigMap" and got.body["apiVersion"] == "v1"


def test_generate_name(cluster: Cluster, namespace: str) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-"}}
    first = cluster.api.post(f"/api/v1/namespaces/{namespace}/configmaps", body)
    second = cluster.api.post(f"/api/v1/namespaces/{namespace}/configmaps", body)
    assert first.status == second.status == 201
    n1, n2 = first.body["metadata"]["name"], second.body["metadata"]["name"]
    assert n1.startswith("gen-") and n2.startswith("gen-") and n1 != n2
    assert len(n1) == len("gen-") + 5


def test_resource_versions_increase_across_resources(cluster: Cluster, namespace: str) -> None:
    a = cluster.api.post(f"/api/v1/namespaces/{namespace}/configmaps", cm("rv-a"))
    b = cluster.api.post(
        f"/api/v1/namespaces/{namespace}/secrets",
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "rv-b"}},
    )
    c = cluster.api.post(f"/api/v1/namespaces/{namespace}/configmaps", cm("rv-c"))
    rvs = [int(r.body["metadata"]["resourceVersion"]) for r in (a, b, c)]
    assert rvs[0] < rvs[1] < rvs[2]


def test_already_exists(cluster: Cluster, namespace: str) -> None:
    assert cluster.api.post(f"/api/v1/namespaces/{namespace}/configmaps", cm("dup")).status == 201
    resp = cluster.api.post(f"/api/v1/namespaces/{namespace}/configmaps", cm("dup"))
    assert resp.status == 409
    assert resp.body["kind"] == "Status"
    assert resp.body["reason"] == "AlreadyExists"
    assert resp.body["details"] == {"name": "dup", "kind": "configmaps"}
    assert resp.body["message"] == 'configmaps "dup" already exists'


def test_not_found_status(cluster: Cluster, namespace: str) -> None:
    resp = cluster.api.get(f"/api/v1/namespaces/{namespace}/configmaps/missing")
    assert resp.status == 404
    assert resp.body["reason"] == "NotFound"
    assert resp.body["code"] == 404
    assert resp.body["status"] == "Failure"
    assert resp.body["message"] == 'configmaps "missing" not found'
    assert resp.body["details"]["name"] == "missing"


def test_namespace_must_exist(cluster: Cluster) -> None:
    resp = cluster.api.post("/api/v1/namespaces/no-such-ns-x1/configmaps", cm("x"))
    assert resp.status == 404
    assert resp.body["reason"] == "NotFound"
    assert resp.body["details"]["kind"] == "namespaces"


def test_default_namespaces_exist(cluster: Cluster) -> None:
    for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
        resp = cluster.api.get(f"/api/v1/namespaces/{ns}")
        assert resp.status == 200
        assert resp.body["status"]["phase"] == "Active"


def test_dry_run_create_does_not_persist(cluster: Cluster, namespace: str) -> None:
    resp = cluster.api.post(f"/api/v1/namespaces/{namespace}/configmaps", cm("dry"), dryRun="All")
    assert resp.status == 201
    assert resp.body["metadata"]["name"] == "dry"
    assert cluster.api.get(f"/api/v1/namespaces/{namespace}/configmaps/dry").status == 404


def test_invalid_name_is_422_with_causes(cluster: Cluster, namespace: str) -> None:
    resp = cluster.api.post(f"/api/v1/namespaces/{namespace}/configmaps", cm("Not_Valid"))
    assert resp.status == 422
    assert resp.body["reason"] == "Invalid"
    causes = resp.body["details"]["causes"]
    assert causes[0]["field"] == "metadata.name"
    assert causes[0]["reason"] == "FieldValueInvalid"


def test_missing_name_is_422(cluster: Cluster, namespace: str) -> None:
    resp = cluster.api.post(
        f"/api/v1/namespaces/{namespace}/configmaps",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}},
    )
    assert resp.status == 422
    assert resp.body["details"]["causes"][0]["reason"] == "FieldValueRequired"
    assert resp.body["details"]["causes"][0]["field"] == "metadata.name"


def test_namespace_mismatch_is_400(cluster: Cluster, namespace: str) -> None:
    resp = cluster.api.post(
        f"/api/v1/namespaces/{namespace}/configmaps", cm("mm", namespace="default")
    )
    assert resp.status == 400
    assert resp.body["reason"] == "BadRequest"


def test_secret_string_data_is_folded_into_data(cluster: Cluster, namespace: str) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "sd"},
        "stringData": {"a": "hello"},
    }
    resp = cluster.api.post(f"/api/v1/namespaces/{namespace}/secrets", body)
    assert resp.status == 201
    assert resp.body["data"] == {"a": "aGVsbG8="}
    assert "stringData" not in resp.body
    assert resp.body["type"] == "Opaque"


def test_pod_defaults_and_binding(cluster: Cluster, namespace: str) -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p1"},
        "spec": {
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.9",
                    "ports": [{"containerPort": 80}],
                }
            ],
            "schedulerName": "agones-py-none",
        },
    }
    resp = cluster.api.post(f"/api/v1/namespaces/{namespace}/pods", pod)
    assert resp.status == 201, resp
    assert resp.body["status"]["phase"] == "Pending"
    assert resp.body["spec"]["restartPolicy"] == "Always"
    assert resp.body["spec"]["containers"][0]["ports"][0]["protocol"] == "TCP"
    assert resp.body["spec"].get("nodeName") is None
    nodes = cluster.api.get("/api/v1/nodes").body["items"]
    node = nodes[0]["metadata"]["name"] if nodes else "node-x"
    if not nodes and not cluster.local:
        return
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "p1"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }
    bound = cluster.api.post(f"/api/v1/namespaces/{namespace}/pods/p1/binding", binding)
    assert bound.status == 201, bound
    got = cluster.api.get(f"/api/v1/namespaces/{namespace}/pods/p1").body
    assert got["spec"]["nodeName"] == node
    again = cluster.api.post(f"/api/v1/namespaces/{namespace}/pods/p1/binding", binding)
    assert again.status == 409
    cluster.api.delete(f"/api/v1/namespaces/{namespace}/pods/p1", gracePeriodSeconds=0)


def test_service_gets_cluster_ip_and_port_defaults(cluster: Cluster, namespace: str) -> None:
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "svc"},
        "spec": {"ports": [{"port": 80}], "selector": {"app": "x"}},
    }
    resp = cluster.api.post(f"/api/v1/namespaces/{namespace}/services", svc)
    assert resp.status == 201, resp
    spec = resp.body["spec"]
    assert spec["type"] == "ClusterIP"
    assert spec["clusterIP"]
    assert spec["ports"][0]["protocol"] == "TCP"
    assert spec["ports"][0]["targetPort"] == 80


def test_lease_and_events_round_trip(cluster: Cluster, namespace: str) -> None:
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "l"},
        "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15},
    }
    resp = cluster.api.post(f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases", lease)
    assert resp.status == 201
    assert resp.body["spec"]["holderIdentity"] == "me"
    ev = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "e1"},
        "eventTime": "2024-01-01T00:00:00.000000Z",
        "reportingController": "agones-py/test",
        "reportingInstance": "test-1",
        "action": "Testing",
        "reason": "Tested",
        "type": "Normal",
        "regarding": {"kind": "Lease", "name": "l", "namespace": namespace},
        "note": "hello",
    }
    resp = cluster.api.post(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events", ev)
    assert resp.status == 201, resp


def test_events_are_one_resource_in_two_apis(cluster: Cluster, namespace: str) -> None:
    ev = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "both"},
        "eventTime": "2024-01-01T00:00:00.000000Z",
        "reportingController": "agones-py/test",
        "reportingInstance": "test-1",
        "action": "Testing",
        "reason": "Converted",
        "type": "Warning",
        "regarding": {"kind": "ConfigMap", "name": "target", "namespace": namespace},
        "note": "seen from both sides",
    }
    assert (
        cluster.api.post(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events", ev).status == 201
    )
    core = cluster.api.get(f"/api/v1/namespaces/{namespace}/events/both").body
    assert core["apiVersion"] == "v1"
    assert core["involvedObject"]["name"] == "target"
    assert core["message"] == "seen from both sides"
    assert core["reportingComponent"] == "agones-py/test"
    v1 = cluster.api.get(
        f"/apis/events.k8s.io/v1/namespaces/{namespace}/events",
        fieldSelector="regarding.name=target",
    ).body
    assert [e["metadata"]["name"] for e in v1["items"]] == ["both"]
    item = v1["items"][0]
    assert item["note"] == "seen from both sides"
    # Items of a built-in kind's list carry no apiVersion/kind; Go's encoding of the converted
    # Event always writes the deprecated core fields (an empty struct, null timestamps).
    assert "apiVersion" not in item and "kind" not in item
    assert item["deprecatedSource"] == {}
    assert item["deprecatedFirstTimestamp"] is None
    assert item["deprecatedLastTimestamp"] is None
    # An event's series is what changes as it recurs (its note and regarding are immutable).
    series = {"count": 2, "lastObservedTime": "2024-01-01T00:00:05.000000Z"}
    patched = cluster.api.patch(
        f"/apis/events.k8s.io/v1/namespaces/{namespace}/events/both", {"series": series}
    )
    assert patched.status == 200, patched
    assert patched.body["series"]["count"] == 2
    core = cluster.api.get(f"/api/v1/namespaces/{namespace}/events/both").body
    assert core["series"]["count"] == 2


def test_unknown_fields_of_builtin_kinds(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "unk"},
        "data": {"a": "b"},
        "bogus": 1,
    }
    resp = cluster.api.post(path, body)
    assert resp.status == 201
    assert "bogus" not in resp.body
    assert resp.body["data"] == {"a": "b"}
    body["metadata"]["name"] = "unk-strict"
    strict = cluster.api.post(path, body, fieldValidation="Strict")
    assert strict.status == 400
    assert 'unknown field "bogus"' in strict.body["message"]
