"""Pod network namespaces: two processes on the same port, each reached on its own host port
(UDP and TCP), and a host port exposed inside a namespace. Needs root (or CAP_SYS_ADMIN)."""

from __future__ import annotations

import asyncio
import socket
import sys

import pytest

from agones.localcluster.nodes.netns import PodNetwork, netns_supported

pytestmark = [
    pytest.mark.timeout(60),
    pytest.mark.skipif(not netns_supported(), reason="network namespaces are not permitted here"),
]

ECHO = """
import socket, sys, threading
tag = sys.argv[1].encode()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("0.0.0.0", 7654))
t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("0.0.0.0", 7654)); t.listen()
def tcp():
    while True:
        c, _ = t.accept(); c.sendall(tag + b":" + c.recv(100)); c.close()
threading.Thread(target=tcp, daemon=True).start()
print("up", flush=True)
while True:
    d, a = u.recvfrom(100); u.sendto(tag + b":" + d, a)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


async def udp(port: int, data: bytes) -> bytes:
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setblocking(False)
    try:
        for _ in range(5):
            await loop.sock_sendto(sock, data, ("127.0.0.1", port))
            try:
                return await asyncio.wait_for(loop.sock_recv(sock, 100), 2)
            except TimeoutError:
                continue
    finally:
        sock.close()
    raise AssertionError("no UDP reply")


async def tcp(port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    reply = await reader.read(100)
    writer.close()
    return reply


async def test_two_processes_on_one_port_each_on_its_own_host_port() -> None:
    nets, procs, ports = [], [], []
    try:
        for tag in ("a", "b"):
            net = await PodNetwork.create()
            nets.append(net)
            proc = await asyncio.create_subprocess_exec(
                *net.exec_prefix(), sys.executable, "-c", ECHO, tag, stdout=asyncio.subprocess.PIPE
            )
            procs.append(proc)
            assert proc.stdout is not None
            assert await asyncio.wait_for(proc.stdout.readline(), 20) == b"up\n"
            port = free_port()
            ports.append(port)
            await net.forward_host_port("127.0.0.1", port, 7654, "UDP")
            await net.forward_host_port("127.0.0.1", port, 7654, "TCP")
        for tag, port in zip(("a", "b"), ports, strict=True):
            assert await udp(port, b"hi") == f"{tag}:hi".encode()
            assert await tcp(port, b"hi") == f"{tag}:hi".encode()
    finally:
        for proc in procs:
            proc.kill()
            await proc.wait()
        for net in nets:
            await net.close()


async def test_host_port_exposed_inside_the_namespace() -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"host:" + await reader.read(100))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    net = await PodNetwork.create()
    try:
        await net.expose_host_port(port, ("127.0.0.1", port))
        code = (
            "import socket, sys; c = socket.create_connection(('127.0.0.1', int(sys.argv[1])));"
            "c.sendall(b'ping'); print(c.recv(100).decode())"
        )
        proc = await asyncio.create_subprocess_exec(
            *net.exec_prefix(),
            sys.executable,
            "-c",
            code,
            str(port),
            stdout=asyncio.subprocess.PIPE,
        )
        out, _ = await asyncio.wait_for(proc.communicate(), 20)
        assert out == b"host:ping\n"
        assert await net.http_get(port + 1 if port < 65535 else 1, "/") == 0  # nothing there
    finally:
        await net.close()
        server.close()


async def test_a_cancelled_socket_request_does_not_answer_the_next_one() -> None:
    net = await PodNetwork.create()
    try:
        for _ in range(3):
            pending = asyncio.create_task(net.new_socket("udp"))
            await asyncio.sleep(0)  # the request is sent; its reply not yet read
            pending.cancel()
            with pytest.raises(asyncio.CancelledError):
                await pending
            sock = await asyncio.wait_for(net.new_socket("tcp"), 10)
            try:
                assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_TYPE) == socket.SOCK_STREAM
            finally:
                sock.close()
    finally:
        await net.close()
