"""The StatefulSet controller's pure parts: ordinals, pod identity and storage, revisions, and the
plan of each step (`plan_update`) by tables."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agones.localcluster.apiserver.statefulsets import validate_statefulset
from agones.localcluster.controllers.statefulset_control import plan_update
from agones.localcluster.controllers.statefulset_utils import (
    POD_INDEX_LABEL,
    POD_NAME_LABEL,
    REVISION_LABEL,
    apply_revision,
    get_ordinal,
    new_revision,
    new_stateful_set_pod,
    persistent_volume_claims,
)

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def sts(**spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "metadata": {"name": "web", "namespace": "ns", "uid": "u1", "generation": 1},
        "spec": {
            "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                }
            ],
        },
    }
    body["spec"].update(spec)
    assert validate_statefulset(body) == []
    return body


def pod(ordinal: int, state: str = "ready", revision: str = "r1") -> dict[str, Any]:
    """A pod of `web` at `revision`: ready, running (not ready), pending, failed or terminating."""
    out = new_stateful_set_pod(sts(), ordinal, revision)
    out["metadata"]["uid"] = f"p{ordinal}"
    phase = {"pending": "Pending", "failed": "Failed"}.get(state, "Running")
    ready = "True" if state in ("ready", "terminating") else "False"
    out["status"] = {
        "phase": phase,
        "conditions": [
            {
                "type": "Ready",
                "status": ready,
                "lastTransitionTime": (NOW - timedelta(seconds=60)).isoformat(),
            }
        ],
    }
    if state == "terminating":
        out["metadata"]["deletionTimestamp"] = NOW.isoformat()
    return out


def summary(plan: Any) -> list[tuple[str, str]]:
    return [(a.verb, a.pod["metadata"]["name"]) for a in plan.actions]


@pytest.mark.parametrize(
    ("pod_name", "ordinal"),
    [
        pytest.param("web-0", 0, id="zero"),
        pytest.param("web-12", 12, id="two-digits"),
        pytest.param("web-x", -1, id="not-a-number"),
        pytest.param("webby-1", -1, id="other-set"),
        pytest.param("web-web-1", -1, id="prefix-only"),
        pytest.param("web", -1, id="no-ordinal"),
    ],
)
def test_get_ordinal(pod_name: str, ordinal: int) -> None:
    assert get_ordinal("web", pod_name) == ordinal


def test_pod_identity_and_storage() -> None:
    body = sts()
    body["spec"]["template"]["spec"]["volumes"] = [{"name": "data", "emptyDir": {}}]
    p = new_stateful_set_pod(body, 2, "web-abc")
    labels = p["metadata"]["labels"]
    assert p["metadata"]["name"] == "web-2"
    assert labels[POD_NAME_LABEL] == "web-2"
    assert labels[POD_INDEX_LABEL] == "2"
    assert labels[REVISION_LABEL] == "web-abc"
    assert labels["app"] == "web"
    assert (p["spec"]["hostname"], p["spec"]["subdomain"]) == ("web-2", "web")
    assert p["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-2"}}
    ]
    assert p["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    claims = persistent_volume_claims(body, 2)
    assert [c["metadata"]["name"] for c in claims] == ["data-web-2"]
    assert claims[0]["metadata"]["labels"] == {"app": "web"}


def test_revisions_name_the_template_and_apply_back() -> None:
    body = sts()
    first = new_revision(body, 1, None)
    assert first["metadata"]["name"].startswith("web-")
    assert first["data"]["spec"]["template"]["$patch"] == "replace"
    assert new_revision(body, 7, None)["metadata"]["name"] == first["metadata"]["name"]
    assert new_revision(body, 1, 1)["metadata"]["name"] != first["metadata"]["name"]
    changed = copy.deepcopy(body)
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "i2"
    second = new_revision(changed, 2, None)
    assert second["metadata"]["name"] != first["metadata"]["name"]
    assert apply_revision(changed, first)["spec"]["template"] == body["spec"]["template"]


ORDERED: dict[str, Any] = {}
PARALLEL = {"podManagementPolicy": "Parallel"}


@pytest.mark.parametrize(
    ("spec", "pods", "expected"),
    [
        pytest.param(ORDERED, [], [("create", "web-0")], id="ordered-first"),
        pytest.param(ORDERED, [pod(0, "pending")], [], id="ordered-waits-for-0"),
        pytest.param(ORDERED, [pod(0, "running")], [], id="ordered-waits-for-ready"),
        pytest.param(ORDERED, [pod(0)], [("create", "web-1")], id="ordered-next"),
        pytest.param(
            ORDERED, [pod(0), pod(2)], [("create", "web-1")], id="ordered-fills-the-gap-first"
        ),
        pytest.param(
            PARALLEL,
            [],
            [("create", "web-0"), ("create", "web-1"), ("create", "web-2")],
            id="parallel-all",
        ),
        pytest.param(
            PARALLEL,
            [pod(0, "pending")],
            [("create", "web-1"), ("create", "web-2")],
            id="parallel-does-not-wait",
        ),
        pytest.param(ORDERED, [pod(0, "failed")], [("delete", "web-0")], id="failed-replaced"),
        pytest.param(ORDERED, [pod(0, "terminating")], [], id="terminating-waits"),
    ],
)
def test_scale_up(spec: dict[str, Any], pods: list[Any], expected: list[Any]) -> None:
    body = sts(replicas=3, **spec)
    assert summary(plan_update(body, body, pods, "r1", "r1", NOW)) == expected


@pytest.mark.parametrize(
    ("spec", "replicas", "pods", "expected"),
    [
        pytest.param(
            ORDERED, 3, [pod(0), pod(1), pod(2), pod(3)], [("delete", "web-3")], id="highest-first"
        ),
        pytest.param(ORDERED, 1, [pod(0), pod(1), pod(2, "terminating")], [], id="one-at-a-time"),
        pytest.param(
            ORDERED, 2, [pod(0, "running"), pod(1), pod(2)], [], id="waits-for-an-unhealthy-one"
        ),
        pytest.param(
            ORDERED, 2, [pod(0), pod(1), pod(2, "running")], [("delete", "web-2")], id="unhealthy"
        ),
        pytest.param(
            PARALLEL,
            2,
            [pod(0), pod(1), pod(2), pod(3, "running")],
            [("delete", "web-3"), ("delete", "web-2")],
            id="parallel-together",
        ),
    ],
)
def test_scale_down(
    spec: dict[str, Any], replicas: int, pods: list[Any], expected: list[Any]
) -> None:
    body = sts(replicas=replicas, **spec)
    assert summary(plan_update(body, body, pods, "r1", "r1", NOW)) == expected


@pytest.mark.parametrize(
    ("strategy", "pods", "expected"),
    [
        pytest.param(
            {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            [pod(0), pod(1), pod(2)],
            [("delete", "web-2")],
            id="highest-ordinal-first",
        ),
        pytest.param(
            {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            [pod(0), pod(1), pod(2, revision="r2")],
            [("delete", "web-1")],
            id="then-the-next",
        ),
        pytest.param(
            {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            [pod(0), pod(1), pod(2, "running", revision="r2")],
            [],
            id="waits-for-the-updated-pod",
        ),
        pytest.param(
            {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}},
            [pod(0), pod(1), pod(2, revision="r2")],
            [],
            id="partition-stops-it",
        ),
        pytest.param({"type": "OnDelete"}, [pod(0), pod(1), pod(2)], [], id="on-delete"),
    ],
)
def test_rolling_update(strategy: dict[str, Any], pods: list[Any], expected: list[Any]) -> None:
    body = sts(replicas=3, updateStrategy=strategy)
    assert summary(plan_update(body, body, pods, "r1", "r2", NOW)) == expected


def test_recreated_pod_takes_the_revision_of_its_side_of_the_partition() -> None:
    body = sts(
        replicas=3, updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}
    )
    old = copy.deepcopy(body)
    old["spec"]["template"]["spec"]["containers"][0]["image"] = "old"
    below = plan_update(old, body, [pod(1), pod(2, revision="r2")], "r1", "r2", NOW)
    created = below.actions[0].pod
    assert created["metadata"]["name"] == "web-0"
    assert created["metadata"]["labels"][REVISION_LABEL] == "r1"
    assert created["spec"]["containers"][0]["image"] == "old"
    above = plan_update(old, body, [pod(0), pod(1)], "r1", "r2", NOW)
    assert above.actions[0].pod["metadata"]["labels"][REVISION_LABEL] == "r2"
    assert above.actions[0].pod["spec"]["containers"][0]["image"] == "i"


def test_status_counts_and_completes_the_rollout() -> None:
    body = sts(replicas=3)
    pods = [pod(0, revision="r2"), pod(1, "running", revision="r2"), pod(2, revision="r1")]
    status = plan_update(body, body, pods, "r1", "r2", NOW).status
    assert (status["replicas"], status["readyReplicas"], status["availableReplicas"]) == (3, 2, 2)
    assert (status["currentReplicas"], status["updatedReplicas"]) == (1, 2)
    assert (status["currentRevision"], status["updateRevision"]) == ("r1", "r2")
    done = plan_update(body, body, [pod(i, revision="r2") for i in range(3)], "r1", "r2", NOW)
    assert (done.status["currentRevision"], done.status["currentReplicas"]) == ("r2", 3)


def test_min_ready_seconds_holds_the_next_ordinal_and_requeues() -> None:
    body = sts(replicas=2, minReadySeconds=90)
    plan = plan_update(body, body, [pod(0)], "r1", "r1", NOW)
    assert plan.actions == []
    assert plan.wait == pytest.approx(30.0)
    assert plan.status["availableReplicas"] == 0
