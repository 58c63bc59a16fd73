"""The Events a kubelet records about a pod's containers, worded as the kubelet words them
(`pkg/kubelet/events`, `kuberuntime_container.go`, `prober`), plus the local cluster's own
`Simulated` event for a pod (or container) that runs no process.

| reason      | type    | message                                                                 |
|-------------|---------|-------------------------------------------------------------------------|
| Pulled      | Normal  | Container image "<image>" already present on machine                    |
| Created     | Normal  | Created container <name>                                                |
| Started     | Normal  | Started container <name>                                                |
| Killing     | Normal  | Stopping container <name> / Container <name> failed liveness probe, ... |
| BackOff     | Warning | Back-off restarting failed container <name> in pod <pod>_<ns>(<uid>)    |
| Unhealthy   | Warning | <Kind> probe failed: <output>                                           |
| Simulated   | Normal  | why the pod or container runs no process                                |

Nothing is pulled: images map to local programs (`containers.IMAGE_PROGRAMS`), which are
"already present", as for an `IfNotPresent` image a node has.
"""

from __future__ import annotations

from typing import Any

from ...record import EventRecorder, EventType, object_reference


class PodEvents:
    """Records one pod's kubelet events (no-op without a recorder)."""

    def __init__(self, recorder: EventRecorder | None, pod: dict[str, Any]) -> None:
        self.recorder = recorder
        self.pod = pod

    def _event(self, container: str, kind: str, reason: str, message: str) -> None:
        """An event on the pod, or with `container` on that container (its `fieldPath`)."""
        if self.recorder is None:
            return
        target: dict[str, Any] = self.pod
        if container:
            target = object_reference(self.pod, container_field_path(self.pod, container))
        self.recorder.event(target, kind, reason, message)

    def started(self, container: dict[str, Any]) -> None:
        """Pulled, Created and Started: one launch of a container."""
        name = str(container.get("name", ""))
        image = container.get("image", "")
        pulled = f'Container image "{image}" already present on machine'
        self._event(name, EventType.NORMAL, "Pulled", pulled)
        self._event(name, EventType.NORMAL, "Created", f"Created container {name}")
        self._event(name, EventType.NORMAL, "Started", f"Started container {name}")

    def killing(self, name: str, why: str = "") -> None:
        self._event(name, EventType.NORMAL, "Killing", why or f"Stopping container {name}")

    def back_off(self, name: str) -> None:
        md = self.pod.get("metadata") or {}
        pod = f"{md.get('name', '')}_{md.get('namespace', '')}({md.get('uid', '')})"
        message = f"Back-off restarting failed container {name} in pod {pod}"
        self._event(name, EventType.WARNING, "BackOff", message)

    def unhealthy(self, name: str, message: str) -> None:
        self._event(name, EventType.WARNING, "Unhealthy", message)

    def simulated(self, message: str, name: str = "") -> None:
        self._event(name, EventType.NORMAL, "Simulated", message)


def crash_loop_back_off(pod: dict[str, Any], name: str, delay: float) -> dict[str, str]:
    """The waiting state of a container the kubelet holds back before restarting it."""
    md = pod.get("metadata") or {}
    who = f"{md.get('name', '')}_{md.get('namespace', '')}({md.get('uid', '')})"
    return {
        "reason": "CrashLoopBackOff",
        "message": f"back-off {delay:g}s restarting failed container={name} pod={who}",
    }


def container_field_path(pod: dict[str, Any], name: str) -> str:
    """`spec.containers{name}` or `spec.initContainers{name}`, as the kubelet refers to one."""
    inits = (pod.get("spec") or {}).get("initContainers") or []
    kind = "initContainers" if any(c.get("name") == name for c in inits) else "containers"
    return f"spec.{kind}{{{name}}}"
