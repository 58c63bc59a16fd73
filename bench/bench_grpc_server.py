"""CPU per unary gRPC call: `agones.grpcserver.Server` against grpc's own asyncio server.

Each server runs in a child process (on `agones.aioloop`, as every agones process) with one echo
method; the load is grpc's C-core asyncio client from this process, `--concurrency` calls in
flight on one channel, in plaintext on loopback. Printed per server and round: calls per second
and the server process's CPU (user + system, all its threads) per call.

    .venv/bin/python -m bench.bench_grpc_server [--calls 20000] [--concurrency 50] [--rounds 2]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import subprocess
import sys
import time

import grpc

from agones import aioloop
from agones.localcluster.stack_processes import free_port

SERVERS = ("ours", "grpc-aio")
PAYLOAD = b"x" * 200


async def _echo(request: bytes, context: object) -> bytes:
    del context
    return request


async def serve(kind: str, port: int) -> None:
    """The child: serve echo on `port`, print "ready", then answer each stdin line with the CPU
    seconds used so far."""
    handler = grpc.method_handlers_generic_handler(
        "bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(_echo)}
    )
    if kind == "ours":
        from agones.grpcserver import Server

        server = Server()
        server.add_generic_rpc_handlers((handler,))
        await asyncio.get_running_loop().create_server(server.protocol, "127.0.0.1", port)
    else:
        aio = grpc.aio.server()
        aio.add_generic_rpc_handlers((handler,))
        aio.add_insecure_port(f"127.0.0.1:{port}")
        await aio.start()
    print("ready", flush=True)
    loop = asyncio.get_running_loop()
    while await loop.run_in_executor(None, sys.stdin.readline):
        usage = resource.getrusage(resource.RUSAGE_SELF)
        print(usage.ru_utime + usage.ru_stime, flush=True)


async def measure(kind: str, calls: int, concurrency: int) -> tuple[float, float]:
    """(calls per second, server CPU µs per call) of one round."""
    port = free_port()
    child = subprocess.Popen(
        [sys.executable, "-m", "bench.bench_grpc_server", "--serve", kind, "--port", str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    try:
        assert child.stdout.readline().strip() == "ready"

        def cpu() -> float:
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write("\n")
            child.stdin.flush()
            return float(child.stdout.readline())

        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            echo = channel.unary_unary("/bench.Echo/Echo")
            for _ in range(200):  # warm up
                await echo(PAYLOAD)
            left = calls

            async def caller() -> None:
                nonlocal left
                while left > 0:
                    left -= 1
                    assert await echo(PAYLOAD) == PAYLOAD

            before, start = cpu(), time.perf_counter()
            await asyncio.gather(*(caller() for _ in range(concurrency)))
            elapsed, after = time.perf_counter() - start, cpu()
        return calls / elapsed, (after - before) / calls * 1e6
    finally:
        child.kill()
        child.wait()


async def main(args: argparse.Namespace) -> None:
    for round_ in range(1, args.rounds + 1):
        for kind in SERVERS:
            rate, cpu_us = await measure(kind, args.calls, args.concurrency)
            print(
                f"round {round_} server={kind} C={args.concurrency}: {rate:,.0f} calls/s,"
                f" server CPU {cpu_us:.0f} µs per call",
                flush=True,
            )


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--serve", choices=SERVERS, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse()
    if arguments.serve:
        aioloop.run(serve(arguments.serve, arguments.port))
    else:
        aioloop.run(main(arguments))
