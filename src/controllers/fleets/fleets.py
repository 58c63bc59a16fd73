"""Pure helpers of the Fleet controller (Agones `pkg/fleets/fleets.go` and the status part of
`controller.go`).

* `is_fleet_game_server_set(gss, fleet)`: labelled `agones.dev/fleet=<fleet>` *and* controlled by
  the Fleet's UID (`ListGameServerSetsByFleetOwner`).
* `filter_game_server_set_by_active(fleet, sets)`: the set whose template equals the Fleet's, as
  Go's semantic deep-equal sees them (both re-shaped as Go decodes them), and the rest in order.
  Should two sets match (a create raced a lagging cache), the last is active as in Go and the
  earlier one counts as rest, so it is scaled down and deleted (Go drops it from both lists).
* `fleet_status(sets, counts_and_lists, player_tracking)`: the sum of the sets' statuses; counters
  saturate at the int64 maximum as Go's `SafeAdd` does, lists add plainly as Go's `mergeLists`;
  empty maps are left out (Go's `omitempty`).
* `set_replicas(gss)`, `fleet_replicas(fleet)`: the counts the rolling-update arithmetic reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec
from msgspec import UNSET

from ...apis.agones.v1.common import (
    AggregatedCounterStatus,
    AggregatedListStatus,
    AggregatedPlayerStatus,
    safe_add,
)
from ...apis.agones.v1.fleet import (
    DeploymentStrategy,
    DeploymentStrategyType,
    Fleet,
    FleetSpec,
    FleetStatus,
    RollingUpdateDeployment,
)
from ...apis.agones.v1.gameserverset import (
    FLEET_NAME_LABEL,
    GameServerSet,
    GameServerSetSpec,
    GameServerSetStatus,
    template_go_form,
)
from ...apis.meta.objectmeta import controller_of
from .rollingupdate import FleetReplicas, SetReplicas


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def gss_spec(gss: GameServerSet) -> GameServerSetSpec:
    return gss.spec if isinstance(gss.spec, GameServerSetSpec) else GameServerSetSpec()


def gss_status(gss: GameServerSet) -> GameServerSetStatus:
    return gss.status if isinstance(gss.status, GameServerSetStatus) else GameServerSetStatus()


def fleet_spec(fleet: Fleet) -> FleetSpec:
    return fleet.spec if isinstance(fleet.spec, FleetSpec) else FleetSpec()


def fleet_status_of(fleet: Fleet) -> FleetStatus:
    return fleet.status if isinstance(fleet.status, FleetStatus) else FleetStatus()


def is_fleet_game_server_set(gss: GameServerSet, fleet: Fleet) -> bool:
    """Labelled for the Fleet and controlled by it (same UID)."""
    if gss.metadata is UNSET or fleet.metadata is UNSET:
        return False
    if gss.metadata.get_labels().get(FLEET_NAME_LABEL) != fleet.metadata.get_name():
        return False
    ref = controller_of(gss.metadata)
    return ref is not None and ref.uid == fleet.metadata.uid


def filter_game_server_set_by_active(
    fleet: Fleet, sets: Iterable[GameServerSet]
) -> tuple[GameServerSet | None, list[GameServerSet]]:
    """The active set and the rest (see the module docstring)."""
    want = template_go_form(fleet_spec(fleet).template)
    active: GameServerSet | None = None
    rest: list[GameServerSet] = []
    for gss in sets:
        if template_go_form(gss_spec(gss).template) == want:
            if active is not None:
                rest.append(active)
            active = gss
        else:
            rest.append(gss)
    return active, rest


def set_replicas(gss: GameServerSet) -> SetReplicas:
    status = gss_status(gss)
    name = gss.metadata.get_name() if gss.metadata is not UNSET else ""
    return SetReplicas(
        name=name,
        spec_replicas=_int(gss_spec(gss).replicas),
        replicas=_int(status.replicas),
        ready=_int(status.ready_replicas),
        reserved=_int(status.reserved_replicas),
        allocated=_int(status.allocated_replicas),
        shutdown=_int(status.shutdown_replicas),
    )


def fleet_replicas(fleet: Fleet) -> FleetReplicas:
    spec = fleet_spec(fleet)
    strategy = (
        spec.strategy if isinstance(spec.strategy, DeploymentStrategy) else DeploymentStrategy()
    )
    ru = strategy.rolling_update
    ru = ru if isinstance(ru, RollingUpdateDeployment) else RollingUpdateDeployment()
    kind = strategy.type if strategy.type is not UNSET else DeploymentStrategyType.ROLLING_UPDATE
    return FleetReplicas(
        replicas=_int(spec.replicas),
        ready=_int(fleet_status_of(fleet).ready_replicas),
        strategy=str(kind),
        max_surge=ru.max_surge if ru.max_surge is not UNSET else None,
        max_unavailable=ru.max_unavailable if ru.max_unavailable is not UNSET else None,
        name=fleet.metadata.get_name() if fleet.metadata is not UNSET else "",
    )


def merge_counters(
    into: dict[str, AggregatedCounterStatus], add: dict[str, AggregatedCounterStatus]
) -> None:
    for key, val in add.items():
        cur = into.get(key)
        if cur is None:
            into[key] = AggregatedCounterStatus(
                allocated_count=_int(val.allocated_count),
                allocated_capacity=_int(val.allocated_capacity),
                count=_int(val.count),
                capacity=_int(val.capacity),
            )
            continue
        cur.allocated_count = safe_add(_int(cur.allocated_count), _int(val.allocated_count))
        cur.allocated_capacity = safe_add(
            _int(cur.allocated_capacity), _int(val.allocated_capacity)
        )
        cur.count = safe_add(_int(cur.count), _int(val.count))
        cur.capacity = safe_add(_int(cur.capacity), _int(val.capacity))


def merge_lists(
    into: dict[str, AggregatedListStatus], add: dict[str, AggregatedListStatus]
) -> None:
    for key, val in add.items():
        cur = into.setdefault(key, AggregatedListStatus(0, 0, 0, 0))
        cur.allocated_count = _int(cur.allocated_count) + _int(val.allocated_count)
        cur.allocated_capacity = _int(cur.allocated_capacity) + _int(val.allocated_capacity)
        cur.count = _int(cur.count) + _int(val.count)
        cur.capacity = _int(cur.capacity) + _int(val.capacity)


def fleet_status(
    sets: Sequence[GameServerSet], counts_and_lists: bool, player_tracking: bool
) -> FleetStatus:
    """The Fleet's status: the sum of its sets' statuses."""
    status = FleetStatus(replicas=0, ready_replicas=0, reserved_replicas=0, allocated_replicas=0)
    counters: dict[str, AggregatedCounterStatus] = {}
    lists: dict[str, AggregatedListStatus] = {}
    players = AggregatedPlayerStatus(count=0, capacity=0)
    for gss in sets:
        s = gss_status(gss)
        status.replicas = _int(status.replicas) + _int(s.replicas)
        status.ready_replicas = _int(status.ready_replicas) + _int(s.ready_replicas)
        status.reserved_replicas = _int(status.reserved_replicas) + _int(s.reserved_replicas)
        status.allocated_replicas = _int(status.allocated_replicas) + _int(s.allocated_replicas)
        if counts_and_lists:
            merge_counters(counters, s.counters if isinstance(s.counters, dict) else {})
            merge_lists(lists, s.lists if isinstance(s.lists, dict) else {})
        if isinstance(s.players, AggregatedPlayerStatus):
            players.count = _int(players.count) + _int(s.players.count)
            players.capacity = _int(players.capacity) + _int(s.players.capacity)
    if counters:
        status.counters = counters
    if lists:
        status.lists = lists
    if player_tracking:
        status.players = players
    return status


def normalized_status(status: FleetStatus | object) -> object:
    """A status as it compares on the wire: absent counts are 0, empty maps are absent."""
    s = status if isinstance(status, FleetStatus) else FleetStatus()
    s = msgspec.structs.replace(
        s,
        replicas=_int(s.replicas),
        ready_replicas=_int(s.ready_replicas),
        reserved_replicas=_int(s.reserved_replicas),
        allocated_replicas=_int(s.allocated_replicas),
        counters=s.counters or UNSET,
        lists=s.lists or UNSET,
        players=s.players if isinstance(s.players, AggregatedPlayerStatus) else UNSET,
    )
    return msgspec.to_builtins(s)
