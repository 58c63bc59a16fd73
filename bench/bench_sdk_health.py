"""Health pings per second on one stream: our Python SDK → `agones sdkserver --local` (a process).

The client writes Empty messages on one Health stream as fast as flow control allows for
DURATION seconds, then half-closes and waits for the sidecar's reply, which it sends only after
reading every ping; pings / (time until that reply) is the sidecar's sustained rate.

    .venv/bin/python bench/bench_sdk_health.py [seconds]
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time

from agones.sdk import AsyncSDK
from agones.sdk.proto import sdk_pb2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def main(duration: float) -> None:
    port = free_port()
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "agones", "sdkserver", "--local", "--log-level=Error",
        "--address=127.0.0.1", f"--grpc-port={port}", "--http-port=0",
        env=dict(os.environ), stdout=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    sdk = AsyncSDK("127.0.0.1", port)
    try:
        await sdk.connect(20)
        call = sdk._client.Health()
        empty = sdk_pb2.Empty()
        sent = 0
        start = time.perf_counter()
        deadline = start + duration
        while time.perf_counter() < deadline:
            for _ in range(100):
                await call.write(empty)
            sent += 100
        written = time.perf_counter() - start
        await call.done_writing()
        await call
        drained = time.perf_counter() - start
        print(f"health pings on one stream: {sent} in {drained:.2f} s")
        print(f"  client write rate: {sent / written:,.0f} pings/s")
        print(f"  sidecar processed: {sent / drained:,.0f} pings/s")
    finally:
        await sdk.close()
        server.terminate()
        await server.wait()


if __name__ == "__main__":
    asyncio.run(main(float(sys.argv[1]) if len(sys.argv) > 1 else 5.0))
