"""`compute_reconciliation_action`: every branch and limit of Agones' `computeReconciliationAction`."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from agones.apis.agones.v1.gameserver import GAME_SERVER_ERRORED_AT_ANNOTATION, GameServer
from agones.apis.scheduling import SchedulingStrategy
from agones.controllers.gameservers import NodeCount
from agones.controllers.gameserversets import compute_reconciliation_action
from agones.controllers.gameserversets.controller import should_delete_errored_game_server

from .fixtures import NOW, gs, names, stamp


def errored(name: str, seconds_ago: float | None, text: str | None = None) -> GameServer:
    if text is None and seconds_ago is not None:
        text = stamp(seconds_ago)
    annotations = {GAME_SERVER_ERRORED_AT_ANNOTATION: text} if text is not None else None
    return gs(name, "Error", annotations=annotations)


@dataclass
class Case:
    game_servers: list[GameServer]
    target: int
    add: int
    delete: list[str] = field(default_factory=list)
    partial: bool = False
    max_creations: int = 64
    max_deletions: int = 64
    max_pending: int = 5000


def ready(n: int, prefix: str = "r") -> list[GameServer]:
    # Older first: r0 is the oldest.
    return [gs(f"{prefix}{i}", age=100 - i) for i in range(n)]


CASES = [
    pytest.param(Case([], 0, 0), id="nothing-to-do"),
    pytest.param(Case([], 5, 5), id="create-up-to-target"),
    pytest.param(Case(ready(3), 3, 0), id="at-target"),
    pytest.param(Case([], 100, 64, partial=True), id="creations-capped-per-batch"),
    pytest.param(Case([], 64, 64), id="creations-exactly-the-batch"),
    pytest.param(
        Case([gs(f"c{i}", "Creating") for i in range(8)], 20, 2, max_pending=10, partial=True),
        id="pods-pending-cap-leaves-room",
    ),
    pytest.param(
        Case([gs(f"c{i}", "Creating") for i in range(12)], 20, 0, max_pending=10, partial=True),
        id="pods-pending-cap-already-exceeded",
    ),
    pytest.param(
        Case(
            [
                gs("p", "PortAllocation"),
                gs("c", "Creating"),
                gs("s", "Starting"),
                gs("sc", "Scheduled"),
            ],
            6,
            1,
            max_pending=5,
            partial=True,
        ),
        id="before-pod-states-are-pending",
    ),
    pytest.param(
        Case([gs("rr", "RequestReady"), gs("r", "Ready")], 4, 2, max_pending=2),
        id="request-ready-and-ready-are-not-pending",
    ),
    pytest.param(
        Case([gs("a", "Allocated"), gs("res", "Reserved")], 0, 0),
        id="allocated-and-reserved-never-deleted",
    ),
    pytest.param(Case([gs("a", "Allocated")], 3, 2), id="allocated-counts-as-up"),
    pytest.param(
        Case([gs("a", "Allocated"), gs("b", "Allocated"), gs("r", "Ready")], 1, 0, ["r"]),
        id="allocated-over-target-deletes-the-ready-one",
    ),
    pytest.param(Case([gs("d", "Ready", deleting=True)], 2, 2), id="being-deleted-ignored"),
    pytest.param(Case([gs("s", "Shutdown")], 2, 2), id="shutdown-ignored"),
    pytest.param(
        Case([gs("a", "Allocated", deleting=True)], 1, 1), id="allocated-being-deleted-ignored"
    ),
    pytest.param(
        Case([gs("r", "Ready"), gs("u", "Unhealthy")], 1, 0, ["u"]), id="unhealthy-deleted"
    ),
    pytest.param(
        Case([gs("r", "Ready"), gs("u", "Unhealthy")], 2, 1, ["u"]),
        id="unhealthy-deleted-and-replaced",
    ),
    pytest.param(
        Case([*ready(3), gs("u", "Unhealthy")], 2, 0, ["u"]),
        id="unhealthy-deletion-offsets-a-surplus-one-as-in-go",
    ),
    pytest.param(Case([errored("e", None)], 1, 1, ["e"]), id="error-without-errored-at"),
    pytest.param(
        Case([errored("e", None, "yesterday")], 1, 1, ["e"]), id="error-with-bad-errored-at"
    ),
    pytest.param(Case([errored("e", 29)], 1, 0), id="error-inside-delay-counts-as-up"),
    pytest.param(
        Case([errored("e", 29)], 2, 0, max_pending=1, partial=True),
        id="error-inside-delay-counts-as-pending",
    ),
    pytest.param(Case([errored("e", 30)], 1, 1, ["e"]), id="error-deleted-after-30s"),
    pytest.param(Case([gs("x", None)], 2, 1), id="no-state-is-up"),
    pytest.param(Case(ready(3), 1, 0, ["r0", "r1"]), id="surplus-oldest-first-distributed"),
    pytest.param(
        Case(ready(5), 0, 0, ["r0", "r1"], max_deletions=2, partial=True),
        id="deletions-capped-per-batch",
    ),
    pytest.param(
        Case(
            [gs(f"u{i}", "Unhealthy") for i in range(3)],
            0,
            0,
            ["u0", "u1"],
            max_deletions=2,
            partial=True,
        ),
        id="unhealthy-deletions-capped-per-batch",
    ),
    pytest.param(Case(ready(2), 3, 0, max_creations=0, partial=True), id="zero-creation-cap"),
]


@pytest.mark.parametrize("case", CASES)
def test_compute_reconciliation_action(case: Case) -> None:
    action = compute_reconciliation_action(
        SchedulingStrategy.DISTRIBUTED,
        case.game_servers,
        {},
        case.target,
        case.max_creations,
        case.max_deletions,
        case.max_pending,
        [],
        NOW,
    )
    assert action.num_servers_to_add == case.add
    assert names(action.to_delete) == case.delete
    assert action.is_partial == case.partial


def test_packed_surplus_follows_least_full_nodes() -> None:
    servers = [gs("full", node="n1"), gs("empty", node="n2"), gs("unknown", node="gone")]
    counts = {"n1": NodeCount(ready=5, allocated=3), "n2": NodeCount(ready=1)}
    action = compute_reconciliation_action(
        SchedulingStrategy.PACKED, servers, counts, 1, 64, 64, 5000, [], NOW
    )
    assert names(action.to_delete) == ["unknown", "empty"]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param(None, True, id="absent"),
        pytest.param("", True, id="empty"),
        pytest.param("not-a-time", True, id="unparseable"),
        pytest.param(stamp(0), False, id="just-now"),
        pytest.param(stamp(29), False, id="29s"),
        pytest.param(stamp(30), True, id="30s"),
        pytest.param(stamp(31), True, id="31s"),
        pytest.param(stamp(-60), False, id="in-the-future"),
    ],
)
def test_should_delete_errored_game_server(text: str | None, want: bool) -> None:
    annotations = {GAME_SERVER_ERRORED_AT_ANNOTATION: text} if text is not None else None
    assert should_delete_errored_game_server(gs("e", "Error", annotations=annotations), NOW) is want
