"""What the registry's helpers may ask of it: the registry's surface as Protocols and values.

`apply` (server-side apply) and `deletion` (delete, graceful deletion, garbage-collection
preconditions) are steps of the registry's own verbs, split out to keep each file one concept; they
take the registry as a `RegistryOps` so they depend on this narrow surface instead of importing the
registry module that imports them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .faults import Faults
from .resources import ResourceInfo
from .selectors import FieldSelector, LabelSelector
from .store import Entry, Store

Obj = dict[str, Any]


class Admission(Protocol):
    def mutating_configured(self) -> bool: ...

    async def mutate(
        self,
        op: str,
        info: ResourceInfo,
        sub: str,
        obj: Obj | None,
        old: Obj | None,
        dry_run: bool,
        prepare: Callable[[Obj], None] | None = None,
    ) -> Obj | None: ...
    async def validate(
        self, op: str, info: ResourceInfo, sub: str, obj: Obj | None, old: Obj | None, dry_run: bool
    ) -> None: ...


@dataclass
class ListResult:
    entries: list[Entry]
    rv: int
    continue_token: str
    remaining: int | None


class RegistryOps(Protocol):
    """The registry as `apply` and `deletion` use it (`registry.Registry` implements it)."""

    store: Store
    faults: Faults
    admission: Admission | None
    graceful_pod_deletion: bool

    def get(self, info: ResourceInfo, ns: str, name: str) -> Entry: ...

    def list_entries(
        self,
        info: ResourceInfo,
        ns: str,
        labels: LabelSelector = ...,
        fields: FieldSelector = ...,
        limit: int = 0,
        continue_token: str = "",
        exact_rv: int | None = None,
    ) -> ListResult: ...

    def commit(self, info: ResourceInfo, prev: Entry | None, obj: Obj) -> Entry: ...

    def remove(self, info: ResourceInfo, entry: Entry) -> Entry: ...

    def coerce(self, info: ResourceInfo, body: Any, ns: str) -> Obj: ...

    async def create(
        self,
        info: ResourceInfo,
        ns: str,
        body: Any,
        dry_run: bool = False,
        sub: str = "",
        system: bool = False,
        strict: bool = False,
    ) -> Entry: ...

    async def update_checked(
        self,
        info: ResourceInfo,
        ns: str,
        name: str,
        obj: Obj,
        sub: str,
        dry_run: bool,
        op: str = "UPDATE",
        strict: bool = False,
    ) -> Entry: ...
