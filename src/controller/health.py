"""Liveness and readiness checks served over HTTP (heptiolabs `healthcheck`, as Agones uses it).

`/live` runs the liveness checks; `/ready` runs readiness and liveness checks. Each answers 200 when
every check passes and 503 otherwise; `?full=1` returns a JSON map of check name to "OK" or the
error. A check is a callable that raises (any exception) when unhealthy.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from aiohttp import web

Check = Callable[[], None]


class HealthHandler:
    def __init__(self) -> None:
        self.liveness: dict[str, Check] = {}
        self.readiness: dict[str, Check] = {}

    def add_liveness_check(self, name: str, check: Check) -> None:
        self.liveness[name] = check

    def add_readiness_check(self, name: str, check: Check) -> None:
        self.readiness[name] = check

    @staticmethod
    def _run(checks: dict[str, Check]) -> dict[str, str]:
        results: dict[str, str] = {}
        for name, check in checks.items():
            try:
                check()
                results[name] = "OK"
            except Exception as err:
                results[name] = str(err) or type(err).__name__
        return results

    def _respond(self, request: web.Request, checks: dict[str, Check]) -> web.Response:
        results = self._run(checks)
        ok = all(v == "OK" for v in results.values())
        body = json.dumps(results, sort_keys=True) if request.query.get("full") == "1" else "{}"
        return web.Response(
            status=200 if ok else 503, text=body + "\n", content_type="application/json"
        )

    async def live(self, request: web.Request) -> web.Response:
        return self._respond(request, self.liveness)

    async def ready(self, request: web.Request) -> web.Response:
        return self._respond(request, {**self.readiness, **self.liveness})

    def add_routes(self, app: web.Application) -> None:
        app.router.add_get("/live", self.live)
        app.router.add_get("/ready", self.ready)
