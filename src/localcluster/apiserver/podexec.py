"""`pods/{name}/exec`: kube-apiserver's `ExecREST`, proxied to the kubelet of the pod's node.

As `ExecLocation` does: the container is chosen as for logs (`podlog.choose_container`), a pod not
on a node is a 400 (`pod P does not have a host assigned`), and the request goes to the kubelet's
`/exec/<ns>/<pod>/<container>` with the same query (`command`, `stdin`, `stdout`, `stderr`,
`tty`). A websocket upgrade (subprotocols `v5.channel.k8s.io`, `v4.channel.k8s.io`, ...) is
proxied message by message, the subprotocol being the one the kubelet chose; any other request
(kubectl before 1.30 asks for SPDY/3.1) is forwarded as it is and the kubelet's 400 relayed.
"""

from __future__ import annotations

import asyncio
import contextlib

import aiohttp
from aiohttp import web

from . import errors
from .podlog import KubeletProxy, choose_container, kubelet_error, kubelet_url
from .registry import Registry
from .resources import ResourceInfo


class PodExecREST:
    """The `pods/exec` handler (`LocalAPIServer.add_subresource`)."""

    def __init__(self, registry: Registry, proxy: KubeletProxy) -> None:
        self.registry = registry
        self.proxy = proxy

    async def __call__(
        self, request: web.Request, info: ResourceInfo, ns: str, name: str
    ) -> web.StreamResponse:
        if request.method not in ("GET", "POST"):
            raise errors.method_not_supported("", "pods/exec", request.method.lower())
        pod = self.registry.get(info, ns, name).obj
        container = choose_container(pod, request.query.get("container", ""))
        if not (pod.get("spec") or {}).get("nodeName"):
            raise errors.bad_request(f"pod {name} does not have a host assigned")
        url = kubelet_url(self.registry, pod, "exec", container)
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return await self._websocket(request, url, name)
        try:
            async with self.proxy.session().post(url, params=request.query) as upstream:
                text, status = await upstream.text(), upstream.status
        except (aiohttp.ClientError, OSError) as err:
            raise errors.internal(f"Post {url!r}: {err}") from err
        raise kubelet_error(status if status >= 300 else 400, text, "pods/exec", name)

    async def _websocket(self, request: web.Request, url: str, name: str) -> web.StreamResponse:
        offered = request.headers.get("Sec-WebSocket-Protocol", "")
        protocols = [p.strip() for p in offered.split(",") if p.strip()]
        try:
            upstream = await self.proxy.session().ws_connect(
                url, params=request.query, protocols=protocols, autoping=True
            )
        except aiohttp.WSServerHandshakeError as err:
            raise kubelet_error(err.status, err.message, "pods/exec", name) from err
        except (aiohttp.ClientError, OSError) as err:
            raise errors.internal(f"Get {url!r}: {err}") from err
        client = web.WebSocketResponse(protocols=[upstream.protocol] if upstream.protocol else [])
        await client.prepare(request)
        relays = [
            asyncio.create_task(_relay(client, upstream)),
            asyncio.create_task(_relay(upstream, client)),
        ]
        _done, pending = await asyncio.wait(relays, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        await upstream.close()
        await client.close()
        return client


async def _relay(
    source: web.WebSocketResponse | aiohttp.ClientWebSocketResponse,
    sink: web.WebSocketResponse | aiohttp.ClientWebSocketResponse,
) -> None:
    """Copy data messages from `source` to `sink` until `source` closes."""
    async for msg in source:
        with contextlib.suppress(ConnectionResetError):
            if msg.type == aiohttp.WSMsgType.BINARY:
                await sink.send_bytes(msg.data)
            elif msg.type == aiohttp.WSMsgType.TEXT:
                await sink.send_str(msg.data)
