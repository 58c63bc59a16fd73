"""The GameServerSet controller's metric (Agones `pkg/gameserversets/metrics.go`).

`agones_gameserver_creation_duration`: a histogram (buckets 0 … 3 s) of how long one batch of
GameServer creations took, observed once per batch, labelled as Agones labels it: `name` is the
number of GameServers the batch asked for, `type` is `none` (or `error` when a creation failed),
`fleet_name` is `none` and `namespace` is empty (Agones tags neither). Families are created once per
registry.
"""

from __future__ import annotations

import weakref

from prometheus_client import REGISTRY, CollectorRegistry, Histogram

from ...clock import Clock

CREATION_BUCKETS = (0, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2, 3)
NONE = "none"

_families: weakref.WeakKeyDictionary[CollectorRegistry, Histogram] = weakref.WeakKeyDictionary()


def creation_duration(registry: CollectorRegistry | None = None) -> Histogram:
    registry = registry or REGISTRY
    family = _families.get(registry)
    if family is None:
        family = Histogram(
            "agones_gameserver_creation_duration",
            "The time gameserver takes to be created in seconds",
            ["name", "type", "fleet_name", "namespace"],
            buckets=CREATION_BUCKETS,
            registry=registry,
        )
        _families[registry] = family
    return family


class CreationLatency:
    """One batch's latency recorder (Go `metrics`): `set_request`, `set_error`, then `record`."""

    def __init__(self, histogram: Histogram, clock: Clock) -> None:
        self.histogram = histogram
        self.clock = clock
        self.start = clock.monotonic()
        self.name = NONE
        self.type = NONE

    def set_request(self, count: int) -> None:
        self.name = str(count)

    def set_error(self, error_type: str) -> None:
        self.type = error_type

    def record(self) -> None:
        elapsed = max(0.0, self.clock.monotonic() - self.start)
        self.histogram.labels(self.name, self.type, NONE, "").observe(elapsed)
