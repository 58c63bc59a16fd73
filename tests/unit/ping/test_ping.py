"""The ping service: UDP echo rules on fake time, both servers over loopback, the command."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from typing import Any

import aiohttp
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agones.clock import FakeClock
from agones.ping import PingServer, PingSettings, UDPEchoServer
from agones.ping.udp import MAX_DATAGRAM, VISITOR_TTL

A = ("127.0.0.1", 40000)
B = ("127.0.0.1", 40001)


@pytest.mark.parametrize(
    ("data", "want"),
    [
        pytest.param(b"hello", b"hello", id="echo"),
        pytest.param(b"hi\x00\x00\x00", b"hi", id="trailing-nuls-trimmed"),
        pytest.param(b"\x00a\x00b", b"\x00a\x00b", id="inner-nuls-kept"),
        pytest.param(b"x" * 5000, b"x" * MAX_DATAGRAM, id="only-1024-bytes-read"),
        pytest.param(b"", b"", id="empty"),
    ],
)
def test_echo_body(data: bytes, want: bytes) -> None:
    assert UDPEchoServer(20, FakeClock()).answer(data, A) == want


def test_per_sender_burst_then_rate() -> None:
    clock = FakeClock()
    udp = UDPEchoServer(2.5, clock)  # burst floor(2.5) = 2
    assert [udp.answer(b"p", A) for _ in range(3)] == [b"p", b"p", None]
    assert udp.answer(b"p", B) == b"p"  # another sender has its own bucket
    clock.step(0.4)  # 0.4 s * 2.5/s = one token
    assert [udp.answer(b"p", A) for _ in range(2)] == [b"p", None]


@pytest.mark.parametrize("rate", [0, 0.5], ids=["zero", "below-one-burst-zero"])
def test_rate_below_one_never_answers(rate: float) -> None:
    assert UDPEchoServer(rate, FakeClock()).answer(b"p", A) is None


def test_negative_rate_is_refused() -> None:
    with pytest.raises(ValueError, match="greater that or equal to zero"):
        UDPEchoServer(-1)


def test_silent_senders_are_forgotten() -> None:
    clock = FakeClock()
    udp = UDPEchoServer(20, clock)
    udp.answer(b"p", A)
    clock.step(VISITOR_TTL / 2)
    udp.answer(b"p", B)
    clock.step(VISITOR_TTL / 2 + 1)
    udp.clean_up()
    assert list(udp.visitors) == [B]


async def udp_roundtrip(port: int, payloads: list[bytes], timeout: float = 0.5) -> list[bytes]:
    """Send each payload from one socket; collect what comes back until `timeout` of silence."""
    loop = asyncio.get_running_loop()
    got: asyncio.Queue[bytes] = asyncio.Queue()

    class Client(asyncio.DatagramProtocol):
        def datagram_received(self, data: bytes, addr: Any) -> None:
            got.put_nowait(data)

    transport, _ = await loop.create_datagram_endpoint(
        Client, remote_addr=("127.0.0.1", port), family=socket.AF_INET
    )
    try:
        for payload in payloads:
            transport.sendto(payload)
        answers = []
        while True:
            try:
                answers.append(await asyncio.wait_for(got.get(), timeout))
            except TimeoutError:
                return answers
    finally:
        transport.close()


async def started(**kw: Any) -> PingServer:
    server = PingServer(PingSettings(address="127.0.0.1", http_port=0, udp_port=0, **kw))
    await server.start()
    return server


async def test_http_answers_every_path_and_live() -> None:
    server = await started(http_response="cluster-a")
    try:
        async with aiohttp.ClientSession() as http:
            base = f"http://127.0.0.1:{server.http_port}"
            for method, path in [("GET", "/"), ("POST", "/anything/at/all"), ("PUT", "/x?y=z")]:
                async with http.request(method, base + path) as resp:
                    assert (resp.status, await resp.text()) == (200, "cluster-a")
            async with http.get(base + "/live") as resp:
                assert resp.status == 200
            server.udp.close()
            await asyncio.sleep(0)  # let the transport report itself closed
            async with http.get(base + "/live") as resp:
                assert resp.status == 503
    finally:
        await server.stop()


async def test_udp_echo_over_loopback_is_rate_limited() -> None:
    server = await started(udp_rate_limit=3)
    try:
        answers = await udp_roundtrip(server.udp_port, [b"ping\x00\x00"] * 5)
        assert answers == [b"ping"] * 3  # burst 3, the rest dropped within the same instant
    finally:
        await server.stop()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.binary(max_size=3000), min_size=1, max_size=20))
def test_malformed_datagrams_never_break_the_echo(payloads: list[bytes]) -> None:
    udp = UDPEchoServer(1000, FakeClock())
    for i, payload in enumerate(payloads):
        reply = udp.answer(payload, ("127.0.0.1", 50000 + i % 3))
        assert reply == payload[:MAX_DATAGRAM].rstrip(b"\x00")


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"]),
    path=st.text(
        alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="#?%"),
        max_size=200,
    ),
    body=st.binary(max_size=2000),
)
def test_malformed_http_requests_never_5xx(method: str, path: str, body: bytes) -> None:
    async def go() -> int:
        server = await started()
        try:
            async with (
                aiohttp.ClientSession() as http,
                http.request(
                    method, f"http://127.0.0.1:{server.http_port}/{path}", data=body
                ) as resp,
            ):
                return resp.status
        finally:
            await server.stop()

    assert asyncio.run(go()) < 500


def free_port(kind: int) -> int:
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_command_serves_and_exits_zero_on_sigterm() -> None:
    http_port, udp_port = free_port(socket.SOCK_STREAM), free_port(socket.SOCK_DGRAM)
    env = {**os.environ, "HTTP_RESPONSE": "from-env", "UDP_RATE_LIMIT": "5"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agones", "ping", "--address", "127.0.0.1",
         "--http-port", str(http_port), "--udp-port", str(udp_port)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:

        async def probe() -> tuple[str, list[bytes]]:
            async with aiohttp.ClientSession() as http:
                for _ in range(200):
                    try:
                        async with http.get(f"http://127.0.0.1:{http_port}/") as resp:
                            text = await resp.text()
                            break
                    except aiohttp.ClientConnectionError:
                        await asyncio.sleep(0.05)
                else:
                    raise AssertionError("ping never listened")
            return text, await udp_roundtrip(udp_port, [b"hello"])

        assert asyncio.run(probe()) == ("from-env", [b"hello"])
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        proc.kill()
        proc.wait()


def test_command_refuses_a_negative_rate() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "agones", "ping", "--udp-rate-limit", "-1"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 1
    assert out.stdout.strip() == "error: UDP Rate limit must be greater that or equal to zero"
    assert "Traceback" not in out.stderr
