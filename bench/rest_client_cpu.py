"""CPU the REST client spends per request, apart from the server's.

A child process serves canned answers over HTTP/1.1 keep-alive on loopback (a bare asyncio
protocol, so its cost stays out of this process); this process sends the requests a controller
sends most — `POST` of an Event, `PUT` of a GameServer (1000 names in turn, as a Fleet has), strategic-merge `PATCH` of an Event,
`DELETE` with DeleteOptions — through `RESTClient`, `concurrency` in flight, with the Prometheus
client metrics installed as `agones controller` has them, and prints this process's CPU µs per
request (`time.process_time`), the figure to compare A against B (run it from each tree with
`bench/other_tree.py`; the machine may be shared: CPU time, not wall time, is what counts).

    .venv/bin/python -m bench.rest_client_cpu [--requests 20000] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import multiprocessing
import socket
import time
from typing import Any

from agones.aioloop import run
from agones.client.config import Config
from agones.client.rest import RESTClient
from agones.client.versioned.resources import EVENTS, GAME_SERVERS
from agones.metrics import kubernetes_client

NAMES = 1000
"""Distinct object names the requests cycle through, as a Fleet of 1000 has."""

BODY = json.dumps({"kind": "Event", "metadata": {"name": "x", "resourceVersion": "1"}}).encode()
ANSWER = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
    + str(len(BODY)).encode()
    + b"\r\n\r\n"
    + BODY
)


class _Answer(asyncio.Protocol):
    """Answers each request once its headers and Content-Length bytes have arrived."""

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        self.buf = b""

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while True:
            end = self.buf.find(b"\r\n\r\n")
            if end < 0:
                return
            head = self.buf[:end].lower()
            length = 0
            at = head.find(b"content-length:")
            if at >= 0:
                length = int(head[at + 15 :].split(b"\r\n", 1)[0])
            if len(self.buf) < end + 4 + length:
                return
            self.buf = self.buf[end + 4 + length :]
            self.transport.write(ANSWER)


def _serve(sock: socket.socket) -> None:
    async def main() -> None:
        server = await asyncio.get_running_loop().create_server(_Answer, sock=sock)
        await server.serve_forever()

    run(main())


async def _client(port: int, requests: int, concurrency: int, only: str) -> dict[str, float]:
    kubernetes_client.register()
    client = RESTClient(Config(host=f"http://127.0.0.1:{port}", qps=0))
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "gs.1", "namespace": "default"},
    }
    gs = {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServer",
        "metadata": {"name": "gs-1", "namespace": "default"},
    }
    names = itertools.cycle([f"fleet-x7k2p-{i:05d}" for i in range(NAMES)])

    def named(obj: dict[str, Any]) -> dict[str, Any]:
        return {**obj, "metadata": {**obj["metadata"], "name": next(names)}}

    verbs = {
        "POST": lambda: client.create(EVENTS, event, "default"),
        "PUT": lambda: client.update(GAME_SERVERS, named(gs)),
        "PATCH": lambda: client.patch(
            EVENTS, next(names) + ".1", {"count": 2}, namespace="default", patch_type="strategic"
        ),
        "DELETE": lambda: client.delete(GAME_SERVERS, next(names), "default"),
    }
    calls = [call for verb, call in verbs.items() if only in ("", verb)]
    left = 0

    async def worker(i: int) -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await calls[(left + i) % len(calls)]()

    left = requests // 5  # warm-up: connections opened, metrics children made
    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    left = requests
    start = time.process_time()
    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    cpu = time.process_time() - start
    await client.close()
    return {
        "only": only or "all",
        "requests": requests,
        "client_cpu_us_per_request": round(1e6 * cpu / requests, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--only", default="", help="one verb: POST, PUT, PATCH or DELETE")
    args = parser.parse_args()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    server = multiprocessing.get_context("fork").Process(target=_serve, args=(sock,), daemon=True)
    server.start()
    try:
        print(
            json.dumps(
                run(_client(sock.getsockname()[1], args.requests, args.concurrency, args.only))
            )
        )
    finally:
        server.terminate()
        server.join()


if __name__ == "__main__":
    main()
