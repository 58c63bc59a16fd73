"""HTTP/2 framing (RFC 9113 §4, §6): frame types, flags, error codes, settings and windows;
`frame()` writes one frame, `header_frames()` a header block in as many as the peer's frame size
needs, `unpad()` strips a payload's padding; `ProtocolError` is a connection error."""

from __future__ import annotations

import struct

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

# frame types
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY = range(8)
WINDOW_UPDATE, CONTINUATION = 8, 9
# flags
END_STREAM = ACK = 0x1
END_HEADERS, PADDED, PRIORITY_FLAG = 0x4, 0x8, 0x20
# error codes
NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR = 0x0, 0x1, 0x2, 0x3
STREAM_CLOSED, FRAME_SIZE_ERROR, REFUSED_STREAM, CANCEL = 0x5, 0x6, 0x7, 0x8
COMPRESSION_ERROR, ENHANCE_YOUR_CALM = 0x9, 0xB
# settings
SETTINGS_HEADER_TABLE_SIZE, SETTINGS_ENABLE_PUSH, SETTINGS_MAX_CONCURRENT_STREAMS = 0x1, 0x2, 0x3
SETTINGS_INITIAL_WINDOW_SIZE, SETTINGS_MAX_FRAME_SIZE, SETTINGS_MAX_HEADER_LIST_SIZE = 0x4, 0x5, 0x6

DEFAULT_WINDOW = 65_535
MAX_WINDOW = 2**31 - 1
MIN_FRAME_SIZE, MAX_FRAME_SIZE = 16_384, 2**24 - 1
MAX_CONCURRENT_STREAMS = 1000
MAX_HEADER_BLOCK = 64 * 1024
MAX_HEADER_LIST = 64 * 1024
"""Bytes a request's decoded headers may take (RFC 7541 sizes), advertised in our SETTINGS."""
OUR_SETTINGS = struct.pack(
    ">HIHI",
    SETTINGS_MAX_CONCURRENT_STREAMS,
    MAX_CONCURRENT_STREAMS,
    SETTINGS_MAX_HEADER_LIST_SIZE,
    MAX_HEADER_LIST,
)
# Window given back once this much of it was used (the connection's and each stream's).
WINDOW_REFILL = DEFAULT_WINDOW // 4
MAX_PING_STRIKES = 2

FRAME_HEAD = struct.Struct(">IBI")  # length << 8 | type, flags, stream id


def frame(kind: int, flags: int, stream_id: int, payload: bytes = b"") -> bytes:
    return FRAME_HEAD.pack(len(payload) << 8 | kind, flags, stream_id) + payload


class ProtocolError(Exception):
    """A connection error of RFC 9113: the connection ends with GOAWAY and `code`."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def unpad(flags: int, payload: bytes) -> bytes:
    """A DATA or HEADERS payload without its padding."""
    if not flags & PADDED:
        return payload
    if not payload or payload[0] >= len(payload):
        raise ProtocolError(PROTOCOL_ERROR, "padding longer than the frame")
    return payload[1 : len(payload) - payload[0]]


def header_frames(stream_id: int, block: bytes, flags: int, max_frame: int) -> list[bytes]:
    """A header block as HEADERS and as many CONTINUATION frames as `max_frame` needs."""
    if len(block) <= max_frame:
        return [frame(HEADERS, flags, stream_id, block)]
    frames = [frame(HEADERS, flags & END_STREAM, stream_id, block[:max_frame])]
    for start in range(max_frame, len(block), max_frame):
        last = start + max_frame >= len(block)
        chunk = block[start : start + max_frame]
        frames.append(frame(CONTINUATION, END_HEADERS if last else 0, stream_id, chunk))
    return frames
