"""What every autoscaling policy returns, and the errors it may raise.

A policy answers with `Scale(replicas, limited)`: the Fleet size it wants and whether a limit of the
policy (min/max replicas or capacity) cut that size. It raises `PolicyError` (its `str()` is the
message the controller puts in the `FleetAutoscaler` warning event) when it cannot answer;
`InactiveScheduleError` is the one error that is not a failure: a Schedule outside its window.
"""

from __future__ import annotations

from dataclasses import dataclass

INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class Scale:
    """A policy's answer: the desired replicas, and whether a limit clamped them."""

    replicas: int
    limited: bool = False


class PolicyError(Exception):
    """A policy could not compute a size; the message says why."""


class InactiveScheduleError(PolicyError):
    """A Schedule policy is outside its window: keep the Fleet as it is (not an error event)."""

    def __init__(self) -> None:
        super().__init__("inactive schedule, policy not applicable")
