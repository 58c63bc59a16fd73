"""Fleet metrics under Agones' names (the Fleet part of `pkg/metrics/controller.go`).

On every Fleet add or update (not while it is being deleted), from the Fleet informer:
* `agones_fleets_replicas_count{name, type, namespace}`: type total / allocated / ready / desired /
  reserved, from the Fleet's status and spec;
* `agones_fleet_rollout_percent{name, type="percent", namespace}`: the active GameServerSet's status
  replicas as a percentage of the Fleet's desired replicas (integer, truncated; 100 when 0 desired);
* with CountsAndLists, `agones_fleet_counters{name, namespace, type, counter}` and
  `agones_fleet_lists{name, namespace, type, list}`: type allocated_count / allocated_capacity /
  total_count / total_capacity.
A Fleet's deletion removes its series (Go resets every Fleet view and records the rest again).
"""

from __future__ import annotations

import contextlib
from typing import Any

from msgspec import UNSET
from prometheus_client import REGISTRY, CollectorRegistry, Gauge

from ...apis.agones.v1.common import AggregatedCounterStatus, AggregatedListStatus
from ...apis.agones.v1.fleet import Fleet
from ...client.informers.externalversions import SharedInformerFactory as TypedInformerFactory
from ...featuregates import Feature, FeatureGates
from ...informers import SharedInformerFactory
from ...informers.shared_informer import ResourceEventHandlerFuncs
from ...informers.store import DeletedFinalStateUnknown
from . import fleets

_FAMILIES: dict[CollectorRegistry, tuple[Gauge, Gauge, Gauge, Gauge]] = {}


def _families(registry: CollectorRegistry) -> tuple[Gauge, Gauge, Gauge, Gauge]:
    """The metric families, created once per registry (a process may build controllers twice)."""
    families = _FAMILIES.get(registry)
    if families is None:
        families = (
            Gauge(
                "agones_fleets_replicas_count",
                "The number of replicas per fleet",
                ["name", "type", "namespace"],
                registry=registry,
            ),
            Gauge(
                "agones_fleet_rollout_percent",
                "The current fleet rollout percentage",
                ["name", "type", "namespace"],
                registry=registry,
            ),
            Gauge(
                "agones_fleet_counters",
                "Aggregated Counters counts for the fleet",
                ["name", "namespace", "type", "counter"],
                registry=registry,
            ),
            Gauge(
                "agones_fleet_lists",
                "Aggregated Lists counts for the fleet",
                ["name", "namespace", "type", "list"],
                registry=registry,
            ),
        )
        _FAMILIES[registry] = families
    return families


def rollout_percent(current: int, desired: int) -> int:
    """Go's `int64(float64(current) / float64(desired) * 100)`, 100 when nothing is desired."""
    if desired <= 0:
        return 100
    return int(current / desired * 100)


def _aggregates(status: AggregatedCounterStatus | AggregatedListStatus) -> dict[str, int]:
    def v(x: object) -> int:
        return x if isinstance(x, int) else 0

    return {
        "allocated_count": v(status.allocated_count),
        "allocated_capacity": v(status.allocated_capacity),
        "total_count": v(status.count),
        "total_capacity": v(status.capacity),
    }


class FleetMetrics:
    def __init__(
        self,
        factory: SharedInformerFactory,
        gates: FeatureGates,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.gates = gates
        typed = TypedInformerFactory.from_generic(factory).agones().v1()
        self.replicas, self.rollout, self.counters, self.lists = _families(registry or REGISTRY)
        self.game_server_set_lister = typed.game_server_sets().lister()
        # (namespace, name) -> the counter and list keys recorded, to remove them on deletion
        self._keys: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
        typed.fleets().informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self.record_fleet_changes,
                update_func=lambda _old, new: self.record_fleet_changes(new),
                delete_func=self.record_fleet_deletion,
            )
        )

    def record_fleet_changes(self, fleet: Fleet) -> None:
        if fleet.metadata is UNSET or fleet.metadata.is_being_deleted():
            return
        name, namespace = fleet.metadata.get_name(), fleet.metadata.get_namespace()
        status, spec = fleets.fleet_status_of(fleet), fleets.fleet_spec(fleet)
        counts = {
            "total": status.replicas,
            "allocated": status.allocated_replicas,
            "ready": status.ready_replicas,
            "desired": spec.replicas,
            "reserved": status.reserved_replicas,
        }
        for kind, value in counts.items():
            self.replicas.labels(name, kind, namespace).set(value if isinstance(value, int) else 0)
        self.record_fleet_rollout_percentage(fleet)
        if not self.gates.enabled(Feature.COUNTS_AND_LISTS):
            return
        counter_keys, list_keys = self._keys.setdefault((namespace, name), (set(), set()))
        for key, c in (status.counters or {}).items():
            counter_keys.add(key)
            for kind, value in _aggregates(c).items():
                self.counters.labels(name, namespace, kind, key).set(value)
        for key, lst in (status.lists or {}).items():
            list_keys.add(key)
            for kind, value in _aggregates(lst).items():
                self.lists.labels(name, namespace, kind, key).set(value)

    def record_fleet_rollout_percentage(self, fleet: Fleet) -> None:
        namespace = fleet.metadata.get_namespace() if fleet.metadata is not UNSET else ""
        name = fleet.metadata.get_name() if fleet.metadata is not UNSET else ""
        sets = [
            s
            for s in self.game_server_set_lister.game_server_sets(namespace).list()
            if fleets.is_fleet_game_server_set(s, fleet)
        ]
        active, _ = fleets.filter_game_server_set_by_active(fleet, sets)
        current = fleets.set_replicas(active).replicas if active is not None else 0
        desired = fleets.fleet_replicas(fleet).replicas
        self.rollout.labels(name, "percent", namespace).set(rollout_percent(current, desired))

    def record_fleet_deletion(self, obj: Any) -> None:
        fleet = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if not isinstance(fleet, Fleet) or fleet.metadata is UNSET:
            return
        name, namespace = fleet.metadata.get_name(), fleet.metadata.get_namespace()
        for kind in ("total", "allocated", "ready", "desired", "reserved"):
            self._remove(self.replicas, name, kind, namespace)
        self._remove(self.rollout, name, "percent", namespace)
        counter_keys, list_keys = self._keys.pop((namespace, name), (set(), set()))
        kinds = ("allocated_count", "allocated_capacity", "total_count", "total_capacity")
        for key in counter_keys:
            for kind in kinds:
                self._remove(self.counters, name, namespace, kind, key)
        for key in list_keys:
            for kind in kinds:
                self._remove(self.lists, name, namespace, kind, key)

    @staticmethod
    def _remove(gauge: Gauge, *labels: str) -> None:
        with contextlib.suppress(KeyError):
            gauge.remove(*labels)
