"""The resources the typed clients are generated for (`typed_clients`): every kind of the scheme,
plus the core kinds the controllers need as plain dicts, with the names derived from each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agones.apis.scheme import load
from tools.codegen import crds


@dataclass(frozen=True)
class Res:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    status: bool
    create_only: bool = False
    type_module: str | None = None  # None: plain dicts

    @property
    def pkg(self) -> str:
        """The group's package name: `agones` for agones.dev, `core` for the legacy group."""
        return self.group.split(".")[0] if self.group else "core"

    @property
    def snake(self) -> str:
        return snake(self.kind)

    @property
    def accessor(self) -> str:
        """The plural accessor, `game_servers`, `game_server_allocation_policies`."""
        return plural_snake(self.kind, self.plural)

    @property
    def const(self) -> str:
        return self.accessor.upper()

    @property
    def file(self) -> str:
        return self.kind.lower()

    @property
    def item(self) -> str:
        return self.kind if self.type_module else "dict[str, Any]"


CORE = (
    Res("", "v1", "Pod", "pods", namespaced=True, status=True),
    Res("", "v1", "Node", "nodes", namespaced=False, status=True),
    Res("", "v1", "Event", "events", namespaced=True, status=False),
    Res("", "v1", "Secret", "secrets", namespaced=True, status=False),
    Res("coordination.k8s.io", "v1", "Lease", "leases", namespaced=True, status=False),
)

NAMES_ONLY = (
    Res("", "v1", "ConfigMap", "configmaps", namespaced=True, status=False),
    Res("", "v1", "Namespace", "namespaces", namespaced=False, status=True),
    Res("", "v1", "Service", "services", namespaced=True, status=True),
    Res("", "v1", "ServiceAccount", "serviceaccounts", namespaced=True, status=False),
    Res("", "v1", "Endpoints", "endpoints", namespaced=True, status=False),
    Res("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims", namespaced=True, status=True),
    Res("", "v1", "PersistentVolume", "persistentvolumes", namespaced=False, status=True),
    Res("apps", "v1", "Deployment", "deployments", namespaced=True, status=True),
    Res("apps", "v1", "ReplicaSet", "replicasets", namespaced=True, status=True),
    Res("apps", "v1", "StatefulSet", "statefulsets", namespaced=True, status=True),
    Res("apps", "v1", "ControllerRevision", "controllerrevisions", namespaced=True, status=False),
    Res("discovery.k8s.io", "v1", "EndpointSlice", "endpointslices", namespaced=True, status=False),
    Res("storage.k8s.io", "v1", "StorageClass", "storageclasses", namespaced=False, status=False),
    Res(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        namespaced=False,
        status=True,
    ),
    Res(
        "admissionregistration.k8s.io",
        "v1",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        namespaced=False,
        status=False,
    ),
    Res(
        "admissionregistration.k8s.io",
        "v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        namespaced=False,
        status=False,
    ),
    Res("apiregistration.k8s.io", "v1", "APIService", "apiservices", namespaced=False, status=True),
)
"""Built-in kinds the project's code reads or writes as plain objects: a `Resource` constant each in
`client.versioned.resources` (the one table of where resources live), no typed client."""


def snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def plural_snake(kind: str, plural: str) -> str:
    """Put the kind's word breaks into its plural: GameServerSet/gameserversets → game_server_sets."""
    words = snake(kind)
    out, i = [], 0
    for ch in words:
        if ch == "_":
            out.append("_")
        elif i < len(plural) and plural[i] == ch:
            out.append(ch)
            i += 1
        else:
            break
    return "".join(out) + plural[i:]


def resources() -> list[Res]:
    typed = []
    for kind in sorted(load().kinds(), key=lambda k: (k.group, k.kind)):
        create_only = kind.group in crds.NOT_CRD_GROUPS
        status = not create_only and crds.spec_for(kind).status_subresource
        module = kind.type.__module__.removeprefix("agones.")
        typed.append(
            Res(
                kind.group,
                kind.version,
                kind.kind,
                kind.plural,
                kind.namespaced,
                status,
                create_only,
                module,
            )
        )
    return typed + list(CORE)


def group_versions(res: list[Res]) -> dict[tuple[str, str], list[Res]]:
    out: dict[tuple[str, str], list[Res]] = {}
    for r in res:
        out.setdefault((r.pkg, r.version), []).append(r)
    return out
