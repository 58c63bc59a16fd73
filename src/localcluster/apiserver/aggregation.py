"""API aggregation: APIService objects whose `spec.service` is set have their group-version served by
that service, as kube-aggregator does. This is how `allocation.agones.dev/v1` is served.

Requests under `/apis/<group>/<version>` (discovery included) are proxied to the resolved service
(see `services.py` for how a Service reaches a local process) over HTTPS, verified with the
APIService's `caBundle` unless `insecureSkipTLSVerify`. The group appears in `/apis` once the
APIService exists; its `Available` condition reflects a discovery probe of the backend.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import ssl
from typing import Any

import aiohttp
from aiohttp import web
from yarl import URL

from ...client.http1 import ConnectionPool
from . import errors, limits
from .meta import now_rfc3339
from .registry import Registry
from .resources import ResourceInfo
from .services import ServiceUnresolvable, resolve_service
from .workqueue import EmbeddedQueue

log = logging.getLogger(__name__)
Obj = dict[str, Any]
KEY = "apiregistration.k8s.io/apiservices"
_HOP_HEADERS = {
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "host",
    "upgrade",
    "authorization",
}


class Aggregator:
    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        # (host, port, TLS context, name checked) -> the connections kept to that backend
        self._pools: dict[tuple[str, int, ssl.SSLContext, str | None], ConnectionPool] = {}
        self._contexts: dict[tuple[bool, str], ssl.SSLContext] = {}
        # Unavailable APIServices are probed again with back-off until their backend answers.
        self.work = EmbeddedQueue("apiservice-availability", self._probe)
        registry.listeners.append(self.observe)

    def _services(self) -> dict[tuple[str, str], Obj]:
        out = {}
        for entry in self.registry.store.list(KEY):
            spec = entry.obj.get("spec") or {}
            if spec.get("service") and spec.get("group") and spec.get("version"):
                out[(spec["group"], spec["version"])] = entry.obj
        return out

    def group_versions(self) -> list[tuple[str, str]]:
        return list(self._services())

    def observe(self, info: ResourceInfo, old: Obj | None, new: Obj | None) -> None:
        changed = new is not None and (old is None or old.get("spec") != new.get("spec"))
        if info.key == KEY and changed and new is not None and new.get("spec", {}).get("service"):
            self.work.add(new["metadata"]["name"])

    def start(self) -> None:
        self.work.start()

    async def stop(self) -> None:
        await self.work.stop()
        for pool in self._pools.values():
            pool.close()
        self._pools.clear()

    async def _probe(self, item: tuple[str, ...]) -> bool | None:
        (name,) = item
        entry = self.registry.store.get(KEY, "", name)
        if entry is None:
            return None
        spec = entry.obj["spec"]
        try:
            status, _, _ = await self._forward(
                entry.obj, "GET", f"/apis/{spec['group']}/{spec['version']}", "", {}, b""
            )
            ok, reason, message = status == 200, "Passed", "all checks passed"
            if not ok:
                reason, message = (
                    "FailedDiscoveryCheck",
                    f"failing or missing response from the service: {status}",
                )
        except (aiohttp.ClientError, OSError, ServiceUnresolvable, TimeoutError) as err:
            ok, reason, message = (
                False,
                "FailedDiscoveryCheck",
                f"failing or missing response from the service: {err}",
            )
        info = self.registry.by_key(KEY)
        latest = self.registry.store.get(KEY, "", name)
        if info is None or latest is None:
            return None

        def set_available(obj: Obj) -> None:
            cond = {
                "type": "Available",
                "status": "True" if ok else "False",
                "lastTransitionTime": now_rfc3339(),
                "reason": reason,
                "message": message,
            }
            obj.setdefault("status", {})["conditions"] = [cond]

        self.registry.force_update(info, latest, set_available)
        return not ok

    def _ssl_context(self, insecure: bool, ca_bundle: str) -> ssl.SSLContext:
        """One context per (trust, CA bundle): connections are kept per context, so a context
        per request would mean a TLS handshake per proxied request."""
        key = (insecure, ca_bundle)
        ctx = self._contexts.get(key)
        if ctx is None:
            ctx = ssl.create_default_context()
            if insecure:
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            elif ca_bundle:
                ctx.load_verify_locations(cadata=base64.b64decode(ca_bundle).decode())
            self._contexts[key] = ctx
        return ctx

    async def _forward(
        self,
        apiservice: Obj,
        method: str,
        path: str,
        query: str,
        headers: dict[str, str],
        body: bytes,
    ) -> tuple[int, dict[str, str], bytes]:
        spec = apiservice["spec"]
        svc = spec["service"]
        target = resolve_service(
            self.registry.store, svc.get("namespace", ""), svc["name"], int(svc.get("port", 443))
        )
        insecure = bool(spec.get("insecureSkipTLSVerify"))
        ctx = self._ssl_context(insecure, spec.get("caBundle") or "")
        # the URL the request goes to, encoded as a client would send it
        url = URL(target.base_url + path + (f"?{query}" if query else ""))
        server_name = None if insecure else target.server_name
        key = (url.raw_host or "", url.port or 443, ctx, server_name)
        pool = self._pools.get(key)
        if pool is None:
            pool = self._pools[key] = ConnectionPool(
                key[0], key[1], ctx, server_hostname=server_name
            )
        fwd = {k: v for k, v in headers.items() if k.lower() not in _HOP_HEADERS}
        fwd["X-Remote-User"] = "system:admin"
        fwd["X-Remote-Group"] = "system:masters"
        # header text as aiohttp decoded it from the client's bytes, so the same bytes go on
        head = "".join(f"{k}: {v}\r\n" for k, v in fwd.items()).encode("utf-8", "surrogateescape")
        async with asyncio.timeout(60):
            resp = await pool.request(method, url.raw_path_qs, head, body or None)
        return (
            resp.status,
            {k: v for k, v in resp.headers.items() if k.lower() not in _HOP_HEADERS},
            resp.body,
        )

    async def proxy(
        self, request: web.Request, group: str, version: str
    ) -> web.StreamResponse | None:
        apiservice = self._services().get((group, version))
        if apiservice is None:
            return None
        body = await limits.read_limited(request)
        try:
            status, headers, raw = await self._forward(
                apiservice,
                request.method,
                request.path,
                request.query_string,
                dict(request.headers),
                body,
            )
        except (aiohttp.ClientError, OSError, ServiceUnresolvable, TimeoutError) as err:
            raise errors.StatusError(
                503,
                "ServiceUnavailable",
                f"the server is currently unable to handle the request: {err}",
            ) from None
        return web.Response(status=status, body=raw, headers=headers)
