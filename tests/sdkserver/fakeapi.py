"""The one fake API server (`tests.fakeapi.FakeServer`) as the sidecar's tests see it.

`fake_api(gs)` serves one GameServer over real HTTP with a bearer token (what the sidecar's
kubeconfig carries), and the view answers what those tests ask: the GameServer `current`ly
stored, the JSON `patches` written to it in order (those it took), the core/v1 `events` posted, and `update(fn)`
as another writer. Faults (`gone_next_watch`, `drop_watches()`, `watch_requests`) are the
server's own: `api.server`.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from tests.fakeapi import FakeServer

GAME_SERVERS = "apis/agones.dev/v1/gameservers"
EVENTS = "api/v1/events"
TOKEN = "secret"


class FakeAPI:
    def __init__(self, server: FakeServer, gs: dict[str, Any]) -> None:
        self.server = server
        self.namespace = gs["metadata"]["namespace"]
        self.name = gs["metadata"]["name"]
        server.objects[(GAME_SERVERS, self.namespace, self.name)] = copy.deepcopy(gs)

    @property
    def store(self) -> FakeAPI:
        """Itself: the GameServer's store (`current`, `patches`, `update`)."""
        return self

    @property
    def current(self) -> dict[str, Any]:
        return copy.deepcopy(self.server.objects[(GAME_SERVERS, self.namespace, self.name)])

    @property
    def patches(self) -> list[list[dict[str, Any]]]:
        return [
            r.body
            for r in self.server.requests
            if r.method == "PATCH"
            and r.path.endswith(f"/gameservers/{self.name}")
            and r.status == 200
        ]

    @property
    def events(self) -> list[dict[str, Any]]:
        return [obj for (prefix, _, _), obj in self.server.objects.items() if prefix == EVENTS]

    def update(self, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        return self.server.update(GAME_SERVERS, self.namespace, self.name, change)

    def kubeconfig(self, directory: Path) -> Path:
        return self.server.kubeconfig(directory)


@contextlib.asynccontextmanager
async def fake_api(gs: dict[str, Any]) -> AsyncIterator[FakeAPI]:
    server = FakeServer(token=TOKEN)
    async with server.serving():
        yield FakeAPI(server, gs)
