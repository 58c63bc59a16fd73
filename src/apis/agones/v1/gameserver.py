"""The GameServer resource (Go `pkg/apis/agones/v1/gameserver.go`): types, states and helpers.

Optional fields default to `UNSET` (absent on the wire); `spec.template` is the Pod template as raw
JSON, so fields this port does not model survive a round trip. Helpers mirror Agones' methods:
`is_before_ready`, `is_being_deleted`, `is_deletable`, `is_active`, port/container/address accessors
and the Counter/List updates allocation performs. Defaults and validation live in
`gameserver_validation`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Annotated, Any

from msgspec import UNSET, Struct, UnsetType

from ....featuregates import Feature, FeatureGates
from ...meta.objectmeta import ObjectMeta, Time
from ...meta.schema import crd
from ...scheduling import SchedulingStrategy
from .common import CounterAction, PriorityOrder, PriorityType

KIND = "GameServer"
DNS1123_LABEL_PATTERN = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


class GameServerState(enum.StrEnum):
    PORT_ALLOCATION = "PortAllocation"
    CREATING = "Creating"
    STARTING = "Starting"
    SCHEDULED = "Scheduled"
    REQUEST_READY = "RequestReady"
    READY = "Ready"
    SHUTDOWN = "Shutdown"
    ERROR = "Error"
    UNHEALTHY = "Unhealthy"
    RESERVED = "Reserved"
    ALLOCATED = "Allocated"


# States a GameServer never recovers from.
TERMINAL_GAME_SERVER_STATES = frozenset(
    {GameServerState.SHUTDOWN, GameServerState.ERROR, GameServerState.UNHEALTHY}
)
_BEFORE_READY = frozenset(
    {
        GameServerState.PORT_ALLOCATION,
        GameServerState.CREATING,
        GameServerState.STARTING,
        GameServerState.SCHEDULED,
        GameServerState.REQUEST_READY,
    }
)
_ACTIVE = frozenset({GameServerState.READY, GameServerState.RESERVED, GameServerState.ALLOCATED})


class PortPolicy(enum.StrEnum):
    # In the order of Agones' CRD enum, which its "supported values" messages list.
    DYNAMIC = "Dynamic"
    STATIC = "Static"
    PASSTHROUGH = "Passthrough"
    NONE = "None"


class Protocol(enum.StrEnum):
    UDP = "UDP"
    TCP = "TCP"
    TCPUDP = "TCPUDP"


class EvictionSafe(enum.StrEnum):
    ALWAYS = "Always"
    ON_UPGRADE = "OnUpgrade"
    NEVER = "Never"


class SdkServerLogLevel(enum.StrEnum):
    ERROR = "Error"
    INFO = "Info"
    DEBUG = "Debug"
    TRACE = "Trace"


DEFAULT_PORT_RANGE = "default"
ROLE_LABEL = "agones.dev/role"
GAME_SERVER_LABEL_ROLE = "gameserver"
GAME_SERVER_POD_LABEL = "agones.dev/gameserver"
GAME_SERVER_PORT_POLICY_POD_LABEL = "agones.dev/port"
GAME_SERVER_CONTAINER_ANNOTATION = "agones.dev/container"
DEV_ADDRESS_ANNOTATION = "agones.dev/dev-address"
GAME_SERVER_READY_CONTAINER_ID_ANNOTATION = "agones.dev/ready-container-id"
POD_SAFE_TO_EVICT_ANNOTATION = "cluster-autoscaler.kubernetes.io/safe-to-evict"
SAFE_TO_EVICT_LABEL = "agones.dev/safe-to-evict"
GAME_SERVER_ERRORED_AT_ANNOTATION = "agones.dev/errored-at"
FINALIZER_NAME = "agones.dev/controller"
PASSTHROUGH_PORT_ASSIGNMENT_ANNOTATION = "agones.dev/container-passthrough-port-assignment"
NODE_POD_IP = "PodIP"
LIST_MAX_CAPACITY = 1000

Port = Annotated[int, crd(minimum=1, maximum=65535)]


class GameServerPort(Struct, rename="camel", omit_defaults=True):
    name: str | UnsetType = UNSET
    range: str | UnsetType = UNSET
    port_policy: PortPolicy | UnsetType = UNSET
    container: Annotated[str, crd(go="ptr")] | UnsetType = UNSET
    container_port: Port | UnsetType = UNSET
    host_port: Port | UnsetType = UNSET
    protocol: Protocol | UnsetType = UNSET


class Health(Struct, rename="camel", omit_defaults=True):
    disabled: bool | UnsetType = UNSET
    period_seconds: Annotated[int, crd(minimum=0)] | UnsetType = UNSET
    failure_threshold: Annotated[int, crd(minimum=1)] | UnsetType = UNSET
    initial_delay_seconds: Annotated[int, crd(minimum=0)] | UnsetType = UNSET


class SdkServer(Struct, rename="camel", omit_defaults=True):
    log_level: SdkServerLogLevel | UnsetType = UNSET
    grpc_port: Port | UnsetType = UNSET
    http_port: Port | UnsetType = UNSET


class PlayersSpec(Struct, rename="camel", omit_defaults=True):
    initial_capacity: Annotated[int, crd(minimum=0)] | UnsetType = UNSET


class Eviction(Struct, rename="camel", omit_defaults=True):
    safe: EvictionSafe | UnsetType = UNSET


class CounterStatus(Struct, rename="camel", omit_defaults=True):
    count: Annotated[int, crd(go="always", default=0, minimum=0)] | UnsetType = UNSET
    capacity: Annotated[int, crd(go="always", default=1000, minimum=0)] | UnsetType = UNSET


class ListStatus(Struct, rename="camel", omit_defaults=True):
    capacity: (
        Annotated[int, crd(go="always", default=1000, minimum=0, maximum=LIST_MAX_CAPACITY)]
        | UnsetType
    ) = UNSET
    values: (
        Annotated[list[str], crd(go="always", default=[], list_type="set", max_items=1000)]
        | UnsetType
    ) = UNSET


class GameServerSpec(Struct, rename="camel", omit_defaults=True):
    container: Annotated[str, crd(max_length=63, pattern=DNS1123_LABEL_PATTERN)] | UnsetType = UNSET
    ports: list[GameServerPort] | UnsetType | None = UNSET
    health: Annotated[Health, crd(go="value")] | UnsetType = UNSET
    scheduling: SchedulingStrategy | UnsetType = UNSET
    sdk_server: Annotated[SdkServer, crd(go="value")] | UnsetType = UNSET
    template: Annotated[dict[str, Any], crd(required=True, preserve_unknown=True)] | UnsetType = (
        UNSET
    )
    players: Annotated[PlayersSpec, crd(go="ptr")] | UnsetType | None = UNSET
    counters: Annotated[dict[str, CounterStatus], crd(max_properties=1000)] | UnsetType = UNSET
    lists: Annotated[dict[str, ListStatus], crd(max_properties=1000)] | UnsetType = UNSET
    eviction: Annotated[Eviction, crd(go="ptr")] | UnsetType | None = UNSET
    immutable_replicas: (
        Annotated[int, crd(go="absent", default=1, minimum=1, maximum=1)] | UnsetType
    ) = UNSET

    def containers(self) -> list[dict[str, Any]]:
        """The pod template's containers (raw JSON); empty when absent or malformed."""
        return _containers(self.template, "containers")

    def init_containers(self) -> list[dict[str, Any]]:
        return _containers(self.template, "initContainers")

    def find_container(self, name: str) -> tuple[int, dict[str, Any]]:
        """Index and JSON of the named container; `ValueError` with Agones' text when absent."""
        for i, c in enumerate(self.containers()):
            if c.get("name") == name:
                return i, c
        raise ValueError(f"Could not find a container named {name}")

    def find_sidecar_init_container(self, name: str) -> tuple[int, dict[str, Any]] | None:
        """A native sidecar: an init container with `restartPolicy: Always`."""
        for i, c in enumerate(self.init_containers()):
            if c.get("name") == name and c.get("restartPolicy") == "Always":
                return i, c
        return None

    def template_annotations(self) -> dict[str, str]:
        meta = self.template.get("metadata") if isinstance(self.template, dict) else None
        annotations = meta.get("annotations") if isinstance(meta, dict) else None
        return annotations if isinstance(annotations, dict) else {}


def _containers(template: Any, key: str) -> list[dict[str, Any]]:
    spec = template.get("spec") if isinstance(template, dict) else None
    items = spec.get(key) if isinstance(spec, dict) else None
    if not isinstance(items, list):
        return []
    return [c for c in items if isinstance(c, dict)]


class GameServerStatusPort(Struct, rename="camel", omit_defaults=True):
    name: str | UnsetType = UNSET
    port: Annotated[int, crd(go="always")] | UnsetType = UNSET


class NodeAddress(Struct, rename="camel", omit_defaults=True):
    """A `corev1.NodeAddress` (`Hostname`, `InternalIP`, `ExternalIP`, ... or Agones' `PodIP`)."""

    type: Annotated[str, crd(go="always")] | UnsetType = UNSET
    address: Annotated[str, crd(go="always")] | UnsetType = UNSET


class PlayerStatus(Struct, rename="camel", omit_defaults=True):
    count: Annotated[int, crd(go="always")] | UnsetType = UNSET
    capacity: Annotated[int, crd(go="always")] | UnsetType = UNSET
    ids: Annotated[list[str], crd(go="always")] | UnsetType | None = UNSET


class GameServerStatus(Struct, rename="camel", omit_defaults=True):
    state: Annotated[GameServerState, crd(go="always")] | UnsetType = UNSET
    ports: Annotated[list[GameServerStatusPort], crd(go="always")] | UnsetType | None = UNSET
    address: Annotated[str, crd(go="always")] | UnsetType = UNSET
    addresses: Annotated[list[NodeAddress], crd(go="always")] | UnsetType | None = UNSET
    node_name: Annotated[str, crd(go="always")] | UnsetType = UNSET
    reserved_until: Annotated[Time, crd(go="always")] | UnsetType | None = UNSET
    players: Annotated[PlayerStatus, crd(go="always")] | UnsetType | None = UNSET
    counters: Annotated[dict[str, CounterStatus], crd(max_properties=1000)] | UnsetType = UNSET
    lists: Annotated[dict[str, ListStatus], crd(max_properties=1000)] | UnsetType = UNSET
    eviction: Annotated[Eviction, crd(go="ptr")] | UnsetType | None = UNSET
    immutable_replicas: (
        Annotated[int, crd(go="absent", default=1, minimum=1, maximum=1)] | UnsetType
    ) = UNSET


class GameServer(Struct, rename="camel", omit_defaults=True):
    api_version: str | UnsetType = UNSET
    kind: str | UnsetType = UNSET
    metadata: Annotated[ObjectMeta, crd(go="value")] | UnsetType = UNSET
    spec: Annotated[GameServerSpec, crd(go="value")] | UnsetType = UNSET
    status: Annotated[GameServerStatus, crd(go="value")] | UnsetType = UNSET

    # -- typed access (absent sub-objects read as empty) ----------------------------------

    @property
    def meta(self) -> ObjectMeta:
        """`metadata`, attached (created empty) if it was absent."""
        if self.metadata is UNSET:
            self.metadata = ObjectMeta()
        return self.metadata

    @property
    def gs_spec(self) -> GameServerSpec:
        if self.spec is UNSET:
            self.spec = GameServerSpec()
        return self.spec

    @property
    def gs_status(self) -> GameServerStatus:
        if self.status is UNSET:
            self.status = GameServerStatus()
        return self.status

    def state(self) -> GameServerState | None:
        if self.status is UNSET or self.status.state is UNSET:
            return None
        return self.status.state

    def ports(self) -> list[GameServerPort]:
        if self.spec is UNSET or not isinstance(self.spec.ports, list):
            return []
        return self.spec.ports

    # -- lifecycle --------------------------------------------------------------------------

    def is_deletable(self) -> bool:
        """False while Allocated or Reserved, unless deletion has already started."""
        if self.state() in (GameServerState.ALLOCATED, GameServerState.RESERVED):
            return self.metadata is not UNSET and self.metadata.is_being_deleted()
        return True

    def is_being_deleted(self) -> bool:
        deleting = self.metadata is not UNSET and self.metadata.is_being_deleted()
        return deleting or self.state() == GameServerState.SHUTDOWN

    def is_before_ready(self) -> bool:
        return self.state() in _BEFORE_READY

    def is_active(self) -> bool:
        """Ready, Reserved or Allocated."""
        return self.state() in _ACTIVE

    # -- ports, addresses, dev mode -------------------------------------------------------

    def get_dev_address(self) -> tuple[str, bool]:
        annotations = self.metadata.get_annotations() if self.metadata is not UNSET else {}
        if DEV_ADDRESS_ANNOTATION in annotations:
            return annotations[DEV_ADDRESS_ANNOTATION], True
        return "", False

    def has_port_policy(self, policy: PortPolicy) -> bool:
        return any(p.port_policy == policy for p in self.ports())

    def count_ports(self, match: Callable[[PortPolicy | None], bool]) -> int:
        return sum(1 for p in self.ports() if match(_policy(p)))

    def count_ports_for_range(self, name: str, match: Callable[[PortPolicy | None], bool]) -> int:
        return sum(1 for p in self.ports() if p.range == name and match(_policy(p)))

    def status_address(self) -> str:
        if self.status is UNSET or not isinstance(self.status.address, str):
            return ""
        return self.status.address

    def status_ports(self) -> list[GameServerStatusPort]:
        if self.status is UNSET or not isinstance(self.status.ports, list):
            return []
        return self.status.ports

    def status_port(self, name: str) -> int | None:
        """The published port of the named port, from status."""
        for p in self.status_ports():
            if p.name == name and isinstance(p.port, int):
                return p.port
        return None

    def node_name(self) -> str:
        if self.status is UNSET or not isinstance(self.status.node_name, str):
            return ""
        return self.status.node_name

    # -- counters and lists (allocation actions) --------------------------------------------

    def _name(self) -> str:
        return self.metadata.get_name() if self.metadata is not UNSET else ""

    def _counters(self) -> dict[str, CounterStatus]:
        return (
            self.status.counters
            if self.status is not UNSET and self.status.counters is not UNSET
            else {}
        )

    def _lists(self) -> dict[str, ListStatus]:
        return (
            self.status.lists if self.status is not UNSET and self.status.lists is not UNSET else {}
        )

    def update_count(self, name: str, action: str, amount: int) -> None:
        """Increment or decrement a status Counter, clamped to [0, capacity]; `ValueError` else."""
        prefix = f"unable to UpdateCount with Name {name}, Action {action}, Amount {amount}."
        if action not in (CounterAction.INCREMENT, CounterAction.DECREMENT):
            raise ValueError(
                f"{prefix} Allocation action must be one of {CounterAction.INCREMENT} or "
                f"{CounterAction.DECREMENT}"
            )
        if amount < 0:
            raise ValueError(f"{prefix} Amount must be greater than 0")
        counter = self._counters().get(name)
        if counter is None:
            raise ValueError(f"{prefix} Counter not found in GameServer {self._name()}")
        count = _int(counter.count)
        count = count + amount if action == CounterAction.INCREMENT else count - amount
        counter.count = max(0, min(count, _int(counter.capacity)))

    def update_counter_capacity(self, name: str, capacity: int) -> None:
        prefix = f"unable to UpdateCounterCapacity: Name {name}, Capacity {capacity}."
        if capacity < 0:
            raise ValueError(f"{prefix} Capacity must be greater than or equal to 0")
        counter = self._counters().get(name)
        if counter is None:
            raise ValueError(f"{prefix} Counter not found in GameServer {self._name()}")
        counter.capacity = capacity
        counter.count = min(_int(counter.count), capacity)

    def update_list_capacity(self, name: str, capacity: int) -> None:
        prefix = f"unable to UpdateListCapacity: Name {name}, Capacity {capacity}."
        if not 0 <= capacity <= LIST_MAX_CAPACITY:
            raise ValueError(f"{prefix} Capacity must be between 0 and 1000, inclusive")
        lst = self._lists().get(name)
        if lst is None:
            raise ValueError(f"{prefix} List not found in GameServer {self._name()}")
        lst.capacity = capacity
        if isinstance(lst.values, list) and len(lst.values) > capacity:
            lst.values = lst.values[:capacity]

    def append_list_values(self, name: str, values: list[str]) -> None:
        """Append values not already present, then truncate to capacity (duplicates dropped)."""
        lst = self._lists().get(name)
        if lst is None:
            raise ValueError(
                f"unable to AppendListValues: Name {name}, Values {values}. List not found in "
                f"GameServer {self._name()}"
            )
        merged = merge_remove_duplicates(_strs(lst.values), values)
        lst.values = merged[: _int(lst.capacity)]

    def delete_list_values(self, name: str, values: list[str]) -> None:
        lst = self._lists().get(name)
        if lst is None:
            raise ValueError(
                f"unable to DeleteListValues: Name {name}, Values {values}. List not found in "
                f"GameServer {self._name()}"
            )
        drop = set(values)
        lst.values = [v for v in _strs(lst.values) if v not in drop]

    def compare_count_and_list_priorities(
        self, priorities: list[Any], other: GameServer
    ) -> bool | None:
        """True if self sorts before other by the first priority that tells them apart."""
        for priority in priorities:
            res = self._compare_priority(priority, other)
            if res is not None:
                return (not res) if priority.order == PriorityOrder.DESCENDING else res
        return None

    def _available(self, ptype: Any, key: str) -> int | None:
        if ptype == PriorityType.COUNTER:
            c = self._counters().get(key)
            return None if c is None else _int(c.capacity) - _int(c.count)
        if ptype == PriorityType.LIST:
            lst = self._lists().get(key)
            return None if lst is None else _int(lst.capacity) - len(_strs(lst.values))
        return None

    def _compare_priority(self, p: Any, other: GameServer) -> bool | None:
        key = p.key if isinstance(p.key, str) else ""
        mine, theirs = self._available(p.type, key), other._available(p.type, key)
        if mine is not None and theirs is not None:
            return None if mine == theirs else mine < theirs
        ascending = p.order == PriorityOrder.ASCENDING
        descending = p.order == PriorityOrder.DESCENDING
        # Only one has the key: prefer it (nil sorts last ascending, first descending).
        if (mine is not None and descending) or (theirs is not None and ascending):
            return False
        if (mine is not None and ascending) or (theirs is not None and descending):
            return True
        return None


def _policy(p: GameServerPort) -> PortPolicy | None:
    return p.port_policy if p.port_policy is not UNSET else None


def _int(v: int | UnsetType) -> int:
    return v if isinstance(v, int) else 0


def _strs(v: list[str] | UnsetType) -> list[str]:
    return v if isinstance(v, list) else []


def merge_remove_duplicates(first: list[str], second: list[str]) -> list[str]:
    """Concatenate keeping the first occurrence of each value (Go `MergeRemoveDuplicates`)."""
    seen: set[str] = set()
    out: list[str] = []
    for v in [*first, *second]:
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


def port_status(port: GameServerPort, gates: FeatureGates) -> GameServerStatusPort:
    """The status entry for a spec port: hostPort, or containerPort for policy None."""
    if gates.enabled(Feature.PORT_POLICY_NONE) and port.port_policy == PortPolicy.NONE:
        return GameServerStatusPort(name=port.name, port=_int(port.container_port))
    return GameServerStatusPort(name=port.name, port=_int(port.host_port))


class GameServerTemplateSpec(Struct, rename="camel", omit_defaults=True):
    """A GameServer template (metadata + spec), as GameServerSets and Fleets hold it."""

    metadata: Annotated[ObjectMeta, crd(go="value")] | UnsetType = UNSET
    spec: Annotated[GameServerSpec, crd(go="value", required=True)] | UnsetType = UNSET
