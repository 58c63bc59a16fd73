"""The deployment arithmetic of the Fleet controller, pure (Agones `pkg/fleets/controller.go`,
`controller_rollingupdatefix.go`).

`apply_deployment_strategy(fleet, active, rest, rolling_update_fix)` answers, from replica counts
alone, what a Fleet sync does to its GameServerSets: the spec.replicas the active set should have
and, in order, the scale-downs of the inactive ("rest") sets. It raises `ValueError` for an unknown
strategy type, or a maxSurge/maxUnavailable that is missing (a RollingUpdate strategy set by an
update, which the webhook does not default) or not a number, with Go's texts.

* No rest sets: the active set gets the Fleet's replicas. Rest sets all at spec 0: the active set
  gets replicas minus what the rest still hold Reserved or Allocated.
* Recreate: every rest set goes to 0 at once; active = replicas - rest Allocated.
* RollingUpdate, active side: wait while the active set's spec ≠ status; otherwise grow it by
  maxSurge (resolved against the Fleet's replicas, rounded up), never past replicas + surge in
  total nor past replicas - rest Allocated.
* RollingUpdate, rest side: maxUnavailable is resolved rounding down (at least 1, at most the
  Fleet's replicas). Without `RollingUpdateFix` against the Fleet's replicas, with it against the
  Fleet's *ready* replicas (min-available = ready - unavailable, capped at replicas). Sets with
  replicas that are not Ready (with the fix: not Ready, Reserved or Allocated) are cut first, then
  Ready capacity above min-available is taken from the rest sets in order, stopping at a set whose
  spec ≠ status; a set with Shutdown servers is left alone, and with the fix a set whose servers
  are all Allocated goes straight to 0.

Where Go writes a set and then reads its copy again in the same pass, the plan carries the new
spec forward, so the scale-downs come out exactly as Go's sequence of writes would.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ...apis.meta.intstr import IntOrStr, IntOrString, get_value_from_int_or_percent

ROLLING_UPDATE = "RollingUpdate"
RECREATE = "Recreate"


@dataclass(frozen=True)
class SetReplicas:
    """The counts of one GameServerSet the arithmetic reads (spec and status)."""

    name: str
    spec_replicas: int
    replicas: int = 0
    ready: int = 0
    reserved: int = 0
    allocated: int = 0
    shutdown: int = 0


@dataclass(frozen=True)
class FleetReplicas:
    """The Fleet's side: desired replicas, its last observed Ready count, its strategy."""

    replicas: int
    ready: int = 0
    strategy: str = ROLLING_UPDATE
    max_surge: IntOrStr | None = "25%"
    max_unavailable: IntOrStr | None = "25%"
    name: str = ""
    """The Fleet's name, for error messages."""


@dataclass(frozen=True)
class Scale:
    """Set `name`'s spec.replicas from `old` to `new`."""

    name: str
    old: int
    new: int


@dataclass(frozen=True)
class Plan:
    active_replicas: int
    scales: tuple[Scale, ...] = ()


def _resolve(fleet: FleetReplicas, what: str, total: int, round_up: bool) -> int:
    value = fleet.max_surge if what == "MaxSurge" else fleet.max_unavailable
    try:
        parsed = None if value is None else IntOrString.parse(value)
        return get_value_from_int_or_percent(parsed, total, round_up)
    except ValueError as err:
        raise ValueError(f"error parsing {what} value: {fleet.name}: {err}") from err


def apply_deployment_strategy(
    fleet: FleetReplicas,
    active: SetReplicas,
    rest: Sequence[SetReplicas],
    rolling_update_fix: bool,
) -> Plan:
    """The active set's replicas and the rest sets' scale-downs for this sync."""
    if not rest:
        return Plan(fleet.replicas)
    if sum(s.spec_replicas for s in rest) == 0:
        blocked = sum(s.reserved + s.allocated for s in rest)
        return Plan(max(fleet.replicas - blocked, 0))
    if fleet.strategy == RECREATE:
        return recreate_deployment(fleet, rest)
    if fleet.strategy == ROLLING_UPDATE:
        replicas = rolling_update_active(fleet, active, rest)
        if rolling_update_fix:
            scales = rolling_update_rest_fixed_on_ready_rolling_update_fix(fleet, active, rest)
        else:
            scales = rolling_update_rest_fixed_on_ready(fleet, active, rest)
        return Plan(replicas, tuple(scales))
    raise ValueError(f"unexpected deployment strategy type: {fleet.strategy}")


def recreate_deployment(fleet: FleetReplicas, rest: Sequence[SetReplicas]) -> Plan:
    scales = tuple(Scale(s.name, s.spec_replicas, 0) for s in rest if s.spec_replicas != 0)
    allocated = sum(s.allocated for s in rest)
    return Plan(max(fleet.replicas - allocated, 0), scales)


def rolling_update_active(
    fleet: FleetReplicas, active: SetReplicas, rest: Sequence[SetReplicas]
) -> int:
    """What the active set's spec.replicas should become."""
    replicas = active.spec_replicas
    sum_allocated = sum(s.allocated for s in rest)
    if active.spec_replicas != active.replicas:
        return replicas  # mid-step: wait for the active set to reach its spec
    if fleet.replicas == 0:
        return 0
    if active.spec_replicas >= fleet.replicas - sum_allocated:
        return fleet.replicas - sum_allocated
    surge = _resolve(fleet, "MaxSurge", fleet.replicas, True)
    max_surge = surge + fleet.replicas
    replicas = min(replicas + surge, fleet.replicas)
    total = sum(s.replicas for s in rest) + replicas
    if total > max_surge:
        replicas = max(replicas - (total - max_surge), 0)
    if replicas + sum_allocated > fleet.replicas:
        replicas = max(fleet.replicas - sum_allocated, 0)
    return replicas


def _unavailable(fleet: FleetReplicas, base: int) -> int:
    r = _resolve(fleet, "MaxUnavailable", base, False)
    if r == 0:
        r = 1
    return min(r, fleet.replicas)


def _cleanup_unhealthy(
    rest: list[SetReplicas], max_cleanup: int, healthy_of: str
) -> tuple[list[Scale], bool]:
    """Cut replicas that are not healthy, up to `max_cleanup`, updating `rest` in place.

    `healthy_of` is "ready" (Go's original) or "healthy" (Ready + Allocated + Reserved, the fix).
    Returns the scales and whether the pass completed (Go aborts the rest side otherwise)."""
    scales: list[Scale] = []
    total = 0
    for i, s in enumerate(rest):
        if total >= max_cleanup:
            break
        if s.spec_replicas == 0:
            continue
        if healthy_of == "ready":
            healthy = s.ready
            if s.spec_replicas == healthy:
                continue
        else:
            healthy = s.ready + s.allocated + s.reserved
            if s.spec_replicas <= healthy:
                continue
        count = min(max_cleanup - total, s.spec_replicas - healthy)
        new = s.spec_replicas - count
        if new > s.spec_replicas:
            return scales, False  # Go: "invalid request to scale down", the pass is dropped
        scales.append(Scale(s.name, s.spec_replicas, new))
        total += count
        rest[i] = replace(s, spec_replicas=new)
    return scales, True


def _scale_down_ready(
    rest: Sequence[SetReplicas], total_scale_down: int, all_allocated_to_zero: bool
) -> list[Scale]:
    scales: list[Scale] = []
    done = 0
    for s in rest:
        if done >= total_scale_down:
            break
        if s.spec_replicas <= 0:
            continue
        if s.spec_replicas != s.replicas:
            break  # this set is still scaling: wait for it
        if s.shutdown != 0:
            continue
        count = min(s.spec_replicas, total_scale_down - done)
        new = s.spec_replicas - count
        if all_allocated_to_zero and s.replicas == s.allocated:
            new = 0
        elif new == s.spec_replicas:
            continue
        scales.append(Scale(s.name, s.spec_replicas, new))
        done += count
    return scales


def rolling_update_rest_fixed_on_ready(
    fleet: FleetReplicas, active: SetReplicas, rest: Sequence[SetReplicas]
) -> list[Scale]:
    """The rest side without `RollingUpdateFix`: maxUnavailable against the Fleet's replicas."""
    if not rest:
        return []
    unavailable = _unavailable(fleet, fleet.replicas)
    work = list(rest)
    every = [*work, active]
    ready_count = sum(s.ready for s in every)
    min_available = fleet.replicas - unavailable
    all_pods = sum(s.spec_replicas for s in every)
    new_unavailable = active.spec_replicas - active.ready - active.allocated
    max_scaled_down = all_pods - min_available - new_unavailable
    if max_scaled_down <= 0:
        return []
    scales, ok = _cleanup_unhealthy(work, max_scaled_down, "ready")
    if not ok:
        return scales
    if ready_count <= min_available:
        return scales
    return scales + _scale_down_ready(work, ready_count - min_available, False)


def rolling_update_rest_fixed_on_ready_rolling_update_fix(
    fleet: FleetReplicas, active: SetReplicas, rest: Sequence[SetReplicas]
) -> list[Scale]:
    """The rest side with `RollingUpdateFix`: maxUnavailable against the Fleet's Ready count."""
    if not rest:
        return []
    unavailable = _unavailable(fleet, fleet.ready)
    work = list(rest)
    ready_count = sum(s.ready for s in [*work, active])
    min_available = min(fleet.ready - unavailable, fleet.replicas)
    new_unavailable = (
        active.spec_replicas - active.ready - active.reserved - active.allocated - active.shutdown
    )
    max_scaled_down = ready_count - min_available - new_unavailable
    if max_scaled_down <= 0:
        return []
    scales, ok = _cleanup_unhealthy(work, max_scaled_down, "healthy")
    if not ok:
        return scales
    if ready_count <= min_available:
        return scales
    return scales + _scale_down_ready(work, ready_count - min_available, True)
