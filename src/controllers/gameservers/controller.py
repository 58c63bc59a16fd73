"""The GameServer controller (Agones `pkg/gameservers/controller.go`).

`sync_game_server(key)` is a pipeline of idempotent steps, each taking the GameServer and returning
the one to hand on: deletion timestamp → PortAllocation → Creating → Starting → RequestReady → dev
GameServer → Shutdown. A step acts only in its own state; when it writes, the object the API returned
goes to the next step, so one sync can carry a GameServer through several states.

Keys come from three WorkerQueues: PortAllocation/Creating go to the creation queue, Shutdown to the
deletion queue, everything else to the main queue; one GameServer is synced by one of them at a
time (`keylocks`), so a transition is never written twice from the same cached object. GameServer updates are enqueued only when the
state changes or a deletion timestamp is set; a pod's scheduling (node name, then pod IPs) or
deletion re-enqueues its GameServer.

API writes are scarce. The informer cache lags our own writes, so every write's result goes into the
GameServer informer's shared MutationCache (which the sub-controllers read and write too), and a sync
starts from the newer of the cached object and the one we wrote: no 409 from acting on our own stale
read. Waiting for the world (a pod not yet scheduled, not yet in the cache, a container not yet
running) is not an error: a step raises `Requeue`, the key comes back through the queue's rate
limiter, and nothing is logged above debug.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import structlog
from msgspec import UNSET

from ...apis.agones.v1.gameserver import (
    FINALIZER_NAME,
    GAME_SERVER_ERRORED_AT_ANNOTATION,
    GAME_SERVER_READY_CONTAINER_ID_ANNOTATION,
    GameServer,
    GameServerState,
    NodeAddress,
    PortPolicy,
    Protocol,
    port_status,
)
from ...apis.core.v1 import Node, Pod
from ...apis.meta.objectmeta import controller_of, format_time
from ...client.errors import (
    AlreadyExistsError,
    ApiError,
    ForbiddenError,
    InvalidError,
    NotFoundError,
)
from ...client.versioned.resources import GAME_SERVERS, PODS
from ...clock import Clock, RealClock
from ...featuregates import Feature, FeatureGates
from ...informers import ExplicitKey, SharedInformerFactory, split_meta_namespace_key
from ...informers.shared_informer import ResourceEventHandlerFuncs
from ...informers.store import DeletedFinalStateUnknown
from ...portallocator import PortAllocator
from ...record import EventBroadcaster, EventType
from ...workqueue import ItemFastSlowRateLimiter, Requeue, WorkerQueue
from . import informers
from .gameservers import (
    apply_game_server_address_and_port,
    deep_copy,
    is_being_deleted,
    is_controlled_by,
    is_game_server_pod,
    pod_ips,
    pod_node_name,
    with_own_metadata,
    with_own_status,
)
from .health import HealthController
from .keylocks import KeyLocks
from .migration import MigrationController
from .missing import MissingPodController
from .pod import PodError, SidecarConfig, game_server_pod
from .succeeded import SucceededController

LEGACY_FINALIZER = "agones.dev"


def fast_rate_limiter() -> ItemFastSlowRateLimiter:
    """20 ms for the first five retries, then 500 ms (Agones' GameServer queues)."""
    return ItemFastSlowRateLimiter(0.02, 0.5, 5)


class Controller:
    """The GameServer controller with its health, missing-pod, migration and succeeded helpers."""

    def __init__(
        self,
        client: informers.Client,
        factory: SharedInformerFactory,
        events: EventBroadcaster,
        port_allocator: PortAllocator,
        sidecar_config: SidecarConfig,
        gates: FeatureGates,
        *,
        clock: Clock | None = None,
        logger: Any = None,
        scheduled_write_delay: float = 0.0,
    ) -> None:
        self.client = client
        self.scheduled_write_delay = scheduled_write_delay
        """Seconds between first seeing a Starting GameServer's pod with IPs and writing Scheduled
        (see `sync_game_server_starting_state`); 0 writes at once, as Agones does."""
        self._addressed_at: dict[str, float] = {}
        """Starting GameServers whose pod was seen with IPs, by key: when (monotonic)."""
        self.port_allocator = port_allocator
        self.sidecar_config = sidecar_config
        self.gates = gates
        self.clock = clock or RealClock()
        self.log = (logger or structlog.get_logger()).bind(controller="gameserver")
        self.events = events
        self.recorder = events.new_recorder("gameserver-controller")
        gs_informer = informers.game_servers(factory)
        pod_informer = informers.game_server_pods(factory)
        node_informer = informers.nodes(factory)
        self.game_server_lister = gs_informer.lister()
        self.pod_lister = pod_informer.lister()
        self.node_lister = node_informer.lister()

        self.game_server_cache = gs_informer.informer().mutation_cache()
        self.syncing = KeyLocks()
        """One sync per GameServer at a time across the three queues (see `keylocks`)."""

        def queue(name: str) -> WorkerQueue:
            return WorkerQueue(
                self.sync_game_server,
                self.log,
                "gameserver",
                f"agones.dev.GameServerController{name}",
                fast_rate_limiter(),
                clock=clock,
            )

        self.workerqueue = queue("")
        self.creation_worker_queue = queue("Creation")
        self.deletion_worker_queue = queue("Deletion")

        gs_informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self.enqueue_game_server_based_on_state,
                update_func=self._on_game_server_update,
                delete_func=self._on_game_server_delete,
            )
        )
        gs_informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(delete_func=port_allocator.on_delete)
        )
        pod_informer.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                update_func=self._on_pod_update, delete_func=self._on_pod_delete
            )
        )
        args = (client, factory, events, gates)
        self.health_controller = HealthController(*args, logger=self.log)
        self.migration_controller = MigrationController(*args, logger=self.log)
        self.missing_pod_controller = MissingPodController(*args, logger=self.log)
        self.succeeded_controller = (
            SucceededController(*args, logger=self.log)
            if gates.enabled(Feature.SIDECAR_CONTAINERS)
            else None
        )

    # -- event handlers --------------------------------------------------------------------------

    def enqueue_game_server_based_on_state(self, gs: GameServer) -> None:
        state = gs.state()
        if state in (GameServerState.PORT_ALLOCATION, GameServerState.CREATING):
            self.creation_worker_queue.enqueue(gs)
        elif state == GameServerState.SHUTDOWN:
            self.deletion_worker_queue.enqueue(gs)
        else:
            self.workerqueue.enqueue(gs)

    def _on_game_server_update(self, old: GameServer, new: GameServer) -> None:
        if old.state() != new.state() or new.meta.is_being_deleted():
            self.enqueue_game_server_based_on_state(new)

    def _on_game_server_delete(self, obj: Any) -> None:
        gs = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if isinstance(gs, GameServer):
            key = f"{gs.meta.get_namespace()}/{gs.meta.get_name()}"
            self.game_server_cache.forget(key)
            self._addressed_at.pop(key, None)
            self.events.forget(gs)  # its uid never comes back: the correlator's entries are dead

    def _owner_key(self, pod: Pod) -> ExplicitKey | None:
        owner = controller_of(pod.metadata)
        if owner is None:
            return None
        return ExplicitKey(f"{pod.metadata.get_namespace()}/{owner.name or ''}")

    def _on_pod_update(self, old: Pod, new: Pod) -> None:
        if not is_game_server_pod(old):
            return
        scheduled = pod_node_name(old) != pod_node_name(new)
        addressed = not pod_ips(old) and bool(pod_ips(new))
        key = self._owner_key(new)
        if (scheduled or addressed) and key is not None:
            self.workerqueue.enqueue(key)

    def _on_pod_delete(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        if isinstance(obj, Pod) and is_game_server_pod(obj):
            key = self._owner_key(obj)
            if key is not None:
                self.workerqueue.enqueue(key)

    # -- running -----------------------------------------------------------------------------------

    def _queues(self) -> list[WorkerQueue]:
        queues = [
            self.workerqueue,
            self.creation_worker_queue,
            self.deletion_worker_queue,
            self.health_controller.workerqueue,
            self.migration_controller.workerqueue,
            self.missing_pod_controller.workerqueue,
        ]
        if self.succeeded_controller is not None:
            queues.append(self.succeeded_controller.workerqueue)
        return queues

    async def run(self, workers: int) -> None:
        """Rebuild the port allocations from the (synced) caches, then run every queue."""
        self.port_allocator.sync_all(self.game_server_lister.list(), self.node_lister.list())
        runs: list[Awaitable[None]] = [
            self.workerqueue.run(workers),
            self.creation_worker_queue.run(workers),
            self.deletion_worker_queue.run(workers),
            self.health_controller.workerqueue.run(workers),
            self.migration_controller.workerqueue.run(1),
            self.missing_pod_controller.workerqueue.run(1),
        ]
        if self.succeeded_controller is not None:
            runs.append(self.succeeded_controller.workerqueue.run(workers))
        await asyncio.gather(*runs)

    async def shut_down_with_drain(self) -> None:
        await asyncio.gather(*(q.shut_down_with_drain() for q in self._queues()))

    def healthy(self) -> None:
        for q in self._queues():
            q.healthy()

    # -- the sync ----------------------------------------------------------------------------------

    async def _update(self, gs: GameServer) -> GameServer:
        """Write `gs` (our copy); remember the result so a stale cache read is bypassed — unless
        the write removed the last finalizer of a GameServer being deleted: then it is gone, and
        its delete event may already have been handled, so nothing would ever forget it."""
        stored = await informers.update_game_server(self.client, gs)
        if stored.meta.is_being_deleted() and not stored.meta.finalizers:
            self.game_server_cache.forget(f"{stored.meta.get_namespace()}/{stored.meta.get_name()}")
        else:
            self.game_server_cache.mutation(stored)
        return stored

    async def sync_game_server(self, key: str) -> None:
        try:
            split_meta_namespace_key(key)
        except ValueError:
            self.log.error("invalid resource key", gameserver=key)
            return
        async with self.syncing.hold(key):
            await self._sync_game_server(key)

    async def _sync_game_server(self, key: str) -> None:
        gs: GameServer | None = self.game_server_cache.get_by_key(key)
        if gs is None:
            self.log.debug("GameServer is no longer available for syncing", gameserver=key)
            return
        steps: list[Callable[[GameServer], Awaitable[GameServer]]] = [
            self.sync_game_server_deletion_timestamp,
            self.sync_game_server_port_allocation_state,
            self.sync_game_server_creating_state,
            self.sync_game_server_starting_state,
            self.sync_game_server_request_ready_state,
            self.sync_development_game_server,
            self.sync_game_server_shutdown_state,
        ]
        for step in steps:
            gs = await step(gs)

    def _event(self, gs: GameServer, reason: Any, message: str, warning: bool = False) -> None:
        kind = EventType.WARNING if warning else EventType.NORMAL
        self.recorder.event(gs, kind, str(reason or ""), message)

    def game_server_pod(self, gs: GameServer) -> Pod | None:
        """The GameServer's pod from the cache, if it exists and is controlled by it."""
        try:
            pod: Pod = self.pod_lister.by_namespace(gs.meta.get_namespace()).get(gs.meta.get_name())
        except NotFoundError:
            return None
        return pod if is_controlled_by(pod, gs) else None

    async def sync_game_server_deletion_timestamp(self, gs: GameServer) -> GameServer:
        """Delete the pod (once); when it is gone, remove our finalizer."""
        if not gs.meta.is_being_deleted():
            return gs
        _, is_dev = gs.get_dev_address()
        pod = None if is_dev else self.game_server_pod(gs)
        if pod is not None:
            if not is_being_deleted(pod):
                try:
                    await self.client.delete_raw(PODS, gs.meta.get_name(), gs.meta.get_namespace())
                except NotFoundError:
                    pass
                else:
                    self._event(gs, gs.state(), f"Deleting Pod {gs.meta.get_name()}")
            return gs
        finalizers = gs.meta.finalizers if isinstance(gs.meta.finalizers, list) else []
        if not any(f in (FINALIZER_NAME, LEGACY_FINALIZER) for f in finalizers):
            return gs
        gs_copy = with_own_metadata(gs)
        gs_copy.meta.finalizers = [
            f for f in finalizers if f not in (FINALIZER_NAME, LEGACY_FINALIZER)
        ]
        return await self._update(gs_copy)

    async def sync_game_server_port_allocation_state(self, gs: GameServer) -> GameServer:
        """Fill host ports, move to Creating; give the ports back if the API refuses that write."""
        if gs.state() != GameServerState.PORT_ALLOCATION or gs.meta.is_being_deleted():
            return gs
        gs_copy = self.port_allocator.allocate(deep_copy(gs))
        gs_copy.gs_status.state = GameServerState.CREATING
        try:
            stored = await self._update(gs_copy)
        except ApiError:
            # The API refused the write: the ports go back to the pool. On a timeout or a broken
            # connection the write may have happened, so the ports stay taken (a leak, undone by
            # the next rebuild, rather than a port handed out twice).
            self.port_allocator.deallocate(gs_copy)
            raise
        self._event(gs, GameServerState.PORT_ALLOCATION, "Port allocated")
        return stored

    async def sync_game_server_creating_state(self, gs: GameServer) -> GameServer:
        """Create the pod (or find it), move to Starting."""
        if gs.state() != GameServerState.CREATING or gs.meta.is_being_deleted():
            return gs
        if gs.get_dev_address()[1]:
            return gs
        if self.game_server_pod(gs) is None:
            if has_static_tcpudp_ports(gs):
                gs = split_static_tcpudp_ports(deep_copy(gs))
            gs = await self.create_game_server_pod(gs)
            if gs.state() == GameServerState.ERROR:
                return gs
        gs_copy = with_own_status(gs)
        gs_copy.gs_status.state = GameServerState.STARTING
        return await self._update(gs_copy)

    async def create_game_server_pod(self, gs: GameServer) -> GameServer:
        try:
            pod = game_server_pod(gs, self.sidecar_config, self.gates)
        except PodError as err:
            self.log.error("error creating pod from GameServer", error=str(err))
            return await self.move_to_error_state(gs, str(err))
        try:
            # The answer (the whole pod) is not needed: its name is the one sent.
            await self.client.create_raw(PODS, pod, gs.meta.get_namespace())
        except AlreadyExistsError:
            self._event(gs, gs.state(), "Pod already exists, reused")
            return gs
        except (InvalidError, ForbiddenError) as err:
            return await self.move_to_error_state(gs, str(err.message or err))
        except Exception:
            self._event(
                gs,
                gs.state(),
                f"error creating Pod for GameServer {gs.meta.get_name()}",
                warning=True,
            )
            raise
        self._event(gs, gs.state(), f"Pod {pod['metadata']['name']} created")
        return gs

    async def _node_for(self, gs: GameServer) -> tuple[Pod, Node]:
        """The pod and its node, or `Requeue` while either is not there yet."""
        pod = self.game_server_pod(gs)
        if pod is None:
            raise Requeue(f"pod for GameServer {gs.meta.get_name()} not in the cache yet")
        node_name = pod_node_name(pod)
        if not node_name:
            raise Requeue(f"node not yet populated for Pod {gs.meta.get_name()}")
        try:
            node: Node = self.node_lister.get(node_name)
        except NotFoundError:
            raise Requeue(
                f"node {node_name} for Pod {gs.meta.get_name()} not in the cache"
            ) from None
        return pod, node

    async def sync_game_server_starting_state(self, gs: GameServer) -> GameServer:
        """Once the pod has a node and IPs: fill address and ports, move to Scheduled.

        With `scheduled_write_delay`, the write waits that long after the pod was first seen
        with IPs: a game that calls `Ready()` as it starts has its sidecar's RequestReady land
        meanwhile, and the RequestReady step then fills the address and writes Ready — one write
        fewer, and no Scheduled PUT losing (409) to the sidecar's patch. A game slower than that
        gets its Scheduled that much later."""
        key = f"{gs.meta.get_namespace()}/{gs.meta.get_name()}"
        if gs.state() != GameServerState.STARTING or gs.meta.is_being_deleted():
            self._addressed_at.pop(key, None)
            return gs
        if gs.get_dev_address()[1]:
            return gs
        pod, node = await self._node_for(gs)
        if not pod_ips(pod):
            raise Requeue(f"pod IPs not yet populated for Pod {gs.meta.get_name()}")
        self._hold_scheduled_write(key)
        gs_copy = apply_game_server_address_and_port(with_own_status(gs), node, pod, self.gates)
        gs_copy.gs_status.state = GameServerState.SCHEDULED
        stored = await self._update(gs_copy)
        self._addressed_at.pop(key, None)
        self._event(stored, stored.state(), "Address and port populated")
        return stored

    def _hold_scheduled_write(self, key: str) -> None:
        """`Requeue` until `scheduled_write_delay` has passed since the pod was seen with IPs."""
        if self.scheduled_write_delay <= 0:
            return
        now = self.clock.monotonic()
        seen = self._addressed_at.setdefault(key, now)
        left = seen + self.scheduled_write_delay - now
        if left > 0:
            raise Requeue("holding Scheduled for an SDK Ready()", after=left)

    async def sync_game_server_request_ready_state(self, gs: GameServer) -> GameServer:
        """RequestReady → Ready, filling the address first if Scheduled was never seen."""
        if gs.state() != GameServerState.REQUEST_READY or gs.meta.is_being_deleted():
            return gs
        if gs.get_dev_address()[1]:
            return gs
        gs_copy = deep_copy(gs)
        address_populated = False
        if not gs.node_name():
            pod, node = await self._node_for(gs)
            gs_copy = apply_game_server_address_and_port(gs_copy, node, pod, self.gates)
            address_populated = True
        else:
            cached_pod = self.game_server_pod(gs)
            if cached_pod is None:
                raise Requeue(f"pod for GameServer {gs.meta.get_name()} not in the cache yet")
            pod = cached_pod
        if not self.gates.enabled(Feature.SIDECAR_CONTAINERS):
            await self._record_ready_container(gs_copy, pod)
        gs_copy.gs_status.state = GameServerState.READY
        stored = await self._update(gs_copy)
        if address_populated:
            self._event(stored, stored.state(), "Address and port populated")
        self._event(stored, stored.state(), "SDK.Ready() complete")
        return stored

    async def _record_ready_container(self, gs: GameServer, pod: Pod) -> None:
        """Without native sidecars: note which game container instance became Ready, on both."""
        annotations = gs.meta.get_annotations()
        if GAME_SERVER_READY_CONTAINER_ID_ANNOTATION not in annotations:
            container = gs.gs_spec.container
            cs = pod.container_status(container) if isinstance(container, str) else None
            if cs is None:
                raise Requeue("game server container not present in pod status")
            if not cs.running():
                raise Requeue("game server container is not currently running")
            gs.meta.set_annotation(GAME_SERVER_READY_CONTAINER_ID_ANNOTATION, cs.container_id or "")
        ready_id = gs.meta.get_annotations()[GAME_SERVER_READY_CONTAINER_ID_ANNOTATION]
        pod_annotations = pod.metadata.get_annotations()
        if GAME_SERVER_READY_CONTAINER_ID_ANNOTATION not in pod_annotations:
            # A merge patch: the cached pod is trimmed (see `informers`), never written back whole.
            await self.client.patch(
                PODS,
                gs.meta.get_name(),
                {
                    "metadata": {
                        "annotations": {GAME_SERVER_READY_CONTAINER_ID_ANNOTATION: ready_id}
                    }
                },
                namespace=gs.meta.get_namespace(),
                patch_type="merge",
            )

    async def sync_development_game_server(self, gs: GameServer) -> GameServer:
        """A dev GameServer (no pod): Creating or RequestReady → Ready on the dev address."""
        if gs.meta.is_being_deleted():
            return gs
        dev_address, is_dev = gs.get_dev_address()
        if not is_dev or gs.state() not in (
            GameServerState.CREATING,
            GameServerState.REQUEST_READY,
        ):
            return gs
        gs_copy = deep_copy(gs)
        if gs.state() == GameServerState.CREATING:
            status = gs_copy.gs_status
            status.ports = [port_status(p, self.gates) for p in gs.ports()]
            status.address = dev_address
            status.addresses = [NodeAddress(type="InternalIP", address=dev_address)]
            status.node_name = dev_address
        gs_copy.gs_status.state = GameServerState.READY
        return await self._update(gs_copy)

    async def sync_game_server_shutdown_state(self, gs: GameServer) -> GameServer:
        """Shutdown → delete the GameServer (the pod goes with it)."""
        if gs.state() != GameServerState.SHUTDOWN or gs.meta.is_being_deleted():
            return gs
        try:
            await self.client.delete_raw(
                GAME_SERVERS,
                gs.meta.get_name(),
                gs.meta.get_namespace(),
                propagation_policy="Background",
            )
        except NotFoundError:
            return gs
        self._event(gs, gs.state(), "Deletion started")
        return gs

    async def move_to_error_state(self, gs: GameServer, message: str) -> GameServer:
        gs_copy = deep_copy(gs)
        now = datetime.fromtimestamp(self.clock.now(), UTC)
        gs_copy.meta.set_annotation(GAME_SERVER_ERRORED_AT_ANNOTATION, format_time(now))
        gs_copy.gs_status.state = GameServerState.ERROR
        stored = await self._update(gs_copy)
        self._event(stored, stored.state(), message, warning=True)
        return stored


def has_static_tcpudp_ports(gs: GameServer) -> bool:
    """Whether `split_static_tcpudp_ports` has anything to split."""
    return any(
        p.port_policy == PortPolicy.STATIC and p.protocol == Protocol.TCPUDP for p in gs.ports()
    )


def split_static_tcpudp_ports(gs: GameServer) -> GameServer:
    """Static TCPUDP ports become `<name>-tcp` plus an appended `<name>-udp` (before the pod)."""
    ports = gs.ports()
    extra = []
    for port in ports:
        if port.port_policy == PortPolicy.STATIC and port.protocol == Protocol.TCPUDP:
            name = port.name if isinstance(port.name, str) else ""
            port.name, port.protocol = name + "-tcp", Protocol.TCP
            udp = type(port)(
                name=name + "-udp",
                port_policy=PortPolicy.STATIC,
                container_port=port.container_port,
                host_port=port.host_port,
                protocol=Protocol.UDP,
                container=port.container,
            )
            if port.range is not UNSET:
                udp.range = port.range
            extra.append(udp)
    ports.extend(extra)
    return gs
