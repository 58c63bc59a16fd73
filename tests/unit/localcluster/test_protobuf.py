"""Decoding kubectl's protobuf envelope, with messages built by a tiny encoder."""

import pytest

from agones.localcluster.protobuf import MAGIC, ProtobufError, decode_object


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
        pytest.param(envelope("v1", "Pod", b""), id="unsupported-kind"),
        pytest.param(
            MAGIC + ld(1, ld(1, "v1") + ld(2, "ConfigMap")) + b"\x12\x10ab", id="truncated"
        ),
    ],
)
def test_errors(data: bytes) -> None:
    with pytest.raises(ProtobufError):
        decode_object(data)
