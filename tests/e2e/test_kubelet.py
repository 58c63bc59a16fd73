"""The simulated kubelet with plain pods whose containers have a `command` (local processes):
exit codes and restarts in the pod status per restartPolicy, the phase when it is done, and
graceful deletion (SIGTERM, terminationGracePeriodSeconds, SIGKILL)."""

from __future__ import annotations

import signal
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.framework import Framework

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(120)]


def make_pod(code: str, restart: str, grace: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "restartPolicy": restart,
        "containers": [{"name": "main", "image": "local", "command": [sys.executable, "-c", code]}],
    }
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"kubelet-{uuid.uuid4().hex[:6]}"},
        "spec": spec,
    }


def create(framework: Framework, pod: dict[str, Any]) -> str:
    resp = framework.api.post(f"/api/v1/namespaces/{framework.namespace}/pods", pod)
    assert resp.status == 201, resp
    return str(pod["metadata"]["name"])


def container_status(framework: Framework, name: str) -> dict[str, Any]:
    pod = framework.pod(name) or {}
    statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
    return dict(statuses[0])


def test_failing_container_is_restarted_with_its_exit_code(
    framework: Framework, local_stack: Any
) -> None:
    name = create(framework, make_pod("import sys; sys.exit(3)", "OnFailure"))
    status = framework.wait(
        "a restart",
        lambda: (s := container_status(framework, name)).get("restartCount", 0) >= 1 and s,
        30,
    )
    assert status["lastState"]["terminated"]["exitCode"] == 3
    assert status["lastState"]["terminated"]["reason"] == "Error"
    pod = framework.pod(name)
    assert pod is not None and pod["status"]["podIP"] == pod["status"]["hostIP"]


@pytest.mark.parametrize(("code", "phase"), [(0, "Succeeded"), (4, "Failed")])
def test_finished_pod_reports_its_phase(
    framework: Framework, local_stack: Any, code: int, phase: str
) -> None:
    name = create(framework, make_pod(f"import sys; sys.exit({code})", "Never"))
    framework.wait(
        phase, lambda: ((framework.pod(name) or {}).get("status") or {}).get("phase") == phase, 30
    )
    terminated = container_status(framework, name)["state"]["terminated"]
    assert terminated["exitCode"] == code
    assert container_status(framework, name)["restartCount"] == 0


def test_deletion_sends_sigterm_then_sigkill_after_the_grace_period(
    framework: Framework, local_stack: Any
) -> None:
    ignore_term = (
        "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
    )
    name = create(framework, make_pod(ignore_term, "Always", grace=1))
    framework.wait(
        "running", lambda: "running" in (container_status(framework, name).get("state") or {}), 30
    )
    uid = framework.pod(name)["metadata"]["uid"]  # type: ignore[index]
    proc = local_stack.stack.kubelet.runners[uid].containers[0].proc
    # "running" is reported at launch; delete only once the program ignores SIGTERM
    framework.wait("SIGTERM ignored", lambda: _ignores_sigterm(proc.pid), 30)
    framework.delete_pod(name)
    pod = framework.pod(name)  # graceful: the kubelet finishes the deletion
    assert pod is not None and pod["metadata"]["deletionGracePeriodSeconds"] == 1
    framework.wait("pod gone", lambda: framework.pod(name) is None, 30)
    assert proc.returncode == -9  # it ignored SIGTERM, so SIGKILL ended it


def _ignores_sigterm(pid: int) -> bool:
    """Whether the process has SIGTERM in its ignored-signal mask (`SigIgn` in /proc)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    mask = next(line.split()[1] for line in status.splitlines() if line.startswith("SigIgn:"))
    return bool(int(mask, 16) & (1 << (signal.SIGTERM - 1)))
