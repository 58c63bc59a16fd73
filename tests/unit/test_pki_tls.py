"""The project's TLS server contexts send one TLS 1.3 session ticket (`pki.SESSION_TICKETS`), as
Go's crypto/tls does, not OpenSSL's two: every server context builder, and a real handshake."""

from __future__ import annotations

import contextlib
import ssl
from pathlib import Path

import pytest

from agones import pki
from agones.allocator.tlsfiles import TLSFiles
from agones.extensions.certs import server_ssl_context


def _pair(tmp_path: Path) -> tuple[Path, Path, pki.KeyPair]:
    pair = pki.self_signed(["localhost"])
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    cert.write_bytes(pair.cert_pem)
    key.write_bytes(pair.key_pem)
    return cert, key, pair


def test_every_server_context_sends_one_ticket(tmp_path: Path) -> None:
    cert, key, pair = _pair(tmp_path)
    (tmp_path / "client-ca").mkdir()
    contexts = [
        pki.server_context(cert, key),
        server_ssl_context(pair.cert_pem, pair.key_pem),
        TLSFiles(tmp_path, tmp_path / "client-ca", mtls=True).load(),
    ]
    assert pki.SESSION_TICKETS == 1
    assert [c.num_tickets for c in contexts] == [1, 1, 1]


def _pump(source: ssl.MemoryBIO, sink: ssl.MemoryBIO) -> None:
    sink.write(source.read())


@pytest.mark.skipif(not hasattr(ssl.SSLContext, "_msg_callback"), reason="no message callback")
def test_a_tls13_handshake_gets_one_ticket(tmp_path: Path) -> None:
    cert, key, _ = _pair(tmp_path)
    server_ctx = pki.server_context(cert, key)
    client_ctx = ssl.create_default_context(cafile=str(cert))
    client_ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    tickets: list[object] = []

    def seen(
        _conn: object, direction: str, _v: object, _ct: object, msg: object, _d: object
    ) -> None:
        if direction == "read" and msg == ssl._TLSMessageType.NEWSESSION_TICKET:  # type: ignore[attr-defined]
            tickets.append(msg)

    client_ctx._msg_callback = seen  # type: ignore[attr-defined]
    c_in, c_out, s_in, s_out = (ssl.MemoryBIO() for _ in range(4))
    client = client_ctx.wrap_bio(c_in, c_out, server_hostname="localhost")
    server = server_ctx.wrap_bio(s_in, s_out, server_side=True)
    for _ in range(10):
        for side in (client, server):
            with contextlib.suppress(ssl.SSLWantReadError):
                side.do_handshake()
        _pump(c_out, s_in)
        _pump(s_out, c_in)
    assert client.version() == "TLSv1.3"
    # the tickets follow the handshake: the client reads them with the first application data
    server.write(b"x")
    _pump(s_out, c_in)
    assert client.read(1) == b"x"
    assert len(tickets) == pki.SESSION_TICKETS
