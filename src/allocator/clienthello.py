"""The ALPN protocols a TLS ClientHello offers, read from the connection's first bytes before any
TLS is done (pure).

`offered_alpn(data)` takes the bytes a client sent first: `None` while they are not yet one whole
TLS record (read more), `()` when they are not a ClientHello or it has no ALPN extension, else the
protocol names in the client's order. Only the first record is read (a ClientHello split over
several records, or cut short, reads as `()`): the caller then falls back to terminating TLS
itself, so a wrong `()` costs speed, never a wrong route.

Layout (RFC 8446 §4.1.2, RFC 7301): record header (type 22, version, length), handshake header
(type 1, 24-bit length), version, 32-byte random, session id, cipher suites, compression methods,
then extensions; ALPN is extension 16, a 16-bit-length list of 8-bit-length names.
"""

from __future__ import annotations

RECORD_HANDSHAKE = 22
HANDSHAKE_CLIENT_HELLO = 1
EXTENSION_ALPN = 16
RECORD_HEADER = 5


class _Reader:
    """Bounds-checked reads from one buffer; running past its end raises IndexError."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, n: int) -> bytes:
        if self.at + n > len(self.data):
            raise IndexError("past the end")
        chunk = self.data[self.at : self.at + n]
        self.at += n
        return chunk

    def number(self, width: int) -> int:
        return int.from_bytes(self.take(width), "big")

    def vector(self, width: int) -> bytes:
        return self.take(self.number(width))


def record_length(data: bytes) -> int | None:
    """The length of the first TLS record (header included), None while the header is short."""
    if len(data) < RECORD_HEADER:
        return None
    return RECORD_HEADER + int.from_bytes(data[3:5], "big")


def _alpn_names(body: bytes) -> tuple[str, ...]:
    names = _Reader(_Reader(body).vector(2))
    out = []
    while names.at < len(names.data):
        out.append(names.vector(1).decode("ascii", errors="replace"))
    return tuple(out)


def _extensions(hello: _Reader) -> dict[int, bytes]:
    hello.take(2 + 32)  # legacy version, random
    hello.vector(1)  # session id
    hello.vector(2)  # cipher suites
    hello.vector(1)  # compression methods
    if hello.at == len(hello.data):
        return {}
    block = _Reader(hello.vector(2))
    found: dict[int, bytes] = {}
    while block.at < len(block.data):
        kind = block.number(2)
        found[kind] = block.vector(2)
    return found


def offered_alpn(data: bytes) -> tuple[str, ...] | None:
    """See the module docstring."""
    if data and data[0] != RECORD_HANDSHAKE:
        return ()
    length = record_length(data)
    if length is None or len(data) < length:
        return None
    try:
        handshake = _Reader(data[RECORD_HEADER:length])
        if handshake.number(1) != HANDSHAKE_CLIENT_HELLO:
            return ()
        hello = _Reader(handshake.vector(3))
        alpn = _extensions(hello).get(EXTENSION_ALPN)
        return _alpn_names(alpn) if alpn is not None else ()
    except (IndexError, UnicodeDecodeError):
        return ()
