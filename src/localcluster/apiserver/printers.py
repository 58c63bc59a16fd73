"""The columns `kubectl get` shows for built-in kinds, as kube-apiserver's table printers compute
them (a subset: the default, non-wide columns of the kinds served here).

A column is a printer-column definition plus `fn`, computing the cell from the object; custom
resources use their CRD's additionalPrinterColumns instead (see table.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .podprinter import print_pod
from .resources import ResourceInfo
from .table import AGE_COLUMN

Obj = dict[str, Any]


def _col(
    name: str, fn: Callable[[Obj], Any], kind: str = "string", priority: int = 0
) -> dict[str, Any]:
    return {"name": name, "type": kind, "fn": fn, "priority": priority}


def _pod_ready(pod: Obj) -> str:
    return print_pod(pod)[0]


def _pod_status(pod: Obj) -> str:
    return print_pod(pod)[1]


_ACCESS_SHORT = {
    "ReadWriteOnce": "RWO",
    "ReadOnlyMany": "ROX",
    "ReadWriteMany": "RWX",
    "ReadWriteOncePod": "RWOP",
}


def _access_modes(modes: Any) -> str:
    return ",".join(_ACCESS_SHORT.get(m, str(m)) for m in modes or [])


def _volume_claim(pv: Obj) -> str:
    ref = (pv.get("spec") or {}).get("claimRef") or {}
    return f"{ref['namespace']}/{ref['name']}" if ref.get("name") else ""


def _revision_controller(rev: Obj) -> str:
    refs = rev["metadata"].get("ownerReferences") or []
    ref = next((r for r in refs if r.get("controller")), None)
    if ref is None:
        return "<none>"
    group = str(ref.get("apiVersion", "")).split("/")[0]
    return f"{ref.get('kind', '').lower()}.{group}/{ref.get('name', '')}"


def _node_status(node: Obj) -> str:
    conds = {
        c.get("type"): c.get("status") for c in (node.get("status") or {}).get("conditions") or []
    }
    text = {"True": "Ready", "False": "NotReady"}.get(conds.get("Ready", ""), "Unknown")
    if (node.get("spec") or {}).get("unschedulable"):
        text += ",SchedulingDisabled"
    return text


def _node_roles(node: Obj) -> str:
    prefix = "node-role.kubernetes.io/"
    roles = sorted(
        k[len(prefix) :] for k in (node["metadata"].get("labels") or {}) if k.startswith(prefix)
    )
    return ",".join(roles) or "<none>"


def _service_ports(svc: Obj) -> str:
    ports = (svc.get("spec") or {}).get("ports") or []
    out = []
    for p in ports:
        text = str(p.get("port"))
        if p.get("nodePort"):
            text += f":{p['nodePort']}"
        out.append(f"{text}/{p.get('protocol', 'TCP')}")
    return ",".join(out) or "<none>"


def _external_ip(svc: Obj) -> str:
    ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    ips = [i.get("ip") or i.get("hostname") for i in ingress] + list(
        (svc.get("spec") or {}).get("externalIPs") or []
    )
    if ips:
        return ",".join(str(i) for i in ips)
    return "<pending>" if (svc.get("spec") or {}).get("type") == "LoadBalancer" else "<none>"


def _event_object(ev: Obj) -> str:
    ref = ev.get("involvedObject") or {}
    return f"{str(ref.get('kind', '')).lower()}/{ref.get('name', '')}"


def _endpoints(o: Any) -> str:
    """`ip:port` of every ready address and port, as kubectl prints them."""
    out = [
        f"{a.get('ip')}:{p.get('port')}"
        for subset in o.get("subsets") or []
        for a in subset.get("addresses") or []
        for p in subset.get("ports") or []
    ]
    return ",".join(out) or "<none>"


BUILTIN: dict[tuple[str, str], list[dict[str, Any]]] = {
    ("", "namespaces"): [_col("Status", lambda o: (o.get("status") or {}).get("phase", ""))],
    ("", "pods"): [
        _col("Ready", _pod_ready),
        _col("Status", _pod_status),
        _col("Restarts", lambda o: print_pod(o)[2]),
    ],
    ("", "nodes"): [
        _col("Status", _node_status),
        _col("Roles", _node_roles),
    ],
    ("", "services"): [
        _col("Type", lambda o: (o.get("spec") or {}).get("type", "")),
        _col("Cluster-IP", lambda o: (o.get("spec") or {}).get("clusterIP") or "<none>"),
        _col("External-IP", _external_ip),
        _col("Port(s)", _service_ports),
    ],
    ("", "configmaps"): [
        _col("Data", lambda o: len(o.get("data") or {}) + len(o.get("binaryData") or {}), "integer")
    ],
    ("", "secrets"): [
        _col("Type", lambda o: o.get("type", "")),
        _col("Data", lambda o: len(o.get("data") or {}), "integer"),
    ],
    ("", "serviceaccounts"): [_col("Secrets", lambda o: len(o.get("secrets") or []), "integer")],
    ("", "events"): [
        _col("Type", lambda o: o.get("type", "")),
        _col("Reason", lambda o: o.get("reason", "")),
        _col("Object", _event_object),
        _col("Message", lambda o: o.get("message", "")),
    ],
    ("apps", "deployments"): [
        _col(
            "Ready",
            lambda o: (
                f"{(o.get('status') or {}).get('readyReplicas', 0)}/{(o.get('spec') or {}).get('replicas', 1)}"
            ),
        ),
        _col("Up-to-date", lambda o: (o.get("status") or {}).get("updatedReplicas", 0), "integer"),
        _col("Available", lambda o: (o.get("status") or {}).get("availableReplicas", 0), "integer"),
    ],
    ("", "endpoints"): [_col("Endpoints", _endpoints)],
    ("discovery.k8s.io", "endpointslices"): [
        _col("AddressType", lambda o: o.get("addressType", "")),
        _col(
            "Ports",
            lambda o: ",".join(str(p.get("port")) for p in o.get("ports") or []) or "<unset>",
        ),
        _col(
            "Endpoints",
            lambda o: (
                ",".join(a for e in o.get("endpoints") or [] for a in e.get("addresses") or [])
                or "<unset>"
            ),
        ),
    ],
    ("apps", "replicasets"): [
        _col("Desired", lambda o: (o.get("spec") or {}).get("replicas", 0), "integer"),
        _col("Current", lambda o: (o.get("status") or {}).get("replicas", 0), "integer"),
        _col("Ready", lambda o: (o.get("status") or {}).get("readyReplicas", 0), "integer"),
    ],
    ("apps", "statefulsets"): [
        _col(
            "Ready",
            lambda o: (
                f"{(o.get('status') or {}).get('readyReplicas', 0)}/{(o.get('spec') or {}).get('replicas', 1)}"
            ),
        )
    ],
    ("apps", "controllerrevisions"): [
        _col("Controller", _revision_controller),
        _col("Revision", lambda o: o.get("revision", 0), "integer"),
    ],
    ("", "persistentvolumeclaims"): [
        _col("Status", lambda o: (o.get("status") or {}).get("phase", "")),
        _col("Volume", lambda o: (o.get("spec") or {}).get("volumeName", "")),
        _col(
            "Capacity", lambda o: ((o.get("status") or {}).get("capacity") or {}).get("storage", "")
        ),
        _col("Access Modes", lambda o: _access_modes((o.get("status") or {}).get("accessModes"))),
        _col("StorageClass", lambda o: (o.get("spec") or {}).get("storageClassName", "")),
    ],
    ("", "persistentvolumes"): [
        _col(
            "Capacity", lambda o: ((o.get("spec") or {}).get("capacity") or {}).get("storage", "")
        ),
        _col("Access Modes", lambda o: _access_modes((o.get("spec") or {}).get("accessModes"))),
        _col(
            "Reclaim Policy",
            lambda o: (o.get("spec") or {}).get("persistentVolumeReclaimPolicy", ""),
        ),
        _col("Status", lambda o: (o.get("status") or {}).get("phase", "")),
        _col("Claim", _volume_claim),
        _col("StorageClass", lambda o: (o.get("spec") or {}).get("storageClassName", "")),
        _col("Reason", lambda o: (o.get("status") or {}).get("reason", "")),
    ],
    ("storage.k8s.io", "storageclasses"): [
        _col("Provisioner", lambda o: o.get("provisioner", "")),
        _col("ReclaimPolicy", lambda o: o.get("reclaimPolicy", "Delete")),
        _col("VolumeBindingMode", lambda o: o.get("volumeBindingMode", "Immediate")),
        _col(
            "AllowVolumeExpansion",
            lambda o: "true" if o.get("allowVolumeExpansion") else "false",
            "boolean",
        ),
    ],
    ("coordination.k8s.io", "leases"): [
        _col("Holder", lambda o: (o.get("spec") or {}).get("holderIdentity", ""))
    ],
}
# The node's version follows its age, as kubectl shows it.
_NODE_VERSION = _col(
    "Version", lambda o: ((o.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", "")
)


def columns_for_resource(info: ResourceInfo) -> list[dict[str, Any]] | None:
    """The printer columns of a resource (after Name); None: just Age."""
    if info.custom is not None:
        return info.custom.printer_columns or None
    cols = BUILTIN.get((info.group, info.resource))
    if cols is None:
        return None
    out = [*cols, AGE_COLUMN]
    if (info.group, info.resource) == ("", "nodes"):
        out.append(_NODE_VERSION)
    return out
