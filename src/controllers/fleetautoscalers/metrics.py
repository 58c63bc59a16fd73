"""FleetAutoscaler metrics under Agones' names (the FleetAutoscaler part of `pkg/metrics`).

Gauges, from FleetAutoscaler informer events, labelled `name`, `fleet_name`, `namespace`:
`agones_fleet_autoscalers_able_to_scale`, `_limited` (0/1), `_current_replicas_count`,
`_desired_replicas_count`; and for Buffer policies, with `type`: `_buffer_limits` (`min`, `max`)
and `_buffer_size` (`count`, or `percentage` for a percent buffer). A deletion (or a FleetAutoscaler
moved to another Fleet) clears the families and records the cached FleetAutoscalers again, as
Agones' resync does, so no stale series remains.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Gauge

from ...apis.autoscaling.v1 import (
    BufferPolicy,
    FleetAutoscaler,
    FleetAutoscalerPolicy,
    FleetAutoscalerSpec,
    FleetAutoscalerStatus,
)
from ...apis.meta.intstr import atoi
from ...apis.meta.objectmeta import ObjectMeta
from ...client.informers.externalversions.factory import SharedInformerFactory as TypedFactory
from ...informers import SharedInformerFactory
from ...informers.shared_informer import ResourceEventHandlerFuncs

_LABELS = ["name", "fleet_name", "namespace"]
_TYPED = ["name", "type", "fleet_name", "namespace"]
_FAMILIES: weakref.WeakKeyDictionary[CollectorRegistry, dict[str, Gauge]] = (
    weakref.WeakKeyDictionary()
)


def _families(registry: CollectorRegistry) -> dict[str, Gauge]:
    families = _FAMILIES.get(registry)
    if families is None:

        def gauge(name: str, doc: str, labels: list[str]) -> Gauge:
            return Gauge(f"agones_fleet_autoscalers_{name}", doc, labels, registry=registry)

        families = {
            "able_to_scale": gauge(
                "able_to_scale", "The fleet autoscaler can access the fleet to scale", _LABELS
            ),
            "limited": gauge("limited", "The fleet autoscaler is capped", _LABELS),
            "current": gauge(
                "current_replicas_count",
                "The current replicas count as seen by autoscalers",
                _LABELS,
            ),
            "desired": gauge(
                "desired_replicas_count",
                "The desired replicas count as seen by autoscalers",
                _LABELS,
            ),
            "limits": gauge(
                "buffer_limits", "The limits of buffer based fleet autoscalers", _TYPED
            ),
            "size": gauge("buffer_size", "The buffer size of fleet autoscalers", _TYPED),
        }
        _FAMILIES[registry] = families
    return families


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class FleetAutoscalerMetrics:
    def __init__(self, factory: SharedInformerFactory, registry: CollectorRegistry | None = None):
        self.families = _families(registry or REGISTRY)
        informer = TypedFactory.from_generic(factory).autoscaling().v1().fleet_autoscalers()
        self.lister = informer.lister()
        informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=lambda fas: self.record(None, fas),
                update_func=self.record,
                delete_func=lambda _obj: self.resync(),
            )
        )

    def record(self, old: Any, fas: Any) -> None:
        if not isinstance(fas, FleetAutoscaler):
            return
        spec = fas.spec if isinstance(fas.spec, FleetAutoscalerSpec) else FleetAutoscalerSpec()
        moved = isinstance(old, FleetAutoscaler) and isinstance(old.spec, FleetAutoscalerSpec)
        if moved and old.spec.fleet_name != spec.fleet_name:
            self.resync()
            return
        meta = fas.metadata if isinstance(fas.metadata, ObjectMeta) else ObjectMeta()
        if meta.is_being_deleted():
            self.resync()
            return
        labels = (meta.get_name(), str(spec.fleet_name or ""), meta.get_namespace())
        status = fas.status if isinstance(fas.status, FleetAutoscalerStatus) else None
        status = status or FleetAutoscalerStatus()
        f = self.families
        f["current"].labels(*labels).set(_int(status.current_replicas))
        f["desired"].labels(*labels).set(_int(status.desired_replicas))
        f["able_to_scale"].labels(*labels).set(1 if status.able_to_scale is True else 0)
        f["limited"].labels(*labels).set(1 if status.scaling_limited is True else 0)
        policy = spec.policy if isinstance(spec.policy, FleetAutoscalerPolicy) else None
        buffer = policy.buffer if policy is not None else None
        if isinstance(buffer, BufferPolicy):
            name, fleet, ns = labels
            f["limits"].labels(name, "max", fleet, ns).set(_int(buffer.max_replicas))
            f["limits"].labels(name, "min", fleet, ns).set(_int(buffer.min_replicas))
            size = buffer.buffer_size
            if isinstance(size, str):
                # Agones records nothing for an unreadable percentage either.
                with contextlib.suppress(ValueError):
                    f["size"].labels(name, "percentage", fleet, ns).set(atoi(size[:-1]))
            else:
                f["size"].labels(name, "count", fleet, ns).set(_int(size))

    def resync(self) -> None:
        for family in self.families.values():
            family.clear()
        for fas in self.lister.list():
            self.record(None, fas)
