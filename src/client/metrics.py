"""Where the REST client and the reflectors report (client-go `tools/metrics`): a seam, no sinks.

`ClientMetrics` forwards each observation to the installed `ClientMetricsSink`, and does nothing
until one is installed (`ClientMetrics.sink = ...`; `agones.metrics.kubernetes_client.register`
installs the Prometheus one). Living below both, it lets the client and the informers report without
importing the metrics package, which itself builds on the work queue and the informers.
"""

from __future__ import annotations

from typing import Protocol


class ClientMetricsSink(Protocol):
    def request(self, verb: str, endpoint: str, status_code: int | str, seconds: float) -> None:
        """One HTTP request to the API server finished (any status)."""

    def list_done(self, seconds: float, items: int) -> None:
        """A reflector's list finished with `items` objects."""

    def watch_done(self, seconds: float, events: int, short: bool) -> None:
        """A reflector's watch ended after `events` events (`short`: under 1 s and empty)."""

    def last_resource_version(self, rv: str) -> None:
        """A reflector saw resourceVersion `rv`."""


class ClientMetrics:
    """The process-wide seam; each method is a no-op while no sink is installed."""

    sink: ClientMetricsSink | None = None

    @classmethod
    def request(cls, verb: str, endpoint: str, status_code: int | str, seconds: float) -> None:
        if cls.sink is not None:
            cls.sink.request(verb, endpoint, status_code, seconds)

    @classmethod
    def list_done(cls, seconds: float, items: int) -> None:
        if cls.sink is not None:
            cls.sink.list_done(seconds, items)

    @classmethod
    def watch_done(cls, seconds: float, events: int, short: bool) -> None:
        if cls.sink is not None:
            cls.sink.watch_done(seconds, events, short)

    @classmethod
    def last_resource_version(cls, rv: str) -> None:
        if cls.sink is not None:
            cls.sink.last_resource_version(rv)
