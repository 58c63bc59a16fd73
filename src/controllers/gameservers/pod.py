"""The Pod a GameServer runs in (Agones `GameServer.Pod`, `createGameServerPod`, `sidecar`).

`game_server_pod(gs, config, gates)` is pure: from a (defaulted, port-allocated) GameServer it builds
the Pod JSON the controller creates:
* metadata from the template, name and namespace of the GameServer, labels `agones.dev/role` and
  `agones.dev/gameserver`, annotations `agones.dev/container` and `agones.dev/sdk-version`, a
  controller owner reference, the eviction annotation/label (unless the template sets them) and,
  for Passthrough ports, `agones.dev/container-passthrough-port-assignment`;
* each spec port as a container port of its container (a container, or a native sidecar init
  container); hostname = GameServer name with `.` → `-`; Packed → preferred pod affinity;
* the SDK server: prepended to `initContainers` with `restartPolicy: Always` under the
  SidecarContainers gate (pod `restartPolicy` then defaults to `Never`), else to `containers`;
* without a user service account: `agones-sdk`, and an emptyDir mounted read-only over the
  service-account token path of the game container, so the game process gets no API token;
* the `/gshealthz` liveness probe on the game container (unless health is disabled or the user set
  a probe); `AGONES_SDK_GRPC_PORT` / `AGONES_SDK_HTTP_PORT` in every other container, replacing
  user values of those names.
`PodError` when the GameServer names a container the template lacks.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from msgspec import UNSET

from ...apis.agones.v1.common import VERSION_ANNOTATION
from ...apis.agones.v1.gameserver import (
    GAME_SERVER_CONTAINER_ANNOTATION,
    GAME_SERVER_LABEL_ROLE,
    GAME_SERVER_POD_LABEL,
    PASSTHROUGH_PORT_ASSIGNMENT_ANNOTATION,
    POD_SAFE_TO_EVICT_ANNOTATION,
    ROLE_LABEL,
    SAFE_TO_EVICT_LABEL,
    EvictionSafe,
    GameServer,
    Health,
    PortPolicy,
    SdkServer,
)
from ...apis.meta.quantity import Quantity, QuantityError
from ...apis.scheduling import SchedulingStrategy
from ...featuregates import Feature, FeatureGates
from ...version import VERSION

SDKSERVER_SIDECAR_NAME = "agones-gameserver-sidecar"
GRPC_PORT_ENV_VAR = "AGONES_SDK_GRPC_PORT"
HTTP_PORT_ENV_VAR = "AGONES_SDK_HTTP_PORT"
SERVICE_ACCOUNT_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
SIDECAR_HEALTH_PORT = 8080


def _go_duration(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"


@dataclass(frozen=True)
class SidecarConfig:
    """How the SDK server sidecar is built (Agones controller flags `--sidecar-*`)."""

    image: str = f"us-docker.pkg.dev/agones-images/release/agones-sdk:{VERSION}"
    """Image of the SDK server (`--sidecar-image`)."""
    cpu_request: str = "0"
    """CPU request; 0 = none (`--sidecar-cpu-request`)."""
    cpu_limit: str = "0"
    """CPU limit; 0 = none."""
    memory_request: str = "0"
    """Memory request; 0 = none."""
    memory_limit: str = "0"
    """Memory limit; 0 = none."""
    run_as_user: int = 1000
    """UID of the sidecar (`--sidecar-run-as-user`)."""
    run_as_non_root: bool = True
    """securityContext.runAsNonRoot of the sidecar."""
    allow_privilege_escalation: bool = False
    """securityContext.allowPrivilegeEscalation of the sidecar."""
    always_pull: bool = False
    """imagePullPolicy Always for the sidecar (`--always-pull-sidecar`)."""
    sdk_service_account: str = "agones-sdk"
    """Service account of GameServer pods that set none (`--sdk-service-account`)."""
    requests_rate_limit: float = 0.5
    """Seconds the sidecar coalesces SDK writes over (`--sidecar-requests-rate-limit`)."""


class PodError(ValueError):
    """The GameServer cannot be turned into a Pod."""


def _nonzero(text: str) -> bool:
    try:
        return Quantity.parse(text).cmp(Quantity.parse(0)) != 0
    except QuantityError:
        return bool(text) and text != "0"


def _sdk(gs: GameServer) -> SdkServer:
    sdk = gs.spec.sdk_server if gs.spec is not UNSET else UNSET
    return sdk if isinstance(sdk, SdkServer) else SdkServer()


def _health(gs: GameServer) -> Health:
    health = gs.spec.health if gs.spec is not UNSET else UNSET
    return health if isinstance(health, Health) else Health()


def sidecar(gs: GameServer, config: SidecarConfig, gates: FeatureGates) -> dict[str, Any]:
    """The SDK server container for this GameServer."""
    sdk = _sdk(gs)
    container: dict[str, Any] = {
        "name": SDKSERVER_SIDECAR_NAME,
        "image": config.image,
        "env": [
            {"name": "GAMESERVER_NAME", "value": gs.meta.get_name()},
            {
                "name": "POD_NAMESPACE",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
            },
            {"name": "FEATURE_GATES", "value": gates.encode()},
            {"name": "LOG_LEVEL", "value": str(sdk.log_level) if sdk.log_level else ""},
            {"name": "REQUESTS_RATE_LIMIT", "value": _go_duration(config.requests_rate_limit)},
        ],
        "resources": {},
        "livenessProbe": {
            "httpGet": {"path": "/healthz", "port": SIDECAR_HEALTH_PORT},
            "initialDelaySeconds": 3,
            "periodSeconds": 3,
        },
        "securityContext": {
            "allowPrivilegeEscalation": config.allow_privilege_escalation,
            "runAsNonRoot": config.run_as_non_root,
            "runAsUser": config.run_as_user,
        },
    }
    args = []
    if sdk.grpc_port:
        args.append(f"--grpc-port={sdk.grpc_port}")
    if sdk.http_port:
        args.append(f"--http-port={sdk.http_port}")
    if args:
        container["args"] = args
    requests = {
        k: v
        for k, v in (("cpu", config.cpu_request), ("memory", config.memory_request))
        if _nonzero(v)
    }
    limits = {
        k: v for k, v in (("cpu", config.cpu_limit), ("memory", config.memory_limit)) if _nonzero(v)
    }
    if requests:
        container["resources"]["requests"] = requests
    if limits:
        container["resources"]["limits"] = limits
    if config.always_pull:
        container["imagePullPolicy"] = "Always"
    if gates.enabled(Feature.SIDECAR_CONTAINERS):
        container["restartPolicy"] = "Always"
    return container


def _find(spec: dict[str, Any], name: str, init_too: bool = True) -> dict[str, Any] | None:
    keys = ("containers", "initContainers") if init_too else ("containers",)
    for key in keys:
        for c in spec.get(key) or []:
            if isinstance(c, dict) and c.get("name") == name:
                return c
    return None


def _apply_eviction(gs: GameServer, meta: dict[str, Any]) -> None:
    eviction = gs.status.eviction if gs.status is not UNSET else UNSET
    safe = getattr(eviction, "safe", None) or EvictionSafe.NEVER
    annotations, labels = meta["annotations"], meta["labels"]
    if POD_SAFE_TO_EVICT_ANNOTATION not in annotations:
        annotations[POD_SAFE_TO_EVICT_ANNOTATION] = (
            "true" if safe == EvictionSafe.ALWAYS else "false"
        )
    if SAFE_TO_EVICT_LABEL not in labels:
        labels[SAFE_TO_EVICT_LABEL] = "false" if safe == EvictionSafe.NEVER else "true"


def _pod_object_meta(gs: GameServer, template_meta: Any) -> dict[str, Any]:
    meta: dict[str, Any] = copy.deepcopy(template_meta) if isinstance(template_meta, dict) else {}
    for key in ("generateName", "resourceVersion", "uid", "creationTimestamp"):
        meta.pop(key, None)
    meta["name"] = gs.meta.get_name()
    meta["namespace"] = gs.meta.get_namespace()
    meta["labels"] = dict(meta.get("labels") or {})
    meta["annotations"] = dict(meta.get("annotations") or {})
    meta["labels"][ROLE_LABEL] = GAME_SERVER_LABEL_ROLE
    meta["labels"][GAME_SERVER_POD_LABEL] = gs.meta.get_name()
    container = gs.spec.container if gs.spec is not UNSET else UNSET
    meta["annotations"][GAME_SERVER_CONTAINER_ANNOTATION] = (
        container if isinstance(container, str) else ""
    )
    meta["annotations"][VERSION_ANNOTATION] = VERSION
    meta["ownerReferences"] = [
        *(meta.get("ownerReferences") or []),
        {
            "apiVersion": "agones.dev/v1",
            "kind": "GameServer",
            "name": gs.meta.get_name(),
            "uid": gs.meta.uid if isinstance(gs.meta.uid, str) else "",
            "controller": True,
            "blockOwnerDeletion": True,
        },
    ]
    return meta


def _add_ports(gs: GameServer, spec: dict[str, Any], meta: dict[str, Any]) -> None:
    passthrough: dict[str, list[int]] = {}
    default = gs.spec.container if gs.spec is not UNSET else UNSET
    for port in gs.ports():
        # The webhook always fills `container`; an object that skipped it uses the game container.
        name = port.container if isinstance(port.container, str) else default
        name = name if isinstance(name, str) else ""
        container = _find(spec, name)
        if container is None:
            raise PodError(f"failed to find container named {name} in pod spec")
        cp: dict[str, Any] = {}
        if port.container_port:
            cp["containerPort"] = port.container_port
        if port.host_port:
            cp["hostPort"] = port.host_port
        if port.protocol:
            cp["protocol"] = str(port.protocol)
        ports = container.setdefault("ports", [])
        if port.port_policy == PortPolicy.PASSTHROUGH:
            passthrough.setdefault(name, []).append(len(ports))
        ports.append(cp)
    if passthrough:
        meta["annotations"][PASSTHROUGH_PORT_ASSIGNMENT_ANNOTATION] = json.dumps(
            passthrough, separators=(",", ":")
        )


def _pod_scheduling(gs: GameServer, spec: dict[str, Any]) -> None:
    scheduling = gs.spec.scheduling if gs.spec is not UNSET else UNSET
    if scheduling != SchedulingStrategy.PACKED:
        return
    affinity = spec.setdefault("affinity", {})
    pod_affinity = affinity.setdefault("podAffinity", {})
    terms = pod_affinity.setdefault("preferredDuringSchedulingIgnoredDuringExecution", [])
    terms.append(
        {
            "weight": 100,
            "podAffinityTerm": {
                "topologyKey": "kubernetes.io/hostname",
                "labelSelector": {"matchLabels": {ROLE_LABEL: GAME_SERVER_LABEL_ROLE}},
            },
        }
    )


def _sdk_env(gs: GameServer) -> list[dict[str, str]]:
    sdk = _sdk(gs)
    env = []
    if sdk.grpc_port:
        env.append({"name": GRPC_PORT_ENV_VAR, "value": str(sdk.grpc_port)})
    if sdk.http_port:
        env.append({"name": HTTP_PORT_ENV_VAR, "value": str(sdk.http_port)})
    return env


def _add_sdk_env(gs: GameServer, spec: dict[str, Any]) -> None:
    sdk_env = _sdk_env(gs)
    if not sdk_env:  # GameServers from before the ports were defaulted keep their containers
        return
    reserved = {GRPC_PORT_ENV_VAR, HTTP_PORT_ENV_VAR}
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            if c.get("name") == SDKSERVER_SIDECAR_NAME:
                continue
            env = [e for e in c.get("env") or [] if e.get("name") not in reserved]
            c["env"] = env + [dict(e) for e in sdk_env]


def _add_health_check(gs: GameServer, game: dict[str, Any]) -> None:
    health = _health(gs)
    if health.disabled or "livenessProbe" in game:
        return
    game["livenessProbe"] = {
        "httpGet": {"path": "/gshealthz", "port": SIDECAR_HEALTH_PORT},
        "initialDelaySeconds": health.initial_delay_seconds or 0,
        "periodSeconds": health.period_seconds or 0,
        "failureThreshold": health.failure_threshold or 0,
    }


def game_server_pod(gs: GameServer, config: SidecarConfig, gates: FeatureGates) -> dict[str, Any]:
    """The Pod to create for `gs` (see the module docstring)."""
    template = gs.spec.template if gs.spec is not UNSET else UNSET
    template = template if isinstance(template, dict) else {}
    spec: dict[str, Any] = copy.deepcopy(template.get("spec") or {})
    meta = _pod_object_meta(gs, template.get("metadata"))
    if not spec.get("hostname"):
        spec["hostname"] = gs.meta.get_name().replace(".", "-")
    _add_ports(gs, spec, meta)
    car = sidecar(gs, config, gates)
    if gates.enabled(Feature.SIDECAR_CONTAINERS):
        spec["initContainers"] = [car, *(spec.get("initContainers") or [])]
        spec.setdefault("restartPolicy", "Never")
    else:
        spec["containers"] = [car, *(spec.get("containers") or [])]
    _pod_scheduling(gs, spec)
    _apply_eviction(gs, meta)

    name = gs.spec.container if gs.spec is not UNSET else UNSET
    game = _find(spec, name if isinstance(name, str) else "", init_too=False)
    if game is None:
        raise PodError(f"failed to find container named {name} in pod spec")
    if not spec.get("serviceAccountName"):
        spec["serviceAccountName"] = config.sdk_service_account
        spec["volumes"] = [*(spec.get("volumes") or []), {"name": "empty", "emptyDir": {}}]
        game["volumeMounts"] = [
            *(game.get("volumeMounts") or []),
            {"name": "empty", "mountPath": SERVICE_ACCOUNT_MOUNT_PATH, "readOnly": True},
        ]
    _add_health_check(gs, game)
    _add_sdk_env(gs, spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
