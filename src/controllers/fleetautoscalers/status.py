"""Plain-int views of the typed Fleet fields the policies read (absent fields read as Go's zero)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...apis.agones.v1.common import AggregatedCounterStatus, AggregatedListStatus
from ...apis.agones.v1.fleet import Fleet, FleetSpec, FleetStatus
from ...apis.agones.v1.gameserver import (
    CounterStatus,
    GameServer,
    GameServerSpec,
    GameServerStatus,
    GameServerTemplateSpec,
    ListStatus,
)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


@dataclass(frozen=True)
class Aggregate:
    """A Counter's or List's totals over the Fleet."""

    count: int = 0
    capacity: int = 0
    allocated_count: int = 0


@dataclass(frozen=True)
class FleetView:
    replicas: int = 0
    spec_replicas: int = 0
    allocated: int = 0
    ready: int = 0
    counters: dict[str, Aggregate] = field(default_factory=dict)
    lists: dict[str, Aggregate] = field(default_factory=dict)


def _aggregate(value: AggregatedCounterStatus | AggregatedListStatus) -> Aggregate:
    return Aggregate(_int(value.count), _int(value.capacity), _int(value.allocated_count))


def fleet_status(fleet: Fleet) -> FleetView:
    status = fleet.status if isinstance(fleet.status, FleetStatus) else FleetStatus()
    spec = fleet.spec if isinstance(fleet.spec, FleetSpec) else FleetSpec()
    counters = status.counters if isinstance(status.counters, dict) else {}
    lists = status.lists if isinstance(status.lists, dict) else {}
    return FleetView(
        replicas=_int(status.replicas),
        spec_replicas=_int(spec.replicas),
        allocated=_int(status.allocated_replicas),
        ready=_int(status.ready_replicas),
        counters={k: _aggregate(v) for k, v in counters.items()},
        lists={k: _aggregate(v) for k, v in lists.items()},
    )


def template_spec(fleet: Fleet) -> GameServerSpec:
    spec = fleet.spec if isinstance(fleet.spec, FleetSpec) else FleetSpec()
    template = spec.template if isinstance(spec.template, GameServerTemplateSpec) else None
    if template is not None and isinstance(template.spec, GameServerSpec):
        return template.spec
    return GameServerSpec()


def template_counter(fleet: Fleet, key: str) -> tuple[int, int] | None:
    """(count, capacity) of the template's Counter `key`, or None."""
    counters = template_spec(fleet).counters
    if not isinstance(counters, dict) or key not in counters:
        return None
    c: CounterStatus = counters[key]
    return _int(c.count), _int(c.capacity)


def template_list(fleet: Fleet, key: str) -> tuple[int, int] | None:
    """(number of values, capacity) of the template's List `key`, or None."""
    lists = template_spec(fleet).lists
    if not isinstance(lists, dict) or key not in lists:
        return None
    lst: ListStatus = lists[key]
    values = lst.values if isinstance(lst.values, list) else []
    return len(values), _int(lst.capacity)


def _gs_status(gs: GameServer) -> GameServerStatus:
    return gs.status if isinstance(gs.status, GameServerStatus) else GameServerStatus()


def game_server_counter(gs: GameServer, key: str) -> tuple[int, int] | None:
    """(count, capacity) of a GameServer's Counter `key` in its status, or None."""
    counters = _gs_status(gs).counters
    if not isinstance(counters, dict) or key not in counters:
        return None
    c = counters[key]
    return _int(c.count), _int(c.capacity)


def game_server_list(gs: GameServer, key: str) -> tuple[int, int] | None:
    """(number of values, capacity) of a GameServer's List `key` in its status, or None."""
    lists = _gs_status(gs).lists
    if not isinstance(lists, dict) or key not in lists:
        return None
    lst = lists[key]
    values = lst.values if isinstance(lst.values, list) else []
    return len(values), _int(lst.capacity)
