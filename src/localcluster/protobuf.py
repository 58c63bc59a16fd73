"""Decoding the Kubernetes protobuf envelope for the request bodies kubectl sends that way.

kubectl's typed generators (`kubectl create namespace|configmap|secret|serviceaccount|service`) post
`application/vnd.kubernetes.protobuf`: the magic `k8s\\x00` then a `runtime.Unknown` carrying the
apiVersion/kind and the object's protobuf bytes. This decodes those kinds into the JSON form the
rest of the server handles (field numbers from k8s.io/api's generated.proto). Other kinds raise
`ProtobufError` (answered 415, as for any unsupported media type).
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

MAGIC = b"k8s\x00"


class ProtobufError(Exception):
    pass


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("truncated varint")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) of each field; length-delimited values as bytes."""
    out = []
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        num, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 2:
            length, pos = _varint(data, pos)
            value = data[pos : pos + length]
            if len(value) != length:
                raise ProtobufError("truncated field")
            pos += length
        elif wire == 1:
            value = int.from_bytes(data[pos : pos + 8], "little")
            pos += 8
        elif wire == 5:
            value = int.from_bytes(data[pos : pos + 4], "little")
            pos += 4
        else:
            raise ProtobufError(f"unsupported wire type {wire}")
        out.append((num, wire, value))
    return out


def _signed(v: int, bits: int) -> int:
    return v - (1 << bits) if v >= 1 << (bits - 1) else v


# A schema maps field numbers to (json name, type); a type is a scalar name, a nested schema
# (dict), ("repeated", type) or ("map", value type).
Schema = dict[int, tuple[str, Any]]

TIME: Schema = {1: ("seconds", "int64"), 2: ("nanos", "int32")}
OWNER_REFERENCE: Schema = {
    1: ("kind", "string"),
    3: ("name", "string"),
    4: ("uid", "string"),
    5: ("apiVersion", "string"),
    6: ("controller", "bool"),
    7: ("blockOwnerDeletion", "bool"),
}
OBJECT_META: Schema = {
    1: ("name", "string"),
    2: ("generateName", "string"),
    3: ("namespace", "string"),
    5: ("uid", "string"),
    6: ("resourceVersion", "string"),
    7: ("generation", "int64"),
    8: ("creationTimestamp", "time"),
    9: ("deletionTimestamp", "time"),
    10: ("deletionGracePeriodSeconds", "int64"),
    11: ("labels", ("map", "string")),
    12: ("annotations", ("map", "string")),
    13: ("ownerReferences", ("repeated", OWNER_REFERENCE)),
    14: ("finalizers", ("repeated", "string")),
}
OBJECT_REFERENCE: Schema = {
    1: ("kind", "string"),
    2: ("namespace", "string"),
    3: ("name", "string"),
    4: ("uid", "string"),
    5: ("apiVersion", "string"),
    6: ("resourceVersion", "string"),
    7: ("fieldPath", "string"),
}
SERVICE_PORT: Schema = {
    1: ("name", "string"),
    2: ("protocol", "string"),
    3: ("port", "int32"),
    4: ("targetPort", "intorstring"),
    5: ("nodePort", "int32"),
    6: ("appProtocol", "string"),
}
SERVICE_SPEC: Schema = {
    1: ("ports", ("repeated", SERVICE_PORT)),
    2: ("selector", ("map", "string")),
    3: ("clusterIP", "string"),
    4: ("type", "string"),
    5: ("externalIPs", ("repeated", "string")),
    7: ("sessionAffinity", "string"),
    8: ("loadBalancerIP", "string"),
    9: ("loadBalancerSourceRanges", ("repeated", "string")),
    10: ("externalName", "string"),
    11: ("externalTrafficPolicy", "string"),
    12: ("healthCheckNodePort", "int32"),
    13: ("publishNotReadyAddresses", "bool"),
    18: ("clusterIPs", ("repeated", "string")),
    19: ("ipFamilies", ("repeated", "string")),
    20: ("allocateLoadBalancerNodePorts", "bool"),
    22: ("internalTrafficPolicy", "string"),
    23: ("ipFamilyPolicy", "string"),
}

KINDS: dict[tuple[str, str], Schema] = {
    ("v1", "ConfigMap"): {
        1: ("metadata", OBJECT_META),
        2: ("data", ("map", "string")),
        3: ("binaryData", ("map", "bytes")),
        4: ("immutable", "bool"),
    },
    ("v1", "Secret"): {
        1: ("metadata", OBJECT_META),
        2: ("data", ("map", "bytes")),
        3: ("type", "string"),
        4: ("stringData", ("map", "string")),
        5: ("immutable", "bool"),
    },
    ("v1", "Namespace"): {
        1: ("metadata", OBJECT_META),
        2: ("spec", {1: ("finalizers", ("repeated", "string"))}),
        3: ("status", {1: ("phase", "string")}),
    },
    ("v1", "ServiceAccount"): {
        1: ("metadata", OBJECT_META),
        2: ("secrets", ("repeated", OBJECT_REFERENCE)),
        3: ("imagePullSecrets", ("repeated", {1: ("name", "string")})),
        4: ("automountServiceAccountToken", "bool"),
    },
    ("v1", "Service"): {1: ("metadata", OBJECT_META), 2: ("spec", SERVICE_SPEC), 3: ("status", {})},
}


def _scalar(kind: str, wire: int, value: Any) -> Any:
    if kind == "string":
        return bytes(value).decode()
    if kind == "bytes":
        return base64.b64encode(bytes(value)).decode()
    if kind == "bool":
        return bool(value)
    if kind in ("int32", "int64"):
        # Negative values of both are sent as 64-bit two's complement varints.
        return _signed(value, 64)
    if kind == "time":
        t = decode_message(bytes(value), TIME)
        if not t.get("seconds"):
            return None
        return datetime.fromtimestamp(t["seconds"], UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if kind == "intorstring":
        ios = decode_message(
            bytes(value), {1: ("type", "int64"), 2: ("intVal", "int32"), 3: ("strVal", "string")}
        )
        return ios.get("strVal", "") if ios.get("type") == 1 else ios.get("intVal", 0)
    raise ProtobufError(f"unknown type {kind}")


def _value(kind: Any, wire: int, value: Any) -> Any:
    if isinstance(kind, dict):
        return decode_message(bytes(value), kind)
    return _scalar(kind, wire, value)


def decode_message(data: bytes, schema: Schema) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for num, wire, value in fields(data):
        spec = schema.get(num)
        if spec is None:
            continue
        name, kind = spec
        if isinstance(kind, tuple) and kind[0] == "repeated":
            out.setdefault(name, []).append(_value(kind[1], wire, value))
        elif isinstance(kind, tuple) and kind[0] == "map":
            entry = {n: v for n, _, v in fields(bytes(value))}
            key = bytes(entry.get(1, b"")).decode()
            out.setdefault(name, {})[key] = _scalar(kind[1], 2, entry.get(2, b""))
        else:
            decoded = _value(kind, wire, value)
            # Non-pointer Go fields are always encoded; JSON would omit their zero values.
            if (
                decoded is None
                or decoded == ""
                or decoded is False
                or (decoded == 0 and kind in ("int32", "int64"))
            ):
                continue
            out[name] = decoded
    return out


def decode_object(data: bytes) -> dict[str, Any]:
    """Decode an enveloped Kubernetes object; raises ProtobufError for what it cannot decode."""
    if not data.startswith(MAGIC):
        raise ProtobufError("missing the k8s protobuf prefix")
    unknown = {n: v for n, _, v in fields(data[len(MAGIC) :])}
    type_meta = {n: bytes(v).decode() for n, _, v in fields(bytes(unknown.get(1, b"")))}
    api_version, kind = type_meta.get(1, ""), type_meta.get(2, "")
    schema = KINDS.get((api_version, kind))
    if schema is None:
        raise ProtobufError(f"protobuf bodies of {api_version}/{kind} are not supported; send JSON")
    obj = decode_message(bytes(unknown.get(2, b"")), schema)
    return {"apiVersion": api_version, "kind": kind, **obj}
