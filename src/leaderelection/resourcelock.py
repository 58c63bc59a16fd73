"""The Lease lock (client-go `tools/leaderelection/resourcelock/leaselock.go`).

A `LeaderElectionRecord` is what the elector reads and writes; `LeaseLock` stores it in the spec of a
`coordination.k8s.io/v1` Lease. `get()` returns the record and its canonical raw bytes (the elector
compares raw records to notice change); `update()` writes over the Lease last read or created, so a
concurrent writer makes it fail with a 409 (optimistic concurrency): callers must `get`/`create`
first. Times are RFC 3339 MicroTime in UTC.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from ..apis.meta.objectmeta import format_micro_time, parse_micro_time
from ..client.rest import Resource
from ..client.versioned.resources import LEASES


@dataclass
class LeaderElectionRecord:
    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: float | None = None
    """Epoch seconds (on the elector's clock)."""
    renew_time: float | None = None
    leader_transitions: int = 0

    def raw(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode()


def lease_spec_to_record(spec: dict[str, Any]) -> LeaderElectionRecord:
    return LeaderElectionRecord(
        holder_identity=spec.get("holderIdentity") or "",
        lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
        acquire_time=parse_micro_time(spec.get("acquireTime")),
        renew_time=parse_micro_time(spec.get("renewTime")),
        leader_transitions=int(spec.get("leaseTransitions") or 0),
    )


def record_to_lease_spec(record: LeaderElectionRecord) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "holderIdentity": record.holder_identity,
        "leaseDurationSeconds": record.lease_duration_seconds,
        "leaseTransitions": record.leader_transitions,
    }
    if record.acquire_time is not None:
        spec["acquireTime"] = format_micro_time(record.acquire_time)
    if record.renew_time is not None:
        spec["renewTime"] = format_micro_time(record.renew_time)
    return spec


class ResourceLock(Protocol):
    async def get(self) -> tuple[LeaderElectionRecord, bytes]: ...

    async def create(self, record: LeaderElectionRecord) -> None: ...

    async def update(self, record: LeaderElectionRecord) -> None: ...

    def identity(self) -> str: ...

    def describe(self) -> str: ...


class LeaseClient(Protocol):
    """The REST client calls the lock needs (RESTClient satisfies it)."""

    async def get(
        self, res: Resource, name: str, namespace: str | None = None, subresource: str | None = None
    ) -> dict[str, Any]: ...

    async def create(
        self, res: Resource, body: Any, namespace: str | None = None
    ) -> dict[str, Any]: ...

    async def update(
        self, res: Resource, body: Any, namespace: str | None = None, subresource: str | None = None
    ) -> dict[str, Any]: ...


class LeaseLock:
    def __init__(self, client: LeaseClient, namespace: str, name: str, identity: str) -> None:
        if not identity:
            raise ValueError("lock identity must not be empty")
        self.client = client
        self.namespace = namespace
        self.name = name
        self._identity = identity
        self._lease: dict[str, Any] | None = None

    async def get(self) -> tuple[LeaderElectionRecord, bytes]:
        self._lease = await self.client.get(LEASES, self.name, self.namespace)
        record = lease_spec_to_record(self._lease.get("spec") or {})
        return record, record.raw()

    async def create(self, record: LeaderElectionRecord) -> None:
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": self.name, "namespace": self.namespace},
            "spec": record_to_lease_spec(record),
        }
        self._lease = await self.client.create(LEASES, body, self.namespace)

    async def update(self, record: LeaderElectionRecord) -> None:
        if self._lease is None:
            raise RuntimeError("lease not initialized, call get or create first")
        body = {**self._lease, "spec": record_to_lease_spec(record)}
        self._lease = await self.client.update(LEASES, body, self.namespace)

    def identity(self) -> str:
        return self._identity

    def describe(self) -> str:
        return f"{self.namespace}/{self.name}"
