"""The FleetAutoscaler controller and its policies (Agones `pkg/fleetautoscalers`)."""

from .fleetautoscalers import ChainPolicyError, Decision, PolicyInputs, compute_desired_fleet_size
from .inprocess import REGISTRY, PolicyRegistry, register_policy
from .policy import InactiveScheduleError, PolicyError, Scale

__all__ = [
    "REGISTRY",
    "ChainPolicyError",
    "Decision",
    "InactiveScheduleError",
    "PolicyError",
    "PolicyInputs",
    "PolicyRegistry",
    "Scale",
    "compute_desired_fleet_size",
    "register_policy",
]
