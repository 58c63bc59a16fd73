"""The core/v1 defaults kube-apiserver applies on decode (`pkg/apis/core/v1/defaults.go`), to pods
and to every pod template inside the built-in kinds (Deployments, ReplicaSets, StatefulSets,
DaemonSets, Jobs, CronJobs, ReplicationControllers, PodTemplates).

`set_object_defaults(group, kind, obj)` runs on every write (create, update, patch), as decoding
does, so an update that leaves a default out keeps it and a template's hash does not change.
Each function sets only what is absent and returns nothing; they are idempotent.

Applied (the Go function in brackets): pod spec `dnsPolicy: ClusterFirst`, `restartPolicy:
Always`, `terminationGracePeriodSeconds: 30`, `securityContext: {}`, `schedulerName:
default-scheduler` and with `hostNetwork` each port's `hostPort` = its `containerPort`
[SetDefaults_PodSpec]; `enableServiceLinks: true` and requests copied from limits
[SetDefaults_Pod]; containers' `imagePullPolicy` (Always for `:latest` or no tag, else
IfNotPresent), `terminationMessagePath: /dev/termination-log`, `terminationMessagePolicy: File`
[SetDefaults_Container]; ports' `protocol: TCP`; probes' `timeoutSeconds: 1`, `periodSeconds: 10`,
`successThreshold: 1`, `failureThreshold: 3` [SetDefaults_Probe]; `httpGet` `path: /`, `scheme:
HTTP` [SetDefaults_HTTPGetAction]; `grpc.service: ""`; `fieldRef.apiVersion: v1`; a volume with no
source an `emptyDir: {}` [SetDefaults_Volume]; `defaultMode: 420` on secret, configMap,
downwardAPI and projected volumes; projected service-account tokens `expirationSeconds: 3600`.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]

DEFAULT_MODE = 0o644
VOLUME_SOURCES_WITH_MODE = ("secret", "configMap", "downwardAPI", "projected")
_NOT_A_SOURCE = {"name"}
POD_TEMPLATE_PATHS: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps", "Deployment"): ("spec", "template"),
    ("apps", "ReplicaSet"): ("spec", "template"),
    ("apps", "StatefulSet"): ("spec", "template"),
    ("apps", "DaemonSet"): ("spec", "template"),
    ("batch", "Job"): ("spec", "template"),
    ("batch", "CronJob"): ("spec", "jobTemplate", "spec", "template"),
    ("", "ReplicationController"): ("spec", "template"),
    ("", "PodTemplate"): ("template",),
}
"""Where each built-in kind holds its pod template."""


def _dict(value: Any) -> Obj | None:
    return value if isinstance(value, dict) else None


def _dicts(value: Any) -> list[Obj]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def image_pull_policy(image: str) -> str:
    """Always for an image without a tag (and without a digest) or tagged `latest`."""
    last = image.rsplit("/", 1)[-1]
    name, at, _digest = last.partition("@")
    _repo, colon, tag = name.partition(":")
    if not colon:
        return "IfNotPresent" if at else "Always"
    return "Always" if tag == "latest" else "IfNotPresent"


def set_defaults_http_get(action: Obj) -> None:
    action.setdefault("path", "/")
    action.setdefault("scheme", "HTTP")


def set_defaults_handler(handler: Obj) -> None:
    """Probe and lifecycle handlers: their httpGet and grpc actions."""
    if (http := _dict(handler.get("httpGet"))) is not None:
        set_defaults_http_get(http)
    if (grpc := _dict(handler.get("grpc"))) is not None:
        grpc.setdefault("service", "")


def set_defaults_probe(probe: Obj) -> None:
    probe.setdefault("timeoutSeconds", 1)
    probe.setdefault("periodSeconds", 10)
    probe.setdefault("successThreshold", 1)
    probe.setdefault("failureThreshold", 3)
    set_defaults_handler(probe)


def set_defaults_container(c: Obj) -> None:
    if "imagePullPolicy" not in c:
        c["imagePullPolicy"] = image_pull_policy(str(c.get("image") or ""))
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("resources", {})
    for port in _dicts(c.get("ports")):
        port.setdefault("protocol", "TCP")
    for key in ("livenessProbe", "readinessProbe", "startupProbe"):
        if (probe := _dict(c.get(key))) is not None:
            set_defaults_probe(probe)
    lifecycle = _dict(c.get("lifecycle")) or {}
    for key in ("postStart", "preStop"):
        if (handler := _dict(lifecycle.get(key))) is not None:
            set_defaults_handler(handler)
    for env in _dicts(c.get("env")):
        ref = _dict((_dict(env.get("valueFrom")) or {}).get("fieldRef"))
        if ref is not None:
            ref.setdefault("apiVersion", "v1")


def set_defaults_volume(volume: Obj) -> None:
    if not set(volume) - _NOT_A_SOURCE:
        volume["emptyDir"] = {}
    for kind in VOLUME_SOURCES_WITH_MODE:
        if (source := _dict(volume.get(kind))) is not None:
            source.setdefault("defaultMode", DEFAULT_MODE)
    for item in _dicts((_dict(volume.get("downwardAPI")) or {}).get("items")):
        if (ref := _dict(item.get("fieldRef"))) is not None:
            ref.setdefault("apiVersion", "v1")
    for source in _dicts((_dict(volume.get("projected")) or {}).get("sources")):
        if (token := _dict(source.get("serviceAccountToken"))) is not None:
            token.setdefault("expirationSeconds", 3600)
        for item in _dicts((_dict(source.get("downwardAPI")) or {}).get("items")):
            if (ref := _dict(item.get("fieldRef"))) is not None:
                ref.setdefault("apiVersion", "v1")


def set_defaults_pod_spec(spec: Obj) -> None:
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("enableServiceLinks", True)
    every = [*_dicts(spec.get("initContainers")), *_dicts(spec.get("containers"))]
    every += _dicts(spec.get("ephemeralContainers"))
    for c in every:
        set_defaults_container(c)
        if spec.get("hostNetwork") is True:
            for port in _dicts(c.get("ports")):
                if not port.get("hostPort") and "containerPort" in port:
                    port["hostPort"] = port["containerPort"]
    for volume in _dicts(spec.get("volumes")):
        set_defaults_volume(volume)


def set_defaults_pod(spec: Obj) -> None:
    """A pod's spec: its template defaults, then requests from limits (pods only)."""
    set_defaults_pod_spec(spec)
    for c in [*_dicts(spec.get("initContainers")), *_dicts(spec.get("containers"))]:
        resources = _dict(c.get("resources")) or {}
        limits = _dict(resources.get("limits"))
        requests = resources.setdefault("requests", {}) if limits else None
        if limits and isinstance(requests, dict):
            for name, quantity in limits.items():
                requests.setdefault(name, quantity)


def set_object_defaults(group: str, kind: str, obj: Obj) -> None:
    """The defaults of a built-in object of `kind` (pods and the kinds with a pod template)."""
    if (group, kind) == ("", "Pod"):
        if (spec := _dict(obj.get("spec"))) is not None:
            set_defaults_pod(spec)
        return
    path = POD_TEMPLATE_PATHS.get((group, kind))
    node: Obj | None = obj
    for key in path or ():
        node = _dict((node or {}).get(key))
    if path and node is not None and (spec := _dict(node.get("spec"))) is not None:
        set_defaults_pod_spec(spec)
