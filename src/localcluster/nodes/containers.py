"""What a container of a process pod runs as: the image → local program map (`IMAGE_PROGRAMS`), the
argv (`program_for`: `command` replaces the image's ENTRYPOINT, `args` its CMD), its environment
for simulated pods (`resolve_env`, over `envvars`), a probe's port, and one running container's state as the
pod status reports it (`Container`).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import secrets
import socket
import sys
from pathlib import Path
from typing import Any

import structlog

from .envvars import ContainerConfigError, EnvSources, PodAddresses, make_environment

log = structlog.get_logger("agones.localcluster.nodes.containers")


REPO_ROOT = Path(__file__).resolve().parents[3]
SIDECAR_NAME = "agones-gameserver-sidecar"
SIDECAR_MIN_GRACE = 2.0
"""Seconds a native sidecar gets after the app containers, however little grace is left (the
kubelet's minimum grace period when it kills a container)."""

AGONES = [sys.executable, "-m", "agones"]
IMAGE_PROGRAMS: list[tuple[re.Pattern[str], list[str], list[str]]] = [
    (
        re.compile(r"(^|/)simple-game-server(:|@|$)"),
        [sys.executable, str(REPO_ROOT / "examples" / "simple-game-server")],
        [],
    ),
    (re.compile(r"(^|/)agones-sdk(:|@|$)"), [*AGONES, "sdkserver"], []),
    *(
        (
            re.compile(rf"(^|/)zone-servers-{program}(:|@|$)"),
            [
                sys.executable,
                str(REPO_ROOT / "examples" / "zone-servers" / "programs" / f"{program}.py"),
            ],
            [],
        )
        for program in ("zone", "gate", "db")
    ),
    *(
        (re.compile(rf"(^|/)agones-{command}(:|@|$)"), AGONES, [command])
        for command in ("controller", "extensions", "allocator", "ping")
    ),
]
"""Image → (ENTRYPOINT, CMD) of the images the repository's Dockerfile builds: `agones` with the
component as its default command (the SDK image's entrypoint is `agones sdkserver`); and the
examples' programs (`simple-game-server`, `zone-servers-{zone,gate,db}`)."""


def program_for(container: dict[str, Any]) -> list[str] | None:
    """The argv that runs this container locally, or None (simulate). As a container runtime
    does: `command` replaces the image's ENTRYPOINT, `args` its CMD."""
    args = [str(a) for a in container.get("args") or []]
    if container.get("command"):
        return [str(c) for c in container["command"]] + args
    image = str(container.get("image") or "")
    for pattern, entrypoint, cmd in IMAGE_PROGRAMS:
        if pattern.search(image):
            return [*entrypoint, *(args if "args" in container else cmd)]
    return None


def resolve_env(container: dict[str, Any], pod: dict[str, Any], node_ip: str) -> dict[str, str]:
    """The container's `value`s and `fieldRef`s as `envvars.make_environment` resolves them, for a
    simulated pod (no ConfigMap or Secret is read: a variable that needs one is left out)."""
    addresses = PodAddresses(node_ip, node_ip)
    env: dict[str, str] = {}
    for item in container.get("env") or []:
        if not isinstance(item, dict) or not item.get("name"):
            continue
        try:
            env.update(
                make_environment(
                    {**container, "env": [item], "envFrom": []}, pod, EnvSources(), addresses
                )
            )
        except ContainerConfigError:
            continue
    return env


def probe_port(container: dict[str, Any], http: dict[str, Any]) -> int:
    """An httpGet probe's port: a number, or the name of one of the container's ports."""
    port = http.get("port")
    if isinstance(port, str) and not port.isdigit():
        named = [p for p in container.get("ports") or [] if p.get("name") == port]
        return int(named[0]["containerPort"]) if named else 0
    return int(port or 0)


def image_id(image: str, argv: list[str]) -> str:
    """`<repository>@sha256:<digest>` where the digest is of the program the image runs as
    here (no image is pulled: what runs is the local program)."""
    repository = image.split("@", 1)[0]
    head, _, last = repository.rpartition("/")
    repository = f"{head}/{last.split(':', 1)[0]}" if head else last.split(":", 1)[0]
    digest = hashlib.sha256(json.dumps(argv).encode()).hexdigest()
    return f"{repository}@sha256:{digest}"


def new_container_id() -> str:
    """A container ID as containerd reports it."""
    return "containerd://" + secrets.token_hex(32)


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


class Container:
    """One container run as a local process."""

    def __init__(self, spec: dict[str, Any], argv: list[str], env: dict[str, str]) -> None:
        self.spec = spec
        self.name: str = spec["name"]
        self.argv = argv
        self.env = env
        self.proc: asyncio.subprocess.Process | None = None
        self.restart_count = 0
        self.image_id = image_id(str(spec.get("image") or ""), argv)
        self.container_id = ""
        """`containerd://<64 hex>` of the current run (a new one per launch)."""
        self.started_at = ""
        self.last_terminated: dict[str, Any] | None = None
        self.terminated: dict[str, Any] | None = None
        self.waiting: dict[str, Any] | None = None
        """Why it is not running (reason, message) when that is not "ContainerCreating": e.g.
        `CrashLoopBackOff` while the kubelet backs off before restarting it, or
        `CreateContainerConfigError`."""
        self.native_sidecar = spec.get("restartPolicy") == "Always"
        """An init container with restartPolicy Always (runs beside the others, then stops)."""
        self.init_container = False
        """One of `spec.initContainers` (a native sidecar too)."""
        self.pid_namespace = False
        """Runs as pid 1 of a PID namespace of its own (`mounts.CONTAINER_INIT`)."""
        self.stopped = False
        """Stopped for good (the pod finished): not restarted."""
        self.probe_ready = not isinstance(spec.get("readinessProbe"), dict)
        """The readiness probe's result (True without a readiness probe)."""
        self.startup_done = True
        """Whether the startup probe has succeeded (True without one): until then the other
        probes wait."""

    def status(self) -> dict[str, Any]:
        state: dict[str, Any]
        if self.waiting is not None:
            state = {"waiting": dict(self.waiting)}
        elif self.terminated is not None:
            state = {"terminated": self.terminated}
        elif self.proc is not None:
            state = {"running": {"startedAt": self.started_at}}
        else:
            state = {"waiting": {"reason": "ContainerCreating"}}
        out: dict[str, Any] = {
            "name": self.name,
            "image": self.spec.get("image", ""),
            "imageID": self.image_id,
            "ready": self.proc is not None and self.terminated is None and self.probe_ready,
            "started": self.proc is not None and self.terminated is None,
            "restartCount": self.restart_count,
            "state": state,
        }
        if self.container_id:
            out["containerID"] = self.container_id
        if self.last_terminated is not None:
            out["lastState"] = {"terminated": self.last_terminated}
        return out
