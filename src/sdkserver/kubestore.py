"""`GameServerStore` over HTTP against a kube-apiserver (raw JSON, aiohttp).

Reads use the collection with a `metadata.name` field selector (list/watch/patch is all the
sidecar's RBAC needs, as in Agones); writes are JSON patches
(`application/json-patch+json`); a failed `test` (422 Invalid) or 409 raises `ConflictError`.
`watch()` lists, then watches from the list's resourceVersion, yielding the object on every
ADDED/MODIFIED event; on 410 Gone or a dropped connection it lists again and resumes.
The connection comes from the REST client's `Config` (`agones.client.config`: a kubeconfig or the
in-cluster service account); the bearer token is read once, when the session opens.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import aiohttp
import structlog

from ..client.config import Config
from ..client.rest import new_session
from ..jsonpatch import Patch
from .events import event_body
from .store import ConflictError

log = structlog.get_logger("agones.sdkserver.kubestore")


class ApiError(Exception):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"kube-apiserver answered {status}: {body[:300]}")
        self.status = status


class KubeGameServerStore:
    """One GameServer on a kube-apiserver."""

    def __init__(
        self,
        config: Config,
        namespace: str,
        name: str,
        *,
        session: aiohttp.ClientSession | None = None,
    ) -> None:
        self.config = config
        self.namespace = namespace
        self.name = name
        self._session = session
        self.collection = (
            f"{config.host}/apis/agones.dev/v1/namespaces/{quote(namespace)}/gameservers"
        )
        self.selector = f"metadata.name={name}"
        self._event_tasks: set[asyncio.Task[None]] = set()

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            token = self.config.bearer_token()
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            self._session = new_session(self.config, self.config.ssl_context(), headers)
        return self._session

    async def close(self) -> None:
        """Let events still being posted finish (2 s at most), then close the session."""
        if self._event_tasks:
            _, late = await asyncio.wait(self._event_tasks, timeout=2)
            for task in late:
                task.cancel()
        if self._session is not None:
            await self._session.close()
            self._session = None

    def record_event(self, gs: dict[str, Any], type_: str, reason: str, message: str) -> None:
        """`events.EventRecorder`: post a core/v1 Event in the background (best effort)."""
        body = event_body(gs, type_, reason, message, time.time())
        task = asyncio.get_running_loop().create_task(self._post_event(body))
        self._event_tasks.add(task)
        task.add_done_callback(self._event_tasks.discard)

    async def _post_event(self, body: dict[str, Any]) -> None:
        url = f"{self.config.host}/api/v1/namespaces/{quote(self.namespace)}/events"
        try:
            async with self.session.post(url, json=body) as response:
                if response.status not in (200, 201):
                    log.info("could not record event", status=response.status)
        except aiohttp.ClientError as err:
            log.info("could not record event", error=str(err))

    async def _list(self) -> tuple[dict[str, Any], str]:
        params = {"fieldSelector": self.selector}
        async with self.session.get(self.collection, params=params) as response:
            body = await response.text()
            if response.status != 200:
                raise ApiError(response.status, body)
        data = json.loads(body)
        items = data.get("items") or []
        if not items:
            raise ApiError(404, f"GameServer {self.namespace}/{self.name} not found")
        item: dict[str, Any] = items[0]
        return item, str((data.get("metadata") or {}).get("resourceVersion", ""))

    async def get(self) -> dict[str, Any]:
        item, _ = await self._list()
        return item

    async def patch(self, patch: Patch) -> dict[str, Any]:
        url = f"{self.collection}/{quote(self.name)}"
        async with self.session.patch(
            url,
            data=json.dumps(patch),
            headers={"Content-Type": "application/json-patch+json"},
        ) as response:
            body = await response.text()
            if response.status in (409, 422):
                raise ConflictError(body[:300])
            if response.status != 200:
                raise ApiError(response.status, body)
        result: dict[str, Any] = json.loads(body)
        return result

    async def watch(self) -> AsyncIterator[dict[str, Any]]:
        version = ""
        while True:
            try:
                if not version:
                    item, version = await self._list()
                    yield item
                params = {
                    "fieldSelector": self.selector,
                    "watch": "true",
                    "resourceVersion": version,
                    "allowWatchBookmarks": "true",
                }
                timeout = aiohttp.ClientTimeout(total=None, sock_read=None)
                async with self.session.get(
                    self.collection, params=params, timeout=timeout
                ) as response:
                    if response.status == 410:
                        version = ""
                        continue
                    if response.status != 200:
                        raise ApiError(response.status, await response.text())
                    async for line in response.content:
                        if not line.strip():
                            continue
                        event = json.loads(line)
                        kind, obj = event.get("type"), event.get("object") or {}
                        if kind == "ERROR":
                            if obj.get("code") == 410:
                                version = ""
                            break
                        version = str((obj.get("metadata") or {}).get("resourceVersion", version))
                        if kind in ("ADDED", "MODIFIED"):
                            yield obj
            except (aiohttp.ClientError, OSError, ApiError, json.JSONDecodeError) as err:
                # OSError: TimeoutError of the session's total timeout on the list, among others
                log.info("GameServer watch interrupted, retrying", error=str(err))
                await asyncio.sleep(1)
