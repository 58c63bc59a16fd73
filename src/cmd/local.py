"""`agones local up`: the whole local cluster in the foreground (`localcluster.stack.LocalStack`).

Starts the API server, CRDs, webhooks, simulated nodes, the controller and the allocator service;
writes the kubeconfig (default `.agones-local/kubeconfig`) and the allocator's certificates
(`.agones-local/allocator/`: `tls/`, `client-ca/`, and the client's pair and CA in `client/`) and
prints how to use them and the image → local program map (`--image IMAGE=COMMAND`, `--images
FILE` extend it; see `localcluster.nodes.imagemap`), then each pod that is simulated and why;
`--apply FILE` (repeatable) applies manifests once everything is up and then
reports each GameServer's state as it changes. `--allocate` then waits for the applied Fleets and
GameServers to be Ready, allocates one GameServer through the allocator with the generated client
certificate and prints its address and port and how to talk to it. SIGINT or SIGTERM stops
everything (exit 0); every process started is gone when it returns.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import grpc
import yaml

from .. import aioloop
from ..client.errors import ApiError
from ..client.rest import RESTClient
from ..client.versioned.resources import BY_KIND, GAME_SERVERS, PODS
from ..informers import ResourceEventHandlerFuncs, SharedInformerFactory
from ..localcluster import mainjob
from ..localcluster.nodes.imagemap import (
    SIMULATED_ANNOTATION,
    describe_map,
    load_image_file,
    parse_image_flag,
)
from ..logging import configure_logging
from .flags import go_duration


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "local", help="run the whole cluster on this machine (API server, controller, nodes)"
    )
    sub = parser.add_subparsers(dest="local_command", metavar="COMMAND")
    up = sub.add_parser("up", help="start the local cluster in the foreground")
    up.add_argument("--state-dir", default=".agones-local", help="kubeconfig and logs go here")
    up.add_argument("--kubeconfig", default="", help="kubeconfig path (default: STATE_DIR/)")
    up.add_argument("--port", type=int, default=0, help="API server port on 127.0.0.1")
    up.add_argument("--nodes", type=int, default=1, help="number of simulated nodes")
    up.add_argument("--first-node-address", default="127.0.0.2", help="loopback address")
    up.add_argument("--min-port", type=int, default=7000, help="lowest GameServer host port")
    up.add_argument("--max-port", type=int, default=8000, help="highest GameServer host port")
    up.add_argument("--feature-gates", default="", help="feature gates, e.g. PlayerTracking=true")
    up.add_argument("--simulate-all", action="store_true", help="simulate every pod")
    up.add_argument(
        "--image",
        action="append",
        default=[],
        metavar="IMAGE=COMMAND",
        help="run containers of IMAGE as the local COMMAND (repeatable; before the built-in map)",
    )
    up.add_argument(
        "--images",
        default="",
        metavar="FILE",
        help="YAML mapping IMAGE: COMMAND, added to the image map after the --image entries",
    )
    up.add_argument(
        "--allocation-batch-wait-time",
        type=go_duration,
        default=0.0,
        help="idle sleep of the allocation batch loop (Agones 500ms; default none)",
    )
    up.add_argument(
        "--extensions-replicas", type=int, default=1, help="webhook + allocation API servers"
    )
    up.add_argument(
        "--apply", action="append", default=[], metavar="FILE", help="apply once up (repeatable)"
    )
    up.add_argument(
        "--allocate",
        action="store_true",
        help="once the applied Fleet/GameServers are Ready, allocate one through the allocator",
    )
    up.add_argument(
        "--ready-timeout", type=float, default=180.0, help="seconds --allocate waits for Ready"
    )
    up.add_argument(
        "--allocator-port", type=int, default=0, help="allocator port on 127.0.0.1 (0: free one)"
    )
    up.add_argument("--log-level", default="Warn", help="log level of this process")
    up.set_defaults(func=run_up)

    def usage(args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(func=usage)


def manifests(path: str) -> list[dict[str, Any]]:
    """The objects of a YAML file (`ValueError` on a bad one)."""
    docs = [d for d in yaml.safe_load_all(Path(path).read_text()) if d]
    for doc in docs:
        if not isinstance(doc, dict) or "kind" not in doc or "apiVersion" not in doc:
            raise ValueError(f"{path}: every document needs apiVersion and kind")
    return docs


async def apply(client: RESTClient, obj: dict[str, Any]) -> str:
    """Create or replace one object; a line for the user."""
    res = BY_KIND.get((obj["apiVersion"], obj["kind"]))
    if res is None:
        return f"skipped {obj['kind']}: not supported by --apply (use kubectl apply)"
    md = obj.setdefault("metadata", {})
    ns = md.get("namespace", "default") if res.namespaced else None
    kind = obj["kind"].lower()
    try:
        created = await client.create(res, obj, namespace=ns)
        return f"{kind}.{res.group or 'core'}/{created['metadata']['name']} created"
    except ApiError as err:
        if err.status_code != 409 or not md.get("name"):
            return f"error: {kind} {md.get('name') or md.get('generateName', '')}: {err.message}"
    current = await client.get(res, md["name"], ns)
    md["resourceVersion"] = current["metadata"]["resourceVersion"]
    try:
        await client.update(res, obj, namespace=ns)
        return f"{kind}.{res.group or 'core'}/{md['name']} configured"
    except ApiError as err:
        return f"error: {kind} {md['name']}: {err.message}"


def describe(gs: dict[str, Any]) -> str:
    status = gs.get("status") or {}
    md = gs["metadata"]
    ports = ", ".join(
        f"{p.get('name')}={p.get('port')}" for p in status.get("ports") or [] if p.get("port")
    )
    where = f" {status.get('address')}" if status.get("address") else ""
    return f"gameserver {md['namespace']}/{md['name']}: {status.get('state', '')}{where} {ports}"


def run_up(args: argparse.Namespace) -> int:
    from ..localcluster.stack import POD_DNS_ADDRESS, LocalStack, StackOptions

    configure_logging(args.log_level.lower())
    state = Path(args.state_dir)
    state.mkdir(parents=True, exist_ok=True)
    kubeconfig = args.kubeconfig or str(state / "kubeconfig")
    try:
        docs = [d for f in args.apply for d in manifests(f)]
        images = [parse_image_flag(text) for text in args.image]
        images += load_image_file(args.images) if args.images else []
    except (OSError, ValueError, yaml.YAMLError) as err:
        print(f"error: {err}")
        return 2
    options = StackOptions(
        nodes=args.nodes,
        first_node_address=args.first_node_address,
        api_port=args.port,
        kubeconfig=str(Path(kubeconfig).resolve()),
        min_port=args.min_port,
        max_port=args.max_port,
        gates=args.feature_gates,
        log_dir=str((state / "logs").resolve()),
        simulate_all=args.simulate_all,
        images=images,
        allocator_port=args.allocator_port,
        allocator_certs_dir=str((state / "allocator").resolve()),
        allocation_batch_wait_time=args.allocation_batch_wait_time,
        extensions_replicas=args.extensions_replicas,
    )
    if args.allocate and mainjob.selector_for(docs) is None:
        print("error: --allocate needs --apply with a Fleet or a GameServer")
        return 2

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            stack = LocalStack(options)
        except ValueError as err:
            print(f"error: {err}")
            return 2
        try:
            await stack.start()
            print(f"local cluster up: API server {stack.api.url}", flush=True)
            print(f"  kubeconfig: {stack.kubeconfig}")
            print(f"  nodes: {', '.join(f'{n} ({a})' for n, a in stack.addresses.items())}")
            print(f"  logs: {options.log_dir} (kubectl logs works too)")
            print("  images that run as local programs (others are simulated):")
            for line in describe_map(images):
                print(f"    {line}")
            if stack.dns is not None:
                print(
                    f"  cluster DNS: {stack.dns.host}:{stack.dns.port} "
                    f"(pods: {POD_DNS_ADDRESS}:53, zone cluster.local)"
                )
            print(f"  try: kubectl --kubeconfig {stack.kubeconfig} get gs")
            certs = stack.allocator_certs
            if certs is not None:
                print(
                    f"  allocator: https://127.0.0.1:{stack.allocator_port} (gRPC and REST, mTLS)"
                )
                print(f"  allocator client certificate: {certs.client}/tls.crt, tls.key, ca.crt")
            print("  Ctrl-C stops everything", flush=True)
            assert stack.client is not None
            job = main_job(stack, docs, args.ready_timeout) if args.allocate else None
            await watch_game_servers(stack.client, stop, docs, job)
        finally:
            print("stopping the local cluster", flush=True)
            await stack.stop()
        return 0

    return aioloop.run(main())


async def main_job(stack: Any, docs: list[dict[str, Any]], timeout: float) -> None:
    """Wait for what was applied, allocate one GameServer through the allocator, print it."""
    selector = mainjob.selector_for(docs)
    assert selector is not None and stack.client is not None
    if stack.allocator_certs is None:
        print("error: the allocator service is not running", flush=True)
        return
    try:
        await mainjob.wait_ready(stack.client, docs, timeout)
        request = mainjob.allocation_request(*selector)
        response = await mainjob.allocate(stack.allocator_port, stack.allocator_certs, request)
    except (TimeoutError, grpc.aio.AioRpcError) as err:
        detail = err.details() if isinstance(err, grpc.aio.AioRpcError) else str(err)
        print(f"error: could not allocate: {detail}", flush=True)
        return
    for line in mainjob.report(response, stack.allocator_port, stack.allocator_certs, request):
        print(line, flush=True)


async def watch_game_servers(
    client: RESTClient,
    stop: asyncio.Event,
    docs: list[dict[str, Any]],
    job: Coroutine[Any, Any, None] | None = None,
) -> None:
    """Apply `docs`, run `job`, and print GameServer state changes until `stop` is set."""
    factory = SharedInformerFactory(client)
    seen: dict[str, str] = {}

    def report(gs: Any) -> None:
        line = describe(gs)
        key = f"{gs['metadata']['namespace']}/{gs['metadata']['name']}"
        if seen.get(key) != line:
            seen[key] = line
            print(line, flush=True)

    def gone(gs: Any) -> None:
        obj = getattr(gs, "obj", gs)
        key = f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"
        seen.pop(key, None)
        print(f"gameserver {key}: deleted", flush=True)

    factory.for_resource(GAME_SERVERS).informer().add_event_handler(
        ResourceEventHandlerFuncs(
            add_func=report, update_func=lambda _o, n: report(n), delete_func=gone
        )
    )
    simulated: set[str] = set()

    def report_pod(pod: Any) -> None:
        md = pod["metadata"]
        reason = (md.get("annotations") or {}).get(SIMULATED_ANNOTATION)
        key = f"{md['namespace']}/{md['name']}"
        if reason and key not in simulated:
            simulated.add(key)
            print(f"pod {key}: simulated: {reason}", flush=True)

    factory.for_resource(PODS).informer().add_event_handler(
        ResourceEventHandlerFuncs(
            add_func=report_pod,
            update_func=lambda _o, n: report_pod(n),
            delete_func=lambda _p: None,
        )
    )
    factory.start()
    try:
        for doc in docs:
            print(await apply(client, doc), flush=True)
        task = asyncio.create_task(job) if job is not None else None
        try:
            await stop.wait()
        finally:
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
    finally:
        with contextlib.suppress(Exception):
            await factory.shutdown()
