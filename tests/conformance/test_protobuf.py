"""Go clients' protobuf (issue 15 item 0b): client-go's typed clients send built-in kinds as
`application/vnd.kubernetes.protobuf` (the `k8s\\0` magic and a `runtime.Unknown`) and DELETE with a
protobuf `DeleteOptions`. Bodies are built from the v1.28 wire facts by the codec's encoder; each
object, created that way, reads back as JSON with every field sent and equal to its twin created as
JSON, reads back as protobuf equal to its JSON, is updated by a protobuf PUT, and is deleted by a protobuf DeleteOptions.
The same assertions hold against a real kube-apiserver (`KUBECONFIG`)."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from agones.localcluster.apiserver.protobuf import CONTENT_TYPE as PROTOBUF
from agones.localcluster.apiserver.protobuf import decode_object, encode_object, message_for
from agones.localcluster.apiserver.protobuf_messages import INLINE, KEEP_ZERO, MESSAGES, REPEATED
from agones.localcluster.apiserver.protowire import fields
from agones.localcluster.apiserver.resources import builtin_resources
from tests.cluster import Cluster
from tests.conformance.conftest import CRD

Obj = dict[str, Any]
SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "selfLink", "name")


def pod(ns: str, name: str) -> Obj:
    container = {
        "name": "game",
        "image": "us-docker.pkg.dev/agones-images/examples/simple-game-server:0.41",
        "args": ["-port", "7654"],
        "ports": [{"name": "default", "containerPort": 7654, "protocol": "UDP"}],
        "env": [{"name": "MODE", "value": "test"}],
        "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}, "requests": {"cpu": "50m"}},
        "readinessProbe": {"httpGet": {"path": "/gshealthz", "port": 8080}, "periodSeconds": 5},
    }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": "pb"}},
        "spec": {
            "containers": [container],
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 0,
            "automountServiceAccountToken": False,
            "nodeSelector": {"kubernetes.io/os": "linux"},
            "tolerations": [{"key": "agones.dev/gameservers", "operator": "Exists"}],
        },
    }


def role(ns: str, name: str) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": name, "namespace": ns},
        "rules": [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
            {
                "apiGroups": ["agones.dev"],
                "resources": ["gameservers"],
                "resourceNames": ["one"],
                "verbs": ["patch"],
            },
        ],
    }


def role_binding(ns: str, name: str) -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pb-role"},
        "subjects": [
            {"kind": "ServiceAccount", "name": "agones-sdk", "namespace": ns},
            {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"},
        ],
    }


def lease(ns: str, name: str) -> Obj:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "holderIdentity": "controller-0",
            "leaseDurationSeconds": 15,
            "acquireTime": "2024-05-06T07:08:09.123456Z",
            "renewTime": "2024-05-06T07:08:19.654321Z",
            "leaseTransitions": 3,
        },
    }


def core_event(ns: str, name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": ns},
        "involvedObject": {"kind": "Pod", "namespace": ns, "name": "pb-pod", "apiVersion": "v1"},
        "reason": "Started",
        "message": "started the game server",
        "source": {"component": "gameserver-controller"},
        "firstTimestamp": "2024-05-06T07:08:09Z",
        "lastTimestamp": "2024-05-06T07:08:10Z",
        "count": 2,
        "type": "Normal",
    }


def events_event(ns: str, name: str) -> Obj:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": ns},
        "eventTime": "2024-05-06T07:08:09.000123Z",
        "reportingController": "agones.dev/controller",
        "reportingInstance": "controller-0",
        "action": "Allocate",
        "reason": "Allocated",
        "regarding": {"kind": "Pod", "namespace": ns, "name": "pb-pod", "apiVersion": "v1"},
        "note": "allocated",
        "type": "Normal",
    }


CASES: dict[str, tuple[str, Callable[[str, str], Obj]]] = {
    "pod": ("/api/v1/namespaces/{ns}/pods", pod),
    "role": ("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles", role),
    "rolebinding": (
        "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
        role_binding,
    ),
    "lease": ("/apis/coordination.k8s.io/v1/namespaces/{ns}/leases", lease),
    "event": ("/api/v1/namespaces/{ns}/events", core_event),
    "events.k8s.io-event": ("/apis/events.k8s.io/v1/namespaces/{ns}/events", events_event),
}


def assert_contains(sent: Any, got: Any, path: str = "") -> None:
    """Every field sent came back with the same value (the server may add fields)."""
    if isinstance(sent, dict):
        assert isinstance(got, dict), path
        for k, v in sent.items():
            assert k in got, f"{path}.{k} missing"
            assert_contains(v, got[k], f"{path}.{k}")
    elif isinstance(sent, list):
        assert isinstance(got, list) and len(got) == len(sent), path
        for i, (a, b) in enumerate(zip(sent, got, strict=True)):
            assert_contains(a, b, f"{path}[{i}]")
    else:
        assert sent == got, path


def _identity_free(obj: Obj) -> Obj:
    out = copy.deepcopy(obj)
    for k in SERVER_SET:
        out["metadata"].pop(k, None)
    return out


def _delete_options() -> bytes:
    opts = {"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0}
    opts["propagationPolicy"] = "Background"
    return encode_object(opts)


@pytest.mark.parametrize("case", list(CASES))
def test_protobuf_create_read_and_delete(cluster: Cluster, namespace: str, case: str) -> None:
    collection, make = CASES[case]
    path = collection.format(ns=namespace)
    name = f"pb-{case.replace('.', '-')}-{uuid.uuid4().hex[:6]}"
    sent = make(namespace, name)
    created = cluster.api.raw("POST", path, encode_object(sent), PROTOBUF)
    assert created.status == 201, created
    twin = make(namespace, f"{name}-json")
    assert cluster.api.post(path, twin).status == 201

    got = cluster.api.get(f"{path}/{name}")
    assert got.status == 200, got
    assert_contains(sent, got.body)
    assert _identity_free(got.body) == _identity_free(cluster.api.get(f"{path}/{name}-json").body)

    as_protobuf = cluster.api.raw("GET", f"{path}/{name}", None, PROTOBUF, accept=PROTOBUF)
    assert as_protobuf.status == 200
    assert as_protobuf.headers["Content-Type"].startswith(PROTOBUF)
    assert_contains(sent, decode_object(as_protobuf.body))
    assert decode_object(as_protobuf.body) == got.body

    changed = copy.deepcopy(got.body)
    changed["metadata"].setdefault("labels", {})["updated"] = "by-protobuf"
    updated = cluster.api.raw("PUT", f"{path}/{name}", encode_object(changed), PROTOBUF)
    assert updated.status == 200, updated
    after = cluster.api.get(f"{path}/{name}").body
    assert after["metadata"]["labels"]["updated"] == "by-protobuf"
    assert after["metadata"]["resourceVersion"] != got.body["metadata"]["resourceVersion"]

    for target in (name, f"{name}-json"):
        deleted = cluster.api.raw("DELETE", f"{path}/{target}", _delete_options(), PROTOBUF)
        assert deleted.status in (200, 202), deleted
        assert cluster.api.get(f"{path}/{target}").status == 404


_ZEROS = {"string": "", "int32": 0, "int64": 0, "bool": False}


def with_go_zeros(obj: Obj, message: str) -> Obj:
    """`obj` as Go's generated Marshal writes it: every non-pointer scalar field of every message
    present, set or not (KEEP_ZERO fields are pointers or kept anyway: left as they are)."""
    out = dict(obj)
    for _, name, typ, flags in MESSAGES[message]:
        if flags & INLINE:
            out = with_go_zeros(out, typ)
        elif typ in MESSAGES and isinstance(out.get(name), dict):
            out[name] = with_go_zeros(out[name], typ)
        elif typ in MESSAGES and flags & REPEATED and isinstance(out.get(name), list):
            out[name] = [with_go_zeros(v, typ) for v in out[name]]
        elif typ in _ZEROS and not flags & (REPEATED | KEEP_ZERO) and name not in out:
            out[name] = _ZEROS[typ]
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_go_zero_values_on_the_wire_read_as_unset(
    cluster: Cluster, namespace: str, case: str
) -> None:
    collection, make = CASES[case]
    path = collection.format(ns=namespace)
    name = f"go-{case.replace('.', '-')}-{uuid.uuid4().hex[:6]}"
    sent = make(namespace, name)
    message = message_for(sent["apiVersion"], sent["kind"])
    assert message is not None
    go = with_go_zeros(sent, message)
    assert go["metadata"]["generateName"] == ""  # the zeros are on the wire
    created = cluster.api.raw("POST", path, encode_object(go), PROTOBUF)
    assert created.status == 201, created
    assert cluster.api.post(path, make(namespace, f"{name}-json")).status == 201
    got = cluster.api.get(f"{path}/{name}").body
    assert _identity_free(got) == _identity_free(cluster.api.get(f"{path}/{name}-json").body)
    for target in (name, f"{name}-json"):
        cluster.api.raw("DELETE", f"{path}/{target}", _delete_options(), PROTOBUF)


def test_lists_answer_protobuf_when_asked(cluster: Cluster, namespace: str) -> None:
    path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
    for i in range(2):
        assert cluster.api.post(path, lease(namespace, f"listed-{i}")).status == 201
    resp = cluster.api.raw("GET", path, None, PROTOBUF, accept=f"{PROTOBUF}, application/json")
    assert resp.status == 200 and isinstance(resp.body, bytes), resp
    listed = decode_object(resp.body)
    assert listed["kind"] == "LeaseList"
    names = {item["metadata"]["name"] for item in listed["items"]}
    assert {"listed-0", "listed-1"} <= names


def test_custom_resources_answer_json_to_a_protobuf_client(
    cluster: Cluster, namespace: str
) -> None:
    resp = cluster.api.raw(
        "GET",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        None,
        PROTOBUF,
        accept=f"{PROTOBUF}, application/json",
    )
    assert resp.status == 200
    assert decode_object(resp.body)["kind"] == "CustomResourceDefinitionList"


def test_custom_resources_have_no_protobuf_form(
    cluster: Cluster, namespace: str, widgets: CRD
) -> None:
    body = widgets.obj("pb")
    envelope = encode_object({**body, "apiVersion": "v1", "kind": "ConfigMap"})
    resp = cluster.api.raw("POST", widgets.path(namespace), envelope, PROTOBUF)
    assert resp.status == 415, resp
    assert resp.body["reason"] == "UnsupportedMediaType"
    assert cluster.api.post(widgets.path(namespace), body).status == 201
    only_protobuf = cluster.api.raw(
        "GET", widgets.path(namespace, "pb"), None, PROTOBUF, accept=PROTOBUF
    )
    assert only_protobuf.status == 406, only_protobuf


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(
            b"{}",
            "the object provided is unrecognized (must be of type ConfigMap): provided data does "
            "not appear to be a protobuf message, expected prefix [107 56 115 0] ({})",
            id="not-protobuf",
        ),
        pytest.param(
            encode_object({"apiVersion": "v1", "kind": "ConfigMap"}).replace(
                b"ConfigMap", b"Widgetxxx"
            ),
            'Widgetxxx in version "v1" cannot be handled as a ConfigMap: no kind "Widgetxxx" is '
            'registered for version "v1"',
            id="unknown-kind",
        ),
    ],
)
def test_undecodable_protobuf_is_a_bad_request_worded_as_kube_apiserver(
    cluster: Cluster, namespace: str, body: bytes, message: str
) -> None:
    resp = cluster.api.raw("POST", f"/api/v1/namespaces/{namespace}/configmaps", body, PROTOBUF)
    assert resp.status == 400, resp
    assert resp.body["reason"] == "BadRequest"
    assert resp.body["message"].startswith(message), resp.body["message"]


@pytest.mark.parametrize(
    "info", builtin_resources(), ids=lambda i: f"{i.group or 'core'}/{i.resource}"
)
def test_every_builtin_list_answers_protobuf(cluster: Cluster, namespace: str, info: Any) -> None:
    prefix = f"/apis/{info.group}/{info.version}" if info.group else f"/api/{info.version}"
    path = (
        f"{prefix}/namespaces/{namespace}/{info.resource}"
        if info.namespaced
        else (f"{prefix}/{info.resource}")
    )
    resp = cluster.api.raw("GET", path, None, PROTOBUF, accept=PROTOBUF)
    assert resp.status == 200, resp
    listed = decode_object(resp.body)
    assert (listed["apiVersion"], listed["kind"]) == (info.api_version, f"{info.kind}List")


def test_binding_and_eviction_as_protobuf(cluster: Cluster, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/pods"
    for name in ("pb-bound", "pb-evicted"):
        assert cluster.api.post(path, pod(namespace, name)).status == 201
    binding = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "pb-bound", "namespace": namespace},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "pb-node"},
    }
    bound = cluster.api.raw("POST", f"{path}/pb-bound/binding", encode_object(binding), PROTOBUF)
    assert bound.status == 201, bound
    assert cluster.api.get(f"{path}/pb-bound").body["spec"]["nodeName"] == "pb-node"
    eviction = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "pb-evicted", "namespace": namespace},
        "deleteOptions": {"gracePeriodSeconds": 0},
    }
    evicted = cluster.api.raw(
        "POST", f"{path}/pb-evicted/eviction", encode_object(eviction), PROTOBUF
    )
    assert evicted.status == 201, evicted
    assert cluster.api.get(f"{path}/pb-evicted").status == 404
    cluster.api.raw("DELETE", f"{path}/pb-bound", _delete_options(), PROTOBUF)


def _frames(stream: bytes) -> list[tuple[str, Obj]]:
    """The events of a protobuf watch: 4-byte big-endian lengths, each a WatchEvent {type,
    object: RawExtension{raw}} whose raw bytes are an enveloped object."""
    events, pos = [], 0
    while pos < len(stream):
        size = int.from_bytes(stream[pos : pos + 4], "big")
        event = {num: value for num, _, value in fields(stream[pos + 4 : pos + 4 + size])}
        raw = {num: value for num, _, value in fields(event[2])}[1]
        events.append((event[1].decode(), decode_object(raw)))
        pos += 4 + size
    assert pos == len(stream)
    return events


def test_watch_streams_protobuf_events_when_asked(cluster: Cluster, namespace: str) -> None:
    path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
    rv = cluster.api.get(path).body["metadata"]["resourceVersion"]
    created = cluster.api.post(path, lease(namespace, "watched")).body
    resp = cluster.api.raw(
        "GET",
        f"{path}?watch=true&resourceVersion={rv}&timeoutSeconds=1",
        None,
        PROTOBUF,
        accept=PROTOBUF,
    )
    assert resp.status == 200, resp
    assert resp.headers["Content-Type"].startswith(PROTOBUF)
    events = _frames(resp.body)
    assert [(t, o["metadata"]["name"]) for t, o in events] == [("ADDED", "watched")]
    assert_contains(lease(namespace, "watched")["spec"], events[0][1]["spec"])
    assert events[0][1]["metadata"]["uid"] == created["metadata"]["uid"]
