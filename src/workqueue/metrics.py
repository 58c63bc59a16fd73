"""Work-queue metrics (client-go `util/workqueue/metrics.go`): the provider seam and per-queue bookkeeping.

A queue records, per item: when it was added (for `latency`, time spent waiting), when a worker got it
(for `work_duration`), and the number of rate-limited re-adds (`retries`). Metric sinks come from the
process-wide provider (`set_provider`), which is a no-op until something (our `metrics` package, the
way Agones registers its OpenCensus adapter) installs a real one. Queues read the provider when they
are constructed, so install it before building controllers.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Protocol

from ..clock import Clock


class CounterMetric(Protocol):
    def inc(self) -> None: ...


class GaugeMetric(Protocol):
    def inc(self) -> None: ...

    def dec(self) -> None: ...


class HistogramMetric(Protocol):
    def observe(self, value: float) -> None: ...


class MetricsProvider(Protocol):
    """Creates the sinks of one named queue; `fn` metrics are read when scraped."""

    def new_depth_metric(self, name: str) -> GaugeMetric: ...

    def new_adds_metric(self, name: str) -> CounterMetric: ...

    def new_latency_metric(self, name: str) -> HistogramMetric: ...

    def new_work_duration_metric(self, name: str) -> HistogramMetric: ...

    def new_unfinished_work_seconds_metric(self, name: str, fn: Callable[[], float]) -> None: ...

    def new_longest_running_processor_seconds_metric(
        self, name: str, fn: Callable[[], float]
    ) -> None: ...

    def new_retries_metric(self, name: str) -> CounterMetric: ...


class NoopMetricsProvider:
    """Discards everything (the default, as in client-go)."""

    enabled = False

    def new_depth_metric(self, name: str) -> GaugeMetric:
        return _NOOP

    def new_adds_metric(self, name: str) -> CounterMetric:
        return _NOOP

    def new_latency_metric(self, name: str) -> HistogramMetric:
        return _NOOP

    def new_work_duration_metric(self, name: str) -> HistogramMetric:
        return _NOOP

    def new_unfinished_work_seconds_metric(self, name: str, fn: Callable[[], float]) -> None:
        return None

    def new_longest_running_processor_seconds_metric(
        self, name: str, fn: Callable[[], float]
    ) -> None:
        return None

    def new_retries_metric(self, name: str) -> CounterMetric:
        return _NOOP


class _NoopMetric:
    def inc(self) -> None:
        pass

    def dec(self) -> None:
        pass

    def observe(self, value: float) -> None:
        pass


_NOOP = _NoopMetric()
_provider: MetricsProvider = NoopMetricsProvider()


def set_provider(provider: MetricsProvider) -> None:
    """Install the process-wide provider used by queues constructed from now on."""
    global _provider
    _provider = provider


def get_provider() -> MetricsProvider:
    return _provider


class QueueMetrics:
    """Per-queue bookkeeping; unnamed queues (or the no-op provider) record nothing."""

    def __init__(self, name: str, clock: Clock, provider: MetricsProvider | None = None) -> None:
        provider = provider if provider is not None else _provider
        self.enabled = bool(name) and getattr(provider, "enabled", True)
        self._clock = clock
        self._add_times: dict[Hashable, float] = {}
        self._processing_start: dict[Hashable, float] = {}
        self.depth = provider.new_depth_metric(name) if self.enabled else _NOOP
        self.adds = provider.new_adds_metric(name) if self.enabled else _NOOP
        self.latency = provider.new_latency_metric(name) if self.enabled else _NOOP
        self.work_duration = provider.new_work_duration_metric(name) if self.enabled else _NOOP
        self.retries = provider.new_retries_metric(name) if self.enabled else _NOOP
        if self.enabled:
            provider.new_unfinished_work_seconds_metric(name, self.unfinished_work_seconds)
            provider.new_longest_running_processor_seconds_metric(
                name, self.longest_running_processor_seconds
            )

    def add(self, item: Hashable) -> None:
        if not self.enabled:
            return
        self.adds.inc()
        self.depth.inc()
        self._add_times.setdefault(item, self._clock.monotonic())

    def get(self, item: Hashable) -> None:
        if not self.enabled:
            return
        now = self._clock.monotonic()
        self.depth.dec()
        self._processing_start[item] = now
        added = self._add_times.pop(item, None)
        if added is not None:
            self.latency.observe(now - added)

    def done(self, item: Hashable) -> None:
        if not self.enabled:
            return
        start = self._processing_start.pop(item, None)
        if start is not None:
            self.work_duration.observe(self._clock.monotonic() - start)

    def retry(self) -> None:
        if self.enabled:
            self.retries.inc()

    def unfinished_work_seconds(self) -> float:
        now = self._clock.monotonic()
        return sum(now - t for t in self._processing_start.values())

    def longest_running_processor_seconds(self) -> float:
        if not self._processing_start:
            return 0.0
        return self._clock.monotonic() - min(self._processing_start.values())
