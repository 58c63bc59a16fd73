"""`kubectl get pods` cells (`apiserver/podprinter.py`, kube's printPod) by table, native sidecars
included."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agones.localcluster.apiserver.podprinter import print_pod

NOW = datetime(2026, 1, 1, 0, 10, 0, tzinfo=UTC)
RUNNING = {"running": {"startedAt": "2026-01-01T00:00:00Z"}}


def status(name: str, ready: bool, state: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": name, "ready": ready, "state": state, "restartCount": 0, **extra}


SIDECAR_SPEC = {
    "initContainers": [{"name": "side", "restartPolicy": "Always"}],
    "containers": [{"name": "app"}],
}
INIT_SPEC = {"initContainers": [{"name": "a"}, {"name": "b"}], "containers": [{"name": "app"}]}
CONDITIONS_READY = [{"type": "Initialized", "status": "True"}, {"type": "Ready", "status": "True"}]


@pytest.mark.parametrize(
    ("spec", "pod_status", "cells"),
    [
        pytest.param(
            SIDECAR_SPEC,
            {
                "phase": "Running",
                "conditions": CONDITIONS_READY,
                "initContainerStatuses": [status("side", True, RUNNING, started=True)],
                "containerStatuses": [status("app", True, RUNNING)],
            },
            ("2/2", "Running", "0"),
            id="native-sidecar-2-of-2",
        ),
        pytest.param(
            SIDECAR_SPEC,
            {
                "phase": "Pending",
                "initContainerStatuses": [
                    status("side", False, {"waiting": {"reason": "PodInitializing"}})
                ],
            },
            ("0/2", "Init:0/1", "0"),
            id="sidecar-not-started",
        ),
        pytest.param(
            INIT_SPEC,
            {
                "phase": "Pending",
                "initContainerStatuses": [
                    status("a", False, {"terminated": {"exitCode": 0, "reason": "Completed"}}),
                    status("b", False, RUNNING),
                ],
                "containerStatuses": [
                    status("app", False, {"waiting": {"reason": "PodInitializing"}})
                ],
            },
            ("0/1", "Init:1/2", "0"),
            id="second-init-container-running",
        ),
        pytest.param(
            INIT_SPEC,
            {
                "phase": "Pending",
                "initContainerStatuses": [
                    status(
                        "a",
                        False,
                        {"waiting": {"reason": "CrashLoopBackOff"}},
                        restartCount=3,
                        lastState={"terminated": {"finishedAt": "2026-01-01T00:09:00Z"}},
                    )
                ],
            },
            ("0/1", "Init:CrashLoopBackOff", "3 (60s ago)"),
            id="init-crashloop",
        ),
        pytest.param(
            {"containers": [{"name": "app"}]},
            {
                "phase": "Running",
                "containerStatuses": [
                    status(
                        "app",
                        False,
                        {"waiting": {"reason": "CrashLoopBackOff"}},
                        restartCount=2,
                        lastState={"terminated": {"finishedAt": "2026-01-01T00:05:00Z"}},
                    )
                ],
            },
            ("0/1", "CrashLoopBackOff", "2 (5m ago)"),
            id="crashloop-with-age",
        ),
        pytest.param(
            {"containers": [{"name": "app"}]},
            {
                "phase": "Failed",
                "containerStatuses": [status("app", False, {"terminated": {"exitCode": 3}})],
            },
            ("0/1", "ExitCode:3", "0"),
            id="exit-code-without-reason",
        ),
        pytest.param(
            {"containers": [{"name": "a"}, {"name": "b"}]},
            {
                "phase": "Running",
                "conditions": CONDITIONS_READY,
                "containerStatuses": [
                    status("a", False, {"terminated": {"exitCode": 0, "reason": "Completed"}}),
                    status("b", True, RUNNING),
                ],
            },
            ("1/2", "Running", "0"),
            id="completed-but-one-running",
        ),
    ],
)
def test_print_pod(
    spec: dict[str, Any], pod_status: dict[str, Any], cells: tuple[str, ...]
) -> None:
    pod = {"metadata": {"name": "p"}, "spec": spec, "status": pod_status}
    assert print_pod(pod, NOW) == cells


def test_terminating_unless_finished() -> None:
    md = {"name": "p", "deletionTimestamp": "2026-01-01T00:00:00Z"}
    running = {"metadata": md, "spec": {"containers": [{}]}, "status": {"phase": "Running"}}
    assert print_pod(running, NOW)[1] == "Terminating"
    done = {**running, "status": {"phase": "Succeeded"}}
    assert print_pod(done, NOW)[1] == "Succeeded"
