"""The Fleet controller (Agones `pkg/fleets/controller.go`).

`sync_fleet(key)` reads the Fleet and its GameServerSets (the informers' caches, seen through their
shared MutationCaches, so our own last writes are never read back stale), picks the active set (the
one whose template equals the Fleet's; a new one is made when none does), asks the pure
`apply_deployment_strategy` what to do, then writes, in Go's order: the rest sets' scale-downs,
the deletion of rest sets that are empty (status replicas and shutdown replicas both 0, Background
propagation), the creation or the update of the active set, and the Fleet's status (the sum of its
sets' statuses).

API writes are scarce, so each is made only when something changes and carries everything that
changed: the active set's replicas, scheduling and priorities go in one update (Go may write
twice), and the Fleet's status is written only when the sum differs from what is stored (Go reads
the Fleet and writes its status on every sync). A 404 on deleting an empty set means it is gone
already (the cache lagged our previous delete). Events: `CreatingGameServerSet`,
`ScalingGameServerSet`, `UpdatingGameServerSet`, `DeletingGameServerSet` on the Fleet.

Keys come from one WorkerQueue with Agones' fleet limiter (200 ms for five retries, then 3 s): a
Fleet's add or update, and the add or update (not while being deleted) of a set it controls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
import structlog
from msgspec import UNSET

from ...apis.agones.v1.fleet import Fleet
from ...apis.agones.v1.gameserverset import FLEET_NAME_LABEL, GameServerSet, GameServerSetStatus
from ...apis.meta.objectmeta import controller_of
from ...client.errors import ConflictError, NotFoundError
from ...client.informers.externalversions import SharedInformerFactory as TypedInformerFactory
from ...client.versioned import Clientset
from ...clock import Clock
from ...featuregates import Feature, FeatureGates
from ...informers import ExplicitKey, SharedInformerFactory, split_meta_namespace_key
from ...informers.shared_informer import ResourceEventHandlerFuncs
from ...record import EventBroadcaster, EventType
from ...workqueue import WorkerQueue
from ...workqueue.workerqueue import fast_rate_limiter
from . import fleets
from .rollingupdate import Scale, SetReplicas, apply_deployment_strategy

FLEET_QUEUE_MAX_DELAY = 3.0
"""Agones' fleet queue: `FastRateLimiter(3 * time.Second)`."""


class Controller:
    """Keeps each Fleet's GameServerSets rolled, scaled and summed into its status."""

    def __init__(
        self,
        clientset: Clientset,
        factory: SharedInformerFactory,
        events: EventBroadcaster,
        gates: FeatureGates,
        *,
        clock: Clock | None = None,
        logger: Any = None,
    ) -> None:
        self.clientset = clientset
        self.gates = gates
        self.log = (logger or structlog.get_logger()).bind(controller="fleet")
        self.recorder = events.new_recorder("fleet-controller")
        typed = TypedInformerFactory.from_generic(factory).agones().v1()
        fleet_informer = typed.fleets()
        gss_informer = typed.game_server_sets()
        self.fleet_lister = fleet_informer.lister()
        self.game_server_set_lister = gss_informer.lister()
        self.fleet_cache = fleet_informer.informer().mutation_cache()
        self.game_server_set_cache = gss_informer.informer().mutation_cache()
        self.workerqueue = WorkerQueue(
            self.sync_fleet,
            self.log,
            "fleet",
            "agones.dev.FleetController",
            fast_rate_limiter(FLEET_QUEUE_MAX_DELAY),
            clock=clock,
        )
        fleet_informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self.workerqueue.enqueue,
                update_func=lambda _old, new: self.workerqueue.enqueue(new),
            )
        )
        gss_informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self.game_server_set_event_handler,
                update_func=self._on_game_server_set_update,
            )
        )

    # -- event handlers --------------------------------------------------------------------------

    def game_server_set_event_handler(self, gss: GameServerSet) -> None:
        """Enqueue the Fleet that controls this set, if any."""
        if gss.metadata is UNSET:
            return
        ref = controller_of(gss.metadata)
        if ref is None or ref.kind != "Fleet" or not isinstance(ref.name, str):
            return
        self.workerqueue.enqueue(ExplicitKey(f"{gss.metadata.get_namespace()}/{ref.name}"))

    def _on_game_server_set_update(self, _old: GameServerSet, new: GameServerSet) -> None:
        if new.metadata is not UNSET and not new.metadata.is_being_deleted():
            self.game_server_set_event_handler(new)

    # -- running -----------------------------------------------------------------------------------

    async def run(self, workers: int) -> None:
        await self.workerqueue.run(workers)

    async def shut_down_with_drain(self) -> None:
        await self.workerqueue.shut_down_with_drain()

    def healthy(self) -> None:
        self.workerqueue.healthy()

    # -- the sync ----------------------------------------------------------------------------------

    def _event(self, fleet: Fleet, reason: str, fmt: str, *args: Any) -> None:
        self.recorder.eventf(fleet, EventType.NORMAL, reason, fmt, *args)

    def list_game_server_sets_by_fleet_owner(self, fleet: Fleet) -> list[GameServerSet]:
        """The Fleet's sets from the cache, each the newer of cached and our own last write."""
        meta = fleet.metadata if fleet.metadata is not UNSET else None
        if meta is None:
            return []
        namespace = meta.get_namespace()
        selector = f"{FLEET_NAME_LABEL}={meta.get_name()}"
        result = []
        for cached in self.game_server_set_lister.game_server_sets(namespace).list(selector):
            key = f"{namespace}/{cached.metadata.get_name()}" if cached.metadata else ""
            gss = self.game_server_set_cache.get_by_key(key) or cached
            if fleets.is_fleet_game_server_set(gss, fleet):
                result.append(gss)
        return result

    async def sync_fleet(self, key: str) -> None:
        try:
            split_meta_namespace_key(key)
        except ValueError:
            self.log.error("invalid resource key", fleet=key)
            return
        fleet: Fleet | None = self.fleet_cache.get_by_key(key)
        if fleet is None or fleet.metadata is UNSET:
            self.workerqueue.logger_for(key).debug("Fleet is no longer available for syncing")
            return
        if fleet.metadata.is_being_deleted():
            return
        sets = self.list_game_server_sets_by_fleet_owner(fleet)
        active, rest = fleets.filter_game_server_set_by_active(fleet, sets)
        plan = apply_deployment_strategy(
            fleets.fleet_replicas(fleet),
            fleets.set_replicas(active) if active is not None else SetReplicas("", 0),
            [fleets.set_replicas(s) for s in rest],
            self.gates.enabled(Feature.ROLLING_UPDATE_FIX),
        )
        rest = await self.scale_rest_game_server_sets(fleet, rest, plan.scales)
        await self.delete_empty_game_server_sets(fleet, rest)
        await self.upsert_game_server_set(fleet, active, plan.active_replicas)
        await self.update_fleet_status(fleet)

    async def _update_game_server_set(self, gss: GameServerSet) -> GameServerSet:
        namespace = gss.metadata.get_namespace() if gss.metadata is not UNSET else ""
        stored = await self.clientset.agones_v1().game_server_sets(namespace).update(gss)
        self.game_server_set_cache.mutation(stored)
        return stored

    async def scale_rest_game_server_sets(
        self, fleet: Fleet, rest: list[GameServerSet], scales: Sequence[Scale]
    ) -> list[GameServerSet]:
        """Write the planned scale-downs in order; return `rest` with the stored objects."""
        by_name = {s.metadata.get_name(): i for i, s in enumerate(rest) if s.metadata}
        for scale in scales:
            i = by_name[scale.name]
            gss = rest[i]
            spec = msgspec.structs.replace(fleets.gss_spec(gss), replicas=scale.new)
            rest[i] = await self._update_game_server_set(msgspec.structs.replace(gss, spec=spec))
            self._event(
                fleet,
                "ScalingGameServerSet",
                "Scaling inactive GameServerSet %s from %d to %d",
                scale.name,
                scale.old,
                scale.new,
            )
        return rest

    async def delete_empty_game_server_sets(self, fleet: Fleet, rest: list[GameServerSet]) -> None:
        for gss in rest:
            status = fleets.gss_status(gss)
            if status.replicas or status.shutdown_replicas or gss.metadata is UNSET:
                continue
            name, namespace = gss.metadata.get_name(), gss.metadata.get_namespace()
            try:
                await (
                    self.clientset.agones_v1()
                    .game_server_sets(namespace)
                    .delete(name, propagation_policy="Background")
                )
            except NotFoundError:
                continue
            self._event(fleet, "DeletingGameServerSet", "Deleting inactive GameServerSet %s", name)

    async def create_game_server_set(self, fleet: Fleet, replicas: int) -> GameServerSet:
        """Create the active set, then zero its status as Go does (lost to a status the
        GameServerSet controller wrote first, which is as good)."""
        gss = fleet.game_server_set(self.gates)
        gss.spec = msgspec.structs.replace(fleets.gss_spec(gss), replicas=replicas)
        namespace = fleet.metadata.get_namespace() if fleet.metadata is not UNSET else ""
        client = self.clientset.agones_v1().game_server_sets(namespace)
        stored = await client.create(gss)
        name = stored.metadata.get_name() if stored.metadata is not UNSET else ""
        self._event(fleet, "CreatingGameServerSet", "Created GameServerSet %s", name)
        zeroed = GameServerSetStatus(replicas=0, ready_replicas=0, allocated_replicas=0)
        try:
            stored = await client.update_status(msgspec.structs.replace(stored, status=zeroed))
        except ConflictError:
            return stored
        self.game_server_set_cache.mutation(stored)
        return stored

    async def upsert_game_server_set(
        self, fleet: Fleet, active: GameServerSet | None, replicas: int
    ) -> GameServerSet:
        """Create the active set, or bring its replicas, scheduling and priorities in line."""
        if active is None:
            return await self.create_game_server_set(fleet, replicas)
        spec, want = fleets.gss_spec(active), fleets.fleet_spec(fleet)
        scaling = replicas != spec.replicas or spec.scheduling != want.scheduling
        priorities = (
            self.gates.enabled(Feature.COUNTS_AND_LISTS) and spec.priorities != want.priorities
        )
        if not scaling and not priorities:
            return active
        new_spec = msgspec.structs.replace(spec, replicas=replicas, scheduling=want.scheduling)
        if priorities:
            new_spec.priorities = want.priorities
        stored = await self._update_game_server_set(msgspec.structs.replace(active, spec=new_spec))
        name = stored.metadata.get_name() if stored.metadata is not UNSET else ""
        if scaling:
            self._event(
                fleet,
                "ScalingGameServerSet",
                "Scaling active GameServerSet %s from %d to %d",
                name,
                fleets.set_replicas(active).spec_replicas,
                replicas,
            )
        if priorities:
            self._event(fleet, "UpdatingGameServerSet", "Updated GameServerSet %s Priorities", name)
        return stored

    async def update_fleet_status(self, fleet: Fleet) -> None:
        """Write the sum of the sets' statuses when it differs from the stored one."""
        status = fleets.fleet_status(
            self.list_game_server_sets_by_fleet_owner(fleet),
            self.gates.enabled(Feature.COUNTS_AND_LISTS),
            self.gates.enabled(Feature.PLAYER_TRACKING),
        )
        if fleets.normalized_status(status) == fleets.normalized_status(fleet.status):
            return
        namespace = fleet.metadata.get_namespace() if fleet.metadata is not UNSET else ""
        stored = await (
            self.clientset.agones_v1()
            .fleets(namespace)
            .update_status(msgspec.structs.replace(fleet, status=status))
        )
        self.fleet_cache.mutation(stored)
