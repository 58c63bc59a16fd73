"""The Counter and List policies (Go `applyCounterOrListPolicy`): keep capacity available.

Both read one Counter or List `key`: its per-GameServer count and capacity from the Fleet's template
and its totals from the Fleet's status, and size the Fleet so that `capacity - count` across it is
the buffer, with the total capacity within `[minCapacity, maxCapacity]`:

* total capacity below min → add one GameServer's capacity at a time until at least min (limited);
  above max → remove GameServers in scale-down order until at most max (limited, floor 1);
* the buffer is `bufferSize`, or for a percentage `ceil(allocated * 100 / (100 - pct)) - allocated`
  of the Allocated count (with nothing allocated and one GameServer holding min, 1 replica);
* available below the buffer → add `ceil((buffer - available) / (capacity - count))` GameServers,
  cut to what fits under max; above it → remove GameServers in scale-down order while the buffer
  and min hold; the Fleet never goes below 1 replica.

`deletion_order()` gives the Fleet's GameServers in the order a scale-down removes them; it is
called only when a scale-down needs it. Pure otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...apis.agones.v1.fleet import Fleet
from ...apis.agones.v1.gameserver import GameServer
from ...apis.autoscaling.v1 import CounterPolicy, ListPolicy
from ...apis.meta.intstr import IntOrString, Type, get_value_from_int_or_percent
from .policy import PolicyError, Scale
from .status import (
    fleet_status,
    game_server_counter,
    game_server_list,
    template_counter,
    template_list,
)

DeletionOrder = Callable[[], Sequence[GameServer]]


@dataclass(frozen=True)
class _Capacity:
    is_counter: bool
    key: str
    count: int  # of the template GameServer
    capacity: int  # of the template GameServer
    agg_count: int
    agg_capacity: int
    agg_allocated_count: int
    min_capacity: int
    max_capacity: int
    replicas: int

    def of(self, gs: GameServer) -> tuple[int, int] | None:
        """(count, capacity) of this Counter/List on one GameServer, or None."""
        return (
            game_server_counter(gs, self.key) if self.is_counter else game_server_list(gs, self.key)
        )


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _read(policy: CounterPolicy | ListPolicy, fleet: Fleet) -> tuple[_Capacity, IntOrString]:
    is_counter = isinstance(policy, CounterPolicy)
    name = "Counter" if is_counter else "List"
    key = policy.key if isinstance(policy.key, str) else ""
    template = template_counter(fleet, key) if is_counter else template_list(fleet, key)
    if template is None:
        raise PolicyError(
            f"cannot apply {name}Policy as {name} key {key} does not exist in the Fleet Spec"
        )
    status = fleet_status(fleet)
    aggregate = (status.counters if is_counter else status.lists).get(key)
    if aggregate is None:
        raise PolicyError(
            f"cannot apply {name}Policy as {name} key {key} does not exist in the Fleet Status"
        )
    raw = policy.buffer_size if isinstance(policy.buffer_size, int | str) else 0
    cap = _Capacity(
        is_counter=is_counter,
        key=key,
        count=template[0],
        capacity=template[1],
        agg_count=aggregate.count,
        agg_capacity=aggregate.capacity,
        agg_allocated_count=aggregate.allocated_count,
        min_capacity=_int(policy.min_capacity),
        max_capacity=_int(policy.max_capacity),
        replicas=status.replicas,
    )
    return cap, IntOrString.parse(raw)


def is_limited(agg_capacity: int, min_capacity: int, max_capacity: int) -> tuple[bool, int]:
    """Whether total capacity is outside [min, max]: (True, 1) below, (True, -1) above."""
    if agg_capacity < min_capacity:
        return True, 1
    if agg_capacity > max_capacity:
        return True, -1
    return False, 0


def compute_desired_fleet_size(
    policy: CounterPolicy | ListPolicy | None, fleet: Fleet, deletion_order: DeletionOrder
) -> Scale:
    """The Fleet size that keeps the policy's buffer of Counter or List capacity available."""
    if not isinstance(policy, CounterPolicy | ListPolicy):
        raise PolicyError("counter or list policy parameter must not be nil")
    c, buffer_size = _read(policy, fleet)
    limited, scale = is_limited(c.agg_capacity, c.min_capacity, c.max_capacity)
    if buffer_size.type is Type.INT:
        buffer = buffer_size.int_val
    else:
        try:
            percent = get_value_from_int_or_percent(buffer_size, 100, c.is_counter)
        except ValueError as err:
            raise PolicyError(str(err)) from None
        if c.agg_allocated_count <= 0 and c.capacity >= c.min_capacity:
            return Scale(1, True)
        if percent >= 100:
            raise PolicyError(f"bufferSize {buffer_size.str_val} leaves no room for allocations")
        desired = math.ceil(c.agg_allocated_count * 100 / (100 - percent))
        buffer = desired - c.agg_allocated_count
    available = c.agg_capacity - c.agg_count
    if available == buffer:
        return _scale_limited(scale, c, deletion_order) if limited else Scale(c.replicas, False)
    if available < buffer:
        if limited and scale == -1:
            return _scale_limited(scale, c, deletion_order)
        return _scale_up(c, available, buffer)
    if limited and scale == 1:
        return _scale_limited(scale, c, deletion_order)
    return _scale_down(c, deletion_order, buffer)


def _scale_limited(scale: int, c: _Capacity, deletion_order: DeletionOrder) -> Scale:
    if scale == 1:
        if c.capacity == 0:
            raise PolicyError("cannot scale up as Capacity is equal to 0")
        replicas, agg_capacity = c.replicas, c.agg_capacity
        while agg_capacity < c.min_capacity:
            agg_capacity += c.capacity
            replicas += 1
        return Scale(replicas, True)
    if scale == -1:
        replicas, agg_capacity = c.replicas, c.agg_capacity
        for gs in deletion_order():
            if agg_capacity <= c.max_capacity:
                break
            held = c.of(gs)
            if held is not None:
                agg_capacity -= held[1]
            replicas -= 1
        return Scale(max(replicas, 1), True)
    return Scale(c.replicas, False)


def _go_div(a: int, b: int) -> int:
    """Go's integer division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _scale_up(c: _Capacity, available: int, buffer: int) -> Scale:
    gained = c.capacity - c.count
    if gained <= 0:
        raise PolicyError(
            "cannot scale up as adding additional replicas does not increase available Capacity"
        )
    additional = math.ceil((buffer - available) / gained)
    limited, _ = is_limited(
        c.agg_capacity + additional * c.capacity, c.min_capacity, c.max_capacity
    )
    if limited:
        additional = _go_div(c.max_capacity - c.agg_capacity, c.capacity)
    return Scale(c.replicas + additional, limited)


def _scale_down(c: _Capacity, deletion_order: DeletionOrder, buffer: int) -> Scale:
    if c.agg_capacity == c.min_capacity:
        return Scale(c.replicas, True)
    replicas, agg_count, agg_capacity = c.replicas, c.agg_count, c.agg_capacity
    for gs in deletion_order():
        replicas -= 1
        held = c.of(gs)
        if held is None:
            continue
        agg_count -= held[0]
        agg_capacity -= held[1]
        available = agg_capacity - agg_count
        if available < buffer:
            return Scale(replicas + 1, False)
        if agg_capacity < c.min_capacity:
            return Scale(replicas + 1, True)
        if available == buffer:
            return Scale(replicas, False)
        if agg_capacity == c.min_capacity:
            return Scale(replicas, True)
    return Scale(max(replicas, 1), False)
