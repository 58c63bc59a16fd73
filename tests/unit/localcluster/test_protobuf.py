"""The protobuf codec by tables: bodies built byte by byte from the wire facts (a tiny encoder here,
independent of the codec's), the special types' JSON forms both ways, Go's zero values, and errors."""

from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.localcluster.apiserver import protobuf_special as special
from agones.localcluster.apiserver.protobuf import (
    MAGIC,
    ProtobufError,
    UnknownKindError,
    decode_message,
    decode_object,
    encode_message,
    encode_object,
    message_for,
)
from agones.localcluster.apiserver.protobuf_messages import GROUP_VERSIONS, KINDS


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def ld(num: int, payload: bytes | str) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(num << 3 | 2) + _varint(len(data)) + data


def vi(num: int, value: int) -> bytes:
    return _varint(num << 3) + _varint(value)


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    return MAGIC + ld(1, ld(1, api_version) + ld(2, kind)) + ld(2, raw)


def test_configmap_with_metadata_labels_and_data() -> None:
    meta = (
        ld(1, "cm1")
        + ld(3, "ns")
        + ld(11, ld(1, "app") + ld(2, "web"))
        + ld(14, "f1")
        + ld(14, "f2")
    )
    raw = ld(1, meta) + ld(2, ld(1, "a") + ld(2, "b")) + ld(3, ld(1, "bin") + ld(2, b"\x00\x01"))
    obj = decode_object(envelope("v1", "ConfigMap", raw))
    assert obj == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "cm1",
            "namespace": "ns",
            "labels": {"app": "web"},
            "finalizers": ["f1", "f2"],
        },
        "data": {"a": "b"},
        "binaryData": {"bin": "AAE="},
    }


def test_service_ports_with_int_or_string_target() -> None:
    port = ld(1, "http") + ld(2, "TCP") + vi(3, 80) + ld(4, vi(1, 0) + vi(2, 8080)) + vi(5, 0)
    named = ld(1, "dns") + ld(2, "UDP") + vi(3, 53) + ld(4, vi(1, 1) + ld(3, "dns-port"))
    spec = ld(1, port) + ld(1, named) + ld(2, ld(1, "app") + ld(2, "x")) + ld(4, "ClusterIP")
    obj = decode_object(envelope("v1", "Service", ld(1, ld(1, "svc")) + ld(2, spec)))
    assert obj["spec"] == {
        "ports": [
            {"name": "http", "protocol": "TCP", "port": 80, "targetPort": 8080},
            {"name": "dns", "protocol": "UDP", "port": 53, "targetPort": "dns-port"},
        ],
        "selector": {"app": "x"},
        "type": "ClusterIP",
    }


def test_creation_timestamp_is_rfc3339() -> None:
    meta = ld(1, "ns1") + ld(8, vi(1, 1700000000))
    obj = decode_object(envelope("v1", "Namespace", ld(1, meta) + ld(2, ld(1, "kubernetes"))))
    assert obj["metadata"]["creationTimestamp"] == "2023-11-14T22:13:20Z"
    assert obj["spec"] == {"finalizers": ["kubernetes"]}


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b'{"kind":"ConfigMap"}', id="not-protobuf"),
        pytest.param(envelope("v1", "Widget", b""), id="unknown-kind"),
        pytest.param(envelope("widgets.example.com/v1", "Widget", b""), id="unknown-group"),
        pytest.param(
            MAGIC + ld(1, ld(1, "v1") + ld(2, "ConfigMap")) + b"\x12\x10ab", id="truncated"
        ),
        pytest.param(envelope("v1", "ConfigMap", b"\x0a\xff"), id="truncated-varint-length"),
        pytest.param(envelope("v1", "ConfigMap", b"\x08" + b"\xff" * 11), id="varint-overflow"),
        pytest.param(envelope("v1", "ConfigMap", vi(1, 5)), id="varint-for-a-message"),
        pytest.param(envelope("v1", "ConfigMap", ld(1, vi(1, 5))), id="varint-for-a-string"),
        pytest.param(envelope("v1", "ConfigMap", b"\x0b"), id="group-wire-type"),
        pytest.param(envelope("v1", "ConfigMap", b"\x00\x00"), id="field-zero"),
        pytest.param(envelope("v1", "ConfigMap", ld(1, ld(8, vi(1, 10**15)))), id="time-range"),
        pytest.param(
            envelope("v1", "Pod", ld(1, ld(17, ld(7, ld(1, "{not json"))))), id="fieldsv1-json"
        ),
        pytest.param(
            MAGIC + ld(1, ld(1, "v1") + ld(2, "ConfigMap")) + ld(3, "gzip"), id="content-encoding"
        ),
    ],
)
def test_errors(data: bytes) -> None:
    with pytest.raises(ProtobufError):
        decode_object(data)


def test_unknown_kinds_are_told_apart() -> None:
    with pytest.raises(UnknownKindError, match='no kind "Widget" is registered for version "v1"'):
        decode_object(envelope("v1", "Widget", b""))


def test_empty_embedded_json_in_a_list_reads_as_null() -> None:
    schema = ld(5, "string") + ld(20, b"") + ld(20, ld(1, '"a"'))  # enum: [JSON{}, JSON{"a"}]
    version = ld(1, "v1") + ld(4, ld(1, schema))
    obj = decode_object(
        envelope("apiextensions.k8s.io/v1", "CustomResourceDefinition", ld(2, ld(7, version)))
    )
    assert obj["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["enum"] == [None, "a"]


def test_nesting_is_bounded() -> None:
    schema = b""
    for _ in range(150):
        schema = ld(28, schema)  # JSONSchemaProps.not
    version = ld(1, "v1") + ld(4, ld(1, schema))  # CustomResourceDefinitionVersion.schema
    crd = ld(2, ld(7, version))
    with pytest.raises(ProtobufError, match="nests deeper"):
        decode_object(envelope("apiextensions.k8s.io/v1", "CustomResourceDefinition", crd))


# -- Go's zero values: non-pointer fields are always on the wire --------------------------------


def test_go_zero_values_read_as_absent_unless_go_keeps_them() -> None:
    # workingDir "", resources {} (a struct: Go writes `resources: {}`), stdin false, pull policy ""
    container = ld(1, "c") + ld(2, "img") + ld(5, "") + ld(8, b"") + vi(16, 0) + ld(14, "")
    spec = (
        ld(2, container)
        + ld(3, "")  # restartPolicy ""
        + vi(4, 0)  # terminationGracePeriodSeconds: a pointer, 0 is kept
        + ld(6, "")  # dnsPolicy ""
        + vi(11, 0)  # hostNetwork false
        + vi(21, 0)  # automountServiceAccountToken: a pointer
    )
    meta = ld(1, "p") + ld(2, "") + ld(8, b"") + vi(7, 0)  # zero creationTimestamp, generation
    obj = decode_object(envelope("v1", "Pod", ld(1, meta) + ld(2, spec) + ld(3, b"")))
    assert obj == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "containers": [{"name": "c", "image": "img", "resources": {}}],
            "terminationGracePeriodSeconds": 0,
            "automountServiceAccountToken": False,
        },
        "status": {},
    }


def test_negative_int32_and_packed_repeated_varints() -> None:
    port = ld(1, "p") + vi(2, (1 << 64) - 1) + vi(3, 80)  # hostPort -1 as ten bytes
    raw = ld(2, ld(2, ld(1, "c") + ld(6, port)))
    obj = decode_object(envelope("v1", "Pod", raw))
    assert obj["spec"]["containers"][0]["ports"] == [
        {"name": "p", "hostPort": -1, "containerPort": 80}
    ]
    forward = decode_object(envelope("v1", "PodPortForwardOptions", ld(1, b"\x50\x51")))
    assert forward["ports"] == [80, 81]


# -- special types both ways --------------------------------------------------------------------


def _pod_with(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": "n", "creationTimestamp": "2023-11-14T22:13:20Z"},
            },
            id="time",
        ),
        pytest.param(
            {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": "l"},
                "spec": {"renewTime": "2024-05-06T07:08:09.123456Z", "holderIdentity": ""},
            },
            id="microtime",
        ),
        pytest.param(
            _pod_with(
                containers=[
                    {"name": "c", "resources": {"limits": {"cpu": "250m", "memory": "1Gi"}}}
                ]
            ),
            id="quantity",
        ),
        pytest.param(
            _pod_with(containers=[{"name": "c", "readinessProbe": {"httpGet": {"port": 8080}}}]),
            id="intorstring-int",
        ),
        pytest.param(
            _pod_with(
                containers=[{"name": "c", "readinessProbe": {"tcpSocket": {"port": "http"}}}]
            ),
            id="intorstring-str",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": "c",
                    "managedFields": [
                        {
                            "manager": "m",
                            "operation": "Apply",
                            "fieldsType": "FieldsV1",
                            "fieldsV1": {"f:data": {"f:a": {}}},
                            "time": "2024-01-01T00:00:00Z",
                        }
                    ],
                },
            },
            id="fieldsv1",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "List",
                "metadata": {},
                "items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}],
            },
            id="rawextension",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "s"},
                "data": {"k": "AAE="},
            },
            id="bytes",
        ),
        pytest.param(
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": "a.b"},
                "spec": {
                    "group": "b",
                    "versions": [
                        {
                            "name": "v1",
                            "served": True,
                            "storage": False,
                            "schema": {
                                "openAPIV3Schema": {
                                    "type": "object",
                                    "default": {"x": [1, None]},
                                    "enum": ["a", 2],
                                    "minimum": 0.5,
                                    "additionalProperties": False,
                                    "properties": {
                                        "m": {"additionalProperties": {"type": "string"}},
                                        "l": {"items": {"type": "integer"}},
                                        "t": {"items": [{"type": "string"}]},
                                    },
                                    "dependencies": {"a": ["b"], "c": {"required": ["d"]}},
                                    "x-kubernetes-preserve-unknown-fields": False,
                                }
                            },
                        }
                    ],
                },
            },
            id="json-and-schema-unions",
        ),
        pytest.param(
            {
                "apiVersion": "v1",
                "kind": "APIResourceList",
                "groupVersion": "v1",
                "resources": [
                    {"name": "pods", "namespaced": True, "kind": "Pod", "verbs": ["get", "list"]}
                ],
            },
            id="verbs",
        ),
        pytest.param(
            {
                "apiVersion": "authorization.k8s.io/v1",
                "kind": "SubjectAccessReview",
                "metadata": {},
                "spec": {"user": "alice", "extra": {"scopes": ["a", "b"]}},
            },
            id="extravalue",
        ),
    ],
)
def test_special_types_round_trip(obj: dict[str, Any]) -> None:
    assert decode_object(encode_object(obj)) == obj


@pytest.mark.parametrize(
    ("api_version", "kind", "message"),
    [
        pytest.param("v1", "Pod", "k8s.io.api.core.v1.Pod", id="core"),
        pytest.param(
            "rbac.authorization.k8s.io/v1",
            "RoleBinding",
            "k8s.io.api.rbac.v1.RoleBinding",
            id="rbac",
        ),
        pytest.param(
            "v1",
            "DeleteOptions",
            "k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions",
            id="meta-in-core",
        ),
        pytest.param(
            "apps/v1", "Status", "k8s.io.apimachinery.pkg.apis.meta.v1.Status", id="meta-in-apps"
        ),
        pytest.param("agones.dev/v1", "GameServer", None, id="custom-resource"),
        pytest.param("rbac.authorization.k8s.io/v1", "RoleRef", None, id="not-a-kind"),
    ],
)
def test_message_for(api_version: str, kind: str, message: str | None) -> None:
    assert message_for(api_version, kind) == message


def test_encode_refuses_custom_resources() -> None:
    with pytest.raises(UnknownKindError):
        encode_object({"apiVersion": "agones.dev/v1", "kind": "GameServer"})


_KINDS = sorted(
    (gv, message.rpartition(".")[2])
    for gv, package in GROUP_VERSIONS.items()
    for message in KINDS
    if message.rpartition(".")[0] == package
)


@st.composite
def _fields_soup(draw: st.DrawFn, depth: int = 0) -> bytes:
    """Random fields: plausible keys with every wire type, nested messages a few levels deep."""
    out = b""
    for _ in range(draw(st.integers(0, 6))):
        num, wire = draw(st.integers(1, 45)), draw(st.sampled_from([0, 0, 1, 2, 2, 2, 5]))
        out += _varint(num << 3 | wire)
        if wire == 0:
            out += _varint(draw(st.integers(0, 2**64 - 1)))
        elif wire in (1, 5):
            out += draw(st.binary(min_size=8 if wire == 1 else 4, max_size=8 if wire == 1 else 4))
        elif depth < 3 and draw(st.booleans()):
            inner = draw(_fields_soup(depth + 1))
            out += _varint(len(inner)) + inner
        else:
            payload = draw(st.binary(max_size=16))
            out += _varint(len(payload)) + payload
    return out


@settings(max_examples=1500, deadline=None)
@given(kind=st.sampled_from(_KINDS), raw=_fields_soup())
def test_any_bytes_of_any_kind_decode_to_json_or_a_protobuf_error(
    kind: tuple[str, str], raw: bytes
) -> None:
    try:
        obj = decode_object(envelope(kind[0], kind[1], raw))
    except ProtobufError:
        return
    encoded = msgspec.json.encode(obj)  # the server stores it: it must be plain JSON
    assert msgspec.json.decode(encoded) == obj
    encode_object(obj)  # and answers it as protobuf when asked


@pytest.mark.parametrize(
    ("message", "value"),
    [
        pytest.param(special.DURATION, "1h2m3.5s", id="duration"),
        pytest.param(special.TIME, "2024-02-29T23:59:59Z", id="time"),
        pytest.param(special.MICRO_TIME, "2024-02-29T23:59:59.000001Z", id="microtime"),
        pytest.param(special.QUANTITY, "1500m", id="quantity"),
        pytest.param(special.INT_OR_STRING, 0, id="intorstring-zero"),
        pytest.param(special.INT_OR_STRING, -3, id="intorstring-negative"),
        pytest.param(special.RAW_EXTENSION, {"a": [1, "b", None]}, id="rawextension"),
        pytest.param(special.OR_BOOL, True, id="orbool-true"),
        pytest.param(special.OR_STRING_ARRAY, ["x", "y"], id="orstringarray"),
    ],
)
def test_special_type_messages_round_trip(message: str, value: Any) -> None:
    raw = special.to_proto(message, value, "f", encode_message)
    fields = decode_message(raw, message)
    assert special.from_proto(message, fields, "f") == value


@pytest.mark.parametrize(
    "value",
    ["2024-13-01T00:00:00Z", "yesterday", "2024-01-01T00:00:00", 5],
    ids=["month", "words", "no-zone", "number"],
)
def test_bad_times(value: Any) -> None:
    with pytest.raises(ValueError):
        special.parse_time(value, "t")
