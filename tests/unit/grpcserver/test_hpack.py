"""HPACK: RFC 7541's own examples, Huffman strings both ways, and any bytes as a header block."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.grpcserver.hpack import Decoder, HPACKError, encode, huffman_codes, huffman_decode
from tests.fuzzing import assert_enough, count, examples

SURFACE = "gRPC server (HTTP/2 and HPACK)"


def huffman_encode(data: bytes) -> bytes:
    """The encoder the decoder is checked against (padding: the high bits of EOS, all ones)."""
    codes = huffman_codes()
    value, bits = 0, 0
    for octet in data:
        code, length = codes[octet]
        value, bits = (value << length) | code, bits + length
    pad = -bits % 8
    value, bits = (value << pad) | ((1 << pad) - 1), bits + pad
    return value.to_bytes(bits // 8, "big")


# RFC 7541 Appendix C.4: three requests on one connection, Huffman-coded, with the dynamic table.
RFC_C4 = [
    (
        "828684418cf1e3c2e5f23a6ba0ab90f4ff",
        [
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
        ],
    ),
    (
        "828684be5886a8eb10649cbf",
        [
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
            ("cache-control", "no-cache"),
        ],
    ),
    (
        "828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf",
        [
            (":method", "GET"),
            (":scheme", "https"),
            (":path", "/index.html"),
            (":authority", "www.example.com"),
            ("custom-key", "custom-value"),
        ],
    ),
]


def test_rfc_7541_c4_requests_with_huffman_and_the_dynamic_table() -> None:
    decoder = Decoder()
    for block, headers in RFC_C4:
        decoded = decoder.decode(bytes.fromhex(block))
        assert [(n.decode(), v.decode()) for n, v in decoded] == headers
    # Table after C.4.3 (RFC: 164 octets): custom-key, cache-control, :authority.
    assert decoder.size == 164
    assert [n for n, _ in decoder.dynamic] == [b"custom-key", b"cache-control", b":authority"]


@pytest.mark.parametrize(
    ("block", "error"),
    [
        ("80", "index 0"),  # indexed field 0
        ("be", "out of range"),  # dynamic index on an empty table
        ("3fe21f", "table size"),  # size update to 4096 + 1
        ("0f", "truncated"),  # literal cut after its first octet
        ("4003616263", "truncated"),  # literal name, value missing
        ("ff" + "ff" * 6, "integer"),  # integer that never ends
        ("0081ff", "padding"),  # a Huffman name of eight 1 bits: padding is at most 7
        ("0084ffffffff", "EOS"),  # thirty 1 bits and more: EOS inside a string
    ],
)
def test_malformed_blocks_raise(block: str, error: str) -> None:
    with pytest.raises(HPACKError, match=error):
        Decoder().decode(bytes.fromhex(block))


def test_references_cannot_expand_a_block_past_the_header_list_limit() -> None:
    big = b"\x40\x01x\x7f\xa1\x1e" + b"v" * 4000  # x: 4000 bytes, added to the table
    decoder = Decoder()
    assert decoder.decode(big) == [(b"x", b"v" * 4000)]
    with pytest.raises(HPACKError, match="too large"):
        decoder.decode(b"\xbe" * 100)  # 100 references to it: 400 kB from 100 bytes


def test_table_size_update_evicts() -> None:
    decoder = Decoder()
    decoder.decode(bytes.fromhex(RFC_C4[0][0]))
    assert decoder.size > 0
    decoder.decode(b"\x20")  # size update to 0
    assert decoder.size == 0 and not decoder.dynamic


def test_encode_is_read_back_and_leaves_the_table_alone() -> None:
    headers = [(b":status", b"200"), (b"content-type", b"application/grpc"), (b"x" * 200, b"y")]
    decoder = Decoder()
    assert decoder.decode(encode(headers)) == headers
    assert decoder.size == 0


@settings(max_examples=examples(2000))
@given(st.binary(max_size=64))
def test_huffman_round_trip(data: bytes) -> None:
    assert huffman_decode(huffman_encode(data)) == data


@settings(max_examples=examples(10_000))
@given(st.binary(max_size=80))
def test_any_bytes_decode_or_raise_hpack_error(data: bytes) -> None:
    count(SURFACE)
    decoder = Decoder()
    try:
        headers = decoder.decode(data)
    except HPACKError:
        return
    assert all(isinstance(n, bytes) and isinstance(v, bytes) for n, v in headers)
    assert decoder.size <= decoder.max_size


def test_enough_malformed_header_blocks_were_sent() -> None:
    assert_enough(SURFACE)
