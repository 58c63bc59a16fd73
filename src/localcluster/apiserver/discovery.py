"""Discovery documents: /version, /api, /api/v1, /apis, /apis/{group}[/{version}].

Built from the registry's current resource table on each request, so a new CRD is discoverable as
soon as it is established. Served as legacy (unaggregated) discovery, which every client falls back
to when the response is plain `application/json`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .resources import ResourceInfo

# A real release: kubectl's dispatcher picks its client by `minor`.
# The Kubernetes release whose API behaviour the local server reproduces; /version, the OpenAPI
# documents and the simulated nodes' kubeletVersion all report it.
KUBERNETES_VERSION = "v1.28.7"

VERSION_INFO = {
    "major": "1",
    "minor": "28",
    "gitVersion": KUBERNETES_VERSION,
    "gitCommit": "c8dcb00be9961ec36d141d2e4103f85f92bcf291",
    "gitTreeState": "clean",
    "buildDate": "2024-02-14T10:32:40Z",
    "goVersion": "go1.21.7",
    "compiler": "gc",
    "platform": "linux/amd64",
}

SUBRESOURCE_VERBS = {
    "status": ["get", "patch", "update"],
    "scale": ["get", "patch", "update"],
    "binding": ["create"],
    "eviction": ["create"],
    "finalize": ["update"],
}


def api_versions(address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    }


def resource_list(group_version: str, infos: Iterable[ResourceInfo]) -> dict[str, Any]:
    resources: list[dict[str, Any]] = []
    for info in infos:
        entry: dict[str, Any] = {
            "name": info.resource,
            "singularName": info.singular,
            "namespaced": info.namespaced,
            "kind": info.kind,
            "verbs": list(info.verbs),
        }
        if info.short_names:
            entry["shortNames"] = list(info.short_names)
        if info.categories:
            entry["categories"] = list(info.categories)
        resources.append(entry)
        for sub in sorted(info.subresources):
            sub_entry: dict[str, Any] = {
                "name": f"{info.resource}/{sub}",
                "singularName": "",
                "namespaced": info.namespaced,
                "kind": info.kind,
                "verbs": SUBRESOURCE_VERBS.get(sub, ["get"]),
            }
            if sub == "scale":
                sub_entry.update(group="autoscaling", version="v1", kind="Scale")
            elif sub == "binding":
                sub_entry["kind"] = "Binding"
            elif sub == "eviction":
                sub_entry.update(group="policy", version="v1", kind="Eviction")
            resources.append(sub_entry)
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }


def _version_key(v: str) -> tuple[int, int, int]:
    """Kubernetes version priority: GA > beta > alpha, then by numbers (v2 > v1, v1beta2 > v1beta1)."""
    import re

    m = re.match(r"^v(\d+)(?:(alpha|beta)(\d+))?$", v)
    if not m:
        return (-1, 0, 0)
    stage = {"alpha": 0, "beta": 1, None: 2}[m.group(2)]
    return (stage, int(m.group(1)), int(m.group(3) or 0))


def group_entry(
    group: str, versions: Iterable[str], preferred: str | None = None
) -> dict[str, Any]:
    ordered = sorted(set(versions), key=_version_key, reverse=True)
    pref = preferred or ordered[0]
    return {
        "name": group,
        "versions": [{"groupVersion": f"{group}/{v}", "version": v} for v in ordered],
        "preferredVersion": {"groupVersion": f"{group}/{pref}", "version": pref},
    }


def group_list(groups: dict[str, list[str]], preferred: dict[str, str]) -> dict[str, Any]:
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [group_entry(g, vs, preferred.get(g)) for g, vs in groups.items()],
    }


def group_doc(group: str, versions: list[str], preferred: str | None) -> dict[str, Any]:
    doc = group_entry(group, versions, preferred)
    return {"kind": "APIGroup", "apiVersion": "v1", **doc}
