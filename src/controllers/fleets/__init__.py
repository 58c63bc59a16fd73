"""The Fleet controller (Agones `pkg/fleets`): rolling updates, recreate, status, metrics."""

from .controller import Controller
from .metrics import FleetMetrics

__all__ = ["Controller", "FleetMetrics"]
