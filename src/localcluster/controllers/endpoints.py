"""The endpoints controllers of the local cluster (kube-controller-manager's
`pkg/controller/endpoint` and `pkg/controller/endpointslice`, what clients observe).

For every Service with a selector, `sync_service(key)` lists the pods of its namespace the
selector matches and writes its Endpoints (one subset: the Ready pods' IPs under `addresses`, the
others under `notReadyAddresses`, each with its `targetRef`; the ports resolved from each service
port's `targetPort`, by number or by the name of a container port; an address carries the pod's
`spec.hostname` when its `spec.subdomain` names the Service, as StatefulSet pods' do) and one EndpointSlice
`<service>-<hash>` labelled `kubernetes.io/service-name` (endpoints with `conditions.ready`,
`serving`, `terminating`), each only when it changed. Terminating and finished pods are left out,
as the controller leaves them out of Endpoints. Services without a selector are left alone (their
Endpoints are someone else's). `endpoint_subsets` is the pure computation.

Keys come from Service events and from pod events (every Service of the pod's namespace whose
selector matches the pod's old or new labels).
"""

from __future__ import annotations

from typing import Any

import structlog

from ...client.errors import ApiError
from ...client.rest import Resource, RESTClient
from ...client.versioned.resources import ENDPOINT_SLICES, ENDPOINTS, PODS, SERVICES
from ...informers import DeletedFinalStateUnknown, ResourceEventHandlerFuncs, SharedInformerFactory
from ...workqueue import WorkerQueue, fast_rate_limiter
from ..apiserver.apps import safe_encode
from .replicaset import is_active, ready_since

log = structlog.get_logger("agones.localcluster.controllers.endpoints")
Obj = dict[str, Any]
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by"


def _selects(service: Obj, pod: Obj) -> bool:
    selector = (service.get("spec") or {}).get("selector")
    if not selector or not isinstance(selector, dict):
        return False
    labels = pod["metadata"].get("labels") or {}
    return all(labels.get(k) == v for k, v in selector.items())


def _target_port(svc_port: Obj, pod: Obj) -> int | None:
    target = svc_port.get("targetPort", svc_port.get("port"))
    if isinstance(target, int):
        return target
    for c in (pod.get("spec") or {}).get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("name") == target:
                return int(p["containerPort"])
    return None


def _endpoint_port(svc_port: Obj, number: int) -> Obj:
    out = {"port": number, "protocol": svc_port.get("protocol", "TCP")}
    if svc_port.get("name"):
        out["name"] = svc_port["name"]
    return out


def endpoint_subsets(service: Obj, pods: list[Obj]) -> list[Obj]:
    """The Endpoints subsets of a Service over its namespace's pods (`endpoints_controller.go`)."""
    ports = (service.get("spec") or {}).get("ports") or []
    ready: list[Obj] = []
    not_ready: list[Obj] = []
    resolved: list[Obj] = []
    for pod in sorted(pods, key=lambda p: p["metadata"]["name"]):
        ip = (pod.get("status") or {}).get("podIP")
        if not ip or not is_active(pod) or not _selects(service, pod):
            continue
        numbers = [_target_port(p, pod) for p in ports]
        if any(n is None for n in numbers):
            continue
        resolved = [_endpoint_port(p, n) for p, n in zip(ports, numbers, strict=True) if n]
        md = pod["metadata"]
        address = {
            "ip": ip,
            "nodeName": (pod.get("spec") or {}).get("nodeName", ""),
            "targetRef": {
                "kind": "Pod",
                "namespace": md["namespace"],
                "name": md["name"],
                "uid": md.get("uid", ""),
            },
        }
        pod_spec = pod.get("spec") or {}
        if pod_spec.get("hostname") and pod_spec.get("subdomain") == service["metadata"]["name"]:
            address["hostname"] = pod_spec["hostname"]
        (ready if ready_since(pod) is not None else not_ready).append(address)
    if not ready and not not_ready:
        return []
    subset: Obj = {"ports": resolved}
    if ready:
        subset["addresses"] = ready
    if not_ready:
        subset["notReadyAddresses"] = not_ready
    return [subset]


def endpoint_slice(service: Obj, subsets: list[Obj]) -> Obj:
    """The one EndpointSlice mirroring `subsets`."""
    md = service["metadata"]
    endpoints = []
    ports: list[Obj] = []
    for subset in subsets:
        ports = subset.get("ports") or []
        for key, is_ready in (("addresses", True), ("notReadyAddresses", False)):
            for a in subset.get(key) or []:
                endpoints.append(
                    {
                        "addresses": [a["ip"]],
                        "conditions": {
                            "ready": is_ready,
                            "serving": is_ready,
                            "terminating": False,
                        },
                        "nodeName": a.get("nodeName", ""),
                        "targetRef": a["targetRef"],
                        **({"hostname": a["hostname"]} if a.get("hostname") else {}),
                    }
                )
    return {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {
            "name": f"{md['name']}-{safe_encode(md.get('uid', '')[:5])}",
            "namespace": md["namespace"],
            "labels": {
                SERVICE_NAME_LABEL: md["name"],
                MANAGED_BY_LABEL: "endpointslice-controller.k8s.io",
            },
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Service",
                    "name": md["name"],
                    "uid": md.get("uid", ""),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "addressType": "IPv4",
        "endpoints": endpoints,
        "ports": ports,
    }


class EndpointsController:
    """Keeps each selecting Service's Endpoints and EndpointSlice (see the module docstring)."""

    def __init__(self, client: RESTClient, factory: SharedInformerFactory) -> None:
        self.client = client
        self.services = factory.for_resource(SERVICES)
        self.pods = factory.for_resource(PODS)
        self.endpoints = factory.for_resource(ENDPOINTS)
        self.slices = factory.for_resource(ENDPOINT_SLICES)
        self.workerqueue = WorkerQueue(
            self.sync_service, log, "service", "endpoints", fast_rate_limiter(5.0)
        )
        self.services.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self.workerqueue.enqueue_immediately,
                update_func=lambda _old, new: self.workerqueue.enqueue_immediately(new),
            )
        )
        self.pods.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._on_pod,
                update_func=lambda old, new: self._on_pod(new, old),
                delete_func=self._on_pod,
            )
        )

    async def run(self, workers: int = 2) -> None:
        await self.workerqueue.run(workers)

    def _on_pod(self, obj: Any, old: Any = None) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if not isinstance(pod, dict):
            return
        ns = pod["metadata"].get("namespace", "")
        for svc in self.services.lister().by_namespace(ns).list():
            if _selects(svc, pod) or (isinstance(old, dict) and _selects(svc, old)):
                self.workerqueue.enqueue_immediately(svc)

    async def sync_service(self, key: str) -> None:
        svc = self.services.informer().get_store().get_by_key(key)
        if svc is None or not (svc.get("spec") or {}).get("selector"):
            return
        ns, name = svc["metadata"]["namespace"], svc["metadata"]["name"]
        pods = self.pods.lister().by_namespace(ns).list()
        subsets = endpoint_subsets(svc, pods)
        body: Obj = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": name, "namespace": ns},
        }
        if subsets:
            body["subsets"] = subsets
        await self._write(ENDPOINTS, self.endpoints.informer().mutation_cache(), body, ("subsets",))
        desired = endpoint_slice(svc, subsets)
        await self._write(
            ENDPOINT_SLICES,
            self.slices.informer().mutation_cache(),
            desired,
            ("endpoints", "ports"),
        )

    async def _write(self, res: Resource, cache: Any, body: Obj, fields: tuple[str, ...]) -> None:
        md = body["metadata"]
        current = cache.get_by_key(f"{md['namespace']}/{md['name']}")
        if current is None:
            try:
                cache.mutation(await self.client.create(res, body, namespace=md["namespace"]))
                return
            except ApiError as err:
                if err.status_code != 409:
                    raise
                current = await self.client.get(res, md["name"], namespace=md["namespace"])
        if all((current.get(f) or []) == (body.get(f) or []) for f in fields):
            return
        updated = {**current, **{f: body.get(f) or [] for f in fields}}
        if not body.get("subsets") and res is ENDPOINTS:
            updated.pop("subsets", None)
        cache.mutation(await self.client.update(res, updated, namespace=md["namespace"]))
