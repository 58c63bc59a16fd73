"""What e2e tests do to a cluster: create GameServers, wait for states, talk UDP/TCP to them.

GameServers use Agones' simple-game-server image; on the local stack the annotation
`local.agones-py.dev/simulate: "true"` (ignored by a real cluster) runs them simulated, without a
process, with the same behaviour for the flags the tests use.
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Callable
from typing import Any

import urllib3

from agones.localcluster.nodes.podrunner import SIMULATE_ANNOTATION
from agones.localcluster.stack import ThreadedStack
from tests.cluster import Api, wait_for

IMAGE = "us-docker.pkg.dev/agones-images/examples/simple-game-server:0.41"


def game_server(
    name: str,
    ports: list[dict[str, Any]] | None = None,
    *,
    simulate: bool = True,
    args: list[str] | None = None,
    health: dict[str, Any] | None = None,
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "simple-game-server", "image": IMAGE}
    if args:
        container["args"] = args
    template: dict[str, Any] = {"spec": {"containers": [container]}}
    if simulate:
        template["metadata"] = {"annotations": {SIMULATE_ANNOTATION: "true"}}
    spec: dict[str, Any] = {
        "ports": ports
        if ports is not None
        else [{"name": "default", "portPolicy": "Dynamic", "containerPort": 7654}],
        "template": template,
    }
    if health:
        spec["health"] = health
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServer",
        "metadata": {"name": name},
        "spec": spec,
    }


class Framework:
    def __init__(self, kubeconfig: str, stack: ThreadedStack | None) -> None:
        self.kubeconfig = kubeconfig
        self.stack = stack
        self.api = Api(kubeconfig)
        self.namespace = f"e2e-{uuid.uuid4().hex[:6]}"
        resp = self.api.post(
            "/api/v1/namespaces", {"kind": "Namespace", "metadata": {"name": self.namespace}}
        )
        assert resp.status == 201, resp
        self.add_sdk_service_account()

    def add_sdk_service_account(self) -> None:
        """What the Helm chart installs in every game server namespace (and Agones' e2e framework
        in each test namespace): the `agones-sdk` ServiceAccount game server pods run as, bound to
        the `agones-sdk` ClusterRole so the sidecar may update its GameServer."""
        base = f"/api/v1/namespaces/{self.namespace}/serviceaccounts"
        sa = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "agones-sdk"}}
        resp = self.api.post(base, sa)
        assert resp.status == 201, resp
        binding = {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "agones-sdk-access"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "agones-sdk",
            },
            "subjects": [
                {"kind": "ServiceAccount", "name": "agones-sdk", "namespace": self.namespace}
            ],
        }
        path = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{self.namespace}/rolebindings"
        resp = self.api.post(path, binding)
        assert resp.status == 201, resp

    @property
    def local(self) -> bool:
        return self.stack is not None

    def cleanup(self) -> None:
        self.api.delete(f"/api/v1/namespaces/{self.namespace}")

    def gs_path(self, name: str = "") -> str:
        base = f"/apis/agones.dev/v1/namespaces/{self.namespace}/gameservers"
        return f"{base}/{name}" if name else base

    def create(self, gs: dict[str, Any]) -> dict[str, Any]:
        resp = self.api.post(self.gs_path(), gs)
        assert resp.status == 201, resp
        body: dict[str, Any] = resp.body
        return body

    def get(self, name: str) -> dict[str, Any] | None:
        resp = self.api.get(self.gs_path(name))
        if resp.status == 404:
            return None
        assert resp.status == 200, resp
        body: dict[str, Any] = resp.body
        return body

    def list(self) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = self.api.get(self.gs_path()).body["items"]
        return items

    def pod(self, name: str) -> dict[str, Any] | None:
        resp = self.api.get(f"/api/v1/namespaces/{self.namespace}/pods/{name}")
        if resp.status == 404:
            return None
        body: dict[str, Any] = resp.body
        return body

    def delete_pod(self, name: str) -> None:
        resp = self.api.delete(f"/api/v1/namespaces/{self.namespace}/pods/{name}")
        assert resp.status in (200, 202), resp

    def wait(
        self, what: str, condition: Callable[[], Any], timeout: float = 60.0, interval: float = 0.2
    ) -> Any:
        return wait_for(condition, timeout, interval, what)

    def wait_state(self, name: str, state: str, timeout: float = 60.0) -> dict[str, Any]:
        last: list[str] = [""]

        def reached() -> dict[str, Any] | None:
            gs = self.get(name)
            last[0] = ((gs or {}).get("status") or {}).get("state", "<gone>")
            return gs if last[0] == state else None

        try:
            result: dict[str, Any] = self.wait(f"{name} {state}", reached, timeout)
        except AssertionError as err:
            raise AssertionError(f"{err} (last state {last[0]})") from None
        return result

    def watch_for_state(
        self, gs: dict[str, Any], state: str, timeout: float = 60.0
    ) -> dict[str, Any]:
        """Watch `gs` from its resourceVersion until it reaches `state` (sees states that pass
        quickly, such as Unhealthy just before Shutdown)."""
        name = gs["metadata"]["name"]
        deadline = time.monotonic() + timeout
        rv = gs["metadata"]["resourceVersion"]
        seen: list[str] = []
        while time.monotonic() < deadline:
            events = self.api.watch(
                self.gs_path(),
                timeout=max(deadline - time.monotonic(), 1),
                fieldSelector=f"metadata.name={name}",
                resourceVersion=rv,
            )
            try:
                for event in events:
                    obj = event["object"]
                    if event["type"] == "ERROR":
                        break
                    rv = obj["metadata"]["resourceVersion"]
                    current = (obj.get("status") or {}).get("state", "")
                    seen.append(current)
                    if current == state:
                        return dict(obj)
            except (OSError, urllib3.exceptions.HTTPError):
                continue  # the stream timed out or dropped: resume from the last version
        raise AssertionError(f"{name} never reached {state}; saw {seen}")

    def create_ready(self, gs: dict[str, Any], timeout: float = 60.0) -> dict[str, Any]:
        self.create(gs)
        return self.wait_state(gs["metadata"]["name"], "Ready", timeout)


def udp(address: str, port: int, message: str, timeout: float = 3.0, tries: int = 5) -> str:
    """Send one datagram and return the reply (retrying, as UDP may drop while a relay starts)."""
    for _ in range(tries):
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.settimeout(timeout)
            s.sendto(message.encode(), (address, port))
            try:
                return s.recvfrom(4096)[0].decode()
            except TimeoutError:
                continue
    raise AssertionError(f"no UDP reply from {address}:{port}")


def tcp(address: str, port: int, message: str, timeout: float = 5.0) -> str:
    with socket.create_connection((address, port), timeout) as s:
        s.sendall(message.encode() + b"\n")
        return s.makefile().readline()
