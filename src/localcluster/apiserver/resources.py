"""What the server knows about each resource it serves: names, scope, subresources, selectors.

A `ResourceInfo` is the unit of routing, discovery and storage. Built-in kinds are declared here
(`builtin_resources()`, including a few stored-only ones: RBAC, PDBs, PriorityClasses); custom
resources get one per served version from `crd.py`. Storage is keyed by `<group>/<plural>`
whatever the version, so every served version of a CRD shares its objects (and events.k8s.io/v1
Events are stored as core/v1 Events, converted by `events.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .events import EVENT_FIELDS, EVENTS_V1_FIELDS, event_from_core, event_to_core
from .patch import PRIMITIVE_MERGE, PatchMeta
from .selectors import COMMON_FIELDS, FieldGetter, field_path

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


# Patch metadata every kind shares (ObjectMeta).
META_PATCH: dict[tuple[str, ...], str] = {
    ("metadata", "finalizers"): PRIMITIVE_MERGE,
    ("metadata", "ownerReferences"): "uid",
}


@dataclass
class ResourceInfo:
    group: str
    version: str
    resource: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: frozenset[str] = frozenset()
    fields: dict[str, FieldGetter] = field(default_factory=lambda: dict(COMMON_FIELDS))
    # None: strategic merge patch is refused (custom resources).
    patch_meta: PatchMeta | None = None
    # Whether metadata.generation is maintained (1 on create, +1 on each spec change).
    generation: bool = False
    # Whether DELETE answers with the deleted object (else a Success Status).
    return_deleted: bool = False
    verbs: tuple[str, ...] = ALL_VERBS
    # Set for custom resources: the crd.CustomResourceVersion serving this version.
    custom: Any = None
    # Where objects are stored when another resource owns the storage (events.k8s.io/v1 events
    # live with core/v1 events), with the conversions to and from the stored form.
    storage: str = ""
    # The top-level fields of a built-in kind: others are dropped (or rejected when strict), as
    # decoding into the Go type does. None: no such check (custom resources use their schema).
    top_fields: frozenset[str] | None = None
    to_storage: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    from_storage: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    @property
    def key(self) -> str:
        return self.storage or f"{self.group}/{self.resource}"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources


def _meta(extra: Mapping[tuple[str, ...], str] | None = None) -> dict[tuple[str, ...], str]:
    out = dict(META_PATCH)
    out.update(extra or {})
    return out


_CONTAINER = {
    ("ports",): "containerPort",
    ("env",): "name",
    ("volumeMounts",): "mountPath",
    ("volumeDevices",): "devicePath",
    ("resizePolicy",): "resourceName",
}


def _pod_spec_meta(prefix: tuple[str, ...]) -> dict[tuple[str, ...], str]:
    out = {
        (*prefix, "containers"): "name",
        (*prefix, "initContainers"): "name",
        (*prefix, "ephemeralContainers"): "name",
        (*prefix, "volumes"): "name",
        (*prefix, "imagePullSecrets"): "name",
        (*prefix, "hostAliases"): "ip",
        (*prefix, "resourceClaims"): "name",
        (*prefix, "schedulingGates"): "name",
    }
    for c in ("containers", "initContainers", "ephemeralContainers"):
        for sub, key in _CONTAINER.items():
            out[(*prefix, c, *sub)] = key
    return out


POD_FIELDS = {
    **COMMON_FIELDS,
    "spec.nodeName": field_path("spec", "nodeName"),
    "spec.restartPolicy": field_path("spec", "restartPolicy"),
    "spec.schedulerName": field_path("spec", "schedulerName"),
    "spec.serviceAccountName": field_path("spec", "serviceAccountName"),
    "spec.hostNetwork": lambda o: "true" if (o.get("spec") or {}).get("hostNetwork") else "false",
    "status.phase": field_path("status", "phase"),
    "status.podIP": field_path("status", "podIP"),
    "status.nominatedNodeName": field_path("status", "nominatedNodeName"),
}

_TOP_FIELDS = {
    "Namespace": ("spec", "status"),
    "Pod": ("spec", "status"),
    "Node": ("spec", "status"),
    "Service": ("spec", "status"),
    "Endpoints": ("subsets",),
    "ConfigMap": ("data", "binaryData", "immutable"),
    "Secret": ("data", "stringData", "type", "immutable"),
    "ServiceAccount": ("secrets", "imagePullSecrets", "automountServiceAccountToken"),
    # Both Event APIs are checked in the stored, core/v1 form.
    "Event": (
        "involvedObject",
        "reason",
        "message",
        "source",
        "firstTimestamp",
        "lastTimestamp",
        "count",
        "type",
        "eventTime",
        "series",
        "action",
        "related",
        "reportingComponent",
        "reportingInstance",
    ),
    "Lease": ("spec",),
    "CustomResourceDefinition": ("spec", "status"),
    "MutatingWebhookConfiguration": ("webhooks",),
    "ValidatingWebhookConfiguration": ("webhooks",),
    "APIService": ("spec", "status"),
    "Role": ("rules",),
    "ClusterRole": ("rules", "aggregationRule"),
    "RoleBinding": ("subjects", "roleRef"),
    "ClusterRoleBinding": ("subjects", "roleRef"),
    "Deployment": ("spec", "status"),
    "EndpointSlice": ("addressType", "endpoints", "ports"),
    "ReplicaSet": ("spec", "status"),
    "StatefulSet": ("spec", "status"),
    "ControllerRevision": ("data", "revision"),
    "PersistentVolumeClaim": ("spec", "status"),
    "PersistentVolume": ("spec", "status"),
    "StorageClass": (
        "provisioner",
        "parameters",
        "reclaimPolicy",
        "mountOptions",
        "allowVolumeExpansion",
        "volumeBindingMode",
        "allowedTopologies",
    ),
    "PodDisruptionBudget": ("spec", "status"),
    "PriorityClass": ("value", "globalDefault", "description", "preemptionPolicy"),
}


def builtin_resources() -> list[ResourceInfo]:
    """The built-in kinds served at start, in discovery order."""
    infos = _builtin_resources()
    for info in infos:
        info.top_fields = frozenset(("apiVersion", "kind", "metadata", *_TOP_FIELDS[info.kind]))
    return infos


def _builtin_resources() -> list[ResourceInfo]:
    status = frozenset({"status"})
    return [
        ResourceInfo(
            "",
            "v1",
            "namespaces",
            "Namespace",
            False,
            ("ns",),
            (),
            frozenset({"status", "finalize"}),
            {**COMMON_FIELDS, "status.phase": field_path("status", "phase")},
            _meta({("spec", "finalizers"): PRIMITIVE_MERGE}),
            # The namespace registry has no DeleteCollection (kubectl deletes them one by one).
            verbs=tuple(v for v in ALL_VERBS if v != "deletecollection"),
            return_deleted=True,
        ),
        ResourceInfo(
            "",
            "v1",
            "pods",
            "Pod",
            True,
            ("po",),
            ("all",),
            frozenset({"status", "binding", "eviction"}),
            POD_FIELDS,
            _meta({**_pod_spec_meta(("spec",)), ("status", "conditions"): "type"}),
            return_deleted=True,
        ),
        ResourceInfo(
            "",
            "v1",
            "nodes",
            "Node",
            False,
            ("no",),
            (),
            status,
            {
                **COMMON_FIELDS,
                "spec.unschedulable": lambda o: (
                    "true" if (o.get("spec") or {}).get("unschedulable") else "false"
                ),
            },
            _meta(
                {
                    ("status", "addresses"): "type",
                    ("status", "conditions"): "type",
                    ("spec", "podCIDRs"): PRIMITIVE_MERGE,
                }
            ),
        ),
        ResourceInfo(
            "",
            "v1",
            "services",
            "Service",
            True,
            ("svc",),
            ("all",),
            status,
            dict(COMMON_FIELDS),
            _meta({("spec", "ports"): "port", ("status", "conditions"): "type"}),
            return_deleted=True,
        ),
        ResourceInfo(
            "",
            "v1",
            "endpoints",
            "Endpoints",
            True,
            ("ep",),
            (),
            frozenset(),
            dict(COMMON_FIELDS),
            _meta(),
        ),
        ResourceInfo(
            "discovery.k8s.io",
            "v1",
            "endpointslices",
            "EndpointSlice",
            True,
            (),
            (),
            frozenset(),
            dict(COMMON_FIELDS),
            _meta(),
        ),
        ResourceInfo(
            "",
            "v1",
            "configmaps",
            "ConfigMap",
            True,
            ("cm",),
            (),
            frozenset(),
            dict(COMMON_FIELDS),
            _meta(),
        ),
        ResourceInfo(
            "",
            "v1",
            "secrets",
            "Secret",
            True,
            (),
            (),
            frozenset(),
            {**COMMON_FIELDS, "type": field_path("type")},
            _meta(),
        ),
        ResourceInfo(
            "",
            "v1",
            "serviceaccounts",
            "ServiceAccount",
            True,
            ("sa",),
            (),
            frozenset(),
            dict(COMMON_FIELDS),
            # imagePullSecrets is atomic on ServiceAccount (no patch strategy, unlike PodSpec's).
            _meta({("secrets",): "name"}),
        ),
        ResourceInfo(
            "", "v1", "events", "Event", True, ("ev",), (), frozenset(), EVENT_FIELDS, _meta()
        ),
        ResourceInfo(
            "events.k8s.io",
            "v1",
            "events",
            "Event",
            True,
            ("ev",),
            (),
            frozenset(),
            EVENTS_V1_FIELDS,
            _meta(),
            storage="/events",
            to_storage=event_to_core,
            from_storage=event_from_core,
        ),
        ResourceInfo(
            "coordination.k8s.io",
            "v1",
            "leases",
            "Lease",
            True,
            (),
            (),
            frozenset(),
            dict(COMMON_FIELDS),
            _meta(),
        ),
        ResourceInfo(
            "apiextensions.k8s.io",
            "v1",
            "customresourcedefinitions",
            "CustomResourceDefinition",
            False,
            ("crd", "crds"),
            ("api-extensions",),
            status,
            dict(COMMON_FIELDS),
            _meta(),
            generation=True,
            return_deleted=True,
        ),
        ResourceInfo(
            "admissionregistration.k8s.io",
            "v1",
            "mutatingwebhookconfigurations",
            "MutatingWebhookConfiguration",
            False,
            (),
            ("api-extensions",),
            frozenset(),
            dict(COMMON_FIELDS),
            _meta({("webhooks",): "name"}),
            generation=True,
        ),
        ResourceInfo(
            "admissionregistration.k8s.io",
            "v1",
            "validatingwebhookconfigurations",
            "ValidatingWebhookConfiguration",
            False,
            (),
            ("api-extensions",),
            frozenset(),
            dict(COMMON_FIELDS),
            _meta({("webhooks",): "name"}),
            generation=True,
        ),
        ResourceInfo(
            "apiregistration.k8s.io",
            "v1",
            "apiservices",
            "APIService",
            False,
            (),
            ("api-extensions",),
            status,
            dict(COMMON_FIELDS),
            _meta({("status", "conditions"): "type"}),
        ),
        *_stored_only(status),
    ]


def _storage(status: frozenset[str]) -> list[ResourceInfo]:
    """ControllerRevisions and the storage kinds StatefulSets' claims use (`storage.py`)."""
    return [
        ResourceInfo(
            "apps",
            "v1",
            "controllerrevisions",
            "ControllerRevision",
            True,
            (),
            (),
            frozenset(),
            dict(COMMON_FIELDS),
            _meta(),
        ),
        ResourceInfo(
            "",
            "v1",
            "persistentvolumeclaims",
            "PersistentVolumeClaim",
            True,
            ("pvc",),
            (),
            status,
            dict(COMMON_FIELDS),
            _meta({("status", "conditions"): "type"}),
        ),
        ResourceInfo(
            "",
            "v1",
            "persistentvolumes",
            "PersistentVolume",
            False,
            ("pv",),
            (),
            status,
            dict(COMMON_FIELDS),
            _meta(),
        ),
        ResourceInfo(
            "storage.k8s.io",
            "v1",
            "storageclasses",
            "StorageClass",
            False,
            ("sc",),
            (),
            frozenset(),
            dict(COMMON_FIELDS),
            _meta(),
        ),
    ]


def _stored_only(status: frozenset[str]) -> list[ResourceInfo]:
    """Kinds a cluster's manifests carry that are stored and served here but that nothing acts on
        (no RBAC enforcement, no PDB controller): so a chart's YAML applies as a whole. Deployments
        and ReplicaSets are run by `deployment.py` / `replicaset.py` when the stack is up, StatefulSets
    by `statefulset.py`, claims by the volume provisioner (`controllers/volumes.py`)."""
    rbac = "rbac.authorization.k8s.io"
    rule_meta = _meta()
    return [
        ResourceInfo(
            rbac, "v1", "roles", "Role", True, (), (), frozenset(), dict(COMMON_FIELDS), rule_meta
        ),
        ResourceInfo(
            rbac,
            "v1",
            "rolebindings",
            "RoleBinding",
            True,
            (),
            (),
            frozenset(),
            dict(COMMON_FIELDS),
            rule_meta,
        ),
        ResourceInfo(
            rbac,
            "v1",
            "clusterroles",
            "ClusterRole",
            False,
            (),
            (),
            frozenset(),
            dict(COMMON_FIELDS),
            rule_meta,
        ),
        ResourceInfo(
            rbac,
            "v1",
            "clusterrolebindings",
            "ClusterRoleBinding",
            False,
            (),
            (),
            frozenset(),
            dict(COMMON_FIELDS),
            rule_meta,
        ),
        *(
            ResourceInfo(
                "apps",
                "v1",
                plural,
                kind,
                True,
                (short,),
                ("all",),
                status | {"scale"},
                dict(COMMON_FIELDS),
                _meta(
                    {
                        **_pod_spec_meta(("spec", "template", "spec")),
                        ("status", "conditions"): "type",
                    }
                ),
                generation=True,
            )
            for plural, kind, short in (
                ("deployments", "Deployment", "deploy"),
                ("replicasets", "ReplicaSet", "rs"),
                ("statefulsets", "StatefulSet", "sts"),
            )
        ),
        *_storage(status),
        ResourceInfo(
            "policy",
            "v1",
            "poddisruptionbudgets",
            "PodDisruptionBudget",
            True,
            ("pdb",),
            (),
            status,
            dict(COMMON_FIELDS),
            _meta(),
            generation=True,
        ),
        ResourceInfo(
            "scheduling.k8s.io",
            "v1",
            "priorityclasses",
            "PriorityClass",
            False,
            ("pc",),
            (),
            frozenset(),
            dict(COMMON_FIELDS),
            _meta(),
        ),
    ]
