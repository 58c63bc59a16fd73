"""`LocalAPIServer`: the aiohttp application serving the Kubernetes API on loopback.

    async with LocalAPIServer() as srv:       # port 0: a free port; writes a kubeconfig
        srv.url, srv.kubeconfig, srv.faults

`ThreadedAPIServer` runs one in a background thread (its own event loop) for synchronous callers such
as the official `kubernetes` client and kubectl in tests. The server starts with the namespaces a
cluster has (default, kube-system, kube-public, kube-node-lease). Fault injection is reachable from
Python (`srv.faults`) and, from loopback only, over HTTP under `/_faults/`.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
from aiohttp import HttpVersion11, web

from ... import pki
from ...httpserver import serve_server
from ..kubeconfig import make_ca_and_cert, write_kubeconfig
from . import discovery, errors, limits, openapi
from .admission import WebhookAdmission
from .aggregation import Aggregator
from .crd import CRDController
from .discovery import SUBRESOURCE_VERBS
from .embedded_controllers import EventReaper, GarbageCollector, NamespaceController
from .faults import Faults
from .handlers import ResourceHandler, parse_path
from .limits import HEADER_READ_LIMIT, header_bytes
from .podexec import PodExecREST
from .podlog import KubeletProxy, PodLogREST
from .registry import Registry
from .requests import JSON, json_response, negotiate_response, status_response
from .resources import ResourceInfo
from .store import Store

log = logging.getLogger(__name__)
_encode = msgspec.json.Encoder().encode

INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


@dataclass
class ServerOptions:
    """How to run the server; defaults suit tests."""

    host: str = "127.0.0.1"
    """Address to listen on (loopback)."""
    port: int = 0
    """TCP port; 0 picks a free one."""
    tls: bool = False
    """Serve HTTPS with a generated CA (its certificate goes into the kubeconfig)."""
    token: str | None = None
    """When set, every request must carry `Authorization: Bearer <token>`."""
    kubeconfig: str | None = None
    """Where to write the kubeconfig; None: a file in a temporary directory."""
    history_size: int = 10000
    """Watch events kept per resource for replay; older resourceVersions get 410 Gone."""
    watcher_capacity: int = 10000
    """Events buffered per watch before a slow consumer's stream is closed."""
    bookmark_interval: float = 5.0
    """Seconds between BOOKMARK events on watches that allow them."""
    event_ttl: float = 3600.0
    """Seconds after its last write an Event is deleted (kube-apiserver's --event-ttl)."""
    in_cluster_tls: bool = False
    """Also serve HTTPS on a second port (`in_cluster_port`, CA `in_cluster_ca_pem`) for pods'
    in-cluster config, which only speaks HTTPS; with `tls` the main port serves them."""
    graceful_pod_deletion: bool = False
    """Delete scheduled pods gracefully (deletionTimestamp first), as a cluster does; only useful
    with a kubelet (simulated nodes) that finishes the deletion with gracePeriodSeconds=0."""


class FaultHandle:
    """The test-facing fault-injection API. Slotted, so that setting a knob it does not have
    fails instead of silently doing nothing."""

    __slots__ = ("_faults", "_store")

    def __init__(self, store: Store, faults: Faults) -> None:
        self._store = store
        self._faults = faults

    def close_watches(self) -> int:
        """End every open watch stream; returns how many were closed."""
        return self._store.close_all_watches()

    def compact(self) -> int:
        """Forget all watch history: watches from an older resourceVersion get 410. Returns the
        resourceVersion compacted to."""
        return self._store.compact()

    def fail_next_writes(self, count: int, code: int) -> None:
        """Make the next `count` writes fail with `code` (409, 429 or 500)."""
        self._faults.fail_next_writes(count, code)

    def set_write_latency(self, seconds: float) -> None:
        self._faults.write_latency = seconds

    def clear(self) -> None:
        self._faults.clear()

    @property
    def injected(self) -> int:
        return self._faults.injected


class LocalAPIServer:
    def __init__(self, options: ServerOptions | None = None, **kwargs: Any) -> None:
        self.options = options or ServerOptions(**kwargs)
        self.store = Store(self.options.history_size, self.options.watcher_capacity)
        self._faults = Faults()
        self.faults = FaultHandle(self.store, self._faults)
        self.registry = Registry(self.store, self._faults)
        self.registry.graceful_pod_deletion = self.options.graceful_pod_deletion
        self.handler = ResourceHandler(self.registry, self.options.bookmark_interval)
        self.crds = CRDController(self.registry, self.handler)
        self.gc = GarbageCollector(self.registry)
        self.namespaces = NamespaceController(self.registry)
        self.events = EventReaper(self.registry, self.options.event_ttl)
        self.admission = WebhookAdmission(self.store)
        self.registry.admission = self.admission
        self.aggregator = Aggregator(self.registry)
        self.handler.proxy = self.aggregator.proxy
        self._runner: web.ServerRunner | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.url = ""
        self.kubeconfig = ""
        self.ca_file: str | None = None
        self.ca_pem: bytes | None = None
        self.port = 0
        self.in_cluster_port = 0
        self.in_cluster_ca_pem: bytes | None = None
        self.kubelets = KubeletProxy()
        self.add_subresource("", "pods", "log", PodLogREST(self.registry, self.kubelets))
        self.add_subresource(
            "", "pods", "exec", PodExecREST(self.registry, self.kubelets), ("create", "get")
        )

    def add_subresource(
        self,
        group: str,
        resource: str,
        subresource: str,
        handler: Callable[[web.Request, ResourceInfo, str, str], Awaitable[web.StreamResponse]],
        verbs: tuple[str, ...] = ("get",),
    ) -> None:
        """Serve `<resource>/<subresource>` with `handler(request, info, namespace, name)`: how
        another component (a simulated kubelet's `pods/log`, say) plugs into the API. It is listed
        in discovery with `verbs`."""
        self.handler.extra_subresources[(group, resource, subresource)] = handler
        for info in self.registry.resources():
            if info.group == group and info.resource == resource:
                info.subresources = info.subresources | {subresource}
        SUBRESOURCE_VERBS.setdefault(subresource, list(verbs))

    # --- lifecycle ---

    async def start(self) -> None:
        opts = self.options
        self._tmp = tempfile.TemporaryDirectory(prefix="agones-localcluster-")
        tmp = Path(self._tmp.name)
        ssl_ctx = None
        if opts.tls:
            cert = make_ca_and_cert((opts.host, "localhost"))
            (tmp / "ca.crt").write_bytes(cert.ca_pem)
            (tmp / "tls.crt").write_bytes(cert.cert_pem)
            (tmp / "tls.key").write_bytes(cert.key_pem)
            ssl_ctx = pki.server_context(tmp / "tls.crt", tmp / "tls.key")
            self.ca_file = str(tmp / "ca.crt")
            self.ca_pem = cert.ca_pem
        self.gc.start()
        self.namespaces.start()
        self.crds.start()
        self.aggregator.start()
        self.events.start()
        for ns in INITIAL_NAMESPACES:
            info = self.registry.lookup("", "v1", "namespaces")
            assert info is not None
            await self.registry.create(info, "", {"metadata": {"name": ns}})
        self._runner, self.port = await serve_server(
            limits.HeaderLimitsServer(self._serve),
            opts.host,
            opts.port,
            ssl_context=ssl_ctx,
            shutdown_timeout=1.0,
        )
        scheme = "https" if opts.tls else "http"
        self.url = f"{scheme}://{opts.host}:{self.port}"
        self.in_cluster_port, self.in_cluster_ca_pem = self.port, self.ca_pem
        if opts.in_cluster_tls and not opts.tls:
            await self._serve_in_cluster_tls(tmp)
        await self._create_kubernetes_service()
        self.kubeconfig = str(
            write_kubeconfig(
                opts.kubeconfig or tmp / "kubeconfig", self.url, self.ca_pem, opts.token
            )
        )

    async def _serve_in_cluster_tls(self, tmp: Path) -> None:
        assert self._runner is not None
        cert = make_ca_and_cert((self.options.host, "localhost"))
        (tmp / "in-cluster.crt").write_bytes(cert.cert_pem)
        (tmp / "in-cluster.key").write_bytes(cert.key_pem)
        ctx = pki.server_context(tmp / "in-cluster.crt", tmp / "in-cluster.key")
        before = set(self._runner.addresses)
        site = web.TCPSite(self._runner, self.options.host, 0, ssl_context=ctx)
        await site.start()
        # The runner's addresses, not the site's asyncio server: any event loop's server works.
        added = [address for address in self._runner.addresses if address not in before]
        self.in_cluster_port = int(added[0][1])
        self.in_cluster_ca_pem = cert.ca_pem

    async def _create_kubernetes_service(self) -> None:
        """default/kubernetes, as every cluster has: the API server's own Service and Endpoints."""
        svc_info = self.registry.lookup("", "v1", "services")
        eps_info = self.registry.lookup("", "v1", "endpoints")
        assert svc_info is not None and eps_info is not None
        port = {"name": "https", "port": 443, "protocol": "TCP", "targetPort": self.port}
        svc = {
            "metadata": {
                "name": "kubernetes",
                "labels": {"component": "apiserver", "provider": "kubernetes"},
            },
            "spec": {"clusterIP": self.registry.cluster_ips.kubernetes_ip, "ports": [port]},
        }
        await self.registry.create(svc_info, "default", svc, system=True)
        subset = {
            "addresses": [{"ip": self.options.host}],
            "ports": [{"name": "https", "port": self.port, "protocol": "TCP"}],
        }
        await self.registry.create(
            eps_info,
            "default",
            {"metadata": {"name": "kubernetes"}, "subsets": [subset]},
            system=True,
        )

    async def stop(self) -> None:
        self.store.close_all_watches()
        await self.gc.stop()
        await self.crds.stop()
        await self.aggregator.stop()
        await self.events.stop()
        await self.admission.close()
        await self.namespaces.stop()
        await self.kubelets.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    async def __aenter__(self) -> LocalAPIServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # --- HTTP ---

    async def _serve(self, request: web.Request) -> web.StreamResponse:
        """Every request, from aiohttp's low-level server: the header limit, `Expect`,
        authentication, dispatch, errors as `Status`, and content negotiation, in one call (no
        router or middleware chain in between)."""
        if header_bytes(request) > HEADER_READ_LIMIT:
            return limits.headers_too_large_response()
        if request.headers.get("Expect"):
            await expect_continue(request)
        token = self.options.token
        if (
            token is not None
            and not request.path.startswith("/_faults/")
            and request.headers.get("Authorization", "") != f"Bearer {token}"
        ):
            return status_response(errors.StatusError(401, "Unauthorized", "Unauthorized"))
        try:
            resp: web.StreamResponse = await self._dispatch(request)
        except errors.StatusError as err:
            resp = status_response(err)
        except web.HTTPException:
            raise
        except Exception as err:
            log.exception("internal error serving %s %s", request.method, request.path)
            resp = status_response(errors.internal(f"{type(err).__name__}: {err}"))
        return negotiate_response(request, resp)

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        if path == "/version":
            return json_response(_encode(discovery.VERSION_INFO))
        if path in ("/healthz", "/livez", "/readyz"):
            return web.Response(text="ok")
        if path.startswith("/_faults/"):
            return await self._faults_endpoint(request, path)
        if path == "/openapi/v2":
            return self._openapi_v2(request)
        if path == "/openapi/v3" or path.startswith("/openapi/v3/"):
            return self._openapi(path[len("/openapi/v3") :].strip("/"))
        if path == "/api":
            return json_response(
                _encode(discovery.api_versions(f"{self.options.host}:{self.port}"))
            )
        if path == "/apis":
            return json_response(_encode(self._group_list()))
        parts = path.strip("/").split("/")
        if parts[0] == "api" and len(parts) == 2:
            return self._resource_list("", parts[1])
        if parts[0] == "apis" and len(parts) == 2:
            groups = self._groups()
            if parts[1] not in groups:
                return self._not_found()
            return json_response(
                _encode(
                    discovery.group_doc(
                        parts[1], groups[parts[1]], self.crds.preferred.get(parts[1])
                    )
                )
            )
        if parts[0] == "apis" and len(parts) == 3:
            proxied = await self.aggregator.proxy(request, parts[1], parts[2])
            if proxied is not None:
                return proxied
            return self._resource_list(parts[1], parts[2])
        target = parse_path(path)
        if target is None:
            return self._not_found()
        return await self.handler.handle(request, target)

    def _openapi(self, gv: str) -> web.Response:
        docs = openapi.group_versions(self.registry.resources())
        if not gv:
            hashes = {g: openapi.encode_document(infos)[1] for g, infos in docs.items()}
            return json_response(_encode(openapi.root_document(hashes)))
        if gv not in docs:
            return self._not_found()
        body, _ = openapi.encode_document(docs[gv])
        return json_response(body)

    @staticmethod
    def _openapi_v2(request: web.Request) -> web.Response:
        """An OpenAPI v2 document without paths: kubectl falls back to it for kinds the v3
        documents do not describe (aggregated APIs), finds no schema, and leaves validation to the
        server, as it does on a cluster whose aggregated API publishes none."""
        if "protobuf" in request.headers.get("Accept", ""):
            # openapi_v2.Document{swagger: "2.0"}: field 1, length 3.
            return web.Response(body=b"\n\x032.0", content_type=openapi.V2_PROTOBUF)
        doc = {
            "swagger": "2.0",
            "info": {"title": "Kubernetes", "version": discovery.KUBERNETES_VERSION},
            "paths": {},
        }
        return json_response(_encode(doc))

    def _not_found(self) -> web.Response:
        return status_response(
            errors.StatusError(
                404, "NotFound", "the server could not find the requested resource", {}
            )
        )

    def _groups(self) -> dict[str, list[str]]:
        groups: dict[str, list[str]] = {}
        for info in self.registry.resources():
            if info.group:
                versions = groups.setdefault(info.group, [])
                if info.version not in versions:
                    versions.append(info.version)
        for group, version in self.aggregator.group_versions():
            versions = groups.setdefault(group, [])
            if version not in versions:
                versions.append(version)
        return groups

    def _group_list(self) -> dict[str, Any]:
        return discovery.group_list(self._groups(), self.crds.preferred)

    def _resource_list(self, group: str, version: str) -> web.StreamResponse:
        infos = [i for i in self.registry.resources() if i.group == group and i.version == version]
        if not infos:
            return self._not_found()
        gv = f"{group}/{version}" if group else version
        return json_response(_encode(discovery.resource_list(gv, infos)))

    async def _faults_endpoint(self, request: web.Request, path: str) -> web.Response:
        remote = request.remote or ""
        if remote not in ("127.0.0.1", "::1", "localhost"):
            return web.Response(status=403, text="fault injection is local-only")
        q = request.query
        action = path[len("/_faults/") :]
        result: dict[str, Any]
        try:
            if action == "close-watches":
                result = {"closed": self.faults.close_watches()}
            elif action == "compact":
                result = {"compactedTo": self.faults.compact()}
            elif action == "fail-writes":
                self.faults.fail_next_writes(int(q.get("count", "1")), int(q.get("code", "500")))
                result = {"pending": len(self._faults.fail_codes)}
            elif action == "latency":
                self.faults.set_write_latency(float(q.get("seconds", "0")))
                result = {"latency": self._faults.write_latency}
            elif action == "clear":
                self.faults.clear()
                result = {}
            elif action == "stats":
                result = self.store.stats()
            else:
                return web.Response(status=404, text=f"unknown fault action {action!r}")
        except ValueError as err:
            return web.Response(status=400, text=str(err))
        return web.Response(body=_encode(result), content_type=JSON)


class ThreadedAPIServer:
    """A `LocalAPIServer` on its own event loop in a daemon thread, for synchronous code."""

    def __init__(self, options: ServerOptions | None = None, **kwargs: Any) -> None:
        self.options = options or ServerOptions(**kwargs)
        self.server: LocalAPIServer | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    def start(self, timeout: float = 30.0) -> LocalAPIServer:
        self._thread = threading.Thread(target=self._run, name="local-apiserver", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError("local API server did not start")
        if self._error is not None:
            raise RuntimeError("local API server failed to start") from self._error
        assert self.server is not None
        return self.server

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        self.server = LocalAPIServer(self.options)
        try:
            loop.run_until_complete(self.server.start())
        except BaseException as err:
            self._error = err
            self._ready.set()
            return
        self._ready.set()
        loop.run_forever()
        loop.run_until_complete(self.server.stop())
        loop.close()

    def call(self, fn: Any, *args: Any) -> Any:
        """Run `fn(*args)` on the server's loop (for fault injection from another thread)."""
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(_call(fn, *args), self._loop).result(10)

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop = None

    def __enter__(self) -> LocalAPIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


async def _call(fn: Any, *args: Any) -> Any:
    return fn(*args)


async def expect_continue(request: web.Request) -> None:
    """`Expect: 100-continue` answered before the body is read, as Go's server (and aiohttp's
    router) do; any other expectation is a 417."""
    expect = request.headers.get("Expect", "")
    if request.version != HttpVersion11:
        return
    if expect.lower() != "100-continue":
        raise web.HTTPExpectationFailed(text=f"Unknown Expect: {expect}")
    await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    request.writer.output_size = 0  # the response proper has not started
    await request.writer.drain()
