"""Pod network namespaces on one machine, and the userspace port forwarding into and out of them.

`PodNetwork.create()` starts a small holder process in a new network namespace (`unshare --net`,
needs CAP_SYS_ADMIN) that brings the namespace's own loopback up and then serves socket requests
over a unix socket pair: it creates a TCP/UDP socket *inside* the namespace and passes its file
descriptor back (`socket.send_fds`). Sockets keep the namespace they were created in, so this
process can connect or listen in the pod's namespace without entering it. No interface other than
the pod's own `lo` is ever created or routed: everything stays on loopback.

* `PodNetwork.create(sandbox)` with `podsandbox.SandboxFiles` also gives the holder new UTS, IPC
  and mount namespaces: it sets the pod's hostname and bind-mounts the pod's `/etc/hosts`,
  `/etc/resolv.conf` and `/etc/hostname` there (see `mounts` for the containers' own mounts).
* `PodNetwork.exec_prefix()` is the command prefix that runs a process in the namespaces
  (`nsenter`).
* `PodNetwork.forward_host_port(ip, host_port, container_port, protocol)` listens on the host at
  `ip:host_port` and relays to `127.0.0.1:container_port` inside the namespace (what a CNI hostport
  plugin does with DNAT): TCP per connection (`relay.relay_server`), UDP per client address.
* `PodNetwork.expose_host_port(port, target)` listens on `127.0.0.1:port` inside the namespace and
  relays each connection to `target` on the host (so a sidecar in the pod reaches the API server).
* `PodNetwork.relay_tcp(address)` listens on `address` inside the namespace and relays each
  connection to the same address on the host (`podmesh`).
* `PodNetwork.expose_dns(address, target)` listens on `address:53` (UDP and TCP, a loopback
  address) inside the namespace and relays each query to the cluster DNS server at `target`.
* `PodNetwork.http_get(port, path)` is a kubelet-style HTTP probe inside the namespace.

`netns_supported()` tells whether namespaces can be created here; without them the kubelet runs
processes in the host namespace (see the README, "Simulated nodes").
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import functools
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
from collections.abc import Callable
from typing import Any, cast

import structlog

from ...relay import relay_server
from .mounts import bind_mount
from .podsandbox import SandboxFiles
from .spawn import start_process

log = structlog.get_logger("agones.localcluster.nodes.netns")

_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1


def loopback_up() -> None:
    """Bring `lo` of the current network namespace up (a new namespace starts with it down)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(s, _SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | _IFF_UP))


def helper_main(fd: int, setup: str = "") -> int:
    """The holder process: serve socket requests on `fd` until the other end closes.

    `setup` (JSON `{"hostname", "binds": [[source, target], ...]}`, or empty) is applied first, in
    the holder's own UTS and mount namespaces. The other end going away at any moment (a pod
    deleted while it starts, Ctrl-C on `agones local up`) ends the holder quietly: a reply it
    can no longer send is the end."""
    loopback_up()
    chan = socket.socket(fileno=fd)
    try:
        if setup:
            try:
                _apply_setup(json.loads(setup))
            except OSError as err:
                chan.send(f"error:{err}".encode())
                return 1
        chan.send(b"ready")
        while request := chan.recv(256):
            _answer(chan, request.decode(errors="replace"))
    except OSError:
        pass
    return 0


def _apply_setup(setup: dict[str, Any]) -> None:
    socket.sethostname(str(setup["hostname"]))
    for source, target in setup["binds"]:
        bind_mount(str(source), str(target), read_only=False)


def _answer(chan: socket.socket, request: str) -> None:
    """Create the socket `request` names in this namespace and pass it back (or an error)."""
    kind, _, arg = request.partition(":")
    try:
        if kind == "tcp":
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        elif kind == "udp":
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        elif kind == "listen":
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(_loopback_address(arg))
            sock.listen(128)
        elif kind == "udpbind":
            sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            sock.bind(_loopback_address(arg))
        else:
            chan.send(b"error:unknown request")
            return
    except (OSError, ValueError) as err:
        chan.send(f"error:{err}".encode())
        return
    try:
        socket.send_fds(chan, [b"ok"], [sock.fileno()])
    finally:
        sock.close()


def _loopback_address(arg: str) -> tuple[str, int]:
    """`<port>` (on 127.0.0.1) or `<ip>:<port>`, the ip a loopback one."""
    host, _, port = arg.rpartition(":")
    host = host or "127.0.0.1"
    if not host.startswith("127."):
        raise ValueError(f"{host} is not a loopback address")
    return host, int(port)


_support: bool | None = None


def netns_supported() -> bool:
    """Whether this process may create network namespaces (root or CAP_SYS_ADMIN, `unshare`)."""
    global _support
    if _support is None:
        exe, nsenter = shutil.which("unshare"), shutil.which("nsenter")
        if exe is None or nsenter is None:
            _support = False
        else:
            try:
                proc = subprocess.run([exe, "--net", "true"], capture_output=True, timeout=10)
                _support = proc.returncode == 0
            except (OSError, subprocess.TimeoutExpired):
                _support = False
    return _support


class PodNetwork:
    """One pod's network namespace, held by a helper process (the pod's "pause container")."""

    def __init__(
        self, proc: asyncio.subprocess.Process, chan: socket.socket, sandboxed: bool = False
    ) -> None:
        self.proc = proc
        self.sandboxed = sandboxed
        """The holder has UTS, IPC and mount namespaces too (`create(sandbox)`)."""
        self._chan = chan
        self._lock = asyncio.Lock()
        self._servers: list[asyncio.AbstractServer] = []
        self._transports: list[asyncio.BaseTransport] = []

    @classmethod
    async def create(cls, sandbox: SandboxFiles | None = None) -> PodNetwork:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        setup = (
            ""
            if sandbox is None
            else json.dumps({"hostname": sandbox.hostname, "binds": sandbox.binds})
        )
        code = (
            "import sys; from agones.localcluster.nodes.netns import helper_main; "
            f"sys.exit(helper_main({child.fileno()}, sys.argv[1]))"
        )
        flags = ["--net"] if sandbox is None else ["--net", "--uts", "--ipc", "--mount"]
        proc = await start_process(
            ["unshare", *flags, sys.executable, "-c", code, setup], pass_fds=[child.fileno()]
        )
        child.close()
        parent.setblocking(False)
        net = cls(proc, parent, sandboxed=sandbox is not None)
        try:
            hello = await asyncio.wait_for(net._recv(), 20)
        except (TimeoutError, OSError) as err:
            await net.close()
            raise OSError(f"network namespace helper did not start: {err}") from err
        if hello[0] != b"ready":
            await net.close()
            raise OSError(f"pod sandbox holder failed: {hello[0].decode(errors='replace')}")
        return net

    @property
    def path(self) -> str:
        return f"/proc/{self.proc.pid}/ns/net"

    def exec_prefix(self) -> list[str]:
        """`nsenter` into the pod's namespaces: network, and UTS, IPC, mount when sandboxed."""
        if not self.sandboxed:
            return ["nsenter", f"--net={self.path}", "--"]
        ns = f"/proc/{self.proc.pid}/ns"
        return [
            "nsenter",
            f"--net={self.path}",
            f"--uts={ns}/uts",
            f"--ipc={ns}/ipc",
            f"--mount={ns}/mnt",
            "--",
        ]

    async def _recv(self) -> tuple[bytes, list[int]]:
        loop = asyncio.get_running_loop()
        while True:
            try:
                msg, fds, _, _ = socket.recv_fds(self._chan, 256, 1)
                return msg, fds
            except BlockingIOError:
                fut: asyncio.Future[None] = loop.create_future()
                loop.add_reader(self._chan, functools.partial(_set, fut))
                try:
                    await fut
                finally:
                    loop.remove_reader(self._chan)

    async def new_socket(self, kind: str) -> socket.socket:
        """A socket created in the pod's namespace: `tcp`, `udp`, or `listen:<port>`.

        The request and its reply run as one task a cancelled caller does not interrupt: a reply
        left unread would otherwise answer the next request.
        """
        exchange = asyncio.ensure_future(self._exchange(kind))
        try:
            msg, fds = await asyncio.shield(exchange)
        except asyncio.CancelledError:
            exchange.add_done_callback(_close_fds)
            raise
        if not fds:
            raise OSError(msg.decode(errors="replace"))
        udp = kind == "udp" or kind.startswith("udpbind:")
        family = socket.SOCK_DGRAM if udp else socket.SOCK_STREAM
        sock = socket.socket(socket.AF_INET, family, fileno=fds[0])
        sock.setblocking(False)
        return sock

    async def _exchange(self, kind: str) -> tuple[bytes, list[int]]:
        async with self._lock:
            self._chan.send(kind.encode())
            return await self._recv()

    async def connect_tcp(self, port: int) -> socket.socket:
        sock = await self.new_socket("tcp")
        try:
            await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
        except OSError:
            sock.close()
            raise
        return sock

    async def forward_host_port(
        self, ip: str, host_port: int, container_port: int, protocol: str
    ) -> None:
        """Relay `ip:host_port` on the host to `127.0.0.1:container_port` in the pod."""
        loop = asyncio.get_running_loop()
        if protocol == "TCP":
            server = await relay_server(
                functools.partial(self.connect_tcp, container_port),
                ip,
                host_port,
                reuse_address=True,
            )
            self._servers.append(server)
        else:
            transport, _ = await loop.create_datagram_endpoint(
                lambda: _UDPHostSide(self, container_port), local_addr=(ip, host_port)
            )
            self._transports.append(transport)

    async def _serve_relay(self, request: str, target: tuple[str, int]) -> asyncio.AbstractServer:
        """Listen on the socket `request` names in the pod; relay each TCP connection to
        `target` on the host."""
        sock = await self.new_socket(request)

        async def host_side() -> tuple[str, int]:
            return target

        server = await relay_server(host_side, sock=sock)
        self._servers.append(server)
        return server

    async def expose_host_port(self, port: int, target: tuple[str, int]) -> None:
        """Listen on `127.0.0.1:port` in the pod; relay each connection to `target` on the host."""
        await self._serve_relay(f"listen:{port}", target)

    async def relay_tcp(self, address: tuple[str, int]) -> asyncio.AbstractServer:
        """Listen on `address` (a loopback one) in the pod; relay each connection to the same
        address on the host (`podmesh`: other pods and Services as the pod dials them)."""
        return await self._serve_relay(f"listen:{address[0]}:{address[1]}", address)

    async def expose_dns(self, address: str, target: tuple[str, int]) -> None:
        """Listen on `address:53` (UDP and TCP) in the pod and relay each query to the cluster
        DNS server at `target` on the host (so the pod's resolv.conf can name `address`)."""
        await self._serve_relay(f"listen:{address}:53", target)
        udp = await self.new_socket(f"udpbind:{address}:53")
        transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(
            lambda: _UDPRelay(target), sock=udp
        )
        self._transports.append(transport)

    async def http_get(self, port: int, path: str, timeout: float = 1.0) -> int:
        """Status code of `GET path` on `127.0.0.1:port` in the pod (0 when unreachable)."""
        try:
            sock = await asyncio.wait_for(self.connect_tcp(port), timeout)
            reader, writer = await asyncio.open_connection(sock=sock)
        except (OSError, TimeoutError):
            return 0
        return await http_status(reader, writer, path, timeout)

    async def close(self) -> None:
        for server in self._servers:
            server.close()
        for transport in self._transports:
            transport.close()
        self._chan.close()
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.proc.wait(), 5)


async def http_status(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, path: str, timeout: float
) -> int:
    try:
        writer.write(f"GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n".encode())
        line = await asyncio.wait_for(reader.readline(), timeout)
        parts = line.split()
        return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    except (OSError, TimeoutError):
        return 0
    finally:
        writer.close()


def _close_fds(fut: asyncio.Future[tuple[bytes, list[int]]]) -> None:
    """Close the descriptors of a reply nobody waits for any more."""
    if not fut.cancelled() and fut.exception() is None:
        for fd in fut.result()[1]:
            with contextlib.suppress(OSError):
                os.close(fd)


def _set(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class _UDPPodSide(asyncio.DatagramProtocol):
    def __init__(self, reply: Callable[[bytes], None]) -> None:
        self.reply = reply

    def datagram_received(self, data: bytes, addr: Any) -> None:
        self.reply(data)


class _UDPHostSide(asyncio.DatagramProtocol):
    """Host end of a UDP forward: one pod-side socket per client address."""

    MAX_CLIENTS = 256

    def __init__(self, net: PodNetwork, container_port: int) -> None:
        self.net = net
        self.container_port = container_port
        self.transport: asyncio.DatagramTransport | None = None
        self.clients: dict[Any, asyncio.Future[asyncio.DatagramTransport]] = {}

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.DatagramTransport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        for fut in self.clients.values():
            if fut.done() and not fut.cancelled() and fut.exception() is None:
                fut.result().close()

    def datagram_received(self, data: bytes, addr: Any) -> None:
        fut = self.clients.get(addr)
        if fut is None:
            if len(self.clients) >= self.MAX_CLIENTS:
                # dicts keep insertion order: the first key is the longest-known client
                oldest = self.clients.pop(next(iter(self.clients)))
                oldest.add_done_callback(_close_transport)
            fut = asyncio.ensure_future(self._open(addr))
            self.clients[addr] = fut
        fut.add_done_callback(functools.partial(_send, data))

    async def _open(self, addr: Any) -> asyncio.DatagramTransport:
        sock = await self.net.new_socket("udp")
        sock.connect(("127.0.0.1", self.container_port))
        host = self.transport

        def reply(data: bytes) -> None:
            if host is not None and not host.is_closing():
                host.sendto(data, addr)

        transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(
            lambda: _UDPPodSide(reply), sock=sock
        )
        return transport


def _send(data: bytes, fut: asyncio.Future[asyncio.DatagramTransport]) -> None:
    if fut.cancelled() or fut.exception() is not None:
        return
    fut.result().sendto(data)


def _close_transport(fut: asyncio.Future[asyncio.DatagramTransport]) -> None:
    if not fut.cancelled() and fut.exception() is None:
        fut.result().close()


class _UDPRelay(asyncio.DatagramProtocol):
    """Pod end of the DNS relay: each query goes to `target` from a socket of its own, and the
    one reply (within `TIMEOUT`) comes back to the pod's client."""

    TIMEOUT = 5.0
    MAX_PENDING = 256

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.transport: asyncio.DatagramTransport | None = None
        self.pending: set[asyncio.Task[None]] = set()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.DatagramTransport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        for task in self.pending:
            task.cancel()

    def datagram_received(self, data: bytes, addr: Any) -> None:
        if len(self.pending) >= self.MAX_PENDING:
            return
        task = asyncio.ensure_future(self._relay(data, addr))
        self.pending.add(task)
        task.add_done_callback(self.pending.discard)

    async def _relay(self, data: bytes, addr: Any) -> None:
        loop = asyncio.get_running_loop()
        reply: asyncio.Future[bytes] = loop.create_future()
        transport, _ = await loop.create_datagram_endpoint(
            lambda: _UDPPodSide(lambda d: None if reply.done() else reply.set_result(d)),
            remote_addr=self.target,
        )
        try:
            transport.sendto(data)
            answer = await asyncio.wait_for(reply, self.TIMEOUT)
            if self.transport is not None and not self.transport.is_closing():
                self.transport.sendto(answer, addr)
        except (TimeoutError, OSError):
            pass
        finally:
            transport.close()
