"""`agones localcluster apiserver`: run the local Kubernetes-compatible API server in the foreground.

Writes a kubeconfig for kubectl and the Kubernetes clients, prints the URL, and serves until
interrupted (SIGINT/SIGTERM).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from typing import Any

from .. import aioloop


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "localcluster", help="run parts of the embedded local cluster"
    )
    sub = parser.add_subparsers(dest="localcluster_command", metavar="COMMAND")
    api = sub.add_parser("apiserver", help="serve the Kubernetes API on loopback")
    api.add_argument("--port", type=int, default=0, help="TCP port (0: a free one)")
    api.add_argument("--host", default="127.0.0.1", help="address to listen on")
    api.add_argument("--kubeconfig", required=True, help="where to write the kubeconfig")
    api.add_argument("--tls", action="store_true", help="serve HTTPS with a generated CA")
    api.add_argument("--token", default=None, help="require this bearer token")
    api.set_defaults(func=run_apiserver)

    def usage(args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=usage)


def run_apiserver(args: argparse.Namespace) -> int:
    from ..localcluster.apiserver.server import LocalAPIServer, ServerOptions

    options = ServerOptions(
        host=args.host, port=args.port, tls=args.tls, token=args.token, kubeconfig=args.kubeconfig
    )

    async def serve() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        async with LocalAPIServer(options) as srv:
            print(
                f"serving the Kubernetes API at {srv.url}; kubeconfig: {srv.kubeconfig}", flush=True
            )
            await stop.wait()

    aioloop.run(serve())
    return 0
