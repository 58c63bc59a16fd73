"""The protobuf wire format, as far as Kubernetes' proto2 messages use it: varints, 64-bit and 32-bit
fixed values, and length-delimited fields (strings, bytes, messages, map entries, packed lists).

`fields(data)` splits a message into (number, wire type, value) and raises `WireError` for anything
malformed: a truncated varint or field, a varint longer than ten bytes, a length past the end, a
field number of 0, or the deprecated group wire types 3 and 4. The writers are the inverse:
`key`, `varint` and `length_delimited` build what `fields` reads.
"""

from __future__ import annotations

import struct

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5
_MAX_VARINT_BYTES = 10
_MASK64 = (1 << 64) - 1


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message."""


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The unsigned varint at `pos` and the position after it."""
    result = shift = 0
    for i in range(_MAX_VARINT_BYTES):
        if pos + i >= len(data):
            raise WireError("unexpected EOF in a varint")
        b = data[pos + i]
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result & _MASK64, pos + i + 1
        shift += 7
    raise WireError("varint overflows 64 bits")


def fields(data: bytes) -> list[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) of each field in order; varints and fixed values as
    unsigned ints, length-delimited values as bytes."""
    out: list[tuple[int, int, int | bytes]] = []
    pos, end = 0, len(data)
    while pos < end:
        key, pos = read_varint(data, pos)
        num, wire = key >> 3, key & 7
        if num == 0:
            raise WireError("illegal field number 0")
        value: int | bytes
        if wire == VARINT:
            value, pos = read_varint(data, pos)
        elif wire == BYTES:
            length, pos = read_varint(data, pos)
            if length > end - pos:
                raise WireError(f"field {num}: length {length} runs past the end of the message")
            value = data[pos : pos + length]
            pos += length
        elif wire in (FIXED64, FIXED32):
            size = 8 if wire == FIXED64 else 4
            if pos + size > end:
                raise WireError(f"field {num}: unexpected EOF in a fixed-size value")
            value = int.from_bytes(data[pos : pos + size], "little")
            pos += size
        else:
            raise WireError(f"field {num}: illegal wire type {wire}")
        out.append((num, wire, value))
    return out


def packed_varints(data: bytes) -> list[int]:
    """The varints of a packed repeated field."""
    out, pos = [], 0
    while pos < len(data):
        value, pos = read_varint(data, pos)
        out.append(value)
    return out


def signed(value: int, bits: int = 64) -> int:
    """A varint's two's-complement value (Go's int32(x) or int64(x) of the decoded uint64)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def double(value: int) -> float:
    result: float = struct.unpack("<d", value.to_bytes(8, "little"))[0]
    return result


def varint(value: int) -> bytes:
    """The varint of `value`; negative numbers as their 64-bit two's complement (ten bytes)."""
    value &= _MASK64
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def key(num: int, wire: int) -> bytes:
    return varint(num << 3 | wire)


def length_delimited(num: int, payload: bytes) -> bytes:
    return key(num, BYTES) + varint(len(payload)) + payload


def fixed64_double(num: int, value: float) -> bytes:
    return key(num, FIXED64) + struct.pack("<d", value)
