"""Table columns of built-in kinds (what kubectl get shows)."""

import pytest

from agones.localcluster.apiserver.printers import columns_for_resource
from agones.localcluster.apiserver.resources import builtin_resources
from agones.localcluster.apiserver.table import to_table

INFOS = {(i.group, i.resource): i for i in builtin_resources()}


def _row(resource: str, obj: dict) -> dict:
    info = INFOS[("", resource)]
    table = to_table([obj], columns_for_resource(info), {})
    names = [c["name"] for c in table["columnDefinitions"]]
    return dict(zip(names, table["rows"][0]["cells"], strict=True))


@pytest.mark.parametrize(
    ("status", "deleting", "ready", "shown"),
    [
        pytest.param({"phase": "Pending"}, False, "0/2", "Pending", id="pending"),
        pytest.param(
            {
                "phase": "Running",
                "containerStatuses": [
                    {"ready": True, "restartCount": 1, "state": {"running": {}}},
                    {"ready": True, "restartCount": 2, "state": {"running": {}}},
                ],
            },
            False,
            "2/2",
            "Running",
            id="running",
        ),
        pytest.param(
            {
                "phase": "Pending",
                "containerStatuses": [
                    {"ready": False, "state": {"waiting": {"reason": "ImagePullBackOff"}}}
                ],
            },
            False,
            "0/2",
            "ImagePullBackOff",
            id="waiting-reason",
        ),
        pytest.param({"phase": "Running"}, True, "0/2", "Terminating", id="terminating"),
    ],
)
def test_pod_columns(status: dict, deleting: bool, ready: str, shown: str) -> None:
    md: dict = {"name": "p"}
    if deleting:
        md["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    row = _row("pods", {"metadata": md, "spec": {"containers": [{}, {}]}, "status": status})
    assert (row["Name"], row["Ready"], row["Status"]) == ("p", ready, shown)
    assert row["Restarts"] == str(
        sum(s.get("restartCount", 0) for s in status.get("containerStatuses", []))
    )


def test_service_and_node_columns() -> None:
    svc = {
        "metadata": {"name": "s"},
        "spec": {
            "type": "NodePort",
            "clusterIP": "10.96.0.9",
            "ports": [
                {"port": 80, "nodePort": 30080, "protocol": "TCP"},
                {"port": 53, "protocol": "UDP"},
            ],
        },
    }
    row = _row("services", svc)
    assert (row["Type"], row["Cluster-IP"], row["External-IP"], row["Port(s)"]) == (
        "NodePort",
        "10.96.0.9",
        "<none>",
        "80:30080/TCP,53/UDP",
    )
    node = {
        "metadata": {"name": "n", "labels": {"node-role.kubernetes.io/worker": ""}},
        "spec": {"unschedulable": True},
        "status": {
            "conditions": [{"type": "Ready", "status": "False"}],
            "nodeInfo": {"kubeletVersion": "v1.28.7"},
        },
    }
    row = _row("nodes", node)
    assert (row["Status"], row["Roles"], row["Version"]) == (
        "NotReady,SchedulingDisabled",
        "worker",
        "v1.28.7",
    )
