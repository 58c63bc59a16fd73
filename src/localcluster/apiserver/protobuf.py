"""The local API server's one protobuf codec: Kubernetes objects between the JSON form the server
handles and `application/vnd.kubernetes.protobuf`, for every kind in the generated message tables
(`protobuf_messages.py`, from the v1.28 wire facts).

A body is the magic `k8s\\x00` and a `runtime.Unknown` (typeMeta {apiVersion, kind}, raw: the
object's message). `decode_object` answers the JSON object Go's apiserver would produce from it:
fields by JSON name, `inline` messages merged into their parent, the special types in their JSON
forms (`protobuf_special.py`), and a scalar field carrying its zero value dropped unless Go keeps
it (a pointer, or no `omitempty`: the KEEP_ZERO flag), since Go's generated Marshal writes every
non-pointer field. Unknown field numbers are skipped, as Go's Unmarshal skips them.
`encode_object` is the inverse, writing the fields the JSON has (absent and zero read the same).

Errors: `ProtobufError` for malformed bytes (truncation, wrong wire types, bad lengths, nesting
deeper than `MAX_DEPTH`, values of the wrong kind) — answered 400 — and `UnknownKindError`, a
subclass, for a typeMeta naming no message here (custom resources have no protobuf form).
"""

from __future__ import annotations

import functools
from typing import Any

from . import protobuf_special as special
from .protobuf_messages import (
    GROUP_VERSIONS,
    INLINE,
    KEEP_ZERO,
    KINDS,
    MESSAGES,
    META,
    RAW,
    REPEATED,
)
from .protowire import (
    BYTES,
    FIXED64,
    VARINT,
    WireError,
    double,
    fields,
    fixed64_double,
    key,
    length_delimited,
    packed_varints,
    signed,
    varint,
)

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
UNKNOWN = "k8s.io.apimachinery.pkg.runtime.Unknown"
MAX_DEPTH = 100

Obj = dict[str, Any]
Field = tuple[int, str, str, int]


class ProtobufError(WireError):
    """The body cannot be decoded (or the object encoded) as a Kubernetes protobuf message.
    `type_meta`: the (apiVersion, kind) the envelope named, once it could be read."""

    type_meta: tuple[str, str] | None = None


class UnknownKindError(ProtobufError):
    """The typeMeta names a kind without a protobuf message."""


def message_for(api_version: str, kind: str) -> str | None:
    """The full message name of a kind, or None; meta/v1 kinds (DeleteOptions, Status, ...) are
    found under any apiVersion, as every group version registers them."""
    package = GROUP_VERSIONS.get(api_version)
    if package is None or not kind:
        return None
    for name in (f"{package}.{kind}", f"{META}.{kind}"):
        if name in KINDS:
            return name
    return None


@functools.cache
def _by_number(message: str) -> dict[int, Field]:
    return {f[0]: f for f in MESSAGES[message]}


_WIRE = {"string": BYTES, "bytes": BYTES, "double": FIXED64}
_ZERO: tuple[Any, ...] = ("", 0, False, 0.0)


# -- decoding ---------------------------------------------------------------------------------


def decode_object(data: bytes) -> Obj:
    """The JSON object of an enveloped body; `ProtobufError` when it cannot be read."""
    try:
        return _decode_object(data)
    except ProtobufError:
        raise
    except WireError as err:
        raise ProtobufError(str(err)) from None


def _decode_object(data: bytes) -> Obj:
    if not data.startswith(MAGIC):
        raise ProtobufError(
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
        )
    envelope = decode_message(data[len(MAGIC) :], UNKNOWN)
    api_version, kind = envelope.get("apiVersion", ""), envelope.get("kind", "")
    if envelope.get("contentEncoding"):
        raise ProtobufError(f"content encoding {envelope['contentEncoding']!r} is not supported")
    message = message_for(api_version, kind)
    if message is None:
        unknown = UnknownKindError(f'no kind "{kind}" is registered for version "{api_version}"')
        unknown.type_meta = (api_version, kind)
        raise unknown
    try:
        obj = decode_message(envelope.get("", b""), message)
    except WireError as err:
        known = err if isinstance(err, ProtobufError) else ProtobufError(str(err))
        known.type_meta = (api_version, kind)
        raise known from None
    return {"apiVersion": api_version, "kind": kind, **obj}


def decode_message(data: bytes, message: str, depth: int = 0) -> Obj:
    """A message's fields by JSON name (RAW fields under "" as bytes: the special types read it)."""
    if depth > MAX_DEPTH:
        raise ProtobufError(f"the message nests deeper than {MAX_DEPTH} levels")
    try:
        parts = fields(data)
    except WireError as err:
        raise ProtobufError(f"{message.rpartition('.')[2]}: {err}") from None
    spec = _by_number(message)
    out: Obj = {}
    for num, wire, raw in parts:
        f = spec.get(num)
        if f is not None:
            _decode_field(out, f, wire, raw, depth, message)
    for _, name, typ, flags in MESSAGES[message]:
        # A Go time without omitempty is `null` in JSON when zero, however it came on the wire.
        if flags & KEEP_ZERO and typ in _TIMES and name not in out:
            out[name] = None
    return out


_TIMES = frozenset({special.TIME, special.MICRO_TIME})


def _decode_field(out: Obj, f: Field, wire: int, raw: int | bytes, depth: int, parent: str) -> None:
    _, name, typ, flags = f
    if flags & RAW:
        if wire != BYTES:
            raise ProtobufError(f"{parent.rpartition('.')[2]}: wire type {wire} for raw bytes")
        out[""] = raw
        return
    if flags & REPEATED:
        if wire == BYTES and typ in ("int32", "int64", "bool"):
            assert isinstance(raw, bytes)
            values = [_scalar(typ, VARINT, v, name) for v in packed_varints(raw)]
            out.setdefault(name, []).extend(values)
        else:
            item = _value(typ, wire, raw, depth, name)
            out.setdefault(name, []).append(None if item is special.ABSENT else item)
        return
    if typ.startswith("map:"):
        key_, value = _map_entry(typ[4:], wire, raw, depth, name)
        out.setdefault(name, {})[key_] = value
        return
    value = _value(typ, wire, raw, depth, name)
    if flags & INLINE:
        out.update(value)
    elif value is special.ABSENT or (value in _ZERO and not flags & KEEP_ZERO and typ in _SCALAR):
        out.pop(name, None)
    else:
        out[name] = value


_SCALAR = frozenset({"string", "bytes", "int32", "int64", "bool", "double", *special.SCALAR_LIKE})


def _value(typ: str, wire: int, raw: int | bytes, depth: int, name: str) -> Any:
    if typ in MESSAGES:
        if wire != BYTES:
            raise ProtobufError(f"{name}: wire type {wire} for a message")
        assert isinstance(raw, bytes)
        decoded = decode_message(raw, typ, depth + 1)
        return special.from_proto(typ, decoded, name)
    return _scalar(typ, wire, raw, name)


def _scalar(typ: str, wire: int, raw: int | bytes, name: str) -> Any:
    expected = _WIRE.get(typ, VARINT)
    if wire != expected:
        raise ProtobufError(f"{name}: wire type {wire} for a {typ}")
    if typ == "string":
        assert isinstance(raw, bytes)
        return raw.decode("utf-8", "replace")
    if typ == "bytes":
        assert isinstance(raw, bytes)
        return special.b64(raw)
    assert isinstance(raw, int)
    if typ == "bool":
        return raw != 0
    if typ == "int32":
        return signed(raw, 32)
    if typ == "double":
        value = double(raw)
        if value != value or value in (float("inf"), float("-inf")):
            raise ProtobufError(f"{name}: {value} has no JSON form")
        return value
    return signed(raw, 64)


def _map_entry(value_type: str, wire: int, raw: int | bytes, depth: int, name: str) -> Any:
    if wire != BYTES:
        raise ProtobufError(f"{name}: wire type {wire} for a map entry")
    assert isinstance(raw, bytes)
    try:
        parts = fields(raw)
    except WireError as err:
        raise ProtobufError(f"{name}: {err}") from None
    key_, value = "", None
    for num, w, v in parts:
        if num == 1:
            key_ = _scalar("string", w, v, name)
        elif num == 2:
            value = _value(value_type, w, v, depth, name)
    if value is None or value is special.ABSENT:
        value = _ZERO_JSON.get(value_type, {})
    return key_, value


_ZERO_JSON: dict[str, Any] = {"string": "", "bytes": "", special.QUANTITY: "0"}


# -- encoding ---------------------------------------------------------------------------------


def encode_object(obj: Obj) -> bytes:
    """The enveloped body of a JSON object; `UnknownKindError` for a kind without a message."""
    try:
        return _encode_object(obj)
    except ProtobufError:
        raise
    except WireError as err:
        raise ProtobufError(str(err)) from None


def _encode_object(obj: Obj) -> bytes:
    api_version, kind = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
    message = message_for(api_version, kind)
    if message is None:
        raise UnknownKindError(f"{api_version}/{kind} has no protobuf form")
    type_meta = length_delimited(1, api_version.encode()) + length_delimited(2, kind.encode())
    raw = encode_message(obj, message)
    return MAGIC + length_delimited(1, type_meta) + length_delimited(2, raw)


def encode_message(obj: Obj, message: str, depth: int = 0) -> bytes:
    if depth > MAX_DEPTH:
        raise ProtobufError(f"the object nests deeper than {MAX_DEPTH} levels")
    if not isinstance(obj, dict):
        raise ProtobufError(f"{message.rpartition('.')[2]}: expected an object")
    out = bytearray()
    for num, name, typ, flags in MESSAGES[message]:
        if flags & RAW:
            raise ProtobufError(f"{message}: raw bytes are written by the special types")
        if flags & INLINE:
            out += length_delimited(num, encode_message(obj, typ, depth + 1))
            continue
        value = obj.get(name)
        if value is None:
            continue
        if flags & REPEATED:
            if not isinstance(value, list):
                raise ProtobufError(f"{name}: expected a list")
            for item in value:
                out += _encode_value(num, typ, item, depth, name)
        elif typ.startswith("map:"):
            if not isinstance(value, dict):
                raise ProtobufError(f"{name}: expected an object")
            for k in sorted(value):
                entry = length_delimited(1, str(k).encode())
                if value[k] is not None:
                    entry += _encode_value(2, typ[4:], value[k], depth, name)
                out += length_delimited(num, entry)
        else:
            out += _encode_value(num, typ, value, depth, name)
    return bytes(out)


def _encode_value(num: int, typ: str, value: Any, depth: int, name: str) -> bytes:
    if typ in MESSAGES:
        if typ in special.TYPES:
            body = special.to_proto(typ, value, name, lambda v, m: encode_message(v, m, depth + 1))
            return length_delimited(num, body)
        return length_delimited(num, encode_message(value, typ, depth + 1))
    if typ == "string":
        if not isinstance(value, str):
            raise ProtobufError(f"{name}: expected a string")
        return length_delimited(num, value.encode())
    if typ == "bytes":
        return length_delimited(num, special.unb64(value, name))
    if typ == "double":
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise ProtobufError(f"{name}: expected a number")
        return fixed64_double(num, float(value))
    if typ == "bool":
        if not isinstance(value, bool):
            raise ProtobufError(f"{name}: expected a boolean")
        return key(num, VARINT) + varint(int(value))
    if not isinstance(value, int) or isinstance(value, bool):
        raise ProtobufError(f"{name}: expected an integer")
    return key(num, VARINT) + varint(value)
