"""Simulated nodes and the scheduler that binds pods to them.

`node_object(name, address)` is a Ready Node with `address` (a 127.0.0.x loopback address) as its
InternalIP and ExternalIP and its name as Hostname. `choose_node(pod, nodes, pods)` is the pure
scheduling decision: nodes that are Ready and schedulable, where none of the pod's host ports
(protocol, port) is taken by a pod already bound there, and whose pod count stays under
`status.allocatable.pods`; among those, a pod with a preferred pod affinity (Agones' Packed
strategy) goes to the node running the most pods matching that affinity's label selector, others to
the node with the fewest pods; ties go to the first node by name. None when no node fits.

`Scheduler` watches unbound pods (`spec.nodeName` empty) and binds each through `pods/binding`, or
writes the `PodScheduled=False / Unschedulable` condition when no node fits (and retries when pods or
nodes change). Its `schedulercache.SchedulerCache` follows the pod informer's events, so a pass
looks only at the pods waiting for a node, and counts a pod being bound on its node until the
informer shows it bound. As `default-scheduler` it records the Events kube-scheduler does: `Scheduled`
("Successfully assigned <ns>/<pod> to <node>") and Warning `FailedScheduling` (the same message as
the condition).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Mapping
from typing import Any

import structlog

from ...client.errors import ApiError
from ...client.rest import RESTClient
from ...client.versioned.resources import NODES, PODS
from ...informers import ResourceEventHandlerFuncs, SharedInformerFactory
from ...record import EventBroadcaster, EventType
from ..apiserver.discovery import KUBERNETES_VERSION
from ..apiserver.meta import now_rfc3339
from ..apiserver.quantities import allocatable_pods
from .schedulercache import NodeUsage, SchedulerCache, host_ports, pod_key, selector_key

log = structlog.get_logger("agones.localcluster.nodes.scheduler")
Obj = Mapping[str, Any]


NODE_CAPACITY = {"cpu": "2", "memory": "8Gi", "ephemeral-storage": "100Gi"}
"""What every simulated node reports (and what a container without limits is limited to)."""


def node_object(name: str, address: str, max_pods: int = 1000) -> dict[str, Any]:
    """A Ready, schedulable Node reachable at `address`."""
    now = now_rfc3339()
    capacity = {**NODE_CAPACITY, "pods": str(max_pods)}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "agones.dev/local-node": "true",
            },
        },
        "spec": {},
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "addresses": [
                {"type": "InternalIP", "address": address},
                {"type": "ExternalIP", "address": address},
                {"type": "Hostname", "address": name},
            ],
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "KubeletReady",
                    "message": "kubelet is posting ready status (simulated)",
                    "lastHeartbeatTime": now,
                    "lastTransitionTime": now,
                }
            ],
            "nodeInfo": {"kubeletVersion": KUBERNETES_VERSION, "operatingSystem": "linux"},
        },
    }


def _ready(node: Obj) -> bool:
    if (node.get("spec") or {}).get("unschedulable"):
        return False
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return bool(cond.get("status") == "True")
    return False


def _preferred_affinity_selectors(pod: Obj) -> list[Obj]:
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get("podAffinity") or {}
    terms = affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []
    return [
        (t.get("podAffinityTerm") or {}).get("labelSelector") or {}
        for t in terms
        if (t.get("podAffinityTerm") or {}).get("labelSelector") is not None
    ]


def choose_node(pod: Obj, nodes: Iterable[Obj], pods: Iterable[Obj] | NodeUsage) -> str | None:
    """The node to bind `pod` to (see the module docstring), or None."""
    usage = pods if isinstance(pods, NodeUsage) else NodeUsage(pods)
    wanted = host_ports(pod)
    selectors = [(s, selector_key(s)) for s in _preferred_affinity_selectors(pod)]
    best: tuple[int, str] | None = None
    for node in sorted(nodes, key=lambda n: n["metadata"]["name"]):
        name = node["metadata"]["name"]
        if not _ready(node):
            continue
        running = usage.running(name)
        max_pods = allocatable_pods(node)
        if running >= max_pods:
            continue
        if usage.ports_taken(name, wanted):
            continue
        if selectors:
            score = -sum(usage.matching(name, s, key) for s, key in selectors)
        else:
            score = running
        if best is None or score < best[0]:
            best = (score, name)
    return None if best is None else best[1]


def unschedulable_message(pod: Obj, nodes: list[Obj], usage: NodeUsage) -> str:
    """Why no node fits, in kube-scheduler's words."""
    reasons: dict[str, int] = {}
    wanted = host_ports(pod)
    for node in nodes:
        name = node["metadata"]["name"]
        max_pods = allocatable_pods(node)
        if not _ready(node):
            reason = "node(s) were not ready"
        elif usage.running(name) >= max_pods:
            reason = "Too many pods"
        elif usage.ports_taken(name, wanted):
            reason = "node(s) didn't have free ports for the requested pod ports"
        else:
            continue
        reasons[reason] = reasons.get(reason, 0) + 1
    detail = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
    return f"0/{len(nodes)} nodes are available: {detail}."


class Scheduler:
    """Binds unscheduled pods to the simulated nodes (see the module docstring)."""

    def __init__(self, client: RESTClient, factory: SharedInformerFactory) -> None:
        self.client = client
        self.pods = factory.for_resource(PODS)
        self.nodes = factory.for_resource(NODES)
        self._wake = asyncio.Event()
        self.cache = SchedulerCache()
        self._unschedulable: set[str] = set()
        self.pods.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._pod_added,
                update_func=lambda _old, new: self._pod_added(new),
                delete_func=self._pod_deleted,
            )
        )
        self.nodes.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=lambda _: self._wake.set(),
                update_func=lambda _o, _n: self._wake.set(),
                delete_func=lambda _: self._wake.set(),
            )
        )
        self.binds = 0
        self.events = EventBroadcaster(client)
        self.recorder = self.events.new_recorder("default-scheduler", "")

    def _pod_added(self, pod: Obj) -> None:
        self.cache.add_pod(pod)
        self._wake_if_pending()

    def _pod_deleted(self, pod: Any) -> None:
        pod = getattr(pod, "obj", pod)  # a DeletedFinalStateUnknown holds the last state known
        self.cache.remove_pod(pod)
        self._unschedulable.discard(pod_key(pod))
        self._wake_if_pending()

    def _wake_if_pending(self) -> None:
        """A pass after a pod's change only when some pod waits for a node (this one, or one
        the change may have made room for): with none, a pass would find nothing to do."""
        if self.cache.pending:
            self._wake.set()

    async def run(self) -> None:
        events = asyncio.create_task(self.events.run())
        try:
            await self._run()
        finally:
            events.cancel()

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._schedule_all()
            except Exception:
                log.exception("scheduling pass failed")
                await asyncio.sleep(0.5)
                self._wake.set()

    async def _schedule_all(self) -> None:
        """One pass over the pods waiting for a node (kept by `cache` as the informer reports)."""
        if not self.cache.pending:
            return
        nodes = list(self.nodes.informer().get_store().list())
        binds = []
        for key in list(self.cache.pending):
            pod = self.cache.pending.get(key)
            if pod is None:  # bound, assumed or gone while this pass awaited a write
                continue
            md = pod["metadata"]
            node = choose_node(pod, nodes, self.cache.usage)
            if node is None:
                if key not in self._unschedulable:
                    self._unschedulable.add(key)
                    message = unschedulable_message(pod, nodes, self.cache.usage)
                    await self._mark_unschedulable(pod, message)
                continue
            self._unschedulable.discard(key)
            self.cache.assume_pod(pod, node)
            binds.append(self._bind(md["namespace"], md["name"], md.get("uid", ""), node))
        if binds:
            await asyncio.gather(*binds)

    async def _bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        bound = False
        try:
            await self.client.request("POST", PODS.path(namespace, name, "binding"), body=body)
            self.binds += 1
            bound = True
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": body["metadata"]}
            message = f"Successfully assigned {namespace}/{name} to {node}"
            self.recorder.event(pod, EventType.NORMAL, "Scheduled", message)
        except ApiError as err:
            if err.status_code not in (404, 409):
                log.warning("binding failed", pod=f"{namespace}/{name}", error=str(err))
                self._wake.set()
        finally:
            if not bound:
                # Whatever the failure (a connection error goes on to `run`, which retries), the
                # pod must not keep counting as bound, or no later pass would schedule it again.
                self.cache.forget_pod(uid)

    async def _mark_unschedulable(self, pod: Obj, message: str) -> None:
        md = pod["metadata"]
        ref = {"apiVersion": "v1", "kind": "Pod", "metadata": md}
        self.recorder.event(ref, EventType.WARNING, "FailedScheduling", message)
        cond = {
            "type": "PodScheduled",
            "status": "False",
            "reason": "Unschedulable",
            "message": message,
            "lastTransitionTime": now_rfc3339(),
        }
        with contextlib.suppress(ApiError):
            await self.client.patch(
                PODS,
                md["name"],
                {"status": {"phase": "Pending", "conditions": [cond]}},
                namespace=md["namespace"],
                patch_type="strategic",
                subresource="status",
            )
