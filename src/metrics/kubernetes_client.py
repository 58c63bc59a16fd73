"""Kubernetes client metrics under Agones' Prometheus names (`pkg/metrics/kubernetes_client.go`).

`register(registry)` creates the `agones_k8s_client_*` families (HTTP requests, reflector caches,
work queues) once per registry and installs the work-queue provider, so every queue constructed
afterwards reports with its `queue_name` label. The REST client and reflectors record through
the `agones.client.metrics.ClientMetrics` seam, which is a no-op until `register` installs the
Prometheus sink.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from ..client.metrics import ClientMetrics
from ..workqueue import metrics as workqueue_metrics

_LATENCY_BUCKETS = (0, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2, 3, float("inf"))
# Agones' views use a single-boundary distribution (0); buckets that separate sizes are more useful.
_WORK_BUCKETS = (0, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, float("inf"))
_COUNT_BUCKETS = (0, 1, 10, 100, 1000, 10000, float("inf"))


class KubernetesClientMetrics:
    """The metric families of one registry."""

    def __init__(self, registry: CollectorRegistry) -> None:
        p = "agones_k8s_client_"
        self.http_request_total = Counter(
            p + "http_request_total",
            "The total of HTTP requests to the Kubernetes API by status code",
            ["verb", "status_code"],
            registry=registry,
        )
        self.http_request_duration = Histogram(
            p + "http_request_duration_seconds",
            "The distribution of HTTP requests latencies to the Kubernetes API by status code",
            ["verb", "endpoint"],
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        )
        self.cache_list_total = Counter(
            p + "cache_list_total",
            "The total number of list operations for client-go caches",
            registry=registry,
        )
        self.cache_list_duration = Histogram(
            p + "cache_list_duration_seconds",
            "Duration of a Kubernetes list API call in seconds",
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        )
        self.cache_list_items = Histogram(
            p + "cache_list_items",
            "Count of items in a list from the Kubernetes API.",
            buckets=_COUNT_BUCKETS,
            registry=registry,
        )
        self.cache_watches_total = Counter(
            p + "cache_watches_total",
            "The total number of watch operations for client-go caches",
            registry=registry,
        )
        self.cache_short_watches_total = Counter(
            p + "cache_short_watches_total",
            "The total number of short watch operations for client-go caches",
            registry=registry,
        )
        self.cache_watch_duration = Histogram(
            p + "cache_watch_duration_seconds",
            "Duration of watches on the Kubernetes API.",
            buckets=_WORK_BUCKETS,
            registry=registry,
        )
        self.cache_watch_events = Histogram(
            p + "cache_watch_events",
            "Number of items in watches on the Kubernetes API.",
            buckets=_COUNT_BUCKETS,
            registry=registry,
        )
        self.cache_last_resource_version = Gauge(
            p + "cache_last_resource_version",
            "Last resource version from the Kubernetes API.",
            registry=registry,
        )
        self.workqueue_depth = Gauge(
            p + "workqueue_depth",
            "Current depth of the work queue.",
            ["queue_name"],
            registry=registry,
        )
        self.workqueue_items_total = Counter(
            p + "workqueue_items_total",
            "Total number of items added to the work queue.",
            ["queue_name"],
            registry=registry,
        )
        self.workqueue_latency = Histogram(
            p + "workqueue_latency_seconds",
            "How long an item stays in the work queue.",
            ["queue_name"],
            buckets=_WORK_BUCKETS,
            registry=registry,
        )
        self.workqueue_work_duration = Histogram(
            p + "workqueue_work_duration_seconds",
            "How long processing an item from the work queue takes.",
            ["queue_name"],
            buckets=_WORK_BUCKETS,
            registry=registry,
        )
        self.workqueue_retries_total = Counter(
            p + "workqueue_retries_total",
            "Total number of items retried to the work queue.",
            ["queue_name"],
            registry=registry,
        )
        self.workqueue_longest_running_processor = Gauge(
            p + "workqueue_longest_running_processor",
            "How long the longest running processor of the work queue has been running, in seconds.",
            ["queue_name"],
            registry=registry,
        )
        self.workqueue_unfinished_work_seconds = Gauge(
            p + "workqueue_unfinished_work_seconds",
            "How long the work in progress has been running, in seconds.",
            ["queue_name"],
            registry=registry,
        )


class PrometheusWorkqueueProvider:
    """The work-queue provider backed by `KubernetesClientMetrics`."""

    enabled = True

    def __init__(self, families: KubernetesClientMetrics) -> None:
        self.f = families

    def new_depth_metric(self, name: str) -> Any:
        return self.f.workqueue_depth.labels(queue_name=name)

    def new_adds_metric(self, name: str) -> Any:
        return self.f.workqueue_items_total.labels(queue_name=name)

    def new_latency_metric(self, name: str) -> Any:
        return self.f.workqueue_latency.labels(queue_name=name)

    def new_work_duration_metric(self, name: str) -> Any:
        return self.f.workqueue_work_duration.labels(queue_name=name)

    def new_unfinished_work_seconds_metric(self, name: str, fn: Callable[[], float]) -> None:
        self.f.workqueue_unfinished_work_seconds.labels(queue_name=name).set_function(fn)

    def new_longest_running_processor_seconds_metric(
        self, name: str, fn: Callable[[], float]
    ) -> None:
        self.f.workqueue_longest_running_processor.labels(queue_name=name).set_function(fn)

    def new_retries_metric(self, name: str) -> Any:
        return self.f.workqueue_retries_total.labels(queue_name=name)


class PrometheusClientSink:
    """The client and reflector sink backed by `KubernetesClientMetrics`."""

    def __init__(self, families: KubernetesClientMetrics) -> None:
        self.f = families
        # The label children by label values: a few dozen (verbs x codes, verbs x URL templates),
        # looked up once each instead of on every request.
        self._totals: dict[tuple[str, int | str], Any] = {}
        self._durations: dict[tuple[str, str], Any] = {}

    def request(self, verb: str, endpoint: str, status_code: int | str, seconds: float) -> None:
        total = self._totals.get((verb, status_code))
        if total is None:
            total = self._totals[verb, status_code] = self.f.http_request_total.labels(
                verb=verb, status_code=str(status_code)
            )
        total.inc()
        duration = self._durations.get((verb, endpoint))
        if duration is None:
            duration = self._durations[verb, endpoint] = self.f.http_request_duration.labels(
                verb=verb, endpoint=endpoint
            )
        duration.observe(seconds)

    def list_done(self, seconds: float, items: int) -> None:
        self.f.cache_list_total.inc()
        self.f.cache_list_duration.observe(seconds)
        self.f.cache_list_items.observe(items)

    def watch_done(self, seconds: float, events: int, short: bool) -> None:
        self.f.cache_watches_total.inc()
        if short:
            self.f.cache_short_watches_total.inc()
        self.f.cache_watch_duration.observe(seconds)
        self.f.cache_watch_events.observe(events)

    def last_resource_version(self, rv: str) -> None:
        if rv.isdigit():
            self.f.cache_last_resource_version.set(float(rv))


# Keyed by the registry itself, weakly: an id() could be reused by a later registry.
_registered: weakref.WeakKeyDictionary[CollectorRegistry, KubernetesClientMetrics] = (
    weakref.WeakKeyDictionary()
)


def register(registry: CollectorRegistry | None = None) -> KubernetesClientMetrics:
    """Create (once per registry) the families and route client and work-queue metrics to them."""
    registry = registry or REGISTRY
    families = _registered.get(registry)
    if families is None:
        families = KubernetesClientMetrics(registry)
        _registered[registry] = families
    ClientMetrics.sink = PrometheusClientSink(families)
    workqueue_metrics.set_provider(PrometheusWorkqueueProvider(families))
    return families
