"""GameServer helpers: state predicates, accessors, port status, Counter/List updates, priorities."""

from __future__ import annotations

import pytest
from msgspec import UNSET

from agones.apis.agones.v1.common import Priority, PriorityOrder, PriorityType
from agones.apis.agones.v1.gameserver import (
    CounterStatus,
    GameServer,
    GameServerPort,
    GameServerSpec,
    GameServerState,
    GameServerStatus,
    GameServerStatusPort,
    ListStatus,
    PortPolicy,
    merge_remove_duplicates,
    port_status,
)
from agones.apis.meta.objectmeta import ObjectMeta
from agones.featuregates import FeatureGates

S = GameServerState


def _gs(state: GameServerState | None = None, deleting: bool = False) -> GameServer:
    meta = ObjectMeta(name="gs", deletion_timestamp="2026-01-01T00:00:00Z" if deleting else UNSET)
    status = GameServerStatus(state=state) if state is not None else UNSET
    return GameServer(metadata=meta, status=status)


@pytest.mark.parametrize(
    ("state", "before_ready", "active"),
    [
        (S.PORT_ALLOCATION, True, False),
        (S.CREATING, True, False),
        (S.STARTING, True, False),
        (S.SCHEDULED, True, False),
        (S.REQUEST_READY, True, False),
        (S.READY, False, True),
        (S.RESERVED, False, True),
        (S.ALLOCATED, False, True),
        (S.SHUTDOWN, False, False),
        (S.ERROR, False, False),
        (S.UNHEALTHY, False, False),
        (None, False, False),
    ],
)
def test_state_predicates(state: GameServerState | None, before_ready: bool, active: bool) -> None:
    gs = _gs(state)
    assert gs.is_before_ready() is before_ready
    assert gs.is_active() is active


@pytest.mark.parametrize(
    ("state", "deleting", "deletable", "being_deleted"),
    [
        (S.ALLOCATED, False, False, False),
        (S.RESERVED, False, False, False),
        (S.ALLOCATED, True, True, True),
        (S.READY, False, True, False),
        (S.SHUTDOWN, False, True, True),
        (S.READY, True, True, True),
    ],
)
def test_deletion_predicates(
    state: GameServerState, deleting: bool, deletable: bool, being_deleted: bool
) -> None:
    gs = _gs(state, deleting)
    assert gs.is_deletable() is deletable
    assert gs.is_being_deleted() is being_deleted


def test_ports_and_addresses() -> None:
    gs = GameServer(
        spec=GameServerSpec(
            ports=[
                GameServerPort(name="a", port_policy=PortPolicy.DYNAMIC, range="default"),
                GameServerPort(name="b", port_policy=PortPolicy.STATIC, range="other"),
            ]
        ),
        status=GameServerStatus(
            address="10.0.0.1", node_name="n1", ports=[GameServerStatusPort(name="a", port=7000)]
        ),
    )
    assert gs.has_port_policy(PortPolicy.STATIC)
    assert not gs.has_port_policy(PortPolicy.PASSTHROUGH)
    assert gs.count_ports(lambda p: p == PortPolicy.DYNAMIC) == 1
    assert gs.count_ports_for_range("other", lambda p: True) == 1
    assert (gs.status_address(), gs.node_name(), gs.status_port("a"), gs.status_port("b")) == (
        "10.0.0.1",
        "n1",
        7000,
        None,
    )
    assert GameServer().status_ports() == [] and GameServer().status_address() == ""


def test_dev_address() -> None:
    gs = GameServer(metadata=ObjectMeta(annotations={"agones.dev/dev-address": "1.2.3.4"}))
    assert gs.get_dev_address() == ("1.2.3.4", True)
    assert GameServer().get_dev_address() == ("", False)


@pytest.mark.parametrize(
    ("policy", "gates", "want"),
    [
        (PortPolicy.NONE, FeatureGates(), 7654),
        (PortPolicy.NONE, FeatureGates().with_values(PortPolicyNone=False), 7000),
        (PortPolicy.DYNAMIC, FeatureGates(), 7000),
    ],
)
def test_port_status(policy: PortPolicy, gates: FeatureGates, want: int) -> None:
    port = GameServerPort(name="p", port_policy=policy, container_port=7654, host_port=7000)
    assert port_status(port, gates) == GameServerStatusPort(name="p", port=want)


def _counting() -> GameServer:
    return GameServer(
        metadata=ObjectMeta(name="gs"),
        status=GameServerStatus(
            counters={"rooms": CounterStatus(count=1, capacity=5)},
            lists={"players": ListStatus(capacity=3, values=["a"])},
        ),
    )


def test_counter_updates_clamp() -> None:
    gs = _counting()
    gs.update_count("rooms", "Increment", 10)
    assert gs.status.counters["rooms"].count == 5  # type: ignore[union-attr,index]
    gs.update_count("rooms", "Decrement", 10)
    assert gs.status.counters["rooms"].count == 0  # type: ignore[union-attr,index]
    gs.update_count("rooms", "Increment", 4)
    gs.update_counter_capacity("rooms", 2)
    assert gs.status.counters["rooms"] == CounterStatus(count=2, capacity=2)  # type: ignore[union-attr,index]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda gs: gs.update_count("rooms", "Multiply", 1), "Allocation action must be one of"),
        (lambda gs: gs.update_count("rooms", "Increment", -1), "Amount must be greater than 0"),
        (lambda gs: gs.update_count("nope", "Increment", 1), "Counter not found in GameServer gs"),
        (lambda gs: gs.update_counter_capacity("rooms", -1), "greater than or equal to 0"),
        (lambda gs: gs.update_list_capacity("players", 1001), "between 0 and 1000"),
        (lambda gs: gs.append_list_values("nope", ["x"]), "List not found in GameServer gs"),
    ],
)
def test_counter_and_list_errors(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call(_counting())  # type: ignore[operator]


def test_list_updates() -> None:
    gs = _counting()
    gs.append_list_values("players", ["b", "a", "c", "d"])
    assert gs.status.lists["players"].values == ["a", "b", "c"]  # type: ignore[union-attr,index]
    gs.update_list_capacity("players", 2)
    assert gs.status.lists["players"] == ListStatus(capacity=2, values=["a", "b"])  # type: ignore[union-attr,index]
    gs.delete_list_values("players", ["a", "zzz"])
    assert gs.status.lists["players"].values == ["b"]  # type: ignore[union-attr,index]
    assert merge_remove_duplicates(["x", "y", "x"], ["y", "z"]) == ["x", "y", "z"]


def _with_rooms(count: int | None) -> GameServer:
    counters = {"rooms": CounterStatus(count=count, capacity=10)} if count is not None else {}
    return GameServer(status=GameServerStatus(counters=counters))


@pytest.mark.parametrize(
    ("mine", "theirs", "order", "want"),
    [
        (8, 2, "Ascending", True),  # 2 available sorts before 8 available
        (2, 8, "Ascending", False),
        (8, 2, "Descending", False),
        (5, 5, "Ascending", None),
        (5, None, "Ascending", True),  # the one with the key comes first ascending
        (None, 5, "Ascending", False),
        (5, None, "Descending", True),  # ... and descending too (Go flips its inner answer)
        (None, None, "Ascending", None),
    ],
)
def test_compare_priorities(
    mine: int | None, theirs: int | None, order: str, want: bool | None
) -> None:
    priority = Priority(type=PriorityType.COUNTER, key="rooms", order=PriorityOrder(order))
    assert (
        _with_rooms(mine).compare_count_and_list_priorities([priority], _with_rooms(theirs)) is want
    )
