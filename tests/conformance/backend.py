"""A local HTTPS backend for admission and aggregation tests: webhooks and a tiny aggregated API."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import tempfile
import threading
from pathlib import Path
from typing import Any

from aiohttp import web

from agones.localcluster.kubeconfig import make_ca_and_cert


class Backend:
    """Serves /mutate, /validate, /slow and /apis/<group>/v1 on 127.0.0.1 over HTTPS."""

    def __init__(self, group: str, service_names: tuple[str, ...] = ()) -> None:
        self.group = group
        self.reviews: list[dict[str, Any]] = []
        self.cert = make_ca_and_cert(("127.0.0.1", "localhost", *service_names))
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._runner: web.AppRunner | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def ca_bundle(self) -> str:
        return base64.b64encode(self.cert.ca_pem).decode()

    def __enter__(self) -> Backend:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _run(self) -> None:
        self._loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        app = web.Application()
        app.router.add_post("/mutate", self._mutate)
        app.router.add_post("/validate", self._validate)
        app.router.add_post("/slow", self._slow)
        app.router.add_get(f"/apis/{self.group}/v1", self._discovery)
        app.router.add_post(f"/apis/{self.group}/v1/namespaces/{{ns}}/echoes", self._echo)
        tmp = Path(tempfile.mkdtemp())
        (tmp / "tls.crt").write_bytes(self.cert.cert_pem)
        (tmp / "tls.key").write_bytes(self.cert.key_pem)
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(tmp / "tls.crt", tmp / "tls.key")
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=ctx)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        await self._stop.wait()
        await self._runner.cleanup()

    @staticmethod
    def _answer(review: dict[str, Any], response: dict[str, Any]) -> web.Response:
        body = {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {"uid": review["request"]["uid"], **response},
        }
        return web.json_response(body)

    async def _mutate(self, request: web.Request) -> web.Response:
        review = await request.json()
        self.reviews.append(review)
        obj = review["request"]["object"]
        ops: list[dict[str, Any]] = []
        if not obj["metadata"].get("labels"):
            ops.append({"op": "add", "path": "/metadata/labels", "value": {}})
        ops.append({"op": "add", "path": "/metadata/labels/mutated", "value": "yes"})
        patch = base64.b64encode(json.dumps(ops).encode()).decode()
        return self._answer(review, {"allowed": True, "patchType": "JSONPatch", "patch": patch})

    async def _validate(self, request: web.Request) -> web.Response:
        review = await request.json()
        self.reviews.append(review)
        obj = review["request"]["object"] or review["request"]["oldObject"]
        if (obj["metadata"].get("labels") or {}).get("deny") == "yes":
            status = {
                "status": "Failure",
                "code": 422,
                "reason": "Invalid",
                "message": "label deny=yes is not allowed",
                "details": {
                    "causes": [
                        {"type": "FieldValueInvalid", "field": "metadata.labels", "message": "deny"}
                    ]
                },
            }
            return self._answer(review, {"allowed": False, "status": status})
        return self._answer(review, {"allowed": True})

    async def _slow(self, request: web.Request) -> web.Response:
        await asyncio.sleep(5)
        return web.Response(status=500)

    async def _discovery(self, request: web.Request) -> web.Response:
        return web.json_response(
            {
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": f"{self.group}/v1",
                "resources": [
                    {
                        "name": "echoes",
                        "singularName": "echo",
                        "namespaced": True,
                        "kind": "Echo",
                        "verbs": ["create"],
                    }
                ],
            }
        )

    async def _echo(self, request: web.Request) -> web.Response:
        body = await request.json()
        body["status"] = {"echoedBy": "backend", "namespace": request.match_info["ns"]}
        return web.json_response(body, status=201)
