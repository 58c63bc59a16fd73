"""The controller process skeleton (Agones `cmd/controller` main flow), reusable by every binary.

Only the settings are imported eagerly, so that building the CLI stays light; the runner (and with
it aiohttp and the informers) loads on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .settings import ControllerSettings

if TYPE_CHECKING:
    from .health import HealthHandler
    from .runner import Context, ControllerRunner, Runnable

_LAZY = {
    "HealthHandler": ".health",
    "Context": ".runner",
    "ControllerRunner": ".runner",
    "Runnable": ".runner",
}

__all__ = ["Context", "ControllerRunner", "ControllerSettings", "HealthHandler", "Runnable"]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
