"""The allocation-overflow sub-controller (Agones `pkg/gameserversets/allocation_overflow.go`).

When a GameServerSet with `allocationOverflow` labels or annotations has more Allocated GameServers
than `spec.replicas` (its status says so), `overflow = allocated - replicas` of them must carry those
labels and annotations, so that the system running the game can drain them. Those that already match
count; the shortfall is taken from the front of the set's scale-down order (the same sort as
scale-down) and each is updated with the labels and annotations added. Keys come from GameServerSet
updates that show an overflow; one worker runs, as in Agones. A failed update raises, so the queue
retries with back-off.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import structlog
from msgspec import UNSET

from ...apis.agones.v1.common import AllocationOverflow
from ...apis.agones.v1.gameserver import GameServer, GameServerState
from ...apis.agones.v1.gameserverset import GameServerSet
from ...client.errors import NotFoundError
from ...client.informers.externalversions import SharedInformerFactory as TypedInformerFactory
from ...client.versioned import Clientset
from ...clock import Clock
from ...featuregates import FeatureGates
from ...informers import SharedInformerFactory, split_meta_namespace_key
from ...informers.labels import selector_from_set
from ...informers.shared_informer import ResourceEventHandlerFuncs
from ...workqueue import WorkerQueue, fast_rate_limiter
from ..gameservers import PerNodeCounter
from ..gameservers.gameservers import deep_copy
from .gameserversets import (
    list_game_servers_by_game_server_set_owner,
    priorities_for,
    scheduling_of,
    sort_game_servers_by_strategy,
)


def _overflow(gss: GameServerSet) -> AllocationOverflow | None:
    overflow = gss.spec.allocation_overflow if gss.spec is not UNSET else UNSET
    return overflow if isinstance(overflow, AllocationOverflow) else None


def _has_labels_or_annotations(overflow: AllocationOverflow | None) -> bool:
    return overflow is not None and bool(overflow.labels or overflow.annotations)


def _allocated_and_replicas(gss: GameServerSet) -> tuple[int, int]:
    status = gss.status if gss.status is not UNSET and gss.status is not None else None
    allocated = status.allocated_replicas if status is not None else 0
    replicas = gss.spec.replicas if gss.spec is not UNSET else 0
    return (
        allocated if isinstance(allocated, int) else 0,
        replicas if isinstance(replicas, int) else 0,
    )


def count_matches(
    overflow: AllocationOverflow, game_servers: Sequence[GameServer]
) -> tuple[int, list[GameServer]]:
    """Go `AllocationOverflow.CountMatches`: how many Allocated GameServers already carry every
    overflow label and annotation, and the Allocated ones that do not."""
    labels = selector_from_set(overflow.labels if overflow.labels is not UNSET else {})
    annotations = selector_from_set(
        overflow.annotations if overflow.annotations is not UNSET else {}
    )
    count, rest = 0, []
    for gs in game_servers:
        if gs.state() != GameServerState.ALLOCATED:
            continue
        meta = gs.meta
        if labels.matches(meta.get_labels()) and annotations.matches(meta.get_annotations()):
            count += 1
        else:
            rest.append(gs)
    return count, rest


def apply_overflow(overflow: AllocationOverflow, gs: GameServer) -> None:
    """Go `AllocationOverflow.Apply`: add the labels and annotations to `gs` (a private copy)."""
    meta = gs.meta
    if overflow.annotations is not UNSET:
        if meta.annotations is UNSET:
            meta.annotations = {}
        meta.annotations.update(overflow.annotations)
    if overflow.labels is not UNSET:
        if meta.labels is UNSET:
            meta.labels = {}
        meta.labels.update(overflow.labels)


class AllocationOverflowController:
    def __init__(
        self,
        clientset: Clientset,
        factory: SharedInformerFactory,
        counter: PerNodeCounter,
        gates: FeatureGates,
        *,
        clock: Clock | None = None,
        logger: Any = None,
    ) -> None:
        self.clientset = clientset
        self.counter = counter
        self.gates = gates
        self.log = (logger or structlog.get_logger()).bind(controller="allocationoverflow")
        typed = TypedInformerFactory.from_generic(factory).agones().v1()
        gss_informer = typed.game_server_sets()
        self.game_server_lister = typed.game_servers().lister()
        self.game_server_set_lister = gss_informer.lister()
        self.workerqueue = WorkerQueue(
            self.sync_game_server_set,
            self.log,
            "gameserverset",
            "agones.dev.AllocationOverflowController",
            fast_rate_limiter(3.0),
            clock=clock,
        )
        gss_informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(update_func=self._on_game_server_set_update)
        )

    def _on_game_server_set_update(self, old: GameServerSet, new: GameServerSet) -> None:
        if not _has_labels_or_annotations(_overflow(new)):
            return
        allocated, replicas = _allocated_and_replicas(new)
        if allocated > replicas:
            self.workerqueue.enqueue(new)

    async def sync_game_server_set(self, key: str) -> None:
        """Label and annotate the Allocated GameServers of set `key` beyond its replicas."""
        namespace, name = split_meta_namespace_key(key)
        try:
            gss = self.game_server_set_lister.game_server_sets(namespace).get(name)
        except NotFoundError:
            return
        overflow = _overflow(gss)
        allocated, replicas = _allocated_and_replicas(gss)
        if overflow is None or allocated <= replicas:
            return
        listed = list_game_servers_by_game_server_set_owner(self.game_server_lister, gss)
        matches, rest = count_matches(overflow, listed)
        if matches >= allocated - replicas:
            return
        ordered = sort_game_servers_by_strategy(
            scheduling_of(gss), rest, self.counter.counts(), priorities_for(gss, self.gates)
        )
        client = self.clientset.agones_v1().game_servers(namespace)
        for gs in ordered[: allocated - replicas - matches]:
            gs_copy = deep_copy(gs)
            apply_overflow(overflow, gs_copy)
            await client.update(gs_copy)
