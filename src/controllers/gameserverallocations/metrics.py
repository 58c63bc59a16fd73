"""Allocation metrics under Agones' names (`pkg/gameserverallocations/metrics.go`).

`agones_gameserver_allocations_duration_seconds` (histogram, Agones' buckets 0 … 3 s) and
`agones_gameserver_allocations_retry_total` (histogram of attempts per allocation, buckets 1 … 5),
both labelled `fleet_name`, `cluster_name`, `is_multicluster`, `status`, `scheduling_strategy`
("none" where unknown, as Agones' default tags). `status` is the outcome state, or `error`. One set
of families per registry.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from prometheus_client import REGISTRY, CollectorRegistry, Histogram

from ...apis.allocation.v1.gameserverallocation import (
    GameServerAllocation,
    GameServerAllocationSpec,
    GameServerAllocationStatus,
    GameServerMetadata,
    MultiClusterSetting,
)

FLEET_NAME_LABEL = "agones.dev/fleet"
LATENCY_BUCKETS = (0, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2, 3)
RETRY_BUCKETS = (1, 2, 3, 4, 5)
LABELS = ("fleet_name", "cluster_name", "is_multicluster", "status", "scheduling_strategy")
NONE = "none"

# The registry is kept with its families so its id cannot be reused by a newer registry.
_FAMILIES: dict[int, tuple[CollectorRegistry, Histogram, Histogram]] = {}


def families(registry: CollectorRegistry | None = None) -> tuple[Histogram, Histogram]:
    registry = registry or REGISTRY
    found = _FAMILIES.get(id(registry))
    if found is None:
        found = (
            registry,
            Histogram(
                "agones_gameserver_allocations_duration_seconds",
                "The distribution of gameserver allocation requests latencies.",
                LABELS,
                buckets=LATENCY_BUCKETS,
                registry=registry,
            ),
            Histogram(
                "agones_gameserver_allocations_retry_total",
                "The count of gameserver allocation retry until it succeeds",
                LABELS,
                buckets=RETRY_BUCKETS,
                registry=registry,
            ),
        )
        _FAMILIES[id(registry)] = found
    return found[1], found[2]


@dataclass
class AllocationMetrics:
    """The tags of one allocation, set as it goes, recorded once at the end."""

    latency: Histogram
    retries: Histogram
    start: float
    tags: dict[str, str] = field(default_factory=lambda: dict.fromkeys(LABELS, NONE))

    def set_request(self, gsa: GameServerAllocation) -> None:
        spec = gsa.spec if isinstance(gsa.spec, GameServerAllocationSpec) else None
        if spec is None:
            return
        if isinstance(spec.scheduling, str) and spec.scheduling:
            self.tags["scheduling_strategy"] = spec.scheduling
        mc = spec.multi_cluster_setting
        enabled = isinstance(mc, MultiClusterSetting) and mc.enabled is True
        self.tags["is_multicluster"] = str(enabled).lower()

    def set_response(self, gsa: GameServerAllocation) -> None:
        status = gsa.status if isinstance(gsa.status, GameServerAllocationStatus) else None
        if status is None:
            return
        self.tags["status"] = str(status.state) if status.state else NONE
        meta = status.metadata if isinstance(status.metadata, GameServerMetadata) else None
        labels = meta.labels if meta is not None and isinstance(meta.labels, dict) else {}
        if labels.get(FLEET_NAME_LABEL):
            self.tags["fleet_name"] = labels[FLEET_NAME_LABEL]

    def set_error(self) -> None:
        self.tags["status"] = "error"

    def record(self, now: float, attempts: int) -> None:
        values = [self.tags[k] for k in LABELS]
        self.latency.labels(*values).observe(max(0.0, now - self.start))
        if attempts:
            self.retries.labels(*values).observe(attempts)
