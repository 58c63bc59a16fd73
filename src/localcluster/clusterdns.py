"""The local cluster's DNS server (what CoreDNS's `kubernetes` plugin answers), on loopback only.

Names under `cluster.local` are answered from the API server's Services and Endpoints, read from
informers at query time:

* `<svc>.<ns>.svc.cluster.local` A: the Service's ClusterIP; for a headless Service
  (`clusterIP: None`) the Endpoints' ready addresses (and the not-ready ones with
  `publishNotReadyAddresses`); an `ExternalName` Service answers a CNAME to its external name.
* `<hostname>.<svc>.<ns>.svc.cluster.local` A: the Endpoints address of that hostname (a
  StatefulSet pod whose `spec.subdomain` is the governing headless Service).
* `<a-b-c-d>.<ns>.pod.cluster.local` A: `a.b.c.d` (CoreDNS's `pods insecure`).
* A name that exists with no record of the asked type (AAAA of a Service) is NOERROR with no
  answer; every other name, inside the zone or not, is NXDOMAIN with the zone's SOA: nothing is
  forwarded anywhere (no upstream), so no query ever leaves the machine.

`resolve(name, qtype, lookup)` is the pure part (`lookup` reads a Service or Endpoints by kind,
namespace and name); `answer(wire, lookup)` turns a query's bytes into the reply's bytes: a query
that does not parse gets FORMERR (when at least its 12-byte header is there, else nothing), an
opcode other than QUERY NOTIMP, more or fewer than one question FORMERR; it never raises.
`ClusterDNS(factory).start(host, port)` serves UDP and TCP (length-prefixed) on one port.
Resolvers reach it inside a pod's network namespace through `PodNetwork.expose_dns` at
`KubeletConfig.dns_server:53`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.opcode
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset
import structlog

from ..client.versioned.resources import ENDPOINTS, SERVICES
from ..informers import SharedInformerFactory

log = structlog.get_logger("agones.localcluster.clusterdns")
Obj = dict[str, Any]
ZONE = "cluster.local"
TTL = 5
Lookup = Callable[[str, str, str], Obj | None]
"""(kind `services`/`endpoints`, namespace, name) → the object, or None."""
_SOA = f"ns.dns.{ZONE}. hostmaster.{ZONE}. 1 7200 1800 86400 {TTL}"


@dataclass(frozen=True)
class Records:
    exists: bool
    """Whether the name exists (False: NXDOMAIN)."""
    addresses: tuple[str, ...] = ()
    cname: str = ""


NXDOMAIN = Records(False)


def _endpoint_addresses(endpoints: Obj | None, not_ready: bool) -> list[Obj]:
    out: list[Obj] = []
    for subset in (endpoints or {}).get("subsets") or []:
        out += subset.get("addresses") or []
        if not_ready:
            out += subset.get("notReadyAddresses") or []
    return out


def _service_records(labels: list[str], lookup: Lookup) -> Records:
    """`labels` = [hostname?, svc, ns] (the part before `.svc.cluster.local`)."""
    if len(labels) not in (2, 3):
        return NXDOMAIN
    svc_name, ns = labels[-2], labels[-1]
    svc = lookup("services", ns, svc_name)
    if svc is None:
        return NXDOMAIN
    spec = svc.get("spec") or {}
    if spec.get("type") == "ExternalName":
        return (
            Records(True, cname=str(spec.get("externalName", ""))) if len(labels) == 2 else NXDOMAIN
        )
    headless = spec.get("clusterIP") == "None"
    if len(labels) == 2 and not headless:
        ip = spec.get("clusterIP")
        return Records(True, (ip,) if ip else ())
    addresses = _endpoint_addresses(
        lookup("endpoints", ns, svc_name), bool(spec.get("publishNotReadyAddresses"))
    )
    if len(labels) == 2:
        return Records(True, tuple(sorted({a["ip"] for a in addresses if a.get("ip")})))
    matching = [a["ip"] for a in addresses if a.get("hostname") == labels[0] and a.get("ip")]
    return Records(True, tuple(matching)) if matching and headless else NXDOMAIN


def _pod_records(labels: list[str]) -> Records:
    if len(labels) != 2:
        return NXDOMAIN
    try:
        ip = ipaddress.IPv4Address(labels[0].replace("-", "."))
    except ValueError:
        return NXDOMAIN
    return Records(True, (str(ip),))


def resolve(name: str, lookup: Lookup) -> Records:
    """The records of a fully-qualified name (see the module docstring)."""
    labels = name.lower().rstrip(".").split(".")
    zone = ZONE.split(".")
    if labels[-len(zone) :] != zone or len(labels) < len(zone) + 1:
        return NXDOMAIN
    inner = labels[: -len(zone)]
    if len(inner) == 1 and inner[0] in ("svc", "pod"):
        return Records(True)
    kind, rest = inner[-1], inner[:-1]
    if kind == "svc":
        if len(rest) == 1:
            return Records(True)  # a namespace: it exists, holds no address
        return _service_records(rest, lookup)
    if kind == "pod":
        return _pod_records(rest)
    return NXDOMAIN


def _reply_header_only(wire: bytes, rcode: int) -> bytes:
    """A reply carrying just the query's id and `rcode` (for queries that do not parse)."""
    (qid, flags) = struct.unpack("!HH", wire[:4])
    opcode_bits = flags & 0x7800
    reply_flags = 0x8000 | opcode_bits | (flags & 0x0100) | rcode
    return struct.pack("!HHHHHH", qid, reply_flags, 0, 0, 0, 0)


def answer(wire: bytes, lookup: Lookup) -> bytes | None:
    """The reply to one query's bytes, or None for bytes too short to answer (see the docstring)."""
    if len(wire) < 12 or wire[2] & 0x80:
        return None  # too short to answer, or a response: never answer one (no reflection loops)
    if (wire[2] >> 3) & 0x0F != dns.opcode.QUERY:
        return _reply_header_only(wire, dns.rcode.NOTIMP)
    try:
        query = dns.message.from_wire(wire)
    except (dns.exception.DNSException, ValueError, IndexError, UnicodeError):
        return _reply_header_only(wire, dns.rcode.FORMERR)
    if len(query.question) != 1:
        return _reply_header_only(wire, dns.rcode.FORMERR)
    reply = dns.message.make_response(query)
    reply.flags |= dns.flags.AA
    question = query.question[0]
    records = (
        resolve(question.name.to_text(), lookup)
        if question.rdclass == dns.rdataclass.IN
        else NXDOMAIN
    )
    _fill(reply, question.name, int(question.rdtype), records)
    try:
        return reply.to_wire(max_size=65535)
    except dns.exception.DNSException:
        return _reply_header_only(wire, dns.rcode.SERVFAIL)


def _fill(reply: dns.message.Message, qname: dns.name.Name, qtype: int, records: Records) -> None:
    if not records.exists:
        reply.set_rcode(dns.rcode.NXDOMAIN)
    if records.cname and qtype in (dns.rdatatype.A, dns.rdatatype.CNAME, dns.rdatatype.ANY):
        target = records.cname.rstrip(".") + "."
        reply.answer.append(
            dns.rrset.from_text(qname, TTL, dns.rdataclass.IN, dns.rdatatype.CNAME, target)
        )
    elif records.addresses and qtype in (dns.rdatatype.A, dns.rdatatype.ANY):
        reply.answer.append(
            dns.rrset.from_text_list(
                qname, TTL, dns.rdataclass.IN, dns.rdatatype.A, list(records.addresses)
            )
        )
    if not reply.answer:
        zone = dns.name.from_text(ZONE)
        reply.authority.append(
            dns.rrset.from_text(zone, TTL, dns.rdataclass.IN, dns.rdatatype.SOA, _SOA)
        )


class _UDP(asyncio.DatagramProtocol):
    def __init__(self, server: ClusterDNS) -> None:
        self.server = server
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.DatagramTransport, transport)

    def datagram_received(self, data: bytes, addr: Any) -> None:
        reply = self.server.answer(data)
        if reply is not None and self.transport is not None:
            if len(reply) > 512:
                reply = _truncated(data, reply)
            self.transport.sendto(reply, addr)


def _truncated(query: bytes, reply: bytes) -> bytes:
    """A UDP reply over 512 bytes: the header with TC set, so the resolver retries over TCP."""
    header = bytearray(reply[:12])
    header[2] |= 0x02
    header[6:12] = b"\0" * 6
    return bytes(header) + reply[12 : 12 + _question_length(query)]


def _question_length(query: bytes) -> int:
    i = 12
    while i < len(query) and query[i]:
        i += query[i] + 1
    return max(0, i + 5 - 12)


class ClusterDNS:
    """Serves `answer` over UDP and TCP on one loopback port (see the module docstring)."""

    def __init__(self, factory: SharedInformerFactory) -> None:
        self.services = factory.for_resource(SERVICES)
        self.endpoints = factory.for_resource(ENDPOINTS)
        self.host = ""
        self.port = 0
        self._udp: asyncio.DatagramTransport | None = None
        self._tcp: asyncio.AbstractServer | None = None

    def lookup(self, kind: str, namespace: str, name: str) -> Obj | None:
        informer = self.services if kind == "services" else self.endpoints
        found = informer.informer().mutation_cache().get_by_key(f"{namespace}/{name}")
        return cast(Obj | None, found)

    def answer(self, wire: bytes) -> bytes | None:
        try:
            return answer(wire, self.lookup)
        except Exception:
            log.exception("dns query failed")
            return _reply_header_only(wire, dns.rcode.SERVFAIL) if len(wire) >= 12 else None

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> None:
        if not ipaddress.ip_address(host).is_loopback:
            raise ValueError(f"the cluster DNS server listens on loopback only, not {host}")
        loop = asyncio.get_running_loop()
        for _ in range(20):
            transport, _ = await loop.create_datagram_endpoint(
                lambda: _UDP(self), local_addr=(host, port)
            )
            bound = transport.get_extra_info("sockname")[1]
            try:
                self._tcp = await asyncio.start_server(self._on_tcp, host, bound)
            except OSError:
                transport.close()
                if port:
                    raise
                continue
            self._udp = transport
            self.host, self.port = host, bound
            log.info("cluster DNS listening", address=f"{host}:{bound}")
            return
        raise OSError("no port free for both UDP and TCP")

    async def _on_tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                size = struct.unpack("!H", await reader.readexactly(2))[0]
                reply = self.answer(await reader.readexactly(size))
                if reply is None:
                    break
                writer.write(struct.pack("!H", len(reply)) + reply)
                await writer.drain()
        except (asyncio.IncompleteReadError, OSError):
            pass
        finally:
            writer.close()

    async def stop(self) -> None:
        if self._udp is not None:
            self._udp.close()
        if self._tcp is not None:
            self._tcp.close()
            with contextlib.suppress(Exception):
                await self._tcp.wait_closed()


def query(name: str, server: tuple[str, int], rdtype: str = "A", timeout: float = 2.0) -> Any:
    """Ask `server` over UDP (a blocking helper for tools and tests): the dnspython reply."""
    message = dns.message.make_query(name, rdtype)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(timeout)
        sock.sendto(message.to_wire(), server)
        data, _ = sock.recvfrom(65535)
    return dns.message.from_wire(data)
