"""What Fleet e2e tests do to a cluster: Fleets from Agones' example, allocation by writing the
state, and a watcher that keeps every GameServer event so invariants can be checked at each moment.

On the local stack the fleet's GameServers are simulated (annotation `local.agones-py.dev/simulate`,
ignored by a real cluster); the same tests run against any cluster with Agones via KUBECONFIG.
"""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path
from typing import Any

import urllib3

from agones.localcluster.nodes.podrunner import SIMULATE_ANNOTATION
from tests.e2e.framework import Framework

FIXTURE = (
    Path(__file__).parents[1]
    / "fixtures"
    / "agones-oracle"
    / "valid"
    / "fleet-examples-simple-game-server-fleet.json"
)
FLEET_LABEL = "agones.dev/fleet"


def example_fleet(name: str, replicas: int | None = None, **spec: Any) -> dict[str, Any]:
    """Agones' `examples/simple-game-server/fleet.yaml` (as the oracle fixture has it), simulated."""
    fleet: dict[str, Any] = copy.deepcopy(json.loads(FIXTURE.read_text())["input"])
    fleet["metadata"]["name"] = name
    pod = fleet["spec"]["template"]["spec"]["template"]
    pod.setdefault("metadata", {}).setdefault("annotations", {})[SIMULATE_ANNOTATION] = "true"
    if replicas is not None:
        fleet["spec"]["replicas"] = replicas
    fleet["spec"].update(spec)
    return fleet


class Fleets:
    """Fleet, GameServerSet and GameServer calls in the framework's namespace."""

    def __init__(self, fw: Framework) -> None:
        self.fw = fw
        self.base = f"/apis/agones.dev/v1/namespaces/{fw.namespace}"

    def create(self, fleet: dict[str, Any]) -> dict[str, Any]:
        resp = self.fw.api.post(f"{self.base}/fleets", fleet)
        assert resp.status == 201, resp
        body: dict[str, Any] = resp.body
        return body

    def get(self, name: str) -> dict[str, Any] | None:
        resp = self.fw.api.get(f"{self.base}/fleets/{name}")
        if resp.status == 404:
            return None
        assert resp.status == 200, resp
        body: dict[str, Any] = resp.body
        return body

    def update(self, name: str, change: Any) -> dict[str, Any]:
        """Apply `change(fleet)` and PUT, retrying on conflict (the controller writes status)."""
        for _ in range(20):
            fleet = self.get(name)
            assert fleet is not None
            change(fleet)
            resp = self.fw.api.put(f"{self.base}/fleets/{name}", fleet)
            if resp.status == 200:
                body: dict[str, Any] = resp.body
                return body
            assert resp.status == 409, resp
        raise AssertionError(f"could not update fleet {name}")

    def delete(self, name: str) -> None:
        resp = self.fw.api.delete(f"{self.base}/fleets/{name}")
        assert resp.status == 200, resp

    def sets(self, fleet: str) -> list[dict[str, Any]]:
        resp = self.fw.api.get(
            f"{self.base}/gameserversets", labelSelector=f"{FLEET_LABEL}={fleet}"
        )
        assert resp.status == 200, resp
        items: list[dict[str, Any]] = resp.body["items"]
        return items

    def game_servers(self, fleet: str) -> list[dict[str, Any]]:
        resp = self.fw.api.get(self.fw.gs_path(), labelSelector=f"{FLEET_LABEL}={fleet}")
        assert resp.status == 200, resp
        items: list[dict[str, Any]] = resp.body["items"]
        return items

    def in_state(self, fleet: str, state: str) -> list[dict[str, Any]]:
        return [
            gs
            for gs in self.game_servers(fleet)
            if (gs.get("status") or {}).get("state") == state
            and not gs["metadata"].get("deletionTimestamp")
        ]

    def wait_ready(self, fleet: str, count: int, timeout: float = 120.0) -> dict[str, Any]:
        """Until the Fleet reports `count` Ready with `count` replicas and exactly `count` Ready
        GameServers exist; returns the Fleet."""

        def reached() -> dict[str, Any] | None:
            f = self.get(fleet)
            status = (f or {}).get("status") or {}
            if status.get("readyReplicas") != count or status.get("replicas") != count:
                return None
            return f if len(self.in_state(fleet, "Ready")) == count else None

        result: dict[str, Any] = self.fw.wait(f"fleet {fleet} {count} Ready", reached, timeout)
        return result

    def allocate(self, name: str) -> dict[str, Any]:
        """Allocate as the allocator does: state Allocated (a write with resourceVersion)."""
        for _ in range(20):
            gs = self.fw.get(name)
            assert gs is not None
            gs["status"]["state"] = "Allocated"
            resp = self.fw.api.put(self.fw.gs_path(name), gs)
            if resp.status == 200:
                body: dict[str, Any] = resp.body
                return body
            assert resp.status == 409, resp
        raise AssertionError(f"could not allocate {name}")

    def events(self, fleet: str) -> list[tuple[str, str]]:
        resp = self.fw.api.get(
            f"/api/v1/namespaces/{self.fw.namespace}/events",
            fieldSelector=f"involvedObject.name={fleet},involvedObject.kind=Fleet",
        )
        assert resp.status == 200, resp
        return [(e["reason"], e["message"]) for e in resp.body["items"]]


class Watcher:
    """Records every GameServer event of the namespace from a resourceVersion, on a thread.

    `views()` replays them: after each event, the map name → GameServer as it then stood, so a test
    can check an invariant at every observed moment."""

    def __init__(self, fw: Framework) -> None:
        self.fw = fw
        resp = fw.api.get(fw.gs_path())
        assert resp.status == 200, resp
        self.initial = {o["metadata"]["name"]: o for o in resp.body["items"]}
        self.rv = resp.body["metadata"]["resourceVersion"]
        self.events: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                for event in self.fw.api.watch(
                    self.fw.gs_path(),
                    timeout=5,
                    resourceVersion=self.rv,
                    allowWatchBookmarks="true",
                ):
                    if event["type"] == "ERROR":
                        raise AssertionError(f"watch failed: {event}")
                    self.rv = event["object"]["metadata"]["resourceVersion"]
                    if event["type"] != "BOOKMARK":
                        self.events.append(event)
                    if self._stop.is_set():
                        return
            except (OSError, urllib3.exceptions.HTTPError):
                continue  # the stream timed out: resume from the last version

    def stop(self) -> None:
        """Stop once every GameServer change made so far has been seen (the watch has reached the
        resourceVersion of a list taken now)."""
        resp = self.fw.api.get(self.fw.gs_path())
        assert resp.status == 200, resp
        target = int(resp.body["metadata"]["resourceVersion"])
        self.fw.wait("watcher caught up", lambda: int(self.rv) >= target, 30)
        self._stop.set()
        self._thread.join(10)

    def views(self) -> list[dict[str, dict[str, Any]]]:
        current = dict(self.initial)
        out = []
        for event in self.events:
            obj = event["object"]
            name = obj["metadata"]["name"]
            if event["type"] == "DELETED":
                current.pop(name, None)
            else:
                current[name] = obj
            out.append(dict(current))
        return out


def state(gs: dict[str, Any]) -> str:
    s: str = (gs.get("status") or {}).get("state", "")
    return s


def is_up(gs: dict[str, Any]) -> bool:
    """Counted in a set's replicas: neither shut down nor being deleted."""
    return state(gs) != "Shutdown" and not gs["metadata"].get("deletionTimestamp")
