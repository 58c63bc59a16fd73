"""GameServerAllocation (`allocation.agones.dev/v1`) types, defaults, conversion and selector
matching (Go `pkg/apis/allocation/v1/gameserverallocation.go`).

GameServerAllocation is not stored: the allocation endpoint decodes the request with Go's JSON,
defaults and validates it, allocates, and answers with the whole object Go-encoded. So:

* string-valued choices (`scheduling`, `gameServerState`, priority `type`/`order`, counter
  `action`) are plain strings on the wire, because bad values must reach `validate` and get
  Agones' own messages (there is no CRD enum in front);
* `apply_defaults` does what `ApplyDefaults` does (`scheduling: Packed`, priority order
  `Ascending`, `gameServerState: Ready` on every selector in use, `players: {}` with
  PlayerAllocationFilter) and then re-encodes the spec as Go would (`required: {}`,
  `multiClusterSetting: {policySelector: {}}`, `metadata: {}`, `players.minAvailable: 0` dropped);
* `converter` is Go's `Converter`: without `selectors`, `selectors = preferred… + required`,
  both deprecated fields kept as given;
* `GameServerSelector.matches(gs, gates)` is the allocator's filter; `sort_key(gsa)` tells which
  requests can share one sorted candidate list (Go `SortKey`).
"""

from __future__ import annotations

import copy
import enum
from collections.abc import Callable
from typing import Annotated, Any

from msgspec import UNSET, Struct, UnsetType

from ....featuregates import Feature, FeatureGates
from ...agones.v1.gameserver import (
    CounterStatus,
    GameServer,
    GameServerStatus,
    GameServerStatusPort,
    ListStatus,
    NodeAddress,
)
from ...meta import schema
from ...meta.labelselector import LabelSelector, SelectorError, label_selector_as_selector
from ...meta.objectmeta import ObjectMeta
from ...meta.schema import crd

GROUP = "allocation.agones.dev"
VERSION = "v1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "GameServerAllocation"

GAME_SERVER_STATE_READY = "Ready"
GAME_SERVER_STATE_ALLOCATED = "Allocated"
SCHEDULING_PACKED = "Packed"
SCHEDULING_DISTRIBUTED = "Distributed"
PRIORITY_COUNTER = "Counter"
PRIORITY_LIST = "List"
PRIORITY_ASCENDING = "Ascending"
PRIORITY_DESCENDING = "Descending"


class GameServerAllocationState(enum.StrEnum):
    ALLOCATED = "Allocated"
    UN_ALLOCATED = "UnAllocated"
    CONTENTION = "Contention"


class PlayerSelector(Struct, rename="camel", omit_defaults=True):
    """Free player slots wanted (gate PlayerAllocationFilter); `maxAvailable: 0` means no filter."""

    min_available: int | UnsetType = UNSET
    max_available: int | UnsetType = UNSET


class CounterSelector(Struct, rename="camel", omit_defaults=True):
    """Bounds on a Counter's count and available capacity; a max of 0 means unbounded."""

    min_count: Annotated[int, crd(go="always")] | UnsetType = UNSET
    max_count: Annotated[int, crd(go="always")] | UnsetType = UNSET
    min_available: Annotated[int, crd(go="always")] | UnsetType = UNSET
    max_available: Annotated[int, crd(go="always")] | UnsetType = UNSET


class ListSelector(Struct, rename="camel", omit_defaults=True):
    """Bounds on a List's available capacity, and a value it must contain ("" = any)."""

    contains_value: Annotated[str, crd(go="always")] | UnsetType = UNSET
    min_available: Annotated[int, crd(go="always")] | UnsetType = UNSET
    max_available: Annotated[int, crd(go="always")] | UnsetType = UNSET


_EMPTY_META = ObjectMeta()


def _get(value: Any, default: Any) -> Any:
    return default if value is UNSET or value is None else value


class GameServerSelector(LabelSelector, rename="camel", omit_defaults=True):
    """A label selector (inline) plus state, player, counter and list filters."""

    game_server_state: Annotated[str, crd(go="ptr")] | UnsetType | None = UNSET
    players: Annotated[PlayerSelector, crd(go="ptr")] | UnsetType | None = UNSET
    counters: dict[str, CounterSelector] | UnsetType | None = UNSET
    lists: dict[str, ListSelector] | UnsetType | None = UNSET

    def apply_defaults(self, gates: FeatureGates) -> None:
        """`GameServerSelector.ApplyDefaults`."""
        if self.game_server_state is UNSET or self.game_server_state is None:
            self.game_server_state = GAME_SERVER_STATE_READY
        if gates.enabled(Feature.PLAYER_ALLOCATION_FILTER) and not isinstance(
            self.players, PlayerSelector
        ):
            self.players = PlayerSelector()
        # Go also makes empty counters/lists maps here; they are omitempty, so nothing shows.

    def matches(self, gs: GameServer, gates: FeatureGates) -> bool:
        """`GameServerSelector.Matches`; the selector must have passed validation."""
        return self.matcher(gates)(gs)

    def matcher(self, gates: FeatureGates) -> Callable[[GameServer], bool]:
        """`matches` with the label selector parsed once (for scanning many GameServers)."""
        try:
            selector = label_selector_as_selector(self)
        except SelectorError:
            raise ValueError("GameServerSelector.validate() must pass before matches()") from None

        state = self.game_server_state if isinstance(self.game_server_state, str) else None

        def match(gs: GameServer) -> bool:
            # The state first: it is the cheap test, and the one Allocated servers fail when a
            # Packed list (Allocated first) is scanned for a Ready one.
            status = gs.status
            if state is not None and (
                not isinstance(status, GameServerStatus) or _get(status.state, "") != state
            ):
                return False
            metadata = gs.metadata if isinstance(gs.metadata, ObjectMeta) else _EMPTY_META
            if not selector.matches(metadata.get_labels()):
                return False
            return self._match_rest(gs, gates)

        return match

    def _match_rest(self, gs: GameServer, gates: FeatureGates) -> bool:
        status = gs.status if isinstance(gs.status, GameServerStatus) else GameServerStatus()
        state = self.game_server_state
        if isinstance(state, str) and _get(status.state, "") != state:
            return False
        if gates.enabled(Feature.PLAYER_ALLOCATION_FILTER):
            players = self.players
            gs_players = status.players
            if (
                isinstance(players, PlayerSelector)
                and gs_players is not UNSET
                and gs_players is not None
                and _get(players.max_available, 0) != 0
            ):
                available = _get(gs_players.capacity, 0) - _get(gs_players.count, 0)
                if not _get(players.min_available, 0) <= available <= players.max_available:
                    return False
        if gates.enabled(Feature.COUNTS_AND_LISTS):
            if self.counters and not self._match_counters(status):
                return False
            if self.lists and not self._match_lists(status):
                return False
        return True

    def _match_counters(self, status: GameServerStatus) -> bool:
        counters = status.counters
        if not isinstance(counters, dict):
            return False
        assert isinstance(self.counters, dict)
        for name, sel in self.counters.items():
            counter = counters.get(name)
            if counter is None:
                return False
            count, capacity = _get(counter.count, 0), _get(counter.capacity, 0)
            available = capacity - count
            max_available = _get(sel.max_available, 0)
            if available < _get(sel.min_available, 0) or (
                max_available != 0 and available > max_available
            ):
                return False
            max_count = _get(sel.max_count, 0)
            if count < _get(sel.min_count, 0) or (max_count != 0 and count > max_count):
                return False
        return True

    def _match_lists(self, status: GameServerStatus) -> bool:
        lists = status.lists
        if not isinstance(lists, dict):
            return False
        assert isinstance(self.lists, dict)
        for name, sel in self.lists.items():
            found = lists.get(name)
            if found is None:
                return False
            values = _get(found.values, [])
            available = _get(found.capacity, 0) - len(values)
            max_available = _get(sel.max_available, 0)
            if available < _get(sel.min_available, 0) or (
                max_available != 0 and available > max_available
            ):
                return False
            contains = _get(sel.contains_value, "")
            if contains and contains not in values:
                return False
        return True


class Priority(Struct, rename="camel", omit_defaults=True):
    """Sort order tie-breaker: by a Counter's or List's available capacity (Go `agonesv1.Priority`)."""

    type: Annotated[str, crd(go="always")] | UnsetType = UNSET
    key: Annotated[str, crd(go="always")] | UnsetType = UNSET
    order: Annotated[str, crd(go="always")] | UnsetType = UNSET


class MultiClusterSetting(Struct, rename="camel", omit_defaults=True):
    """Allocate through GameServerAllocationPolicies (selected by `policySelector`) when enabled."""

    enabled: bool | UnsetType = UNSET
    policy_selector: Annotated[LabelSelector, crd(go="value")] | UnsetType = UNSET


class MetaPatch(Struct, rename="camel", omit_defaults=True):
    """Labels and annotations added to the GameServer on allocation."""

    labels: dict[str, str] | UnsetType | None = UNSET
    annotations: dict[str, str] | UnsetType | None = UNSET


class CounterAction(Struct, rename="camel", omit_defaults=True):
    """Increment/Decrement a Counter by `amount`, and/or set its `capacity`, on allocation."""

    action: Annotated[str, crd(go="ptr")] | UnsetType | None = UNSET
    amount: Annotated[int, crd(go="ptr")] | UnsetType | None = UNSET
    capacity: Annotated[int, crd(go="ptr")] | UnsetType | None = UNSET

    def counter_actions(self, counter: str, gs: GameServer) -> list[str]:
        """Go `CounterActions`: capacity first, then the action; the errors, none fatal."""
        errs: list[str] = []
        if isinstance(self.capacity, int):
            _collect(errs, gs.update_counter_capacity, counter, self.capacity)
        if isinstance(self.action, str) and isinstance(self.amount, int):
            _collect(errs, gs.update_count, counter, self.action, self.amount)
        return errs


class ListAction(Struct, rename="camel", omit_defaults=True):
    """Add/delete List values and/or set its `capacity`, on allocation."""

    add_values: list[str] | UnsetType | None = UNSET
    delete_values: list[str] | UnsetType | None = UNSET
    capacity: Annotated[int, crd(go="ptr")] | UnsetType | None = UNSET

    def list_actions(self, name: str, gs: GameServer) -> list[str]:
        """Go `ListActions`: capacity, then deletions, then additions; the errors, none fatal."""
        errs: list[str] = []
        if isinstance(self.capacity, int):
            _collect(errs, gs.update_list_capacity, name, self.capacity)
        if self.delete_values:
            _collect(errs, gs.delete_list_values, name, list(self.delete_values))
        if self.add_values:
            _collect(errs, gs.append_list_values, name, list(self.add_values))
        return errs


def _collect(errs: list[str], action: Any, *args: Any) -> None:
    try:
        action(*args)
    except ValueError as err:
        errs.append(str(err))


class GameServerAllocationSpec(Struct, rename="camel", omit_defaults=True):
    multi_cluster_setting: Annotated[MultiClusterSetting, crd(go="value")] | UnsetType = UNSET
    # Deprecated: use `selectors`; ignored when `selectors` is set.
    required: Annotated[GameServerSelector, crd(go="value")] | UnsetType = UNSET
    # Deprecated: use `selectors`; ignored when `selectors` is set.
    preferred: list[GameServerSelector] | UnsetType | None = UNSET
    priorities: list[Priority] | UnsetType | None = UNSET
    selectors: list[GameServerSelector] | UnsetType | None = UNSET
    scheduling: Annotated[str, crd(go="always")] | UnsetType = UNSET
    metadata: Annotated[MetaPatch, crd(go="value")] | UnsetType = UNSET
    counters: dict[str, CounterAction] | UnsetType | None = UNSET
    lists: dict[str, ListAction] | UnsetType | None = UNSET


class GameServerMetadata(Struct, rename="camel", omit_defaults=True):
    labels: dict[str, str] | UnsetType | None = UNSET
    annotations: dict[str, str] | UnsetType | None = UNSET


class GameServerAllocationStatus(Struct, rename="camel", omit_defaults=True):
    """The outcome: state, and for Allocated the GameServer's name, address, ports and metadata."""

    state: Annotated[str, crd(go="always")] | UnsetType = UNSET
    game_server_name: Annotated[str, crd(go="always")] | UnsetType = UNSET
    ports: list[GameServerStatusPort] | UnsetType | None = UNSET
    address: str | UnsetType = UNSET
    addresses: list[NodeAddress] | UnsetType | None = UNSET
    node_name: str | UnsetType = UNSET
    # "local", or the endpoint of the remote allocator that served a multi-cluster allocation.
    source: Annotated[str, crd(go="always")] | UnsetType = UNSET
    metadata: Annotated[GameServerMetadata, crd(go="ptr")] | UnsetType | None = UNSET
    counters: dict[str, CounterStatus] | UnsetType | None = UNSET
    lists: dict[str, ListStatus] | UnsetType | None = UNSET


class GameServerAllocation(Struct, rename="camel", omit_defaults=True):
    api_version: str | UnsetType = UNSET
    kind: str | UnsetType = UNSET
    metadata: ObjectMeta | UnsetType = UNSET
    spec: Annotated[GameServerAllocationSpec, crd(go="value")] | UnsetType = UNSET
    status: Annotated[GameServerAllocationStatus, crd(go="value")] | UnsetType = UNSET


class GameServerAllocationList(Struct, rename="camel", omit_defaults=True):
    api_version: str | UnsetType = UNSET
    kind: str | UnsetType = UNSET
    metadata: dict[str, Any] | UnsetType = UNSET
    items: list[GameServerAllocation] | UnsetType = UNSET


def spec_of(gsa: GameServerAllocation) -> GameServerAllocationSpec:
    """The spec, created empty if absent (Go's zero value)."""
    if not isinstance(gsa.spec, GameServerAllocationSpec):
        gsa.spec = GameServerAllocationSpec()
    return gsa.spec


def apply_defaults(gsa: GameServerAllocation, gates: FeatureGates) -> None:
    """`GameServerAllocation.ApplyDefaults`, then the spec as Go re-encodes it; in place."""
    spec = spec_of(gsa)
    if not spec.scheduling:
        spec.scheduling = SCHEDULING_PACKED
    for priority in spec.priorities or []:
        if not priority.order:
            priority.order = PRIORITY_ASCENDING
    if not spec.selectors:
        if not isinstance(spec.required, GameServerSelector):
            spec.required = GameServerSelector()
        spec.required.apply_defaults(gates)
        for selector in spec.preferred or []:
            selector.apply_defaults(gates)
    else:
        for selector in spec.selectors:
            selector.apply_defaults(gates)
    schema.go_roundtrip(spec)


def converter(gsa: GameServerAllocation) -> None:
    """Go's `Converter`: without `selectors`, they become `preferred…` then `required`."""
    spec = spec_of(gsa)
    if not spec.selectors:
        selectors = [copy.deepcopy(s) for s in spec.preferred or []]
        required = spec.required if isinstance(spec.required, GameServerSelector) else None
        selectors.append(copy.deepcopy(required) if required else GameServerSelector())
        spec.selectors = selectors


SortKey = tuple[str, tuple[tuple[str, str, str], ...]]


def sort_key(gsa: GameServerAllocation) -> SortKey:
    """What Go's `SortKey` hashes: scheduling and priorities (all else is `hash:"ignore"`).

    Requests with equal keys can share one sorted list of GameServers in the batching allocator.
    """
    spec = (
        gsa.spec if isinstance(gsa.spec, GameServerAllocationSpec) else GameServerAllocationSpec()
    )
    priorities = tuple(
        (_get(p.type, ""), _get(p.key, ""), _get(p.order, "")) for p in spec.priorities or []
    )
    return (_get(spec.scheduling, ""), priorities)
