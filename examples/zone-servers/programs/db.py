"""The zone servers' dependency in the zone-servers example (standing for the database studios run
beside them): an HTTP server on `$PORT` whose `GET /healthz` is its readiness. The zones' init
containers wait until its headless Service has an address, i.e. until it is Ready."""

from __future__ import annotations

import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200 if self.path == "/healthz" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_args: object) -> None:
        pass


ThreadingHTTPServer(("0.0.0.0", int(os.environ.get("PORT", "5432"))), Handler).serve_forever()
