"""kubectl's STATUS column of a pod while its init containers run, by table (the server-side
Table printer of the local API server)."""

from __future__ import annotations

from typing import Any

import pytest

from agones.localcluster.apiserver.printers import _pod_status


def _pod(
    inits: list[dict[str, Any]], statuses: list[dict[str, Any]], phase: str = "Pending"
) -> Any:
    return {
        "metadata": {"name": "p"},
        "spec": {"initContainers": inits, "containers": [{"name": "app"}]},
        "status": {
            "phase": phase,
            "initContainerStatuses": statuses,
            "containerStatuses": [
                {"name": "app", "state": {"waiting": {"reason": "PodInitializing"}}}
            ],
        },
    }


DONE = {"terminated": {"exitCode": 0, "reason": "Completed"}}
RUNNING = {"running": {"startedAt": "t"}}
PENDING = {"waiting": {"reason": "PodInitializing"}}
TWO = [{"name": "a"}, {"name": "b"}]


@pytest.mark.parametrize(
    ("inits", "states", "expected"),
    [
        pytest.param(TWO, [RUNNING, PENDING], "Init:0/2", id="first-running"),
        pytest.param(TWO, [DONE, RUNNING], "Init:1/2", id="second-running"),
        pytest.param(
            TWO,
            [DONE, {"terminated": {"exitCode": 1, "reason": "Error"}}],
            "Init:Error",
            id="error",
        ),
        pytest.param(
            TWO,
            [DONE, {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}}],
            "Init:CrashLoopBackOff",
            id="crash-loop",
        ),
        pytest.param(
            TWO,
            [{"terminated": {"exitCode": 137, "signal": 9}}, PENDING],
            "Init:Signal:9",
            id="signal",
        ),
        pytest.param(
            [{"name": "side", "restartPolicy": "Always"}, {"name": "b"}],
            [{**{"state": RUNNING}, "started": True}, RUNNING],
            "Init:1/2",
            id="sidecar-started-counts",
        ),
        pytest.param(TWO, [DONE, DONE], "PodInitializing", id="done"),
    ],
)
def test_init_status(inits: list[dict[str, Any]], states: list[Any], expected: str) -> None:
    statuses = [
        {"name": c["name"], **(s if "state" in s else {"state": s})}
        for c, s in zip(inits, states, strict=True)
    ]
    assert _pod_status(_pod(inits, statuses)) == expected
