"""Counters and lists (Beta, CountsAndLists gate) of the cluster-mode SDKServer.

Changes are batched per counter/list (`counter_updates`, `list_updates`) and written by the
`updateCounters`/`updateLists` operations; reads project the pending changes onto the stored
values. While a batch is being written, the RPCs of its kind wait (Agones holds its update lock over
the write), so checks see the written values and a failed write keeps its batch for the retry. UpdateCounter applies capacity, then count, then countDiff, validating each against the
projected values; UpdateList (mask paths `capacity`, `values`) answers an empty List as Agones'
sidecar does. Errors are Agones' own: plain Go errors (`errors.Errorf`), so they reach clients as
gRPC UNKNOWN with Agones' texts (`counter not found: x`, `out of range. ...`, `already exists.
...`), not the codes the beta proto's comments suggest.
"""

from __future__ import annotations

import abc
import asyncio
from dataclasses import dataclass, field
from typing import Any

from ..featuregates import Feature
from ..sdk.proto.beta import beta_pb2
from .errors import SDKError, go_value, plain_error
from .queue import UpdateQueue

UPDATE_COUNTERS = "updateCounters"
UPDATE_LISTS = "updateLists"
LIST_FIELDS = ("name", "capacity", "values")


@dataclass
class CounterUpdate:
    counter: dict[str, int]
    capacity_set: int | None = None
    count_set: int | None = None
    diff: int = 0


@dataclass
class ListUpdate:
    capacity_set: int | None = None
    to_delete: set[str] = field(default_factory=set)
    to_append: list[str] = field(default_factory=list)


def merge_remove_duplicates(first: list[str], second: list[str]) -> list[str]:
    """Agones' MergeRemoveDuplicates: `first` then `second`, first occurrence kept."""
    seen: set[str] = set()
    result = []
    for value in [*first, *second]:
        if value not in seen:
            seen.add(value)
            result.append(value)
    return result


class CountsAndLists(abc.ABC):
    """The beta RPCs, mixed into SDKServer (which provides the attributes declared here)."""

    _gs: dict[str, Any]
    counter_updates: dict[str, CounterUpdate]
    list_updates: dict[str, ListUpdate]
    counters_lock: asyncio.Lock
    """Held while a batch of counter changes is being written (lists_lock: of list changes)."""
    lists_lock: asyncio.Lock
    queue: UpdateQueue
    list_max_capacity: int

    @abc.abstractmethod
    def _require(self, feature: Feature) -> None:
        """Raise the not-enabled error when `feature` is off."""

    @abc.abstractmethod
    async def game_server(self) -> dict[str, Any]:
        """The GameServer as last read (waiting for the first read)."""

    async def _settled(self, lock: asyncio.Lock) -> None:
        """Wait for the first read and for a write of pending changes in flight, as Go's RPCs wait
        for its update lock: callers then read and change the batch without awaiting again."""
        await self.game_server()
        async with lock:
            pass

    def _stored_counter(self, name: str) -> dict[str, int]:
        counters = (self._gs.get("status") or {}).get("counters") or {}
        if name not in counters:
            raise plain_error(f"counter not found: {name}")
        counter = counters[name]
        return {
            "count": int(counter.get("count") or 0),
            "capacity": int(counter.get("capacity") or 0),
        }

    @staticmethod
    def _project(name: str, update: CounterUpdate) -> beta_pb2.Counter:
        capacity = (
            update.counter["capacity"] if update.capacity_set is None else update.capacity_set
        )
        count = update.counter["count"] if update.count_set is None else update.count_set
        count = max(0, min(count + update.diff, capacity))
        return beta_pb2.Counter(name=name, count=count, capacity=capacity)

    async def get_counter(self, request: beta_pb2.GetCounterRequest) -> beta_pb2.Counter:
        self._require(Feature.COUNTS_AND_LISTS)
        await self._settled(self.counters_lock)
        stored = self._stored_counter(request.name)
        pending = self.counter_updates.get(request.name)
        if pending is None:
            return beta_pb2.Counter(name=request.name, **stored)
        return self._project(
            request.name,
            CounterUpdate(stored, pending.capacity_set, pending.count_set, pending.diff),
        )

    async def update_counter(self, request: beta_pb2.UpdateCounterRequest) -> beta_pb2.Counter:
        self._require(Feature.COUNTS_AND_LISTS)
        if not request.HasField("counterUpdateRequest"):
            raise plain_error(
                "invalid argument. CounterUpdateRequest: <nil> cannot be nil",
            )
        req = request.counterUpdateRequest
        if req.countDiff == 0 and not req.HasField("count") and not req.HasField("capacity"):
            raise plain_error(
                f"invalid argument. Malformed CounterUpdateRequest: {go_value(req)}",
            )
        await self._settled(self.counters_lock)
        stored = self._stored_counter(req.name)
        update = self.counter_updates.get(req.name) or CounterUpdate(stored)
        update = CounterUpdate(stored, update.capacity_set, update.count_set, update.diff)
        capacity = update.capacity_set
        if req.HasField("capacity"):
            if req.capacity.value < 0:
                raise plain_error(
                    "out of range. Capacity must be greater than or equal to 0. "
                    f"Found Capacity: {req.capacity.value}",
                )
            capacity = req.capacity.value
        effective_capacity = stored["capacity"] if capacity is None else capacity
        count_set, diff = update.count_set, update.diff
        if req.HasField("count"):
            if req.count.value < 0 or req.count.value > effective_capacity:
                raise _count_out_of_range(req.count.value, effective_capacity)
            count_set, diff = req.count.value, 0
        if req.countDiff != 0:
            count = (stored["count"] if count_set is None else count_set) + diff + req.countDiff
            if count < 0 or count > effective_capacity:
                raise _count_out_of_range(count, effective_capacity)
            diff += req.countDiff
        update = CounterUpdate(stored, capacity, count_set, diff)
        self.counter_updates[req.name] = update
        self.queue.enqueue(UPDATE_COUNTERS)
        return self._project(req.name, update)

    def _projected_list(self, name: str) -> beta_pb2.List:
        lists = (self._gs.get("status") or {}).get("lists") or {}
        if name not in lists:
            raise plain_error(f"list not found: {name}")
        stored = lists[name]
        result = beta_pb2.List(
            name=name,
            capacity=int(stored.get("capacity") or 0),
            values=list(stored.get("values") or []),
        )
        pending = self.list_updates.get(name)
        if pending is not None:
            if pending.capacity_set is not None:
                result.capacity = pending.capacity_set
            values = [v for v in result.values if v not in pending.to_delete]
            values = merge_remove_duplicates(values, pending.to_append)[: result.capacity]
            del result.values[:]
            result.values.extend(values)
        return result

    async def get_list(self, request: beta_pb2.GetListRequest) -> beta_pb2.List:
        self._require(Feature.COUNTS_AND_LISTS)
        await self._settled(self.lists_lock)
        return self._projected_list(request.name)

    async def update_list(self, request: beta_pb2.UpdateListRequest) -> beta_pb2.List:
        self._require(Feature.COUNTS_AND_LISTS)
        if not request.HasField("list") or not request.HasField("update_mask"):
            raise plain_error(
                f"invalid argument. List: {go_value(request.list, request.HasField('list'))} "
                "and UpdateMask "
                f"{go_value(request.update_mask, request.HasField('update_mask'))} cannot be nil",
            )
        paths = list(request.update_mask.paths)
        if any(p not in LIST_FIELDS for p in paths):
            raise plain_error(
                f"invalid argument. Field Mask Path(s): [{' '.join(paths)}] are invalid for List. "
                "Use valid field name(s): [name capacity values]",
            )
        limit = self.list_max_capacity
        if request.list.capacity < 0 or request.list.capacity > limit:
            raise plain_error(
                f"out of range. Capacity must be within range [0,{limit}]. "
                f"Found Capacity: {request.list.capacity}",
            )
        await self._settled(self.lists_lock)
        try:
            current = self._projected_list(request.list.name)
        except SDKError:
            raise plain_error(f"not found. {request.list.name} List not found") from None
        update = ListUpdate()
        if "capacity" in paths:
            update.capacity_set = request.list.capacity
        if "values" in paths:
            wanted = list(request.list.values)
            update.to_delete = {v for v in current.values if v not in wanted}
            update.to_append = [v for v in wanted if v not in current.values]
        self.list_updates[request.list.name] = update
        self.queue.enqueue(UPDATE_LISTS)
        return beta_pb2.List()

    async def add_list_value(self, request: beta_pb2.AddListValueRequest) -> beta_pb2.List:
        self._require(Feature.COUNTS_AND_LISTS)
        await self._settled(self.lists_lock)
        current = self._projected_list(request.name)
        if current.capacity <= len(current.values):
            raise plain_error(
                "out of range. No available capacity. "
                f"Current Capacity: {current.capacity}, List Size: {len(current.values)}",
            )
        if request.value in current.values:
            raise plain_error(
                f"already exists. Value: {request.value} already in List: {request.name}",
            )
        update = self.list_updates.setdefault(request.name, ListUpdate())
        update.to_delete.discard(request.value)
        update.to_append.append(request.value)
        current.values.append(request.value)
        self.queue.enqueue(UPDATE_LISTS)
        return current

    async def remove_list_value(self, request: beta_pb2.RemoveListValueRequest) -> beta_pb2.List:
        self._require(Feature.COUNTS_AND_LISTS)
        await self._settled(self.lists_lock)
        current = self._projected_list(request.name)
        if request.value not in current.values:
            raise plain_error(
                f"not found. Value: {request.value} not found in List: {request.name}",
            )
        update = self.list_updates.setdefault(request.name, ListUpdate())
        if request.value in update.to_append:
            update.to_append.remove(request.value)
        else:
            update.to_delete.add(request.value)
        current.values.remove(request.value)
        self.queue.enqueue(UPDATE_LISTS)
        return current


def _count_out_of_range(count: int, capacity: int) -> SDKError:
    return plain_error(
        "out of range. Count must be within range [0,Capacity]. "
        f"Found Count: {count}, Capacity: {capacity}",
    )
