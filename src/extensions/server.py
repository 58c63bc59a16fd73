"""The webhook HTTPS server (Agones `cmd/extensions`: webhooks on 8081, health on 8080).

`WebhookServer(gates, ssl_context)` serves `POST /mutate` and `POST /validate` (AdmissionReview v1
JSON in, AdmissionReview out, always 200 once the body is a review; 400 otherwise), counting
reviews in `agones_webhook_reviews_total{path,kind,allowed}`. `start(host, port)` binds (port 0
picks one; `port` then holds it) and `stop()` closes, finishing in-flight requests.
"""

from __future__ import annotations

import json
import ssl
from typing import Any

import structlog
from aiohttp import web
from prometheus_client import REGISTRY, CollectorRegistry, Counter

from ..featuregates import FeatureGates
from ..httpserver import serve_app
from .webhooks import ReviewError, review

_COUNTERS: dict[int, Counter] = {}


def _reviews_counter(registry: CollectorRegistry) -> Counter:
    """One counter per registry, however many servers a process starts."""
    counter = _COUNTERS.get(id(registry))
    if counter is None:
        counter = Counter(
            "agones_webhook_reviews_total",
            "Admission reviews answered, by path, kind and outcome",
            ["path", "kind", "allowed"],
            registry=registry,
        )
        _COUNTERS[id(registry)] = counter
    return counter


class WebhookServer:
    def __init__(
        self,
        gates: FeatureGates,
        ssl_context: ssl.SSLContext | None,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.gates = gates
        self.ssl_context = ssl_context
        self.log = structlog.get_logger().bind(component="webhooks")
        self.reviews = _reviews_counter(registry or REGISTRY)
        self.port: int | None = None
        self._runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_post("/mutate", self._handle)
        app.router.add_post("/validate", self._handle)
        return app

    async def _handle(self, request: web.Request) -> web.Response:
        path = request.path
        try:
            body: Any = json.loads(await request.read())
            answer = review(path, body, self.gates)
        except (ValueError, ReviewError) as err:
            self.log.warning("bad admission review", path=path, error=str(err))
            return web.Response(status=400, text=f"error decoding json for path {path}: {err}")
        kind = str((body["request"].get("kind") or {}).get("kind", ""))
        allowed = bool(answer["response"]["allowed"])
        self.reviews.labels(path, kind, str(allowed).lower()).inc()
        if not allowed:
            self.log.debug("denied", path=path, kind=kind, status=answer["response"]["status"])
        return web.json_response(answer)

    async def start(self, host: str = "0.0.0.0", port: int = 8081) -> None:
        self._runner, self.port = await serve_app(
            self.app(), host, port, ssl_context=self.ssl_context
        )
        self.log.info(
            "serving admission webhooks", port=self.port, tls=self.ssl_context is not None
        )

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
