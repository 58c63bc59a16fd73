"""`GET pods/{name}/log`: kube-apiserver's `LogREST`, proxied to the kubelet of the pod's node.

As kube-apiserver does it (`pkg/registry/core/pod/rest/log.go`, `LogLocation` in the pod
strategy): the query is decoded into `PodLogOptions` (a value that does not parse: 400 with the
parser's words), validated (`ValidatePodLogOptions`: 422 `PodLogOptions "<pod>" is invalid`), the
container chosen (`validateContainer`: none named and several in the pod, or a name the pod does not
have: 400), and the request forwarded to `http://<node InternalIP>:<status.daemonEndpoints.
kubeletEndpoint.Port>/containerLogs/<ns>/<pod>/<container>?<options>`. A pod not yet on a node
has an empty log. The kubelet's answer streams back as `text/plain` (flushed per chunk when
following); a 400 of the kubelet becomes a 400 `Status` with its text as the message, as
`GenericHttpResponseChecker` does.

`parse_log_options` is shared with the simulated kubelet's server, which reads the same query.
"""

from __future__ import annotations

import asyncio
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
from aiohttp import web
from multidict import MultiMapping

from ...apis import field
from . import errors
from .registry import Registry
from .resources import ResourceInfo

DEFAULT_KUBELET_PORT = 10250
"""kube-apiserver's `--kubelet-port`, used when a Node advertises no kubelet endpoint."""
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})")


@dataclass(frozen=True)
class PodLogOptions:
    """core/v1 PodLogOptions (the query parameters of `pods/log`)."""

    container: str = ""
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    since_seconds: int | None = None
    since_time: datetime | None = None
    tail_lines: int | None = None
    limit_bytes: int | None = None

    def since(self, now: datetime) -> datetime | None:
        if self.since_time is not None:
            return self.since_time
        if self.since_seconds is not None:
            return now - timedelta(seconds=self.since_seconds)
        return None

    def query(self) -> dict[str, str]:
        """The kubelet's query, as `LogLocation` builds it."""
        q: dict[str, str] = {}
        for name, flag in (
            ("follow", self.follow),
            ("previous", self.previous),
            ("timestamps", self.timestamps),
        ):
            if flag:
                q[name] = "true"
        if self.since_seconds is not None:
            q["sinceSeconds"] = str(self.since_seconds)
        if self.since_time is not None:
            q["sinceTime"] = self.since_time.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        if self.tail_lines is not None:
            q["tailLines"] = str(self.tail_lines)
        if self.limit_bytes is not None:
            q["limitBytes"] = str(self.limit_bytes)
        return q


def _bool(value: str) -> bool:
    """apimachinery's query-parameter bool: false only for "", "0" and "false" (any case)."""
    return value not in ("", "0") and value.lower() != "false"


def _int64(value: str) -> int | None:
    if value == "":
        return None
    if not re.fullmatch(r"[+-]?\d+", value) or not -(2**63) <= int(value) < 2**63:
        why = "value out of range" if re.fullmatch(r"[+-]?\d+", value) else "invalid syntax"
        raise errors.bad_request(f'strconv.ParseInt: parsing "{value}": {why}')
    return int(value)


def _time(value: str) -> datetime | None:
    if value in ("", "null"):
        return None
    if _RFC3339.fullmatch(value):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            pass
    raise errors.bad_request(
        f'parsing time "{value}" as "2006-01-02T15:04:05Z07:00": cannot parse "{value}" as "2006"'
    )


def parse_log_options(query: MultiMapping[str]) -> PodLogOptions:
    """Decode (400 on a value that does not parse) and validate (422) the query."""
    first = {key: query.getone(key) for key in query}
    opts = PodLogOptions(
        container=first.get("container", ""),
        follow=_bool(first.get("follow", "")),
        previous=_bool(first.get("previous", "")),
        timestamps=_bool(first.get("timestamps", "")),
        since_seconds=_int64(first.get("sinceSeconds", "")),
        since_time=_time(first.get("sinceTime", "")),
        tail_lines=_int64(first.get("tailLines", "")),
        limit_bytes=_int64(first.get("limitBytes", "")),
    )
    return opts


def validate_log_options(opts: PodLogOptions) -> list[field.FieldError]:
    """`ValidatePodLogOptions`."""
    errs: list[field.FieldError] = []
    if opts.tail_lines is not None and opts.tail_lines < 0:
        errs.append(
            field.invalid("tailLines", opts.tail_lines, "must be greater than or equal to 0")
        )
    if opts.limit_bytes is not None and opts.limit_bytes < 1:
        errs.append(field.invalid("limitBytes", opts.limit_bytes, "must be greater than 0"))
    if opts.since_seconds is not None and opts.since_time is not None:
        errs.append(
            field.forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified")
        )
    elif opts.since_seconds is not None and opts.since_seconds < 1:
        errs.append(field.invalid("sinceSeconds", opts.since_seconds, "must be greater than 0"))
    return errs


def container_names(spec: dict[str, Any]) -> list[str]:
    """Every container of the pod in `VisitContainers` order: init, regular, ephemeral."""
    return [
        str(c.get("name", ""))
        for kind in ("initContainers", "containers", "ephemeralContainers")
        for c in spec.get(kind) or []
        if isinstance(c, dict)
    ]


def choose_container(pod: dict[str, Any], container: str) -> str:
    """`validateContainer`: the named container, or the only one; else a 400."""
    spec = pod.get("spec") or {}
    name = pod["metadata"]["name"]
    if container:
        if container not in container_names(spec):
            raise errors.bad_request(f"container {container} is not valid for pod {name}")
        return container
    regular = spec.get("containers") or []
    if len(regular) == 1:
        return str(regular[0].get("name", ""))
    if not regular:
        raise errors.bad_request(f"a container name must be specified for pod {name}")
    names = " ".join(container_names(spec))
    raise errors.bad_request(
        f"a container name must be specified for pod {name}, choose one of: [{names}]"
    )


def kubelet_location(node: dict[str, Any]) -> tuple[str, int]:
    """The node's kubelet: its InternalIP and advertised port."""
    status = node.get("status") or {}
    addresses = {a.get("type"): a.get("address") for a in status.get("addresses") or []}
    host = addresses.get("InternalIP") or addresses.get("ExternalIP") or node["metadata"]["name"]
    endpoint = (status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}
    return str(host), int(endpoint.get("Port") or DEFAULT_KUBELET_PORT)


def kubelet_url(registry: Registry, pod: dict[str, Any], path: str, container: str) -> str:
    """`http://<kubelet of the pod's node>/<path>/<ns>/<pod>/<container>` (the pod is bound)."""
    nodes = registry.lookup("", "v1", "nodes")
    assert nodes is not None
    md = pod["metadata"]
    host, port = kubelet_location(registry.get(nodes, "", pod["spec"]["nodeName"]).obj)
    return f"http://{host}:{port}/{path}/{md['namespace']}/{md['name']}/{container}"


def kubelet_error(status: int, text: str, subresource: str, name: str) -> errors.StatusError:
    """The kubelet's failure as the API server reports it (`GenericHttpResponseChecker`)."""
    if status == 400:
        return errors.bad_request(text.strip())
    if status == 404:
        return errors.StatusError(
            404,
            "NotFound",
            f"the server could not find the requested resource ( {subresource} {name})",
            {"name": name, "kind": subresource},
        )
    return errors.internal(text.strip())


class KubeletProxy:
    """One HTTP client session to the kubelets, shared by the pods' subresources. It presents
    `token` (kube-apiserver's `--kubelet-client-certificate`, here a bearer token the local
    kubelets are given), so nothing else on the machine reads logs or execs through a kubelet."""

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None
        self.token = secrets.token_urlsafe(32)

    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=None),
                headers={"Authorization": f"Bearer {self.token}"},
            )
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


CLIENT_CHECK = 1.0
"""Seconds between looks at a following client's connection while the kubelet sends nothing."""


async def _next_chunk(request: web.Request, upstream: aiohttp.ClientResponse) -> bytes:
    """The kubelet's next bytes (b"" at its end), or b"" once the client has gone away (so an
    abandoned `kubectl logs -f` does not keep the kubelet's stream open)."""
    while True:
        try:
            return await asyncio.wait_for(upstream.content.readany(), CLIENT_CHECK)
        except TimeoutError:
            if request.transport is None or request.transport.is_closing():
                return b""


class PodLogREST:
    """The `pods/log` handler (`LocalAPIServer.add_subresource`)."""

    def __init__(self, registry: Registry, proxy: KubeletProxy) -> None:
        self.registry = registry
        self.proxy = proxy

    async def __call__(
        self, request: web.Request, info: ResourceInfo, ns: str, name: str
    ) -> web.StreamResponse:
        if request.method != "GET":
            raise errors.method_not_supported("", "pods/log", request.method.lower())
        opts = parse_log_options(request.query)
        if errs := validate_log_options(opts):
            raise errors.invalid("", "PodLogOptions", name, errs)
        pod = self.registry.get(info, ns, name).obj
        container = choose_container(pod, opts.container)
        if not (pod.get("spec") or {}).get("nodeName"):
            return web.Response(body=b"", content_type="text/plain")
        url = kubelet_url(self.registry, pod, "containerLogs", container)
        try:
            upstream = await self.proxy.session().get(url, params=opts.query())
        except (aiohttp.ClientError, OSError) as err:
            raise errors.internal(f"Get {url!r}: {err}") from err
        async with upstream:
            if upstream.status >= 300:
                raise kubelet_error(upstream.status, await upstream.text(), "pods/log", name)
            response = web.StreamResponse(headers={"Content-Type": "text/plain"})
            await response.prepare(request)
            try:
                while chunk := await _next_chunk(request, upstream):
                    await response.write(chunk)
            except (aiohttp.ClientError, ConnectionResetError):
                return response  # the kubelet or the client went away mid-stream
            await response.write_eof()
            return response
