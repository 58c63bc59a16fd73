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
nodes change). As `default-scheduler` it records the Events kube-scheduler does: `Scheduled`
("Successfully assigned <ns>/<pod> to <node>") and Warning `FailedScheduling` (the same message as
the condition).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
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


def host_ports(pod: Obj) -> set[tuple[str, int]]:
    """(protocol, hostPort) pairs a pod claims on its node."""
    spec = pod.get("spec") or {}
    out: set[tuple[str, int]] = set()
    for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        for p in c.get("ports") or []:
            if p.get("hostPort"):
                out.add((p.get("protocol") or "TCP", int(p["hostPort"])))
    return out


def _ready(node: Obj) -> bool:
    if (node.get("spec") or {}).get("unschedulable"):
        return False
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return bool(cond.get("status") == "True")
    return False


def _matches(selector: Obj, labels: Obj) -> bool:
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def _preferred_affinity_selectors(pod: Obj) -> list[Obj]:
    affinity = ((pod.get("spec") or {}).get("affinity") or {}).get("podAffinity") or {}
    terms = affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []
    return [
        (t.get("podAffinityTerm") or {}).get("labelSelector") or {}
        for t in terms
        if (t.get("podAffinityTerm") or {}).get("labelSelector") is not None
    ]


def _active(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


class NodeUsage:
    """What is bound to each node: pod counts, host ports, and counts of pods matching the
    affinity selectors asked about (cached, updated as pods are added)."""

    def __init__(self, pods: Iterable[Obj]) -> None:
        self.pods: dict[str, list[Obj]] = {}
        self.ports: dict[str, set[tuple[str, int]]] = {}
        self._matches: dict[tuple[str, str], int] = {}
        for pod in pods:
            self.add(pod)

    def add(self, pod: Obj, node: str | None = None) -> None:
        name = node or (pod.get("spec") or {}).get("nodeName")
        if not name or not _active(pod):
            return
        self.pods.setdefault(name, []).append(pod)
        self.ports.setdefault(name, set()).update(host_ports(pod))
        labels = (pod.get("metadata") or {}).get("labels") or {}
        for (node_name, key), count in list(self._matches.items()):
            if node_name == name and _matches(_selector_of(key), labels):
                self._matches[(node_name, key)] = count + 1

    def matching(self, node: str, selector: Obj) -> int:
        key = _selector_key(selector)
        if (node, key) not in self._matches:
            self._matches[(node, key)] = sum(
                1
                for p in self.pods.get(node, [])
                if _matches(selector, (p.get("metadata") or {}).get("labels") or {})
            )
        return self._matches[(node, key)]


def _selector_key(selector: Obj) -> str:
    return json.dumps(selector, sort_keys=True)


def _selector_of(key: str) -> Obj:
    loaded: Obj = json.loads(key)
    return loaded


def choose_node(pod: Obj, nodes: Iterable[Obj], pods: Iterable[Obj] | NodeUsage) -> str | None:
    """The node to bind `pod` to (see the module docstring), or None."""
    usage = pods if isinstance(pods, NodeUsage) else NodeUsage(pods)
    wanted = host_ports(pod)
    selectors = _preferred_affinity_selectors(pod)
    best: tuple[int, str] | None = None
    for node in sorted(nodes, key=lambda n: n["metadata"]["name"]):
        name = node["metadata"]["name"]
        if not _ready(node):
            continue
        running = len(usage.pods.get(name, []))
        max_pods = allocatable_pods(node)
        if running >= max_pods:
            continue
        if wanted & usage.ports.get(name, set()):
            continue
        if selectors:
            score = -sum(usage.matching(name, s) for s in selectors)
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
        elif len(usage.pods.get(name, [])) >= max_pods:
            reason = "Too many pods"
        elif wanted & usage.ports.get(name, set()):
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
        self._pending_bind: dict[str, str] = {}  # pod uid → node, until the informer shows it
        self._unschedulable: set[str] = set()
        handler = ResourceEventHandlerFuncs(
            add_func=lambda _: self._wake.set(),
            update_func=lambda _o, _n: self._wake.set(),
            delete_func=lambda _: self._wake.set(),
        )
        self.pods.informer().add_event_handler(handler)
        self.nodes.informer().add_event_handler(handler)
        self.binds = 0
        self.events = EventBroadcaster(client)
        self.recorder = self.events.new_recorder("default-scheduler", "")

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
        pods = list(self.pods.informer().get_store().list())
        nodes = list(self.nodes.informer().get_store().list())
        uids = {p["metadata"].get("uid") for p in pods}
        self._pending_bind = {u: n for u, n in self._pending_bind.items() if u in uids}
        # pods bound by us but not yet seen bound count as bound
        view: list[Obj] = []
        for p in pods:
            node = self._pending_bind.get(p["metadata"].get("uid", ""))
            if node and not (p.get("spec") or {}).get("nodeName"):
                p = {**p, "spec": {**(p.get("spec") or {}), "nodeName": node}}
            view.append(p)
        binds = []
        usage = NodeUsage(view)
        for pod in view:
            md = pod["metadata"]
            if (pod.get("spec") or {}).get("nodeName") or md.get("deletionTimestamp"):
                continue
            if (pod.get("spec") or {}).get("schedulerName", "default-scheduler") not in (
                "default-scheduler",
                "",
            ):
                continue
            node = choose_node(pod, nodes, usage)
            if node is None:
                if md.get("uid") not in self._unschedulable:
                    self._unschedulable.add(md.get("uid", ""))
                    await self._mark_unschedulable(pod, unschedulable_message(pod, nodes, usage))
                continue
            self._unschedulable.discard(md.get("uid", ""))
            self._pending_bind[md.get("uid", "")] = node
            usage.add(pod, node)
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
                self._pending_bind.pop(uid, None)

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
