"""`offered_alpn`: the ALPN list of real ClientHellos (made by Python's ssl), and any bytes."""

from __future__ import annotations

import ssl

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agones.allocator.clienthello import offered_alpn


def client_hello(alpn: list[str] | None) -> bytes:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    if alpn:
        context.set_alpn_protocols(alpn)
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


@pytest.mark.parametrize(
    ("alpn", "offered"),
    [
        (["h2"], ("h2",)),
        (["h2", "http/1.1"], ("h2", "http/1.1")),
        (["http/1.1", "h2"], ("http/1.1", "h2")),
        (None, ()),
    ],
    ids=["grpc", "h2-first", "http11-first", "no-alpn"],
)
def test_offered_alpn_of_a_client_hello(alpn: list[str] | None, offered: tuple[str, ...]) -> None:
    assert offered_alpn(client_hello(alpn)) == offered


@pytest.mark.parametrize("cut", [0, 3, 5, 100, -1], ids=["empty", "3", "header", "100", "all-1"])
def test_a_partial_record_asks_for_more(cut: int) -> None:
    hello = client_hello(["h2"])
    assert offered_alpn(hello[:cut]) is None


@pytest.mark.parametrize(
    "data",
    [b"GET / HTTP/1.1\r\n\r\n", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", b"\x16\x03\x01\x00\x01\x02"],
    ids=["http11", "h2-preface", "not-a-client-hello"],
)
def test_other_bytes_offer_nothing(data: bytes) -> None:
    assert offered_alpn(data) == ()


@given(st.binary(max_size=600))
def test_any_bytes_give_an_answer(data: bytes) -> None:
    answer = offered_alpn(data)
    assert answer is None or isinstance(answer, tuple)


@given(st.binary(min_size=1, max_size=64), st.integers(min_value=9, max_value=400))
def test_a_mangled_client_hello_never_raises(noise: bytes, at: int) -> None:
    hello = client_hello(["h2"])
    mangled = hello[:at] + noise + hello[at + len(noise) :]
    answer = offered_alpn(mangled)
    assert answer is None or all(isinstance(name, str) for name in answer)
