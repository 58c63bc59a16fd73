"""GameServer metrics under Agones' names (the GameServer part of `pkg/metrics/controller.go`).

From GameServer informer events: `agones_gameservers_count` (gauge of GameServers per state),
`agones_gameservers_total` (counter of entries into each state) and
`agones_gameserver_state_duration` (histogram of seconds spent in a state, observed on leaving it),
labelled by `type` (state), `fleet_name` (label `agones.dev/fleet`, "none" without one) and
`namespace`, in a registry of the caller's choosing.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from ...apis.agones.v1.gameserver import GameServer
from ...clock import Clock, RealClock
from ...informers import SharedInformerFactory
from ...informers.shared_informer import ResourceEventHandlerFuncs
from ...informers.store import DeletedFinalStateUnknown
from . import informers

FLEET_LABEL = "agones.dev/fleet"
NO_FLEET = "none"
_STATE_BUCKETS = (0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)


_FAMILIES: dict[int, tuple[Gauge, Counter, Histogram]] = {}


def _families(registry: CollectorRegistry) -> tuple[Gauge, Counter, Histogram]:
    """The metric families, created once per registry (a process may build controllers twice)."""
    families = _FAMILIES.get(id(registry))
    if families is None:
        names = ["type", "fleet_name", "namespace"]
        families = (
            Gauge(
                "agones_gameservers_count", "The number of gameservers", names, registry=registry
            ),
            Counter(
                "agones_gameservers_total", "The total of gameservers", names, registry=registry
            ),
            Histogram(
                "agones_gameserver_state_duration",
                "The time gameserver exists in the current state in seconds",
                names,
                buckets=_STATE_BUCKETS,
                registry=registry,
            ),
        )
        _FAMILIES[id(registry)] = families
    return families


def _labels(gs: GameServer) -> tuple[str, str, str]:
    fleet = gs.meta.get_labels().get(FLEET_LABEL) or NO_FLEET
    return str(gs.state() or ""), fleet, gs.meta.get_namespace()


class GameServerMetrics:
    def __init__(
        self,
        factory: SharedInformerFactory,
        registry: CollectorRegistry | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.clock = clock or RealClock()
        self.count, self.total, self.state_duration = _families(registry or REGISTRY)
        self._since: dict[str, float] = {}
        # label values -> the (count, total) children, and the state duration's (made at the
        # first observation, as before): looked up once per label set (states x fleets x
        # namespaces; prometheus keeps every child as long anyway)
        self._counts: dict[tuple[str, str, str], tuple[Any, Any]] = {}
        self._durations: dict[tuple[str, str, str], Any] = {}
        informers.game_servers(factory).informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._on_add, update_func=self._on_update, delete_func=self._on_delete
            )
        )

    def _counts_of(self, labels: tuple[str, str, str]) -> tuple[Any, Any]:
        counts = self._counts.get(labels)
        if counts is None:
            counts = self._counts[labels] = (self.count.labels(*labels), self.total.labels(*labels))
        return counts

    def _enter(self, gs: GameServer) -> None:
        count, total = self._counts_of(_labels(gs))
        count.inc()
        total.inc()
        self._since[gs.meta.uid if isinstance(gs.meta.uid, str) else ""] = self.clock.now()

    def _leave(self, gs: GameServer) -> None:
        labels = _labels(gs)
        self._counts_of(labels)[0].dec()
        since = self._since.pop(gs.meta.uid if isinstance(gs.meta.uid, str) else "", None)
        if since is not None:
            duration = self._durations.get(labels)
            if duration is None:
                duration = self._durations[labels] = self.state_duration.labels(*labels)
            duration.observe(max(0.0, self.clock.now() - since))

    def _on_add(self, gs: GameServer) -> None:
        self._enter(gs)

    def _on_update(self, old: GameServer, new: GameServer) -> None:
        if old.state() != new.state():
            self._leave(old)
            self._enter(new)

    def _on_delete(self, obj: Any) -> None:
        gs = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if isinstance(gs, GameServer):
            self._leave(gs)
