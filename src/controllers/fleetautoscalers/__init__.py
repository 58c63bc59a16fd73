"""The FleetAutoscaler controller and its policies (Agones `pkg/fleetautoscalers`)."""

from .controller import Controller
from .fleetautoscalers import ChainPolicyError, Decision, PolicyInputs, compute_desired_fleet_size
from .inprocess import REGISTRY, PolicyRegistry, register_policy
from .metrics import FleetAutoscalerMetrics
from .policy import InactiveScheduleError, PolicyError, Scale

__all__ = [
    "REGISTRY",
    "ChainPolicyError",
    "Controller",
    "Decision",
    "FleetAutoscalerMetrics",
    "InactiveScheduleError",
    "PolicyError",
    "PolicyInputs",
    "PolicyRegistry",
    "Scale",
    "compute_desired_fleet_size",
    "register_policy",
]
