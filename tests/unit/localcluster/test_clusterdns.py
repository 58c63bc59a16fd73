"""The cluster DNS server: names resolved from Services and Endpoints (tables), the wire replies,
malformed queries (a property: never a crash, FORMERR/NOTIMP/NXDOMAIN or silence), and the UDP and
TCP listeners on loopback."""

from __future__ import annotations

import asyncio
import socket
import struct
from typing import Any

import dns.flags
import dns.message
import dns.rcode
import dns.rdatatype
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.localcluster.clusterdns import ClusterDNS, Records, answer, resolve
from tests.fuzzing import examples

OBJECTS: dict[tuple[str, str, str], dict[str, Any]] = {
    ("services", "default", "db"): {"spec": {"clusterIP": "127.240.0.7"}},
    ("services", "default", "web"): {"spec": {"clusterIP": "None"}},
    ("services", "default", "all"): {
        "spec": {"clusterIP": "None", "publishNotReadyAddresses": True}
    },
    ("services", "games", "ext"): {
        "spec": {"type": "ExternalName", "externalName": "db.default.svc.cluster.local"}
    },
    ("endpoints", "default", "web"): {
        "subsets": [
            {
                "addresses": [
                    {"ip": "127.254.0.2", "hostname": "web-0"},
                    {"ip": "127.254.0.3", "hostname": "web-1"},
                ],
                "notReadyAddresses": [{"ip": "127.254.0.4", "hostname": "web-2"}],
            }
        ]
    },
    ("endpoints", "default", "all"): {
        "subsets": [
            {
                "addresses": [{"ip": "127.254.0.5"}],
                "notReadyAddresses": [{"ip": "127.254.0.6", "hostname": "all-1"}],
            }
        ]
    },
}


def lookup(kind: str, ns: str, name: str) -> dict[str, Any] | None:
    return OBJECTS.get((kind, ns, name))


@pytest.mark.parametrize(
    ("name", "records"),
    [
        pytest.param("db.default.svc.cluster.local.", Records(True, ("127.240.0.7",)), id="svc"),
        pytest.param("DB.Default.SVC.cluster.local", Records(True, ("127.240.0.7",)), id="case"),
        pytest.param(
            "web.default.svc.cluster.local",
            Records(True, ("127.254.0.2", "127.254.0.3")),
            id="headless-ready-only",
        ),
        pytest.param(
            "web-1.web.default.svc.cluster.local", Records(True, ("127.254.0.3",)), id="pod-name"
        ),
        pytest.param(
            "web-2.web.default.svc.cluster.local", Records(False), id="not-ready-pod-name"
        ),
        pytest.param(
            "all-1.all.default.svc.cluster.local",
            Records(True, ("127.254.0.6",)),
            id="publish-not-ready",
        ),
        pytest.param(
            "ext.games.svc.cluster.local",
            Records(True, cname="db.default.svc.cluster.local"),
            id="external-name",
        ),
        pytest.param("nope.default.svc.cluster.local", Records(False), id="unknown-svc"),
        pytest.param("db.other.svc.cluster.local", Records(False), id="other-namespace"),
        pytest.param("default.svc.cluster.local", Records(True), id="namespace-exists"),
        pytest.param("x.db.default.svc.cluster.local", Records(False), id="host-of-clusterip"),
        pytest.param(
            "127-254-0-9.default.pod.cluster.local", Records(True, ("127.254.0.9",)), id="pod-ip"
        ),
        pytest.param("not-an-ip.default.pod.cluster.local", Records(False), id="bad-pod-ip"),
        pytest.param("db", Records(False), id="bare-name"),
        pytest.param("example.com", Records(False), id="outside-no-upstream"),
        pytest.param("cluster.local", Records(False), id="zone-apex"),
        pytest.param("a.b.c.d.default.svc.cluster.local", Records(False), id="too-deep"),
    ],
)
def test_resolve(name: str, records: Records) -> None:
    assert resolve(name, lookup) == records


def ask(name: str, rdtype: str = "A") -> dns.message.Message:
    reply = answer(dns.message.make_query(name, rdtype).to_wire(), lookup)
    assert reply is not None
    return dns.message.from_wire(reply)


def test_replies() -> None:
    found = ask("db.default.svc.cluster.local")
    assert found.rcode() == dns.rcode.NOERROR
    assert found.flags & dns.flags.AA
    assert [r.address for r in found.answer[0]] == ["127.240.0.7"]
    missing = ask("nope.default.svc.cluster.local")
    assert missing.rcode() == dns.rcode.NXDOMAIN
    assert missing.authority[0].rdtype == dns.rdatatype.SOA
    nodata = ask("db.default.svc.cluster.local", "AAAA")
    assert (nodata.rcode(), nodata.answer) == (dns.rcode.NOERROR, [])
    cname = ask("ext.games.svc.cluster.local")
    assert cname.answer[0].rdtype == dns.rdatatype.CNAME


def test_malformed_headers() -> None:
    assert answer(b"\x01\x02", lookup) is None
    garbage = answer(b"\x12\x34" + b"\x01\x00" + b"\x00\x05" + b"\xff" * 20, lookup)
    assert garbage is not None
    assert garbage[:2] == b"\x12\x34"
    assert garbage[3] & 0x0F == dns.rcode.FORMERR
    update = bytearray(dns.message.make_query("db.default.svc.cluster.local", "A").to_wire())
    update[2] = (update[2] & 0x87) | (5 << 3)  # opcode UPDATE
    reply = answer(bytes(update), lookup)
    assert reply is not None and reply[3] & 0x0F == dns.rcode.NOTIMP
    response = bytearray(update)
    response[2] |= 0x80
    assert answer(bytes(response), lookup) is None


def _query_bytes(draw: st.DrawFn) -> bytes:
    base = bytearray(dns.message.make_query("web-1.web.default.svc.cluster.local", "A").to_wire())
    for _ in range(draw(st.integers(0, 4))):
        i = draw(st.integers(0, len(base) - 1))
        base[i] = draw(st.integers(0, 255))
    cut = draw(st.integers(0, len(base) + 8))
    return bytes(base[:cut]) + draw(st.binary(max_size=8))


@settings(max_examples=examples(600))
@given(wire=st.one_of(st.binary(max_size=600), st.composite(_query_bytes)()))
def test_malformed_queries_never_crash(wire: bytes) -> None:
    reply = answer(wire, lookup)
    if reply is None:
        assert len(wire) < 12 or wire[2] & 0x80
        return
    assert reply[:2] == wire[:2]
    assert reply[2] & 0x80
    rcode = reply[3] & 0x0F
    assert rcode in (
        dns.rcode.NOERROR,
        dns.rcode.FORMERR,
        dns.rcode.NXDOMAIN,
        dns.rcode.NOTIMP,
        dns.rcode.SERVFAIL,
    )


class _Informer:
    def informer(self) -> Any:
        return self

    def mutation_cache(self) -> Any:
        return self

    def get_by_key(self, key: str) -> Any:
        return None


class _Factory:
    def for_resource(self, *_args: Any, **_kw: Any) -> _Informer:
        return _Informer()


async def test_serves_udp_and_tcp_on_loopback() -> None:
    server = ClusterDNS(_Factory())  # type: ignore[arg-type]
    server.lookup = lookup  # type: ignore[method-assign]
    await server.start("127.0.0.1", 0)
    try:
        loop = asyncio.get_running_loop()
        query = dns.message.make_query("web-0.web.default.svc.cluster.local", "A").to_wire()

        def udp() -> bytes:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.settimeout(5)
                s.sendto(query, (server.host, server.port))
                return s.recv(4096)

        assert dns.message.from_wire(await loop.run_in_executor(None, udp)).answer
        reader, writer = await asyncio.open_connection(server.host, server.port)
        for _ in range(2):  # two queries on one connection
            writer.write(struct.pack("!H", len(query)) + query)
            size = struct.unpack("!H", await reader.readexactly(2))[0]
            reply = dns.message.from_wire(await reader.readexactly(size))
            assert [r.address for r in reply.answer[0]] == ["127.254.0.2"]
        writer.write(b"\x00\x05abc")  # a truncated frame closes the connection quietly
        writer.write_eof()
        assert await reader.read() == b""
        writer.close()
    finally:
        await server.stop()
    with pytest.raises(ValueError, match="loopback"):
        await ClusterDNS(_Factory()).start("0.0.0.0", 0)  # type: ignore[arg-type]
