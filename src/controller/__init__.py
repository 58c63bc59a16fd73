"""The controller process skeleton (Agones `cmd/controller` main flow), reusable by every binary."""

from .health import HealthHandler
from .runner import Context, ControllerRunner, Runnable
from .settings import ControllerSettings

__all__ = ["Context", "ControllerRunner", "ControllerSettings", "HealthHandler", "Runnable"]
