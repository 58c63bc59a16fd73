"""Cache mutation detector (client-go `tools/cache/mutation_detector.go`).

Objects in an informer's cache are shared with every reader and must never be mutated. With
`AGONES_CACHE_MUTATION_DETECTOR=true` in the environment (or `enabled=True`), the informer keeps a
deep copy of every object it caches and `check()` (run on each resync check and on demand) raises
`CacheMutationError` naming the first key whose cached object no longer equals its copy. Costly:
for tests and debugging only.
"""

from __future__ import annotations

import copy
import os
from typing import Any


class CacheMutationError(AssertionError):
    pass


def enabled_by_env() -> bool:
    return os.environ.get("AGONES_CACHE_MUTATION_DETECTOR", "").lower() in ("1", "true")


class MutationDetector:
    def __init__(self, name: str, enabled: bool | None = None) -> None:
        self.name = name
        self.enabled = enabled_by_env() if enabled is None else enabled
        self._copies: dict[str, tuple[Any, Any]] = {}

    def add(self, key: str, obj: Any) -> None:
        if self.enabled:
            self._copies[key] = (obj, copy.deepcopy(obj))

    def forget(self, key: str) -> None:
        if self.enabled:
            self._copies.pop(key, None)

    def check(self) -> None:
        for key, (cached, original) in self._copies.items():
            if cached != original:
                raise CacheMutationError(
                    f"informer {self.name}: cached object {key} was mutated; copy before changing"
                )
