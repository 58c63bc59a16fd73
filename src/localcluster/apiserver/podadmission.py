"""What kube-apiserver's built-in admission and pod strategy check on pods beyond their shape.

- `ServiceAccount` admission (plugin/pkg/admission/serviceaccount): a created pod runs as a service
  account (`default` when it names none) that must exist in its namespace, else 403 `error looking
  up service account <ns>/<name>: serviceaccount "<name>" not found`. The `default` account is made
  by a controller just after its namespace, so it is looked up a few times before giving up, as
  the plugin does (10 attempts, 100-200 ms apart).
- Status updates (ValidateContainerStateTransition): a container that terminated may not go back
  to a non-terminated state unless the pod restarts it (`restartPolicy: Always`, or `OnFailure`
  after a failure; restartable init containers always may).
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from ...apis import field
from ...apis.field import FieldError
from . import errors
from .store import Store

Obj = dict[str, Any]

DEFAULT_SERVICE_ACCOUNT = "default"
DEFAULT_ACCOUNT_ATTEMPTS = 10
_TERMINAL_TRANSITION = "may not be transitioned to non-terminated state"


def service_account_name(pod: Obj) -> str:
    spec = pod.get("spec")
    spec = spec if isinstance(spec, dict) else {}
    name = spec.get("serviceAccountName") or spec.get("serviceAccount")
    return name if isinstance(name, str) and name else DEFAULT_SERVICE_ACCOUNT


async def admit_service_account(store: Store, ns: str, pod: Obj) -> None:
    """Refuse a pod whose service account does not exist (403, in the plugin's words)."""
    name = service_account_name(pod)
    attempts = DEFAULT_ACCOUNT_ATTEMPTS if name == DEFAULT_SERVICE_ACCOUNT else 1
    for attempt in range(attempts):
        if attempt:
            await asyncio.sleep(random.uniform(0.1, 0.2))
        if store.get("/serviceaccounts", ns, name) is not None:
            return
    md = pod.get("metadata") or {}
    pod_name = md.get("name") or md.get("generateName") or "Unknown"
    raise errors.StatusError(
        403,
        "Forbidden",
        f'pods "{pod_name}" is forbidden: error looking up service account {ns}/{name}: '
        f'serviceaccount "{name}" not found',
        {"name": pod_name, "kind": "pods"},
    )


def _statuses(status: Any, key: str) -> list[Obj]:
    items = status.get(key) if isinstance(status, dict) else None
    return [s for s in items or [] if isinstance(s, dict)]


def _terminated(status: Obj) -> Obj | None:
    state = status.get("state")
    terminated = state.get("terminated") if isinstance(state, dict) else None
    return terminated if isinstance(terminated, dict) else None


def _restartable_init_containers(spec: Obj) -> set[str]:
    return {
        c.get("name", "")
        for c in spec.get("initContainers") or []
        if isinstance(c, dict) and c.get("restartPolicy") == "Always"
    }


def validate_container_state_transitions(new: Obj, old: Obj) -> list[FieldError]:
    """ValidateContainerStateTransition and its init-container twin, for a status update."""
    raw_spec = old.get("spec")
    spec: Obj = raw_spec if isinstance(raw_spec, dict) else {}
    policy = spec.get("restartPolicy", "Always")
    if policy == "Always":
        return []
    out: list[FieldError] = []
    restartable = _restartable_init_containers(spec)
    for key in ("initContainerStatuses", "containerStatuses"):
        news = _statuses(new.get("status"), key)
        for i, previous in enumerate(_statuses(old.get("status"), key)):
            terminated = _terminated(previous)
            if terminated is None:
                continue
            if terminated.get("exitCode", 0) != 0 and policy == "OnFailure":
                continue
            if key == "initContainerStatuses" and previous.get("name") in restartable:
                continue
            for current in news:
                if current.get("name") == previous.get("name") and _terminated(current) is None:
                    out.append(field.forbidden(f"status.{key}[{i}].state", _TERMINAL_TRANSITION))
    return out
