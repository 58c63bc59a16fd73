"""What the scheduler knows between passes, kept current by pod events (kube-scheduler's
`internal/cache` with its assumed pods, and its queue of pods waiting for a node, in small).

`NodeUsage` is what is bound to each node: the pods counted there (every pod with a node whose phase
is neither Succeeded nor Failed), the host ports they claim (counted, so that two claims of one
port release one at a time), and for each label selector asked about (`matching`) how many of
those pods it matches. `assign(key, pod, node)` and `remove(key)` change one pod in O(selectors asked
about); after any sequence of them the answers equal those of `NodeUsage(pods)` built from scratch
over the pods last assigned.

`SchedulerCache` keeps a `NodeUsage` equal to the one built over the pods the informer holds, each
counted on its `spec.nodeName` or, while the scheduler is binding it (`assume_pod(pod, node)`, until
the informer shows it bound or `forget_pod` after a failed binding), on the node assumed, as
kube-scheduler counts assumed pods. `pending` holds, in the order they were first seen, the pods
that wait for a node: not bound, not assumed, not being deleted, for `default-scheduler`. Each
event costs O(selectors), so a scheduling pass costs O(pending pods), not O(all pods).
"""

from __future__ import annotations

import collections
import json
from collections.abc import Iterable, Mapping
from typing import Any

Obj = Mapping[str, Any]
Port = tuple[str, int]

SCHEDULER_NAME = "default-scheduler"


def host_ports(pod: Obj) -> set[Port]:
    """(protocol, hostPort) pairs a pod claims on its node."""
    spec = pod.get("spec") or {}
    out: set[Port] = set()
    for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        for p in c.get("ports") or []:
            if p.get("hostPort"):
                out.add((p.get("protocol") or "TCP", int(p["hostPort"])))
    return out


def matches(selector: Obj, labels: Obj) -> bool:
    """A LabelSelector's matchLabels and matchExpressions against a pod's labels."""
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


def active(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def pod_key(pod: Obj) -> str:
    """The pod's uid, else namespace/name (pods built by hand in tests have no uid)."""
    md = pod.get("metadata") or {}
    return str(md.get("uid") or f"{md.get('namespace', '')}/{md.get('name', '')}")


def _labels(pod: Obj) -> Obj:
    labels: Obj = (pod.get("metadata") or {}).get("labels") or {}
    return labels


class NodeUsage:
    """Pods, host ports and selector matches per node (see the module docstring)."""

    def __init__(self, pods: Iterable[Obj] = ()) -> None:
        self.pods: dict[str, dict[str, Obj]] = {}
        """node → pod key → pod."""
        self._ports: dict[str, collections.Counter[Port]] = {}
        self._node_of: dict[str, str] = {}
        self._selectors: dict[str, Obj] = {}
        self._matches: dict[str, dict[str, int]] = {}
        """node → selector key → pods there it matches, for the selectors asked about."""
        for pod in pods:
            self.assign(pod_key(pod), pod, (pod.get("spec") or {}).get("nodeName"))

    def assign(self, key: str, pod: Obj, node: str | None) -> None:
        """Count `pod` (as `key`) on `node`: on no node when `node` is empty or it finished."""
        self.remove(key)
        if not node or not active(pod):
            return
        self.pods.setdefault(node, {})[key] = pod
        self._node_of[key] = node
        self._ports.setdefault(node, collections.Counter()).update(host_ports(pod))
        self._count(node, pod, 1)

    def remove(self, key: str) -> None:
        node = self._node_of.pop(key, None)
        if node is None:
            return
        pod = self.pods[node].pop(key)
        ports = self._ports[node]
        for port in host_ports(pod):  # one claim each, without a walk over the node's ports
            if ports[port] > 1:
                ports[port] -= 1
            else:
                del ports[port]
        self._count(node, pod, -1)

    def _count(self, node: str, pod: Obj, delta: int) -> None:
        counts = self._matches.get(node)
        if not counts:
            return
        labels = _labels(pod)
        for skey in counts:
            if matches(self._selectors[skey], labels):
                counts[skey] += delta

    def running(self, node: str) -> int:
        return len(self.pods.get(node, ()))

    def ports_taken(self, node: str, wanted: set[Port]) -> bool:
        ports = self._ports.get(node)
        return ports is not None and any(p in ports for p in wanted)

    def matching(self, node: str, selector: Obj, skey: str | None = None) -> int:
        """How many pods on `node` `selector` matches (`skey`: its `selector_key`, when the caller
        asks about several nodes)."""
        skey = skey or selector_key(selector)
        counts = self._matches.setdefault(node, {})
        if skey not in counts:
            self._selectors.setdefault(skey, selector)
            counts[skey] = sum(
                1 for p in self.pods.get(node, {}).values() if matches(selector, _labels(p))
            )
        return counts[skey]


def selector_key(selector: Obj) -> str:
    """The key `NodeUsage` counts a label selector's matches under."""
    return json.dumps(selector, sort_keys=True)


def waits_for_node(pod: Obj) -> bool:
    """Unbound, not being deleted, and for this scheduler."""
    spec = pod.get("spec") or {}
    if spec.get("nodeName") or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    return spec.get("schedulerName", SCHEDULER_NAME) in (SCHEDULER_NAME, "")


class SchedulerCache:
    """The usage of every node and the pods waiting for one (see the module docstring)."""

    def __init__(self) -> None:
        self.usage = NodeUsage()
        self.pending: dict[str, Obj] = {}
        """pod key → the pod, for pods waiting for a node, first seen first."""
        self.assumed: dict[str, str] = {}
        """pod key → the node it is being bound to, until the informer shows it bound."""
        self._pods: dict[str, Obj] = {}

    def add_pod(self, pod: Obj) -> None:
        key = pod_key(pod)
        self._pods[key] = pod
        self._refresh(key)

    update_pod = add_pod

    def remove_pod(self, pod: Obj) -> None:
        key = pod_key(pod)
        self._pods.pop(key, None)
        self._refresh(key)

    def assume_pod(self, pod: Obj, node: str) -> None:
        """Count `pod` on `node` while it is bound there."""
        key = pod_key(pod)
        if key in self._pods:
            self.assumed[key] = node
            self._refresh(key)

    def forget_pod(self, key: str) -> None:
        """The binding of the pod `key` failed: it waits for a node again (if it still exists)."""
        self.assumed.pop(key, None)
        self._refresh(key)

    def _refresh(self, key: str) -> None:
        pod = self._pods.get(key)
        if pod is None:
            self.assumed.pop(key, None)
            self.usage.remove(key)
            self.pending.pop(key, None)
            return
        bound = (pod.get("spec") or {}).get("nodeName")
        if bound:
            self.assumed.pop(key, None)
        node = bound or self.assumed.get(key)
        self.usage.assign(key, pod, node)
        if not node and waits_for_node(pod):
            self.pending[key] = pod
        else:
            self.pending.pop(key, None)
