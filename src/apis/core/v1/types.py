"""core/v1 Pods and Nodes (`k8s.io/api/core/v1`) as the controllers read them: typed, and only that.

These are read models, not the whole kinds: each struct declares exactly the fields some controller
reads (names as in Go, in Python case), and decoding drops every other field. An informer that
decodes into them (`StructDecoder(Pod)`) therefore caches only what its readers need, which is what
a trimming transform would keep: metadata (managedFields stripped by the informer's transform),
`spec.nodeName` and the status a GameServer's health depends on for a Pod; metadata,
`spec.unschedulable` and `status.addresses` for a Node. Never write one back: a full update from a
read model would drop the rest of the object; pods are written by create, delete and patches.
Absent or null parts read as empty through the kinds' methods (a server may send `null`).
"""

from __future__ import annotations

from msgspec import Struct, field

from ...meta.objectmeta import ObjectMeta


class PodIP(Struct, rename="camel", omit_defaults=True):
    ip: str | None = None


class PodCondition(Struct, rename="camel", omit_defaults=True):
    type: str | None = None
    status: str | None = None
    reason: str | None = None
    message: str | None = None


class ContainerStateTerminated(Struct, rename="camel", omit_defaults=True):
    exit_code: int | None = None
    reason: str | None = None


class ContainerStateRunning(Struct, rename="camel", omit_defaults=True):
    started_at: str | None = None


class ContainerState(Struct, rename="camel", omit_defaults=True):
    running: ContainerStateRunning | None = None
    terminated: ContainerStateTerminated | None = None


_NO_STATE = ContainerState()


class ContainerStatus(Struct, rename="camel", omit_defaults=True):
    name: str | None = None
    container_id: str | None = field(default=None, name="containerID")
    state: ContainerState | None = None
    last_state: ContainerState | None = None

    def running(self) -> bool:
        """The container runs now (Go: `State.Running != nil`)."""
        return (self.state or _NO_STATE).running is not None

    def terminated(self) -> bool:
        """The container's current state is Terminated (Go: `State.Terminated != nil`)."""
        return (self.state or _NO_STATE).terminated is not None

    def last_terminated(self) -> bool:
        """Its previous run ended (Go: `LastTerminationState.Terminated != nil`)."""
        return (self.last_state or _NO_STATE).terminated is not None


class PodSpec(Struct, rename="camel", omit_defaults=True):
    node_name: str | None = None


class PodStatus(Struct, rename="camel", omit_defaults=True):
    phase: str | None = None
    reason: str | None = None
    conditions: list[PodCondition] | None = None
    pod_ips: list[PodIP] | None = field(default=None, name="podIPs")
    container_statuses: list[ContainerStatus] | None = None


_NO_POD_SPEC, _NO_POD_STATUS = PodSpec(), PodStatus()


class Pod(Struct, rename="camel", omit_defaults=True):
    """Read with the methods: absent or null parts read as empty."""

    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: PodSpec | None = None
    status: PodStatus | None = None

    def node_name(self) -> str:
        return (self.spec or _NO_POD_SPEC).node_name or ""

    def phase(self) -> str:
        return (self.status or _NO_POD_STATUS).phase or ""

    def reason(self) -> str:
        return (self.status or _NO_POD_STATUS).reason or ""

    def conditions(self) -> list[PodCondition]:
        return (self.status or _NO_POD_STATUS).conditions or []

    def pod_ips(self) -> list[str]:
        return [ip.ip for ip in (self.status or _NO_POD_STATUS).pod_ips or [] if ip.ip]

    def container_status(self, name: str) -> ContainerStatus | None:
        for status in (self.status or _NO_POD_STATUS).container_statuses or []:
            if status.name == name:
                return status
        return None


class NodeAddress(Struct, rename="camel", omit_defaults=True):
    type: str | None = None
    address: str | None = None


class NodeSpec(Struct, rename="camel", omit_defaults=True):
    unschedulable: bool | None = None


class NodeStatus(Struct, rename="camel", omit_defaults=True):
    addresses: list[NodeAddress] | None = None


class Node(Struct, rename="camel", omit_defaults=True):
    """Read with the methods: absent or null parts read as empty."""

    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: NodeSpec | None = None
    status: NodeStatus | None = None

    def unschedulable(self) -> bool:
        return bool(self.spec is not None and self.spec.unschedulable)

    def addresses(self) -> list[tuple[str, str]]:
        """(type, address) of each of the node's addresses, in order."""
        found = self.status.addresses if self.status is not None else None
        return [(a.type or "", a.address or "") for a in found or []]
