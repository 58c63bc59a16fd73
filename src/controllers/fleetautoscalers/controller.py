"""The FleetAutoscaler controller (Agones `pkg/fleetautoscalers/controller.go`).

Each FleetAutoscaler gets a sync "thread", keyed by its UID (names are reused over time): created
when the informer first shows it, it enqueues the FleetAutoscaler at once and then every
`spec.sync.fixedInterval.seconds` (default 30) on the controller's clock; a change of
`metadata.generation` replaces it (so a new interval applies at once); deletion stops it, and a sync
of a key that no longer exists stops every thread of that namespace whose UID is gone.

`sync_fleet_autoscaler(key)`:
1. the Fleet `spec.fleetName` is missing → Warning `FailedGetFleet`, status `ableToScale: false`
   (no retry: the next tick looks again); the Fleet is being deleted → nothing;
2. the policy computes the desired size (`compute_desired_fleet_size`); a failure → Warning
   `FleetAutoscaler`, `ableToScale: false`, and the error re-queues the key; a Schedule out of its
   window (also as a Chain's last word) → nothing is written until the next tick;
3. `fleet.spec.replicas` differs → one plain update of the Fleet (`AutoScalingFleet`, or Warning
   `AutoScalingFleetError` and a retry);
4. the status (`ableToScale`, `scalingLimited`, `currentReplicas` = the Fleet's `status.replicas`,
   `desiredReplicas`, `lastScaleTime` when the Fleet was scaled, `lastAppliedPolicy`) is written
   through the status subresource only when it changed, with a Warning `ScalingLimited` when the
   policy's limits cut the size; a Chain whose deciding entry changed records `ChainPolicy`.
Reads go through the Fleet and FleetAutoscaler informers' shared MutationCaches and each write's
result is remembered there, so a sync never acts on a cache older than our own last write.
Queue: Agones' fast rate limiter (200 ms, five times, then 3 s).
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from ...apis.agones.v1.fleet import Fleet
from ...apis.agones.v1.gameserver import GameServer
from ...apis.autoscaling.v1 import (
    FixedIntervalSync,
    FleetAutoscaler,
    FleetAutoscalerPolicy,
    FleetAutoscalerSpec,
    FleetAutoscalerStatus,
    FleetAutoscalerSync,
)
from ...apis.autoscaling.v1.fleetautoscaler import DEFAULT_INTERVAL_SYNC_SECONDS
from ...apis.meta.objectmeta import ObjectMeta, format_time
from ...client.informers.externalversions.factory import SharedInformerFactory as TypedFactory
from ...client.rest import RESTClient
from ...client.versioned import Clientset
from ...clock import Clock, RealClock, TimerHandle
from ...featuregates import FeatureGates
from ...informers import SharedInformerFactory, split_meta_namespace_key
from ...informers.labels import selector_from_set
from ...informers.shared_informer import ResourceEventHandlerFuncs
from ...record import EventBroadcaster, EventType
from ...workqueue import WorkerQueue
from ...workqueue.workerqueue import fast_rate_limiter
from ..gameservers import NodeCount
from .fleetautoscalers import (
    ChainPolicyError,
    Decision,
    PolicyInputs,
    WasmRunner,
    compute_desired_fleet_size,
)
from .inprocess import REGISTRY, PolicyRegistry
from .ordering import game_servers_in_deletion_order
from .policy import InactiveScheduleError, PolicyError
from .status import fleet_status
from .wasm import WasmPolicyRunner
from .webhook import WebhookClient

FLEET_NAME_LABEL = "agones.dev/fleet"
QUEUE_NAME = "autoscaling.agones.dev.FleetAutoscalerController"


@dataclass
class _Thread:
    generation: int
    handle: TimerHandle | None = None
    stopped: bool = False

    def close(self) -> None:
        self.stopped = True
        if self.handle is not None:
            self.handle.cancel()


@dataclass(frozen=True)
class _Status:
    """The status fields Agones compares (absent fields read as Go's zero values)."""

    able_to_scale: bool
    scaling_limited: bool
    current_replicas: int
    desired_replicas: int
    last_scale_time: str | None
    last_applied_policy: str

    @classmethod
    def of(cls, fas: FleetAutoscaler) -> _Status:
        s = fas.status if isinstance(fas.status, FleetAutoscalerStatus) else FleetAutoscalerStatus()
        return cls(
            s.able_to_scale is True,
            s.scaling_limited is True,
            s.current_replicas if isinstance(s.current_replicas, int) else 0,
            s.desired_replicas if isinstance(s.desired_replicas, int) else 0,
            s.last_scale_time if isinstance(s.last_scale_time, str) else None,
            s.last_applied_policy if isinstance(s.last_applied_policy, str) else "",
        )

    def to_struct(self) -> FleetAutoscalerStatus:
        return FleetAutoscalerStatus(
            current_replicas=self.current_replicas,
            desired_replicas=self.desired_replicas,
            last_scale_time=self.last_scale_time,
            able_to_scale=self.able_to_scale,
            scaling_limited=self.scaling_limited,
            last_applied_policy=self.last_applied_policy,
        )


def sync_interval_seconds(fas: FleetAutoscaler) -> float:
    spec = fas.spec if isinstance(fas.spec, FleetAutoscalerSpec) else FleetAutoscalerSpec()
    sync = spec.sync if isinstance(spec.sync, FleetAutoscalerSync) else None
    fixed = sync.fixed_interval if sync is not None else None
    if (
        isinstance(fixed, FixedIntervalSync)
        and isinstance(fixed.seconds, int)
        and fixed.seconds > 0
    ):
        return float(fixed.seconds)
    return float(DEFAULT_INTERVAL_SYNC_SECONDS)


def _meta(obj: FleetAutoscaler | Fleet) -> ObjectMeta:
    return obj.metadata if isinstance(obj.metadata, ObjectMeta) else ObjectMeta()


def _spec(fas: FleetAutoscaler) -> FleetAutoscalerSpec:
    return fas.spec if isinstance(fas.spec, FleetAutoscalerSpec) else FleetAutoscalerSpec()


class Controller:
    """Keeps each FleetAutoscaler's Fleet at the size its policy computes."""

    def __init__(
        self,
        client: RESTClient,
        factory: SharedInformerFactory,
        events: EventBroadcaster,
        gates: FeatureGates,
        *,
        clock: Clock | None = None,
        logger: Any = None,
        node_counts: Callable[[], Mapping[str, NodeCount]] | None = None,
        registry: PolicyRegistry | None = None,
        webhook_client: WebhookClient | None = None,
        wasm: WasmRunner | None = None,
    ) -> None:
        self.clientset = Clientset(client)
        self.gates = gates
        self.clock = clock or RealClock()
        self.log = (logger or structlog.get_logger()).bind(controller="fleetautoscaler")
        self.recorder = events.new_recorder("fleetautoscaler-controller")
        self.node_counts = node_counts or (lambda: {})
        self.registry = registry or REGISTRY
        self.webhook_client = webhook_client or WebhookClient()
        self.wasm = wasm or WasmPolicyRunner(self.webhook_client)
        typed = TypedFactory.from_generic(factory)
        fas_informer = typed.autoscaling().v1().fleet_autoscalers()
        fleet_informer = typed.agones().v1().fleets()
        self.fleet_autoscaler_lister = fas_informer.lister()
        self.fleet_lister = fleet_informer.lister()
        # Our own last writes, so the next sync does not act on (and 409 against) a stale cache.
        self.fleet_autoscaler_cache = fas_informer.informer().mutation_cache()
        self.fleet_cache = fleet_informer.informer().mutation_cache()
        self.game_server_lister = typed.agones().v1().game_servers().lister()
        self.workerqueue = WorkerQueue(
            self.sync_fleet_autoscaler,
            self.log,
            "fleetAutoscalerKey",
            QUEUE_NAME,
            fast_rate_limiter(3.0),
            clock=clock,
        )
        self._threads: dict[str, _Thread] = {}
        fas_informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self.add_fas_thread,
                update_func=lambda _old, new: self.update_fas_thread(new),
                delete_func=self.delete_fas_thread,
            )
        )

    # -- runnable ---------------------------------------------------------------------------------

    async def run(self, workers: int) -> None:
        try:
            await self.workerqueue.run(workers)
        finally:
            for thread in self._threads.values():
                thread.close()
            await self.webhook_client.close()

    async def shut_down_with_drain(self) -> None:
        await self.workerqueue.shut_down_with_drain()

    def healthy(self) -> None:
        self.workerqueue.healthy()

    # -- sync threads -----------------------------------------------------------------------------

    def add_fas_thread(self, fas: FleetAutoscaler) -> None:
        if not isinstance(fas, FleetAutoscaler):
            return
        meta = _meta(fas)
        uid = meta.uid if isinstance(meta.uid, str) else ""
        if uid in self._threads:
            return
        generation = meta.generation if isinstance(meta.generation, int) else 0
        thread = _Thread(generation)
        self._threads[uid] = thread
        interval = sync_interval_seconds(fas)

        def tick() -> None:
            if thread.stopped:
                return
            self.workerqueue.enqueue(fas)
            thread.handle = self.clock.call_later(interval, tick)

        self.workerqueue.enqueue(fas)
        thread.handle = self.clock.call_later(interval, tick)

    def update_fas_thread(self, fas: FleetAutoscaler) -> None:
        meta = _meta(fas)
        uid = meta.uid if isinstance(meta.uid, str) else ""
        thread = self._threads.get(uid)
        if thread is None:
            self.add_fas_thread(fas)
            return
        generation = meta.generation if isinstance(meta.generation, int) else 0
        if generation != thread.generation:
            self.delete_fas_thread(fas)
            self.add_fas_thread(fas)

    def delete_fas_thread(self, obj: Any) -> None:
        if not isinstance(obj, FleetAutoscaler):
            return  # a DeletedFinalStateUnknown: the next sync of the key cleans up
        uid = _meta(obj).uid
        thread = self._threads.pop(uid if isinstance(uid, str) else "", None)
        if thread is not None:
            thread.close()

    def clean_fas_threads(self, namespace: str) -> None:
        live = {
            _meta(fas).uid
            for fas in self.fleet_autoscaler_lister.fleet_autoscalers(namespace).list()
        }
        for uid in [u for u in self._threads if u not in live]:
            self._threads.pop(uid).close()

    def thread_count(self) -> int:
        return len(self._threads)

    # -- sync -------------------------------------------------------------------------------------

    async def sync_fleet_autoscaler(self, key: str) -> None:
        namespace, name = split_meta_namespace_key(key)
        fas: FleetAutoscaler | None = self.fleet_autoscaler_cache.get_by_key(key)
        if fas is None:
            self.clean_fas_threads(namespace)
            return
        spec = _spec(fas)
        fleet_name = spec.fleet_name if isinstance(spec.fleet_name, str) else ""
        fleet: Fleet | None = self.fleet_cache.get_by_key(f"{namespace}/{fleet_name}")
        if fleet is None:
            self.recorder.event(
                fas, EventType.WARNING, "FailedGetFleet", f"could not fetch fleet: {fleet_name}"
            )
            await self._update_status_unable_to_scale(fas)
            return
        if _meta(fleet).is_being_deleted():
            return
        policy = spec.policy if isinstance(spec.policy, FleetAutoscalerPolicy) else None
        if policy is None:
            raise PolicyError(f"FleetAutoscaler {name} has no policy")
        decision = await self._compute(fas, fleet, policy)
        if decision is None:
            return
        desired = decision.scale.replicas
        view = fleet_status(fleet)
        await self._scale_fleet(fas, fleet, view.spec_replicas, desired)
        policy_type = str(policy.type) if isinstance(policy.type, str) else ""
        applied = decision.applied_policy(policy_type)
        if decision.chain_entry is not None and applied != _Status.of(fas).last_applied_policy:
            self._chain_event(fas, decision)
        await self._update_status(
            fas,
            view.replicas,
            desired,
            desired != view.spec_replicas,
            decision.scale.limited,
            applied,
        )

    def _deletion_order(self, fleet: Fleet) -> Callable[[], Sequence[GameServer]]:
        def order() -> Sequence[GameServer]:
            meta = _meta(fleet)
            selector = selector_from_set({FLEET_NAME_LABEL: meta.get_name()})
            listed = self.game_server_lister.game_servers(meta.get_namespace()).list(selector)
            return game_servers_in_deletion_order(fleet, listed, self.node_counts(), self.gates)

        return order

    async def _compute(
        self, fas: FleetAutoscaler, fleet: Fleet, policy: FleetAutoscalerPolicy
    ) -> Decision | None:
        inputs = PolicyInputs(
            fleet=fleet,
            gates=self.gates,
            now=dt.datetime.fromtimestamp(self.clock.now(), dt.UTC),
            deletion_order=self._deletion_order(fleet),
            webhook_client=self.webhook_client,
            registry=self.registry,
            wasm=self.wasm,
        )
        name = _meta(fas).get_name()
        try:
            return await compute_desired_fleet_size(policy, inputs)
        except InactiveScheduleError:
            self.log.debug("schedule not active", fleetAutoscaler=name)
            return None
        except PolicyError as err:
            if isinstance(err, ChainPolicyError):
                self.recorder.event(
                    fas,
                    EventType.WARNING,
                    "ChainPolicy",
                    f"FleetAutoscaler '{name}' failed to apply ChainPolicy | ID: Unknown | Type: ",
                )
                if isinstance(err.cause, InactiveScheduleError):
                    return None
            self.recorder.event(
                fas,
                EventType.WARNING,
                "FleetAutoscaler",
                f"Error calculating desired fleet size on FleetAutoscaler {name}. Error: {err}",
            )
            await self._update_status_unable_to_scale(fas)
            raise PolicyError(
                f"error calculating autoscaling fleet: {_meta(fleet).get_name()}: {err}"
            ) from None

    def _chain_event(self, fas: FleetAutoscaler, decision: Decision) -> None:
        entry = decision.chain_entry
        assert entry is not None
        self.recorder.event(
            fas,
            EventType.NORMAL,
            "ChainPolicy",
            f"FleetAutoscaler '{_meta(fas).get_name()}' successfully applied ChainPolicy "
            f"| ID: {entry.id or ''} | Type: {entry.type or ''}",
        )

    async def _scale_fleet(
        self, fas: FleetAutoscaler, fleet: Fleet, spec_replicas: int, replicas: int
    ) -> None:
        if replicas == spec_replicas:
            return
        name = _meta(fleet).get_name()
        updated = copy.deepcopy(fleet)
        updated.fleet_spec.replicas = replicas
        try:
            stored = (
                await self.clientset.agones_v1()
                .fleets(_meta(fleet).get_namespace())
                .update(updated)
            )
        except Exception as err:
            self.recorder.event(
                fas,
                EventType.WARNING,
                "AutoScalingFleetError",
                f"Error on scaling fleet {name} from {spec_replicas} to {replicas}. Error: {err}",
            )
            raise  # a 409 stays a conflict for the queue (retried, logged at debug)
        self.fleet_cache.mutation(stored)
        self.recorder.event(
            fas,
            EventType.NORMAL,
            "AutoScalingFleet",
            f"Scaling fleet {name} from {spec_replicas} to {replicas}",
        )

    async def _write_status(self, fas: FleetAutoscaler, status: _Status) -> None:
        updated = copy.deepcopy(fas)
        updated.status = status.to_struct()
        namespace = _meta(fas).get_namespace()
        client = self.clientset.autoscaling_v1().fleet_autoscalers(namespace)
        self.fleet_autoscaler_cache.mutation(await client.update_status(updated))

    async def _update_status(
        self,
        fas: FleetAutoscaler,
        current: int,
        desired: int,
        scaled: bool,
        limited: bool,
        applied: str,
    ) -> None:
        old = _Status.of(fas)
        now = format_time(dt.datetime.fromtimestamp(self.clock.now(), dt.UTC))
        new = _Status(
            True, limited, current, desired, now if scaled else old.last_scale_time, applied
        )
        if new == old:
            return
        if limited:
            bound = "maximum" if current > desired else "minimum"
            fleet_name = _spec(fas).fleet_name
            self.recorder.event(
                fas,
                EventType.WARNING,
                "ScalingLimited",
                f"Scaling fleet {fleet_name} was limited to {bound} size of {desired}",
            )
        await self._write_status(fas, new)

    async def _update_status_unable_to_scale(self, fas: FleetAutoscaler) -> None:
        old = _Status.of(fas)
        new = _Status(False, False, 0, 0, old.last_scale_time, "")
        if new != old:
            await self._write_status(fas, new)


__all__ = ["Controller", "sync_interval_seconds"]
