"""Reaching a Service from the API server (webhooks, aggregated APIs), as kube-apiserver's service
resolver does, on one machine.

A Service is resolved, in order, through:
1. its annotation `local.agones-py.dev/address: "<host>:<port>"` (the simplest way to point a Service
   at a process listening on 127.0.0.1), or several comma-separated, one picked at random per
   request as kube-proxy spreads connections over a Service's endpoints;
2. its Endpoints object (same name): the first ready address, with the port matching the Service
   port's name (or the only port);
3. `spec.externalName` for ExternalName Services.
TLS is verified against the name `<service>.<namespace>.svc`, as a cluster does.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from .store import Store

ADDRESS_ANNOTATION = "local.agones-py.dev/address"


class ServiceUnresolvable(Exception):
    pass


@dataclass(frozen=True)
class ServiceTarget:
    base_url: str
    server_name: str


def resolve_service(store: Store, namespace: str, name: str, port: int = 443) -> ServiceTarget:
    server_name = f"{name}.{namespace}.svc"
    entry = store.get("/services", namespace, name)
    if entry is None:
        raise ServiceUnresolvable(f'service "{name}" not found')
    svc: dict[str, Any] = entry.obj
    address = (svc["metadata"].get("annotations") or {}).get(ADDRESS_ANNOTATION)
    if address:
        chosen = random.choice([a.strip() for a in address.split(",") if a.strip()] or [address])
        return ServiceTarget(f"https://{chosen}", server_name)
    spec = svc.get("spec") or {}
    svc_port = next((p for p in spec.get("ports") or [] if p.get("port") == port), None)
    eps = store.get("/endpoints", namespace, name)
    if eps is not None:
        for subset in eps.obj.get("subsets") or []:
            addresses = subset.get("addresses") or []
            ports = subset.get("ports") or []
            if not addresses or not ports:
                continue
            chosen = ports[0]
            if svc_port is not None and svc_port.get("name"):
                chosen = next((p for p in ports if p.get("name") == svc_port["name"]), chosen)
            return ServiceTarget(f"https://{addresses[0]['ip']}:{chosen['port']}", server_name)
    if spec.get("type") == "ExternalName" and spec.get("externalName"):
        return ServiceTarget(f"https://{spec['externalName']}:{port}", server_name)
    raise ServiceUnresolvable(f'service "{namespace}/{name}" has no reachable endpoints')
