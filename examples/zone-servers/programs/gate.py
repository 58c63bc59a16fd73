"""A gate of the zone-servers example: the front door players connect to, which knows every zone
by its stable DNS name (`<zone set>-N.<zone service>`, the StatefulSet pod's name under its
headless Service), as a gate configured with `game-server-3` does.

HTTP on `$PORT`: `GET /healthz` (readiness), `GET /zones` (each of the `$ZONE_COUNT` zones' state,
fetched from `http://<name>:<ZONE_PORT>/state`, or the error reaching it).
"""

from __future__ import annotations

import json
import os
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT = int(os.environ.get("PORT", "8000"))
ZONE_COUNT = int(os.environ["ZONE_COUNT"])
ZONE_SET = os.environ["ZONE_SET"]
ZONE_SERVICE = os.environ["ZONE_SERVICE"]
ZONE_PORT = int(os.environ.get("ZONE_PORT", "7000"))


def zone_state(ordinal: int) -> object:
    url = f"http://{ZONE_SET}-{ordinal}.{ZONE_SERVICE}:{ZONE_PORT}/state"
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return json.loads(resp.read())
    except OSError as err:
        return {"zone": ordinal, "error": str(err)}


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/healthz":
            code, body = 200, "ok"
        elif self.path == "/zones":
            code, body = 200, [zone_state(i) for i in range(ZONE_COUNT)]
        else:
            code, body = 404, "not found"
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *_args: object) -> None:
        pass


ThreadingHTTPServer(("0.0.0.0", PORT), Handler).serve_forever()
