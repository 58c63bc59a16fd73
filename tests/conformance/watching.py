"""A watch consumed on a background thread, so tests can write and then wait for events."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from tests.cluster import Api


class WatchCollector:
    def __init__(self, api: Api, path: str, timeout: float = 60.0, **query: Any) -> None:
        self.events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self.ended = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(api, path, timeout, query), daemon=True
        )
        self._thread.start()

    def _run(self, api: Api, path: str, timeout: float, query: dict[str, Any]) -> None:
        try:
            for event in api.watch(path, timeout=timeout, **query):
                self.events.put(event)
        except BaseException as err:
            self.error = err
        finally:
            self.ended.set()
            self.events.put(None)

    def next(self, timeout: float = 10.0) -> dict[str, Any] | None:
        """The next event, or None once the stream has ended."""
        event = self.events.get(timeout=timeout)
        if event is not None:
            self.seen.append(event)
        return event

    def wait_for(
        self, match: Callable[[dict[str, Any]], bool], timeout: float = 10.0
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(
                    f"no matching watch event; saw {[(e['type'], e['object'].get('metadata', {}).get('name')) for e in self.seen]}"
                )
            try:
                event = self.next(remaining)
            except queue.Empty:
                continue
            if event is None:
                raise AssertionError(
                    f"watch ended; saw {[(e['type'], e['object'].get('metadata', {}).get('name')) for e in self.seen]}"
                )
            if match(event):
                return event


def is_event(kind: str, name: str) -> Callable[[dict[str, Any]], bool]:
    return lambda e: e["type"] == kind and e["object"].get("metadata", {}).get("name") == name
