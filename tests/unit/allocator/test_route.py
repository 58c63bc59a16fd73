"""`mux.route_of`: the route of a connection from its ALPN and first bytes (tables and properties)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agones.allocator.mux import H2_PREFACE, Route, route_of

BOTH = frozenset({Route.GRPC, Route.REST})


@pytest.mark.parametrize(
    ("routes", "alpn", "first", "ended", "expected"),
    [
        (BOTH, "h2", b"", False, Route.GRPC),
        (BOTH, "http/1.1", b"", False, Route.REST),
        (BOTH, None, H2_PREFACE + b"\x00\x00", False, Route.GRPC),
        (BOTH, None, H2_PREFACE[:10], False, None),
        (BOTH, None, H2_PREFACE[:10], True, Route.REST),
        (BOTH, None, b"", False, None),
        (BOTH, None, b"POST /gameserverallocation HTTP/1.1\r\n", False, Route.REST),
        (frozenset({Route.REST}), None, b"", False, Route.REST),
        (frozenset({Route.GRPC}), "http/1.1", b"", False, Route.GRPC),
    ],
    ids=[
        "alpn-h2",
        "alpn-http11",
        "preface",
        "preface-so-far",
        "preface-cut-short",
        "nothing-yet",
        "http1-request",
        "rest-only-port",
        "grpc-only-port",
    ],
)
def test_route_of(routes, alpn, first, ended, expected) -> None:
    assert route_of(routes, alpn, first, ended) == expected


@given(first=st.binary(max_size=64), ended=st.booleans())
def test_any_bytes_get_one_route_or_wait_for_more(first: bytes, ended: bool) -> None:
    route = route_of(BOTH, None, first, ended)
    if first.startswith(H2_PREFACE):
        assert route == Route.GRPC
    elif H2_PREFACE.startswith(first) and not ended:
        assert route is None
    else:
        assert route == Route.REST


@given(alpn=st.text(max_size=20), first=st.binary(max_size=64), ended=st.booleans())
def test_a_negotiated_protocol_decides_at_once(alpn: str, first: bytes, ended: bool) -> None:
    expected = Route.GRPC if alpn == "h2" else Route.REST
    assert route_of(BOTH, alpn, first, ended) == expected
