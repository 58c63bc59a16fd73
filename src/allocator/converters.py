"""Conversions between the allocation proto and GameServerAllocation (Agones
`pkg/allocation/converters/converter.go`).

* `convert_allocation_request_to_gsa(request, gates)`: what the allocator service allocates. Every
  converted selector names its state (the proto enum's zero is READY); players only with
  PlayerAllocationFilter, priorities, counters and lists (of selectors and actions) only with
  CountsAndLists; `metadata` wins over the deprecated `metaPatch`; an absent message stays absent.
* `convert_gsa_to_allocation_request(gsa, gates)`: what a multi-cluster allocation forwards to a
  remote allocator: the selectors, also written as deprecated preferred (all but the last) and
  required (the last), and metadata written twice (`metadata` and `metaPatch`), so an allocator
  of an older Agones reads the same request.
* `convert_gsa_to_allocation_response(gsa, unallocated_code, gates)` raises `AllocationStatusError`
  for UnAllocated (the configured code, ResourceExhausted for 429), Contention (Aborted) and any
  other state (Unknown); `convert_allocation_response_to_gsa(response, source, gates)` is the
  reverse, for the answer of a remote allocator.
"""

from __future__ import annotations

from collections.abc import Mapping

import grpc
from google.protobuf import wrappers_pb2
from msgspec import UNSET, UnsetType

from ..apis.agones.v1.gameserver import (
    CounterStatus,
    GameServerStatusPort,
    ListStatus,
    NodeAddress,
)
from ..apis.allocation.v1 import (
    API_VERSION,
    KIND,
    CounterAction,
    CounterSelector,
    GameServerAllocation,
    GameServerAllocationSpec,
    GameServerAllocationState,
    GameServerAllocationStatus,
    GameServerMetadata,
    GameServerSelector,
    ListAction,
    ListSelector,
    MetaPatch,
    MultiClusterSetting,
    PlayerSelector,
    Priority,
)
from ..apis.allocation.v1.gameserverallocation import (
    GAME_SERVER_STATE_ALLOCATED,
    GAME_SERVER_STATE_READY,
    PRIORITY_ASCENDING,
    PRIORITY_COUNTER,
    PRIORITY_DESCENDING,
    PRIORITY_LIST,
    SCHEDULING_DISTRIBUTED,
    SCHEDULING_PACKED,
)
from ..apis.meta.labelselector import LabelSelector
from ..apis.meta.objectmeta import ObjectMeta
from ..featuregates import Feature, FeatureGates
from .proto import allocation_pb2 as pb

UNALLOCATED_MESSAGE = "there is no available GameServer to allocate"
CONTENTION_MESSAGE = "too many concurrent requests have overwhelmed the system"


class AllocationStatusError(Exception):
    """A gRPC status for an allocation that did not allocate (Go `status.Error`)."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _labels(values: Mapping[str, str]) -> dict[str, str] | UnsetType:
    """A proto map as Go reads it: empty is nil, which `omitempty` leaves out."""
    return dict(values) if values else UNSET


def _value(value: object, default: object) -> object:
    return default if value is UNSET or value is None else value


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


# --- request → GameServerAllocation -------------------------------------------------------------


def convert_allocation_request_to_gsa(
    request: pb.AllocationRequest, gates: FeatureGates
) -> GameServerAllocation:
    """`ConvertAllocationRequestToGSA`."""
    spec = GameServerAllocationSpec(
        scheduling=SCHEDULING_DISTRIBUTED
        if request.scheduling == pb.AllocationRequest.Distributed
        else SCHEDULING_PACKED,
    )
    preferred = [_selector_to_gsa(s, gates) for s in request.preferredGameServerSelectors]
    if preferred:
        spec.preferred = preferred
    selectors = [_selector_to_gsa(s, gates) for s in request.gameServerSelectors]
    if selectors:
        spec.selectors = selectors
    if request.HasField("multiClusterSetting"):
        setting = request.multiClusterSetting
        spec.multi_cluster_setting = MultiClusterSetting(enabled=setting.enabled)
        if setting.HasField("policySelector"):
            spec.multi_cluster_setting.policy_selector = LabelSelector(
                match_labels=_labels(setting.policySelector.matchLabels)
            )
    metadata = None
    if request.HasField("metadata"):
        metadata = request.metadata
    elif request.HasField("metaPatch"):
        metadata = request.metaPatch
    if metadata is not None:
        spec.metadata = MetaPatch(
            labels=_labels(metadata.labels), annotations=_labels(metadata.annotations)
        )
    if request.HasField("requiredGameServerSelector"):
        spec.required = _selector_to_gsa(request.requiredGameServerSelector, gates)
    if gates.enabled(Feature.COUNTS_AND_LISTS):
        _request_counts_and_lists_to_gsa(request, spec)
    return GameServerAllocation(
        api_version=API_VERSION,
        kind=KIND,
        metadata=ObjectMeta(namespace=request.namespace or UNSET),
        spec=spec,
    )


def _request_counts_and_lists_to_gsa(
    request: pb.AllocationRequest, spec: GameServerAllocationSpec
) -> None:
    if request.priorities:
        spec.priorities = [
            Priority(
                type=PRIORITY_LIST if p.type == pb.Priority.List else PRIORITY_COUNTER,
                key=p.key,
                order=PRIORITY_DESCENDING
                if p.order == pb.Priority.Descending
                else PRIORITY_ASCENDING,
            )
            for p in request.priorities
        ]
    if request.counters:
        spec.counters = {
            name: CounterAction(
                action=action.action.value if action.HasField("action") else UNSET,
                amount=action.amount.value if action.HasField("amount") else UNSET,
                capacity=action.capacity.value if action.HasField("capacity") else UNSET,
            )
            for name, action in request.counters.items()
        }
    if request.lists:
        spec.lists = {
            name: ListAction(
                add_values=list(action.addValues) or UNSET,
                delete_values=list(action.deleteValues) or UNSET,
                capacity=action.capacity.value if action.HasField("capacity") else UNSET,
            )
            for name, action in request.lists.items()
        }


def _selector_to_gsa(selector: pb.GameServerSelector, gates: FeatureGates) -> GameServerSelector:
    """`convertGameServerSelectorToInternalGameServerSelector`."""
    result = GameServerSelector(
        match_labels=_labels(selector.matchLabels),
        game_server_state=GAME_SERVER_STATE_ALLOCATED
        if selector.gameServerState == pb.GameServerSelector.ALLOCATED
        else GAME_SERVER_STATE_READY,
    )
    if gates.enabled(Feature.PLAYER_ALLOCATION_FILTER) and selector.HasField("players"):
        result.players = PlayerSelector(
            min_available=selector.players.minAvailable,
            max_available=selector.players.maxAvailable,
        )
    if gates.enabled(Feature.COUNTS_AND_LISTS):
        if selector.counters:
            result.counters = {
                name: CounterSelector(
                    min_count=c.minCount,
                    max_count=c.maxCount,
                    min_available=c.minAvailable,
                    max_available=c.maxAvailable,
                )
                for name, c in selector.counters.items()
            }
        if selector.lists:
            result.lists = {
                name: ListSelector(
                    contains_value=item.containsValue,
                    min_available=item.minAvailable,
                    max_available=item.maxAvailable,
                )
                for name, item in selector.lists.items()
            }
    return result


# --- GameServerAllocation → request (forwarded to a remote allocator) ---------------------------


def convert_gsa_to_allocation_request(
    gsa: GameServerAllocation, gates: FeatureGates
) -> pb.AllocationRequest:
    """`ConvertGSAToAllocationRequest`."""
    spec = (
        gsa.spec if isinstance(gsa.spec, GameServerAllocationSpec) else GameServerAllocationSpec()
    )
    meta = gsa.metadata if isinstance(gsa.metadata, ObjectMeta) else ObjectMeta()
    setting = (
        spec.multi_cluster_setting
        if isinstance(spec.multi_cluster_setting, MultiClusterSetting)
        else MultiClusterSetting()
    )
    patch = spec.metadata if isinstance(spec.metadata, MetaPatch) else MetaPatch()
    out = pb.AllocationRequest(
        namespace=meta.get_namespace(),
        scheduling=pb.AllocationRequest.Distributed
        if spec.scheduling == SCHEDULING_DISTRIBUTED
        else pb.AllocationRequest.Packed,
        gameServerSelectors=[_selector_to_pb(s, gates) for s in spec.selectors or []],
        multiClusterSetting=pb.MultiClusterSetting(enabled=bool(_value(setting.enabled, False))),
        metadata=pb.MetaPatch(labels=patch.labels or {}, annotations=patch.annotations or {}),
        metaPatch=pb.MetaPatch(labels=patch.labels or {}, annotations=patch.annotations or {}),
    )
    if out.gameServerSelectors:
        out.preferredGameServerSelectors.extend(out.gameServerSelectors[:-1])
        out.requiredGameServerSelector.CopyFrom(out.gameServerSelectors[-1])
    if out.multiClusterSetting.enabled:
        policy = setting.policy_selector
        labels = policy.match_labels if isinstance(policy, LabelSelector) else None
        out.multiClusterSetting.policySelector.CopyFrom(pb.LabelSelector(matchLabels=labels or {}))
    if gates.enabled(Feature.COUNTS_AND_LISTS):
        _gsa_counts_and_lists_to_request(spec, out)
    return out


def _gsa_counts_and_lists_to_request(
    spec: GameServerAllocationSpec, out: pb.AllocationRequest
) -> None:
    for p in spec.priorities or []:
        out.priorities.append(
            pb.Priority(
                type=pb.Priority.List if p.type == PRIORITY_LIST else pb.Priority.Counter,
                key=_str(p.key),
                order=pb.Priority.Descending
                if p.order == PRIORITY_DESCENDING
                else pb.Priority.Ascending,
            )
        )
    for name, action in (spec.counters or {}).items():
        counter = out.counters[name]
        if isinstance(action.action, str):
            counter.action.CopyFrom(wrappers_pb2.StringValue(value=action.action))
        if isinstance(action.amount, int):
            counter.amount.CopyFrom(wrappers_pb2.Int64Value(value=action.amount))
        if isinstance(action.capacity, int):
            counter.capacity.CopyFrom(wrappers_pb2.Int64Value(value=action.capacity))
    for name, list_action in (spec.lists or {}).items():
        item = out.lists[name]
        item.addValues.extend(list_action.add_values or [])
        item.deleteValues.extend(list_action.delete_values or [])
        if isinstance(list_action.capacity, int):
            item.capacity.CopyFrom(wrappers_pb2.Int64Value(value=list_action.capacity))


def _selector_to_pb(selector: GameServerSelector, gates: FeatureGates) -> pb.GameServerSelector:
    """`convertInternalGameServerSelectorToGameServer` (matchExpressions have no proto form)."""
    result = pb.GameServerSelector(matchLabels=selector.match_labels or {})
    if selector.game_server_state == GAME_SERVER_STATE_ALLOCATED:
        result.gameServerState = pb.GameServerSelector.ALLOCATED
    players = selector.players
    if gates.enabled(Feature.PLAYER_ALLOCATION_FILTER) and isinstance(players, PlayerSelector):
        result.players.CopyFrom(
            pb.PlayerSelector(
                minAvailable=max(0, _int(players.min_available)),
                maxAvailable=max(0, _int(players.max_available)),
            )
        )
    if gates.enabled(Feature.COUNTS_AND_LISTS):
        for name, c in (selector.counters or {}).items():
            result.counters[name].CopyFrom(
                pb.CounterSelector(
                    minCount=_int(c.min_count),
                    maxCount=_int(c.max_count),
                    minAvailable=_int(c.min_available),
                    maxAvailable=_int(c.max_available),
                )
            )
        for name, item in (selector.lists or {}).items():
            result.lists[name].CopyFrom(
                pb.ListSelector(
                    containsValue=_str(item.contains_value),
                    minAvailable=_int(item.min_available),
                    maxAvailable=_int(item.max_available),
                )
            )
    return result


# --- GameServerAllocation ↔ response ------------------------------------------------------------


def convert_state_to_error(state: object, unallocated_code: grpc.StatusCode) -> None:
    """`convertStateV1ToError`: nothing for Allocated, else the status Agones answers."""
    if state == GameServerAllocationState.ALLOCATED:
        return
    if state == GameServerAllocationState.UN_ALLOCATED:
        raise AllocationStatusError(unallocated_code, UNALLOCATED_MESSAGE)
    if state == GameServerAllocationState.CONTENTION:
        raise AllocationStatusError(grpc.StatusCode.ABORTED, CONTENTION_MESSAGE)
    raise AllocationStatusError(grpc.StatusCode.UNKNOWN, "unknown issue")


def convert_gsa_to_allocation_response(
    gsa: GameServerAllocation, unallocated_code: grpc.StatusCode, gates: FeatureGates
) -> pb.AllocationResponse:
    """`ConvertGSAToAllocationResponse`; raises `AllocationStatusError` unless Allocated."""
    status = (
        gsa.status
        if isinstance(gsa.status, GameServerAllocationStatus)
        else GameServerAllocationStatus()
    )
    convert_state_to_error(status.state, unallocated_code)
    out = pb.AllocationResponse(
        gameServerName=_str(status.game_server_name),
        address=_str(status.address),
        nodeName=_str(status.node_name),
        source=_str(status.source),
        ports=[
            pb.AllocationResponse.GameServerStatusPort(
                name=_str(p.name),
                port=_int(p.port),
            )
            for p in status.ports or []
        ],
        addresses=[
            pb.AllocationResponse.GameServerStatusAddress(
                type=_str(a.type), address=_str(a.address)
            )
            for a in status.addresses or []
        ],
    )
    if isinstance(status.metadata, GameServerMetadata):
        out.metadata.CopyFrom(
            pb.AllocationResponse.GameServerMetadata(
                labels=status.metadata.labels or {},
                annotations=status.metadata.annotations or {},
            )
        )
    if gates.enabled(Feature.COUNTS_AND_LISTS):
        for name, counter in (status.counters or {}).items():
            target = out.counters[name]
            target.count.value = _int(counter.count)
            target.capacity.value = _int(counter.capacity)
        for name, item in (status.lists or {}).items():
            target_list = out.lists[name]
            target_list.values.extend(item.values or [])
            target_list.capacity.value = _int(item.capacity)
    return out


def convert_allocation_response_to_gsa(
    response: pb.AllocationResponse, source: str, gates: FeatureGates
) -> GameServerAllocation:
    """`ConvertAllocationResponseToGSA`: an Allocated GSA whose `source` is the remote endpoint."""
    status = GameServerAllocationStatus(
        state=GameServerAllocationState.ALLOCATED.value,
        game_server_name=response.gameServerName,
        address=response.address,
        node_name=response.nodeName,
        source=source,
        ports=[GameServerStatusPort(name=p.name, port=p.port) for p in response.ports] or UNSET,
        addresses=[NodeAddress(type=a.type, address=a.address) for a in response.addresses]
        or UNSET,
    )
    if response.HasField("metadata"):
        status.metadata = GameServerMetadata(
            labels=_labels(response.metadata.labels),
            annotations=_labels(response.metadata.annotations),
        )
    if gates.enabled(Feature.COUNTS_AND_LISTS):
        if response.counters:
            status.counters = {
                name: CounterStatus(count=c.count.value, capacity=c.capacity.value)
                for name, c in response.counters.items()
            }
        if response.lists:
            status.lists = {
                name: ListStatus(values=list(item.values), capacity=item.capacity.value)
                for name, item in response.lists.items()
            }
    return GameServerAllocation(
        api_version=API_VERSION,
        kind=KIND,
        metadata=ObjectMeta(name=response.gameServerName or UNSET),
        status=status,
    )
