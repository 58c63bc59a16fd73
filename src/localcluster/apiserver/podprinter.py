"""The READY, STATUS and RESTARTS cells of `kubectl get pods` (`printPod` of kube's
`pkg/printers/internalversion`, v1.28+, with native sidecars).

READY counts the regular containers that are ready and running, plus the restartable init
containers (native sidecars, `restartPolicy: Always`) that have started and are ready, out of the
regular containers plus the sidecars. STATUS is the phase (or `status.reason`), overridden while
initializing (`Init:N/M`, `Init:<reason>`) and then by the last container's waiting or
terminated reason, back to `Running` when a `Completed` pod still has a running container;
`Terminating` once deleted. RESTARTS sums the restart counts (during init: of the init
containers) with `(<age> ago)` of the latest restart.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .table import human_duration

Obj = dict[str, Any]


def _restartable(container: Obj | None) -> bool:
    return bool(container) and (container or {}).get("restartPolicy") == "Always"


def _finished_at(status: Obj) -> str:
    last = (status.get("lastState") or {}).get("terminated") or {}
    return str(last.get("finishedAt") or "")


def _terminated_reason(terminated: Obj, prefix: str = "") -> str:
    if terminated.get("reason"):
        return prefix + str(terminated["reason"])
    if terminated.get("signal"):
        return f"{prefix}Signal:{terminated['signal']}"
    return f"{prefix}ExitCode:{terminated.get('exitCode', 0)}"


class _Tally:
    def __init__(self) -> None:
        self.restarts = 0
        self.ready = 0
        self.last_restart = ""

    def count(self, status: Obj) -> None:
        self.restarts += int(status.get("restartCount") or 0)
        self.last_restart = max(self.last_restart, _finished_at(status))


def _init_reason(pod: Obj, tally: _Tally, sidecars: _Tally) -> str | None:
    """The init phase's reason (None once every init container is done or a started sidecar)."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    by_name = {c.get("name"): c for c in spec.get("initContainers") or []}
    total = len(spec.get("initContainers") or [])
    for i, cs in enumerate(status.get("initContainerStatuses") or []):
        tally.count(cs)
        sidecar = _restartable(by_name.get(cs.get("name")))
        if sidecar:
            sidecars.count(cs)
        state = cs.get("state") or {}
        terminated, waiting = state.get("terminated"), state.get("waiting") or {}
        if terminated is not None and int(terminated.get("exitCode") or 0) == 0:
            continue
        if sidecar and cs.get("started"):
            if cs.get("ready"):
                sidecars.ready += 1
            continue
        if terminated is not None:
            return _terminated_reason(terminated, "Init:")
        if waiting.get("reason") and waiting["reason"] != "PodInitializing":
            return "Init:" + str(waiting["reason"])
        return f"Init:{i}/{total}"
    return None


def _condition(pod: Obj, kind: str) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == kind and c.get("status") == "True" for c in conditions)


def print_pod(pod: Obj, now: datetime | None = None) -> tuple[str, str, str]:
    """(READY, STATUS, RESTARTS) of one pod."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    total = len(spec.get("containers") or [])
    total += sum(1 for c in spec.get("initContainers") or [] if _restartable(c))
    reason = str(status.get("reason") or status.get("phase") or "")
    if any(
        c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated"
        for c in status.get("conditions") or []
    ):
        reason = "SchedulingGated"
    everything, sidecars = _Tally(), _Tally()
    init_reason = _init_reason(pod, everything, sidecars)
    tally = everything
    if init_reason is not None:
        reason = init_reason
    if init_reason is None or _condition(pod, "Initialized"):
        tally = sidecars
        running = False
        for cs in reversed(status.get("containerStatuses") or []):
            tally.count(cs)
            state = cs.get("state") or {}
            if (state.get("waiting") or {}).get("reason"):
                reason = str(state["waiting"]["reason"])
            elif state.get("terminated") is not None:
                reason = _terminated_reason(state["terminated"])
            elif cs.get("ready") and state.get("running") is not None:
                running = True
                tally.ready += 1
        if reason == "Completed" and running:
            reason = "Running" if _condition(pod, "Ready") else "NotReady"
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        if status.get("reason") == "NodeLost":
            reason = "Unknown"
        elif status.get("phase") not in ("Succeeded", "Failed"):
            reason = "Terminating"
    restarts = str(tally.restarts)
    if tally.restarts and tally.last_restart:
        restarts += f" ({_ago(tally.last_restart, now)} ago)"
    return f"{sidecars.ready}/{total}", reason, restarts


def _ago(stamp: str, now: datetime | None) -> str:
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return "<unknown>"
    return human_duration(((now or datetime.now(UTC)) - when).total_seconds())
