"""A TLS server's CPU per new connection (handshake, a one-byte answer, close), by the number of
TLS 1.3 session tickets it sends after each handshake (`pki.SESSION_TICKETS` is the project's).

A first wave of allocations opens a connection per concurrent request at every hop, so this is
paid ~150 times at once at C = 50 on the API path.

    .venv/bin/python -m bench.bench_tls_handshake [--connections 400] [--rounds 2]

The server runs in a child process on `agones.aioloop` (uvloop), the client in this one; the
figure is the child's CPU (user + system) over the connections.
"""

from __future__ import annotations

import argparse
import asyncio
import ssl
import sys
import tempfile
import time
from pathlib import Path

from agones import aioloop, pki
from agones.localcluster.stack_processes import free_port
from bench.bench_allocation import process_cpu


async def serve(cert: str, key: str, port: int, tickets: int) -> None:
    context = pki.server_context(cert, key)
    context.num_tickets = tickets

    async def answer(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"x")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", port, ssl=context)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


def child_cpu(pid: int) -> float:
    """CPU seconds of the server process (`bench_allocation.process_cpu`, its one child)."""
    return sum(cpu for cpu, _ in process_cpu(pid).values())


async def measure(cert: str, key: str, tickets: int, connections: int) -> float:
    port = free_port()
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.bench_tls_handshake",
        "serve",
        cert,
        key,
        str(port),
        str(tickets),
        stdout=asyncio.subprocess.PIPE,
    )
    assert child.stdout is not None
    await child.stdout.readline()
    client = ssl.create_default_context(cafile=cert)
    try:
        before = child_cpu(child.pid)
        for _ in range(connections):
            reader, writer = await asyncio.open_connection(
                "127.0.0.1", port, ssl=client, server_hostname="localhost"
            )
            await reader.read(1)
            writer.close()
        await asyncio.sleep(0.2)
        return (child_cpu(child.pid) - before) / connections
    finally:
        child.terminate()
        await child.wait()


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        pair = pki.self_signed(["localhost"])
        cert, key = Path(tmp, "tls.crt"), Path(tmp, "tls.key")
        cert.write_bytes(pair.cert_pem)
        key.write_bytes(pair.key_pem)
        for round_ in range(args.rounds):
            for tickets in (2, pki.SESSION_TICKETS, 0):
                took = await measure(str(cert), str(key), tickets, args.connections)
                print(
                    f"round {round_ + 1}: {tickets} ticket(s): server CPU "
                    f"{took * 1000:.2f} ms per connection",
                    flush=True,
                )


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        _, _, cert_file, key_file, port_text, tickets_text = sys.argv
        aioloop.run(serve(cert_file, key_file, int(port_text), int(tickets_text)))
    else:
        parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
        parser.add_argument("--connections", type=int, default=400)
        parser.add_argument("--rounds", type=int, default=2)
        started = time.monotonic()
        aioloop.run(main(parser.parse_args()))
        print(f"took {time.monotonic() - started:.1f} s")
