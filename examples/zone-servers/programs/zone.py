"""A zone server (区服) of the zone-servers example: one long-lived world shard per StatefulSet ordinal.

It reads its configuration from the directory the init container unpacked (`$CONFIG_DIR`:
`server.json`, `zones/names.txt`), loads its save file from its claim (`$SAVE_DIR/save.json`),
counts the boot and saves at once. HTTP on `$PORT`: `GET /healthz` (readiness), `GET /state` (the
save and the config's message of the day), `POST /save-and-exit` (what the pod's `preStop` hook
calls: save, answer, exit 0). SIGTERM alone ends it without saving, like many game processes: the
hook is what keeps the save.
"""

from __future__ import annotations

import json
import os
import pathlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CONFIG = pathlib.Path(os.environ.get("CONFIG_DIR", "/config"))
SAVE = pathlib.Path(os.environ.get("SAVE_DIR", "/data")) / "save.json"
PORT = int(os.environ.get("PORT", "7000"))
POD = os.environ.get("POD_NAME") or socket.gethostname()
ZONE = int(POD.rsplit("-", 1)[1])

settings = json.loads((CONFIG / "server.json").read_text())
names = (CONFIG / "zones" / "names.txt").read_text().split()
state = json.loads(SAVE.read_text()) if SAVE.exists() else {"zone": ZONE, "boots": 0, "saves": []}
state["boots"] += 1
state["name"] = names[ZONE % len(names)]
lock = threading.Lock()


def save(reason: str) -> None:
    with lock:
        state["saves"].append(reason)
        tmp = SAVE.with_suffix(".tmp")
        tmp.write_text(json.dumps(state))
        tmp.replace(SAVE)


class Handler(BaseHTTPRequestHandler):
    def _send(self, code: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path == "/healthz":
            self._send(200, "ok")
        elif self.path == "/state":
            self._send(200, {**state, "pod": POD, "motd": settings["motd"]})
        else:
            self._send(404, "not found")

    def do_POST(self) -> None:
        if self.path != "/save-and-exit":
            self._send(404, "not found")
            return
        save("preStop")
        self._send(200, "saved")
        threading.Thread(target=server.shutdown, daemon=True).start()

    def log_message(self, *_args: object) -> None:
        pass


save("boot")
server = ThreadingHTTPServer(("0.0.0.0", PORT), Handler)
print(f"zone {ZONE} ({state['name']}) boot {state['boots']} on port {PORT}", flush=True)
server.serve_forever()
