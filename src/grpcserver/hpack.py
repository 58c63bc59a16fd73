"""HPACK (RFC 7541), as much as a gRPC server needs: a full `Decoder` for the header blocks clients
send (static and dynamic table, table size updates, Huffman strings), and `encode`, which writes a
server's few answer headers as literals that touch no table (so the client's dynamic table is
never used and nothing has to be tracked for it).

A malformed block raises `HPACKError`; the connection must then end with COMPRESSION_ERROR, since
the two tables can no longer agree.
"""

from __future__ import annotations

from collections import deque


class HPACKError(ValueError):
    """A header block that cannot be decoded."""


STATIC_TABLE: tuple[tuple[bytes, bytes], ...] = tuple(
    (name.encode(), value.encode())
    for name, value in (
        (":authority", ""),
        (":method", "GET"),
        (":method", "POST"),
        (":path", "/"),
        (":path", "/index.html"),
        (":scheme", "http"),
        (":scheme", "https"),
        (":status", "200"),
        (":status", "204"),
        (":status", "206"),
        (":status", "304"),
        (":status", "400"),
        (":status", "404"),
        (":status", "500"),
        ("accept-charset", ""),
        ("accept-encoding", "gzip, deflate"),
        ("accept-language", ""),
        ("accept-ranges", ""),
        ("accept", ""),
        ("access-control-allow-origin", ""),
        ("age", ""),
        ("allow", ""),
        ("authorization", ""),
        ("cache-control", ""),
        ("content-disposition", ""),
        ("content-encoding", ""),
        ("content-language", ""),
        ("content-length", ""),
        ("content-location", ""),
        ("content-range", ""),
        ("content-type", ""),
        ("cookie", ""),
        ("date", ""),
        ("etag", ""),
        ("expect", ""),
        ("expires", ""),
        ("from", ""),
        ("host", ""),
        ("if-match", ""),
        ("if-modified-since", ""),
        ("if-none-match", ""),
        ("if-range", ""),
        ("if-unmodified-since", ""),
        ("last-modified", ""),
        ("link", ""),
        ("location", ""),
        ("max-forwards", ""),
        ("proxy-authenticate", ""),
        ("proxy-authorization", ""),
        ("range", ""),
        ("referer", ""),
        ("refresh", ""),
        ("retry-after", ""),
        ("server", ""),
        ("set-cookie", ""),
        ("strict-transport-security", ""),
        ("transfer-encoding", ""),
        ("user-agent", ""),
        ("vary", ""),
        ("via", ""),
        ("www-authenticate", ""),
    )
)
ENTRY_OVERHEAD = 32
DEFAULT_TABLE_SIZE = 4096

# The code length of each of the 257 symbols (256 octets, then EOS), in base 36: RFC 7541
# Appendix B's code is canonical, so the lengths alone give every code.
_CODE_LENGTHS = (
    "dnsssssssoussussssssssusssssssss6aacd68baa8b8666555666666678f6cad67777777777777777777777878djde"
    "6f56565666577666567655677777fbedskmkkmmmnmnnnnnonoomnonnnnlmnmnnomlkmmnnlnmmolmnnllmlnmnnkmmm"
    "nmmnqqkjmnmpqqqrrqopjlqrrqrollqqsrrrkoklmllnmmppooqnqrqqrrrrrsrrrrrqu"
)
EOS = 256


def huffman_codes() -> list[tuple[int, int]]:
    """(code, bit length) of every symbol, rebuilt canonically from the lengths."""
    lengths = [int(c, 36) for c in _CODE_LENGTHS]
    codes = [(0, 0)] * len(lengths)
    code, previous = -1, 0
    for symbol in sorted(range(len(lengths)), key=lambda s: (lengths[s], s)):
        code = (code + 1) << (lengths[symbol] - previous)
        previous = lengths[symbol]
        codes[symbol] = (code, previous)
    return codes


def _build_nibble_machine() -> tuple[list[int], list[int], list[bool]]:
    """The Huffman decoder as a machine reading four bits at a time: for state s and nibble n,
    `moves[s*16+n]` is the next state (-1: the bits spell EOS, an error), `emits[s*16+n]` the
    octet decoded on the way (-1: none; a code is at least 5 bits, so there is at most one), and
    `ends[s]` whether a string may end in state s (its pending bits are at most 7 ones, a prefix
    of EOS, as padding must be)."""
    children: list[list[int]] = [[-1, -1]]  # internal nodes; a child >= 0 is a node, < 0 a leaf
    for symbol, (code, length) in enumerate(huffman_codes()):
        node = 0
        for shift in range(length - 1, 0, -1):
            bit = (code >> shift) & 1
            if children[node][bit] == -1:
                children.append([-1, -1])
                children[node][bit] = len(children) - 1
            node = children[node][bit]
        children[node][code & 1] = -2 - symbol
    ones_depth = {0: 0}
    node, depth = 0, 0
    while depth < 7 and children[node][1] >= 0:
        node, depth = children[node][1], depth + 1
        ones_depth[node] = depth
    moves, emits = [0] * (len(children) * 16), [-1] * (len(children) * 16)
    for state in range(len(children)):
        for nibble in range(16):
            node, emitted = state, -1
            for shift in (3, 2, 1, 0):
                child = children[node][(nibble >> shift) & 1]
                if child >= 0:
                    node = child
                elif -2 - child == EOS:
                    node = -1
                    break
                else:
                    emitted, node = -2 - child, 0
            moves[state * 16 + nibble] = node
            emits[state * 16 + nibble] = emitted
    return moves, emits, [state in ones_depth for state in range(len(children))]


_MOVES, _EMITS, _ENDS = _build_nibble_machine()


def huffman_decode(data: bytes) -> bytes:
    out = bytearray()
    state = 0
    for octet in data:
        state = _step(state * 16 + (octet >> 4), out)
        state = _step(state * 16 + (octet & 15), out)
    if not _ENDS[state]:
        raise HPACKError("invalid Huffman padding")
    return bytes(out)


def _step(index: int, out: bytearray) -> int:
    emitted = _EMITS[index]
    if emitted >= 0:
        out.append(emitted)
    state = _MOVES[index]
    if state < 0:
        raise HPACKError("Huffman string contains EOS")
    return state


def _integer(data: bytes, pos: int, prefix_bits: int) -> tuple[int, int]:
    """An integer with a `prefix_bits` prefix at `pos`: (value, position after it)."""
    mask = (1 << prefix_bits) - 1
    value = data[pos] & mask
    pos += 1
    if value < mask:
        return value, pos
    shift = 0
    while True:
        if pos >= len(data):
            raise HPACKError("truncated integer")
        octet = data[pos]
        pos += 1
        value += (octet & 0x7F) << shift
        shift += 7
        if not octet & 0x80:
            return value, pos
        if shift > 28:
            raise HPACKError("integer too large")


class Decoder:
    """One connection's HPACK decoding context (the client's encoder writes into its table)."""

    def __init__(
        self,
        max_table_size: int = DEFAULT_TABLE_SIZE,
        max_string: int = 64 * 1024,
        max_header_list: int = 64 * 1024,
    ):
        self.max_allowed = max_table_size
        self.max_size = max_table_size
        self.max_string = max_string
        self.max_header_list = max_header_list
        """Bytes a decoded block may take (RFC 7541's size of each field counted): one-byte
        references to a large table entry must not expand a small block into megabytes."""
        self.size = 0
        self.dynamic: deque[tuple[bytes, bytes]] = deque()

    def _entry(self, index: int) -> tuple[bytes, bytes]:
        if index <= 0:
            raise HPACKError("header index 0")
        if index <= len(STATIC_TABLE):
            return STATIC_TABLE[index - 1]
        index -= len(STATIC_TABLE) + 1
        if index >= len(self.dynamic):
            raise HPACKError(f"header index {index + len(STATIC_TABLE) + 1} out of range")
        return self.dynamic[index]

    def _string(self, data: bytes, pos: int) -> tuple[bytes, int]:
        if pos >= len(data):
            raise HPACKError("truncated string")
        huffman = data[pos] & 0x80
        length, pos = _integer(data, pos, 7)
        if length > self.max_string:
            raise HPACKError("string too long")
        end = pos + length
        if end > len(data):
            raise HPACKError("truncated string")
        raw = data[pos:end]
        return (huffman_decode(raw) if huffman else raw), end

    def _add(self, name: bytes, value: bytes) -> None:
        self.dynamic.appendleft((name, value))
        self.size += len(name) + len(value) + ENTRY_OVERHEAD
        self._evict()

    def _evict(self) -> None:
        while self.size > self.max_size:
            name, value = self.dynamic.pop()
            self.size -= len(name) + len(value) + ENTRY_OVERHEAD

    def decode(self, data: bytes) -> list[tuple[bytes, bytes]]:
        headers: list[tuple[bytes, bytes]] = []
        pos, end = 0, len(data)
        budget = self.max_header_list
        while pos < end:
            octet = data[pos]
            if octet & 0x80:  # indexed field
                index, pos = _integer(data, pos, 7)
                field = self._entry(index)
                budget -= len(field[0]) + len(field[1]) + ENTRY_OVERHEAD
                if budget < 0:
                    raise HPACKError("header list too large")
                headers.append(field)
                continue
            if octet & 0x40:  # literal, added to the table
                index, pos = _integer(data, pos, 6)
                indexed = True
            elif octet & 0x20:  # table size update
                size, pos = _integer(data, pos, 5)
                if size > self.max_allowed:
                    raise HPACKError(f"table size {size} above {self.max_allowed}")
                self.max_size = size
                self._evict()
                continue
            else:  # literal without indexing (0000) or never indexed (0001)
                index, pos = _integer(data, pos, 4)
                indexed = False
            if index:
                name = self._entry(index)[0]
            else:
                name, pos = self._string(data, pos)
            value, pos = self._string(data, pos)
            if indexed:
                self._add(name, value)
            budget -= len(name) + len(value) + ENTRY_OVERHEAD
            if budget < 0:
                raise HPACKError("header list too large")
            headers.append((name, value))
        return headers


def _encode_integer(value: int, prefix_bits: int, first: int) -> bytes:
    mask = (1 << prefix_bits) - 1
    if value < mask:
        return bytes([first | value])
    out = bytearray([first | mask])
    value -= mask
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode(headers: list[tuple[bytes, bytes]]) -> bytes:
    """A header block of literals without indexing (plain strings), `:status 200` as its static
    entry."""
    out = bytearray()
    for name, value in headers:
        if name == b":status" and value == b"200":
            out.append(0x88)
            continue
        out.append(0x00)
        out += _encode_integer(len(name), 7, 0) + name
        out += _encode_integer(len(value), 7, 0) + value
    return bytes(out)
