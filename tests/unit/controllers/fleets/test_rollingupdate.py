"""The Fleet's deployment arithmetic by tables.

Most rows are Agones' own (`pkg/fleets/controller_test.go`: TestControllerRollingUpdateDeployment,
TestRollingUpdateOnReady, TestControllerApplyDeploymentStrategy, TestControllerRecreateDeployment),
run with the `RollingUpdateFix` setting they were written for, and again with the other setting
where the two differ; the rest pin the int/percent resolution and its rounding.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agones.controllers.fleets.rollingupdate import (
    RECREATE,
    FleetReplicas,
    Plan,
    Scale,
    SetReplicas,
    apply_deployment_strategy,
    rolling_update_active,
    rolling_update_rest_fixed_on_ready,
    rolling_update_rest_fixed_on_ready_rolling_update_fix,
)

NEW = SetReplicas("new", 0)


def inactive(
    spec: int, replicas: int, ready: int = 0, allocated: int = 0, **kw: int
) -> SetReplicas:
    return SetReplicas("inactive", spec, replicas, ready=ready, allocated=allocated, **kw)


def active(spec: int, replicas: int, ready: int | None = None) -> SetReplicas:
    return SetReplicas("active", spec, replicas, ready=replicas if ready is None else ready)


def rest_of(fix: bool) -> Callable[[FleetReplicas, SetReplicas, list[SetReplicas]], list[Scale]]:
    return (
        rolling_update_rest_fixed_on_ready_rolling_update_fix
        if fix
        else rolling_update_rest_fixed_on_ready
    )


# TestControllerRollingUpdateDeployment: maxUnavailable 30%, fleet ready = active + inactive ready.
GO_ROLLING_UPDATE = [
    pytest.param(False, 100, active(0, 0), inactive(100, 100, 100), 25, 70, id="full-inactive"),
    pytest.param(True, 100, active(0, 0), inactive(100, 100, 100), 25, 70, id="full-inactive-fix"),
    pytest.param(
        False, 100, active(75, 75), inactive(10, 10, 10, 5), 95, 0, id="almost-empty-inactive"
    ),
    pytest.param(
        False, 100, active(25, 25), inactive(95, 95, 95), 30, 45, id="drive-over-max-surge"
    ),
    pytest.param(False, 5, active(0, 0), inactive(5, 5, 5, 2), 2, 4, id="small-numbers"),
    pytest.param(
        False, 75, active(75, 75), inactive(10, 10, 10, 5), 70, 0, id="active-covers-fleet"
    ),
    pytest.param(True, 100, active(0, 0), inactive(100, 100, 10, 90), 10, 97, id="keeps-ready-fix"),
    pytest.param(
        True, 100, active(50, 50), inactive(50, 50, 0, 50), 50, 0, id="all-allocated-to-0-fix"
    ),
    pytest.param(True, 0, active(0, 0), inactive(3, 3, 3), 0, 0, id="fleet-at-0-fix"),
]


@pytest.mark.parametrize(
    ("fix", "replicas", "act", "old", "want_active", "want_inactive"), GO_ROLLING_UPDATE
)
def test_go_rolling_update_deployment(
    fix: bool,
    replicas: int,
    act: SetReplicas,
    old: SetReplicas,
    want_active: int,
    want_inactive: int,
) -> None:
    fleet = FleetReplicas(replicas, ready=act.replicas + old.ready, max_unavailable="30%")
    assert rolling_update_active(fleet, act, [old]) == want_active
    assert rest_of(fix)(fleet, act, [old]) == [Scale("inactive", old.spec_replicas, want_inactive)]


# TestRollingUpdateOnReady: fleet 75 (25%/25%), active 75/75, inactive 10/10; written before the fix.
GO_ON_READY = [
    pytest.param(False, 10, 10, 0, 75, [], id="not-enough-ready"),
    pytest.param(False, 70, 5, 5, 70, [Scale("inactive", 10, 5)], id="to-allocated"),
    pytest.param(False, 70, 10, 0, 75, [Scale("inactive", 10, 0)], id="to-0"),
    pytest.param(False, 50, 8, 0, 75, [Scale("inactive", 10, 8)], id="to-above-0"),
    pytest.param(True, 10, 10, 0, 75, [], id="not-enough-ready-fix"),
    # With the fix, Allocated servers count as healthy: the whole Ready capacity above 57 goes.
    pytest.param(True, 70, 5, 5, 70, [Scale("inactive", 10, 0)], id="to-allocated-fix"),
    pytest.param(True, 70, 10, 0, 75, [Scale("inactive", 10, 0)], id="to-0-fix"),
    # Fix: 58 ready, 25% of 58 = 14 unavailable, min 44, but 25 new ones unready: nothing yet.
    pytest.param(True, 50, 8, 0, 75, [], id="to-above-0-fix"),
]


@pytest.mark.parametrize(
    ("fix", "active_ready", "inactive_ready", "allocated", "want_active", "scales"), GO_ON_READY
)
def test_go_rolling_update_on_ready(
    fix: bool,
    active_ready: int,
    inactive_ready: int,
    allocated: int,
    want_active: int,
    scales: list[Scale],
) -> None:
    fleet = FleetReplicas(75, ready=active_ready + inactive_ready)
    act = active(75, 75, ready=active_ready)
    old = inactive(10, 10, inactive_ready, allocated)
    plan = apply_deployment_strategy(fleet, act, [old], fix)
    assert plan == Plan(want_active, tuple(scales))


@pytest.mark.parametrize(
    ("fix", "strategy", "gss1_status", "gss2_status", "plan"),
    [
        pytest.param(False, RECREATE, 0, 0, Plan(10, (Scale("gss1", 10, 0),)), id="recreate"),
        pytest.param(True, RECREATE, 0, 0, Plan(10, (Scale("gss1", 10, 0),)), id="recreate-fix"),
        pytest.param(False, "RollingUpdate", 10, 1, Plan(2, (Scale("gss1", 10, 8),)), id="rolling"),
        # With the fix and no Ready server at all, only one unready replica may go per step.
        pytest.param(
            True, "RollingUpdate", 10, 1, Plan(2, (Scale("gss1", 10, 9),)), id="rolling-fix"
        ),
    ],
)
def test_go_apply_deployment_strategy(
    fix: bool, strategy: str, gss1_status: int, gss2_status: int, plan: Plan
) -> None:
    fleet = FleetReplicas(10, strategy=strategy)
    rest = [SetReplicas("gss1", 10, gss1_status), SetReplicas("gss2", 0, gss2_status)]
    assert apply_deployment_strategy(fleet, NEW, rest, fix) == plan


@pytest.mark.parametrize("fix", [False, True], ids=["gate-off", "gate-on"])
@pytest.mark.parametrize(
    ("rest", "plan"),
    [
        pytest.param([], Plan(10), id="no-rest"),
        pytest.param([SetReplicas("gss1", 0, allocated=1)], Plan(9), id="rest-scaled-down"),
        pytest.param(
            [SetReplicas("gss1", 0, 3, reserved=2, allocated=1)], Plan(7), id="reserved-blocks"
        ),
        pytest.param([SetReplicas("gss1", 0, 12, allocated=12)], Plan(0), id="never-negative"),
    ],
)
def test_rest_at_zero_leaves_room_for_reserved_and_allocated(
    fix: bool, rest: list[SetReplicas], plan: Plan
) -> None:
    assert apply_deployment_strategy(FleetReplicas(10), NEW, rest, fix) == plan


def test_recreate_scales_every_rest_set_and_leaves_room_for_allocated() -> None:
    fleet = FleetReplicas(10, strategy=RECREATE)
    rest = [SetReplicas("gss1", 10), SetReplicas("gss2", 0, 1, allocated=1)]
    assert apply_deployment_strategy(fleet, NEW, rest, True) == Plan(9, (Scale("gss1", 10, 0),))


@pytest.mark.parametrize(
    ("max_surge", "replicas", "rest_replicas", "want"),
    [
        pytest.param("25%", 100, 100, 25, id="percent"),
        pytest.param("25%", 10, 10, 3, id="percent-rounds-up"),
        pytest.param("1%", 10, 10, 1, id="tiny-percent-rounds-up-to-1"),
        pytest.param("99%", 10, 0, 10, id="capped-at-fleet-replicas"),
        pytest.param(3, 10, 10, 3, id="int"),
        pytest.param(20, 10, 0, 10, id="int-capped-at-replicas"),
        pytest.param(4, 10, 12, 2, id="total-kept-under-replicas-plus-surge"),
    ],
)
def test_active_grows_by_max_surge(
    max_surge: int | str, replicas: int, rest_replicas: int, want: int
) -> None:
    fleet = FleetReplicas(replicas, max_surge=max_surge)
    assert rolling_update_active(fleet, NEW, [SetReplicas("old", 10, rest_replicas)]) == want


def test_active_waits_while_its_spec_and_status_differ() -> None:
    fleet = FleetReplicas(100)
    assert rolling_update_active(fleet, SetReplicas("a", 25, 20), [SetReplicas("o", 75, 75)]) == 25


@pytest.mark.parametrize("fix", [False, True], ids=["gate-off", "gate-on"])
@pytest.mark.parametrize(
    ("max_unavailable", "want"),
    [
        pytest.param("25%", 75, id="percent-rounds-down"),  # 25% of 100 = 25
        pytest.param("26%", 74, id="percent-26-rounds-down"),  # 26
        pytest.param("1%", 99, id="percent-1"),
        pytest.param("0%", 99, id="zero-becomes-1"),
        pytest.param(10, 90, id="int"),
        pytest.param(500, 0, id="int-capped-at-replicas"),
    ],
)
def test_rest_scales_down_by_max_unavailable(
    fix: bool, max_unavailable: int | str, want: int
) -> None:
    # A new active set, all of it Ready; the old one all Ready: what may go is what is unavailable.
    fleet = FleetReplicas(100, ready=100, max_unavailable=max_unavailable)
    old = SetReplicas("old", 100, 100, ready=100)
    assert rest_of(fix)(fleet, SetReplicas("new", 0), [old]) == [Scale("old", 100, want)]


@pytest.mark.parametrize("fix", [False, True], ids=["gate-off", "gate-on"])
def test_rest_waits_for_a_set_still_scaling(fix: bool) -> None:
    fleet = FleetReplicas(10, ready=10, max_unavailable=5)
    old = [SetReplicas("o1", 5, 7, ready=5), SetReplicas("o2", 5, 5, ready=5)]
    assert rest_of(fix)(fleet, SetReplicas("new", 0), old) == []


@pytest.mark.parametrize("fix", [False, True], ids=["gate-off", "gate-on"])
def test_rest_skips_a_set_with_shutdown_servers(fix: bool) -> None:
    fleet = FleetReplicas(10, ready=10, max_unavailable=5)
    old = [SetReplicas("o1", 5, 5, ready=5, shutdown=1), SetReplicas("o2", 5, 5, ready=5)]
    assert rest_of(fix)(fleet, SetReplicas("new", 0), old) == [Scale("o2", 5, 0)]


def test_cleanup_of_unhealthy_replicas_comes_first_and_then_waits() -> None:
    # o1 has 4 replicas that are not Ready: they go first; o1 is then mid-scale, so the pass stops.
    fleet = FleetReplicas(10, ready=6, max_unavailable=5)
    old = [SetReplicas("o1", 10, 10, ready=6)]
    assert rolling_update_rest_fixed_on_ready(fleet, SetReplicas("new", 0), old) == [
        Scale("o1", 10, 6)
    ]


def test_cleanup_drops_the_pass_when_a_set_has_more_ready_than_spec() -> None:
    # Go refuses to "scale down" o1 upwards (ready > spec) and gives up on the rest this sync.
    fleet = FleetReplicas(10, ready=10, max_unavailable=5)
    old = [SetReplicas("o1", 4, 4, ready=6), SetReplicas("o2", 6, 6, ready=4)]
    assert rolling_update_rest_fixed_on_ready(fleet, SetReplicas("new", 0), old) == []


@pytest.mark.parametrize(
    ("fleet", "message"),
    [
        pytest.param(
            FleetReplicas(100, max_surge=None, name="fleet-1"),
            "error parsing MaxSurge value: fleet-1: nil value for IntOrString",
            id="nil-max-surge",
        ),
        pytest.param(
            FleetReplicas(100, max_unavailable=None, name="fleet-1"),
            "error parsing MaxUnavailable value: fleet-1: nil value for IntOrString",
            id="nil-max-unavailable",
        ),
        pytest.param(
            FleetReplicas(100, max_surge="x%", name="f"),
            "error parsing MaxSurge value: f: invalid value for IntOrString",
            id="not-a-percent",
        ),
        pytest.param(
            FleetReplicas(100, strategy="invalid-strategy-type"),
            "unexpected deployment strategy type: invalid-strategy-type",
            id="unknown-strategy",
        ),
    ],
)
def test_errors_carry_go_texts(fleet: FleetReplicas, message: str) -> None:
    old = SetReplicas("old", 100, 100, ready=100)
    with pytest.raises(ValueError) as info:
        apply_deployment_strategy(fleet, SetReplicas("new", 0), [old], False)
    assert str(info.value).startswith(message)
