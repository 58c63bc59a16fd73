"""The pure parts of the local cluster's Deployments: defaults, validation, fenceposts, the
pod-template-hash, and each rollout step the controller plans."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from agones.localcluster.apiserver.apps import (
    pod_template_hash,
    resolve_fenceposts,
    templates_equal,
    validate_deployment,
)
from agones.localcluster.controllers.deployment import (
    deployment_status,
    plan_recreate,
    plan_rolling,
)


def deployment(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "metadata": {"name": "d", "namespace": "default", "uid": "u", "generation": 1},
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {
                "metadata": {"labels": {"app": "x"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
        },
    }
    base["spec"].update(spec)
    assert validate_deployment(base) == [] or spec
    return base


def test_defaults() -> None:
    d = deployment()
    assert d["spec"]["replicas"] == 1
    assert d["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
    }
    assert (d["spec"]["revisionHistoryLimit"], d["spec"]["progressDeadlineSeconds"]) == (10, 600)
    assert d["spec"]["template"]["spec"]["restartPolicy"] == "Always"


@pytest.mark.parametrize(
    ("change", "field", "text"),
    [
        pytest.param(
            {"replicas": -1}, "spec.replicas", "greater than or equal to 0", id="replicas"
        ),
        pytest.param({"selector": None}, "spec.selector", "Required value", id="no-selector"),
        pytest.param({"selector": {}}, "spec.selector", "empty selector", id="empty-selector"),
        pytest.param(
            {"selector": {"matchLabels": {"app": "y"}}},
            "spec.template.metadata.labels",
            "does not match",
            id="selector-mismatch",
        ),
        pytest.param(
            {"strategy": {"type": "Recreate", "rollingUpdate": {}}},
            "spec.strategy.rollingUpdate",
            "Forbidden",
            id="recreate-with-rolling",
        ),
        pytest.param(
            {"strategy": {"type": "Blue"}}, "spec.strategy.type", "Unsupported", id="type"
        ),
        pytest.param(
            {"strategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": "0%"}}},
            "spec.strategy.rollingUpdate.maxUnavailable",
            "may not be 0 when `maxSurge` is 0",
            id="both-zero",
        ),
        pytest.param(
            {"strategy": {"rollingUpdate": {"maxSurge": "x"}}},
            "spec.strategy.rollingUpdate.maxSurge",
            "valid percent",
            id="bad-percent",
        ),
        pytest.param(
            {"progressDeadlineSeconds": 5, "minReadySeconds": 5},
            "spec.progressDeadlineSeconds",
            "greater than minReadySeconds",
            id="deadline",
        ),
    ],
)
def test_validation(change: dict[str, Any], field: str, text: str) -> None:
    d = deployment()
    d["spec"].update(change)
    errs = validate_deployment(d)
    assert any(e.field == field and text in str(e) for e in errs), [str(e) for e in errs]


def test_template_restart_policy_must_be_always() -> None:
    d = deployment()
    d["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    assert [e.field for e in validate_deployment(d)] == ["spec.template.spec.restartPolicy"]


@pytest.mark.parametrize(
    ("replicas", "surge", "unavailable", "want"),
    [
        pytest.param(3, "25%", "25%", (1, 0), id="defaults-3"),
        pytest.param(4, "25%", "25%", (1, 1), id="defaults-4"),
        pytest.param(10, 3, "50%", (3, 5), id="mixed"),
        pytest.param(1, 0, "10%", (0, 1), id="both-round-to-zero"),
    ],
)
def test_resolve_fenceposts(replicas: int, surge: Any, unavailable: Any, want: Any) -> None:
    d = deployment(
        replicas=replicas,
        strategy={"rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}},
    )
    assert resolve_fenceposts(d) == want


def test_pod_template_hash_ignores_its_own_label_and_follows_collisions() -> None:
    template = deployment()["spec"]["template"]
    labelled = copy.deepcopy(template)
    labelled["metadata"]["labels"]["pod-template-hash"] = "abc"
    assert pod_template_hash(template) == pod_template_hash(labelled)
    assert templates_equal(template, labelled)
    assert pod_template_hash(template, 1) != pod_template_hash(template)
    assert set(pod_template_hash(template)) <= set("bcdfghjklmnpqrstvwxz2456789")


def rs(name: str, replicas: int, available: int, created: str = "2026-01-01T00:00:00Z") -> Any:
    return {
        "metadata": {"name": name, "creationTimestamp": created},
        "spec": {"replicas": replicas},
        "status": {
            "replicas": replicas,
            "availableReplicas": available,
            "readyReplicas": available,
        },
    }


@pytest.mark.parametrize(
    ("new", "olds", "want"),
    [
        pytest.param(rs("n", 0, 0), [rs("o", 3, 3)], {"n": 1}, id="surge-first"),
        pytest.param(rs("n", 1, 0), [rs("o", 3, 3)], {}, id="wait-for-new-available"),
        pytest.param(rs("n", 1, 1), [rs("o", 3, 3)], {"o": 2}, id="then-old-down"),
        pytest.param(rs("n", 1, 1), [rs("o", 2, 2)], {"n": 2}, id="then-new-up"),
        pytest.param(rs("n", 3, 3), [rs("o", 1, 1)], {"o": 0}, id="finish"),
        pytest.param(rs("n", 1, 1), [rs("o", 3, 1)], {"o": 2}, id="unhealthy-old-within-budget"),
        pytest.param(rs("n", 3, 3), [], {}, id="steady"),
        pytest.param(rs("n", 5, 5), [], {"n": 3}, id="scale-down"),
    ],
)
def test_plan_rolling(new: Any, olds: list[Any], want: dict[str, int]) -> None:
    d = deployment(replicas=3)  # maxSurge 1, maxUnavailable 0
    assert plan_rolling(d, new, olds).scale == want


@pytest.mark.parametrize(
    ("new", "olds", "want"),
    [
        pytest.param(rs("n", 0, 0), [rs("o", 3, 3)], {"o": 0}, id="old-down-first"),
        pytest.param(
            rs("n", 0, 0),
            [{**rs("o", 0, 0), "status": {"replicas": 2}}],
            {},
            id="wait-for-old-pods",
        ),
        pytest.param(rs("n", 0, 0), [rs("o", 0, 0)], {"n": 3}, id="then-new-up"),
    ],
)
def test_plan_recreate(new: Any, olds: list[Any], want: dict[str, int]) -> None:
    d = deployment(replicas=3, strategy={"type": "Recreate"})
    assert plan_recreate(d, new, olds).scale == want


def test_status_reports_a_finished_rollout_as_kubectl_reads_it() -> None:
    d = deployment(replicas=3)
    new = rs("d-abc", 3, 3)
    status = deployment_status(d, new, [new])
    assert status["updatedReplicas"] == status["availableReplicas"] == 3
    assert status["observedGeneration"] == 1
    conditions = {c["type"]: c for c in status["conditions"]}
    assert conditions["Available"]["status"] == "True"
    assert conditions["Progressing"]["reason"] == "NewReplicaSetAvailable"
    halfway = deployment_status(d, rs("d-abc", 1, 0), [rs("d-abc", 1, 0), rs("old", 3, 3)])
    assert halfway["updatedReplicas"] == 1 and halfway["unavailableReplicas"] == 1
    assert {c["type"]: c for c in halfway["conditions"]}["Progressing"]["reason"] == (
        "ReplicaSetUpdated"
    )
