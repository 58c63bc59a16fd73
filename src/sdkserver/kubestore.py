"""`GameServerStore` on a kube-apiserver, through the framework (Agones' sidecar on client-go).

* The GameServer is read from a `SharedIndexInformer` limited to it (a `metadata.name` field
  selector in its namespace: list/watch/patch is all the sidecar's RBAC needs, as in Agones). The
  informer's reflector lists, watches with bookmarks, relists on 410 Gone and backs off with jitter,
  and reports the `agones_k8s_client_cache_*` metrics. Resync is off by default, as Agones'
  `DisableResyncOnSDKServer` gate (stable) has it.
* `connect()` is one list through the REST client (Agones' `WaitForConnection`); `get()` starts
  the informer on first use, waits for its first list and answers from its cache (`NotFoundError`
  when the GameServer is not there); `watch()` yields the object after every add or update the
  informer delivers, in order.
* Writes are JSON patches (`application/json-patch+json`) through the REST client, with its
  client-side rate limit, Retry-After handling and `agones_k8s_client_http_*` metrics; a failed
  `test` (422 Invalid) or a 409 raises `store.ConflictError`, any other failure the client's
  typed `ApiError`.
* Events are posted in the background (best effort); `close()` lets them finish (2 s at most).
The connection comes from the REST client's `Config` (a kubeconfig or the in-cluster account).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import structlog

from ..client.config import Config
from ..client.errors import ApiError, InvalidError
from ..client.errors import ConflictError as ApiConflictError
from ..client.rest import RESTClient
from ..client.versioned.resources import EVENTS, GAME_SERVERS
from ..clock import Clock
from ..informers import ResourceEventHandlerFuncs, SharedInformerFactory
from ..jsonpatch import Patch
from .events import event_body
from .store import Broadcast, ConflictError

log = structlog.get_logger("agones.sdkserver.kubestore")


class KubeGameServerStore:
    """One GameServer on a kube-apiserver."""

    def __init__(
        self,
        config: Config,
        namespace: str,
        name: str,
        *,
        clock: Clock | None = None,
        resync_period: float = 0.0,
    ) -> None:
        self.namespace = namespace
        self.name = name
        self.rest = RESTClient(config, clock=clock)
        self.selector = f"metadata.name={name}"
        self.factory = SharedInformerFactory(
            self.rest, resync_period, namespace=namespace, clock=clock
        )
        game_servers = self.factory.for_resource(GAME_SERVERS, field_selector=self.selector)
        self.informer = game_servers.informer()
        self.lister = game_servers.lister().by_namespace(namespace)
        self.informer.add_event_handler(
            ResourceEventHandlerFuncs(add_func=self._changed, update_func=self._updated)
        )
        self._broadcast = Broadcast()
        self._event_tasks: set[asyncio.Task[None]] = set()

    def _changed(self, gs: dict[str, Any]) -> None:
        self._broadcast.publish(gs)

    def _updated(self, old: dict[str, Any], new: dict[str, Any]) -> None:
        self._broadcast.publish(new)

    async def connect(self) -> None:
        """One list of the GameServer through the REST client; raises what the list raises."""
        await self.rest.list_raw(GAME_SERVERS, self.namespace, field_selector=self.selector)

    async def get(self) -> dict[str, Any]:
        self.factory.start()
        await self.informer.wait_for_sync()
        gs: dict[str, Any] = self.lister.get(self.name)
        return gs

    async def patch(self, patch: Patch) -> dict[str, Any]:
        try:
            return await self.rest.patch(
                GAME_SERVERS, self.name, patch, namespace=self.namespace, patch_type="json"
            )
        except (ApiConflictError, InvalidError) as err:
            raise ConflictError(err.message) from err

    def watch(self) -> AsyncIterator[dict[str, Any]]:
        return self._broadcast.watch()

    def record_event(self, gs: dict[str, Any], type_: str, reason: str, message: str) -> None:
        """`events.EventRecorder`: post a core/v1 Event in the background (best effort)."""
        body = event_body(gs, type_, reason, message, time.time())
        task = asyncio.get_running_loop().create_task(self._post_event(body))
        self._event_tasks.add(task)
        task.add_done_callback(self._event_tasks.discard)

    async def _post_event(self, body: dict[str, Any]) -> None:
        try:
            await self.rest.create(EVENTS, body, self.namespace)
        except (ApiError, aiohttp.ClientError, OSError) as err:
            log.info("could not record event", error=str(err))

    async def close(self) -> None:
        """Let events still being posted finish (2 s at most), stop the informer, close."""
        if self._event_tasks:
            _, late = await asyncio.wait(self._event_tasks, timeout=2)
            for task in late:
                task.cancel()
        await self.factory.shutdown()
        await self.rest.close()
