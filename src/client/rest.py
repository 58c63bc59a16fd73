"""A thin async REST client for raw JSON (client-go `rest.RESTClient`, without typed models).

Contract:
* Requests and responses are JSON; results come back as plain dicts (or raw bytes from `*_raw`), so
  callers choose their own decoding. Bodies may be dicts or msgspec Structs.
* Every request, watches included, first waits on the client-side QPS/burst token bucket of its
  clientset (`throttle.py`: Kubernetes, apiextensions or Agones, chosen by the API group; a bucket
  each, as client-go gives each clientset built from one config).
* A non-2xx response raises the typed `ApiError` subclass for its code, carrying the Status. When the
  server sends `Retry-After` with a 429 or 5xx, the request is retried after that delay, up to
  `max_retries` times, as client-go does; then the error is raised.
* Requests go over `http1.ConnectionPool` (keep-alive HTTP/1.1, every connection a burst opened
  kept for the next one: half the CPU per request of aiohttp's client, measured by
  `bench/rest_client_cpu.py`); watch streams over an aiohttp session.
* `watch()` yields one raw JSON event (bytes, no newline) per line of the stream and ends when the
  server closes it; lines of any size are handled.
* HTTP metrics go to `agones_k8s_client_http_request_*` with the URL template (`{namespace}`,
  `{name}`) as endpoint, keeping cardinality low.
Never imports the `kubernetes` packages.
"""

from __future__ import annotations

import asyncio
import re
import ssl
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote, urlencode

import aiohttp
import msgspec
from yarl import URL

from ..clock import Clock, RealClock
from .config import Config
from .errors import error_from_response
from .http1 import ConnectionPool
from .metrics import ClientMetrics
from .throttle import ClientsetRateLimiters

PatchType = Literal["json", "merge", "strategic", "apply"]

PATCH_CONTENT_TYPES: dict[str, str] = {
    "json": "application/json-patch+json",
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}

_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder()

_PLAIN_PATH = re.compile(r"[A-Za-z0-9\-._~/:@]*")
"""Path characters that percent-encoding leaves as they are (unreserved, `/`, `:`, `@`)."""


def _plain(path: str) -> bool:
    """Whether `path` can be joined to the parsed host as it stands: percent-encoding would leave
    it as it is (every name the API allows) and it has no dot segment to normalise."""
    return "/." not in path and _PLAIN_PATH.fullmatch(path) is not None


@dataclass(frozen=True, slots=True)
class Resource:
    """Where a resource lives in the API (a GroupVersionResource plus its scope)."""

    group: str
    version: str
    plural: str
    namespaced: bool = True
    kind: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(
        self, namespace: str | None = None, name: str | None = None, subresource: str | None = None
    ) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{namespace}"
        base += f"/{self.plural}"
        if name:
            base += f"/{name}"
            if subresource:
                base += f"/{subresource}"
        return base

    def template(self, namespace: str | None, name: str | None, subresource: str | None) -> str:
        return self.path(
            "{namespace}" if namespace else None, "{name}" if name else None, subresource
        )


def _selector_params(label_selector: str | None, field_selector: str | None) -> dict[str, str]:
    params: dict[str, str] = {}
    if label_selector:
        params["labelSelector"] = label_selector
    if field_selector:
        params["fieldSelector"] = field_selector
    return params


def session_headers(config: Config) -> dict[str, str]:
    """The headers every request of `config`'s client carries: the user agent, JSON accepted,
    basic auth when set (a bearer token, per request, takes its place)."""
    headers = {"User-Agent": config.user_agent, "Accept": "application/json"}
    if config.username is not None:
        headers["Authorization"] = aiohttp.encode_basic_auth(config.username, config.password or "")
    return headers


def new_session(
    config: Config, ssl_context: ssl.SSLContext | None, headers: Mapping[str, str] | None = None
) -> aiohttp.ClientSession:
    """An aiohttp session for `config.host`: its TLS (`config.ssl_context()`, built once by the
    caller), `session_headers` plus `headers`; no cookies."""
    return aiohttp.ClientSession(
        # client-go talks HTTP/2 to kube-apiserver: one connection carries all of a clientset's
        # concurrent requests, so it never pays a TLS handshake per request. Over HTTP/1.1 the
        # same holds when every connection opened for a burst is kept for the next one; aiohttp
        # closes one after 15 s idle. (Go's HTTP/1.1 cap of 25 idle connections per host made
        # the controller open 2.7 new TLS connections per GameServer of a Fleet at full speed.)
        connector=aiohttp.TCPConnector(ssl=ssl_context if ssl_context else False, limit=0),
        # client-go's http.Client has no cookie jar: cookies a server or proxy sets are not sent
        # back (and no jar is searched on each request).
        cookie_jar=aiohttp.DummyCookieJar(),
        headers={**session_headers(config), **(headers or {})},
    )


class RESTClient:
    def __init__(
        self,
        config: Config,
        *,
        clock: Clock | None = None,
        max_retries: int = 10,
    ) -> None:
        self.config = config
        self.clock = clock or RealClock()
        self.max_retries = max_retries
        self.rate_limiters = ClientsetRateLimiters(config.qps, config.burst, self.clock)
        self._session: aiohttp.ClientSession | None = None
        self._pool: ConnectionPool | None = None
        self._ssl = config.ssl_context()
        # (bearer token, content type) -> the per-request headers, as aiohttp takes them (watch
        # streams) and as the header lines `ConnectionPool.request` takes: a handful, built once
        self._headers_by: dict[tuple[str | None, str | None], tuple[dict[str, str], bytes]] = {}
        base = URL(config.host)
        self._base_url = None if base.raw_query_string or base.raw_fragment else base
        self._base_path = base.raw_path.rstrip("/")

    async def __aenter__(self) -> RESTClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = new_session(self.config, self._ssl)
        return self._session

    def _get_pool(self) -> ConnectionPool:
        if self._pool is None:
            base = URL(self.config.host)
            if base.scheme not in ("http", "https") or not base.raw_host:
                raise ValueError(f"not an http(s) server URL: {self.config.host!r}")
            port = base.port or (443 if base.scheme == "https" else 80)
            self._pool = ConnectionPool(base.raw_host, port, self._ssl)
        return self._pool

    def _head(self, content_type: str | None) -> bytes:
        """The header lines of a request through the pool: `session_headers` (what the aiohttp
        session adds to each of its requests), then `_headers`."""
        return self._request_headers(content_type)[1]

    def target(self, path: str, params: Mapping[str, str] | None = None) -> str:
        """The request target of `path` and `params` on the server: what `url` gives, path and
        query, percent-encoded."""
        if self._base_url is not None and _plain(path):
            target = self._base_path + path
        else:
            target = URL(self.config.host + path).raw_path
        if params:
            target += "?" + urlencode(params, quote_via=quote)
        return target

    def _headers(self, content_type: str | None) -> dict[str, str]:
        """The per-request headers (aiohttp copies them into each request, never changes them)."""
        return self._request_headers(content_type)[0]

    def _request_headers(self, content_type: str | None) -> tuple[dict[str, str], bytes]:
        """`_headers` and `_head` for the current bearer token and `content_type`."""
        token = self.config.bearer_token()
        cached = self._headers_by.get((token, content_type))
        if cached is None:
            headers = {}
            if token:
                headers["Authorization"] = f"Bearer {token}"
            if content_type:
                headers["Content-Type"] = content_type
            fields = {**session_headers(self.config), **headers}
            head = "".join(f"{k}: {v}\r\n" for k, v in fields.items()).encode("latin-1")
            if len(self._headers_by) > 16:  # a rotating token file: drop the old tokens' ones
                self._headers_by.clear()
            cached = self._headers_by[(token, content_type)] = (headers, head)
        return cached

    def url(self, path: str) -> URL | str:
        """The URL of `path` on the server. A path that percent-encoding would leave as it is
        (every name the API allows, no dot segment) is joined to the parsed host as it stands:
        the same URL, without yarl parsing and normalising the whole string again, which costs
        ~10 times more for a name not in its cache — and every GameServer has a name of its own."""
        if self._base_url is not None and _plain(path):
            return self._base_url.with_path(self._base_path + path, encoded=True)
        return self.config.host + path

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: Any = None,
        content_type: str | None = None,
        endpoint: str | None = None,
    ) -> bytes:
        """Send one request (retrying on Retry-After); return the body or raise ApiError."""
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else _encoder.encode(body)
            content_type = content_type or "application/json"
        pool = self._get_pool()
        target = self.target(path, params)
        head = self._head(content_type)
        attempt = 0
        while True:
            await self.rate_limiters.wait(path)
            start = time.perf_counter()
            async with asyncio.timeout(self.config.timeout or None):
                resp = await pool.request(method, target, head, data)
            ClientMetrics.request(
                method, endpoint or path, resp.status, time.perf_counter() - start
            )
            if resp.status < 300:
                return resp.body
            err = error_from_response(resp.status, resp.body, resp.headers)
            retryable = "Retry-After" in resp.headers and (resp.status == 429 or resp.status >= 500)
            if not retryable or attempt >= self.max_retries:
                raise err
            attempt += 1
            await self.clock.sleep(err.retry_after or 0.0)

    async def _raw(self, method: str, res: Resource, **kw: Any) -> bytes:
        namespace, name, sub = kw.pop("namespace", None), kw.pop("name", None), kw.pop("sub", None)
        return await self.request(
            method,
            res.path(namespace, name, sub),
            endpoint=res.template(namespace, name, sub),
            **kw,
        )

    async def _json(self, method: str, res: Resource, **kw: Any) -> dict[str, Any]:
        raw = await self._raw(method, res, **kw)
        result: dict[str, Any] = _decoder.decode(raw) if raw else {}
        return result

    async def get(
        self, res: Resource, name: str, namespace: str | None = None, subresource: str | None = None
    ) -> dict[str, Any]:
        return await self._json("GET", res, namespace=namespace, name=name, sub=subresource)

    def _list_params(
        self,
        label_selector: str | None,
        field_selector: str | None,
        limit: int | None,
        continue_: str | None,
        resource_version: str | None,
        resource_version_match: str | None,
    ) -> dict[str, str]:
        params = _selector_params(label_selector, field_selector)
        if limit:
            params["limit"] = str(limit)
        if continue_:
            params["continue"] = continue_
        if resource_version is not None:
            params["resourceVersion"] = resource_version
        if resource_version_match:
            params["resourceVersionMatch"] = resource_version_match
        return params

    async def list_raw(
        self,
        res: Resource,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
    ) -> bytes:
        params = self._list_params(
            label_selector,
            field_selector,
            limit,
            continue_,
            resource_version,
            resource_version_match,
        )
        return await self.request(
            "GET", res.path(namespace), params=params, endpoint=res.template(namespace, None, None)
        )

    async def list(
        self,
        res: Resource,
        namespace: str | None = None,
        **kw: Any,
    ) -> dict[str, Any]:
        raw = await self.list_raw(res, namespace, **kw)
        result: dict[str, Any] = _decoder.decode(raw)
        return result

    async def watch(
        self,
        res: Resource,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        timeout_seconds: int | None = None,
        allow_watch_bookmarks: bool = True,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> AsyncIterator[bytes]:
        """Yield raw watch events (one JSON object per line) until the server ends the stream."""
        params = _selector_params(label_selector, field_selector)
        params["watch"] = "true"
        if resource_version is not None:
            params["resourceVersion"] = resource_version
        if timeout_seconds is not None:
            params["timeoutSeconds"] = str(timeout_seconds)
        if allow_watch_bookmarks:
            params["allowWatchBookmarks"] = "true"
        path = res.path(namespace)
        await self.rate_limiters.wait(path)
        session = self._get_session()
        # A silent connection longer than the server-side timeout (plus slack) is dead.
        sock_read = (timeout_seconds + 30) if timeout_seconds else None
        start = time.perf_counter()
        async with session.get(
            self.url(path),
            params=params,
            headers=self._headers(None),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=sock_read),
        ) as resp:
            ClientMetrics.request(
                "WATCH",
                res.template(namespace, None, None),
                resp.status,
                time.perf_counter() - start,
            )
            if resp.status >= 300:
                raise error_from_response(resp.status, await resp.read(), resp.headers)
            buffer = b""
            async for chunk in resp.content.iter_any():
                buffer += chunk
                if b"\n" not in chunk:
                    continue
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield line
            if buffer.strip():
                yield buffer

    async def create(
        self, res: Resource, body: Any, namespace: str | None = None
    ) -> dict[str, Any]:
        return await self._json("POST", res, namespace=namespace, body=body)

    async def create_raw(self, res: Resource, body: Any, namespace: str | None = None) -> bytes:
        """`create`, answering the stored object's undecoded JSON (for callers that need none of
        it, or decode it into a type of their own: a pod's answer costs more to decode than to
        send)."""
        return await self._raw("POST", res, namespace=namespace, body=body)

    async def update(
        self, res: Resource, body: Any, namespace: str | None = None, subresource: str | None = None
    ) -> dict[str, Any]:
        name, ns = name_namespace(body)
        return await self._json(
            "PUT", res, namespace=namespace or ns, name=name, sub=subresource, body=body
        )

    async def update_raw(
        self, res: Resource, body: Any, namespace: str | None = None, subresource: str | None = None
    ) -> bytes:
        """`update`, answering the stored object's undecoded JSON (to decode into a type of the
        caller's own in one pass)."""
        name, ns = name_namespace(body)
        return await self._raw(
            "PUT", res, namespace=namespace or ns, name=name, sub=subresource, body=body
        )

    async def update_status(
        self, res: Resource, body: Any, namespace: str | None = None
    ) -> dict[str, Any]:
        return await self.update(res, body, namespace, "status")

    async def patch(
        self,
        res: Resource,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        patch_type: PatchType = "merge",
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool = False,
    ) -> dict[str, Any]:
        params: dict[str, str] = {}
        if field_manager:
            params["fieldManager"] = field_manager
        if force:
            params["force"] = "true"
        return await self._json(
            "PATCH",
            res,
            namespace=namespace,
            name=name,
            sub=subresource,
            body=patch,
            content_type=PATCH_CONTENT_TYPES[patch_type],
            params=params or None,
        )

    async def delete(
        self,
        res: Resource,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        raw = await self.delete_raw(
            res,
            name,
            namespace,
            propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds,
            preconditions=preconditions,
        )
        result: dict[str, Any] = _decoder.decode(raw) if raw else {}
        return result

    async def delete_raw(
        self,
        res: Resource,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Mapping[str, str] | None = None,
    ) -> bytes:
        """`delete`, answering the undecoded JSON (the object being deleted, or a Status)."""
        options = delete_options(propagation_policy, grace_period_seconds, preconditions)
        return await self._raw("DELETE", res, namespace=namespace, name=name, body=options)


def delete_options(
    propagation_policy: str | None,
    grace_period_seconds: int | None,
    preconditions: Mapping[str, str] | None,
) -> dict[str, Any]:
    """The `DeleteOptions` body of a delete (only the options that are set)."""
    options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
    if propagation_policy:
        options["propagationPolicy"] = propagation_policy
    if grace_period_seconds is not None:
        options["gracePeriodSeconds"] = grace_period_seconds
    if preconditions:
        options["preconditions"] = dict(preconditions)
    return options


def name_namespace(body: Any) -> tuple[str, str | None]:
    """`(metadata.name, metadata.namespace or None)` of a dict or Struct; ValueError without a name."""
    meta = body.get("metadata") if isinstance(body, Mapping) else getattr(body, "metadata", None)
    if isinstance(meta, Mapping):
        name, namespace = meta.get("name"), meta.get("namespace")
    else:
        name, namespace = getattr(meta, "name", None), getattr(meta, "namespace", None)
    if not name:
        raise ValueError("the object needs metadata.name")
    return str(name), str(namespace) if namespace else None


async def wait_closed(client: RESTClient) -> None:
    """Close the client and give aiohttp's transports a tick to shut (avoids warnings)."""
    await client.close()
    await asyncio.sleep(0)
