"""What the server knows about each resource it serves: names, scope, subresources, selectors.

A `ResourceInfo` is the unit of routing, discovery and storage. Built-in kinds are declared here
(`builtin_resources()`, including a few stored-only ones: RBAC, PDBs, PriorityClasses); custom resources get one per served version from `crd.py`. Storage is keyed by
`<group>/<plural>` whatever the version, so every served version of a CRD shares its objects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .patch import PRIMITIVE_MERGE, PatchMeta
from .selectors import FieldGetter

ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


def _path(*names: str) -> FieldGetter:
    def get(obj: Mapping[str, Any]) -> str:
        cur: Any = obj
        for n in names:
            if not isinstance(cur, Mapping):
                return ""
            cur = cur.get(n)
        if cur is None:
            return ""
        if isinstance(cur, bool):
            return "true" if cur else "false"
        return str(cur)

    return get


COMMON_FIELDS: dict[str, FieldGetter] = {
    "metadata.name": _path("metadata", "name"),
    "metadata.namespace": _path("metadata", "namespace"),
}

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
    "spec.nodeName": _path("spec", "nodeName"),
    "spec.restartPolicy": _path("spec", "restartPolicy"),
    "spec.schedulerName": _path("spec", "schedulerName"),
    "spec.serviceAccountName": _path("spec", "serviceAccountName"),
    "spec.hostNetwork": lambda o: "true" if (o.get("spec") or {}).get("hostNetwork") else "false",
    "status.phase": _path("status", "phase"),
    "status.podIP": _path("status", "podIP"),
    "status.nominatedNodeName": _path("status", "nominatedNodeName"),
}

EVENT_FIELDS = {
    **COMMON_FIELDS,
    "involvedObject.kind": _path("involvedObject", "kind"),
    "involvedObject.namespace": _path("involvedObject", "namespace"),
    "involvedObject.name": _path("involvedObject", "name"),
    "involvedObject.uid": _path("involvedObject", "uid"),
    "involvedObject.apiVersion": _path("involvedObject", "apiVersion"),
    "involvedObject.resourceVersion": _path("involvedObject", "resourceVersion"),
    "involvedObject.fieldPath": _path("involvedObject", "fieldPath"),
    "reason": _path("reason"),
    "reportingComponent": _path("reportingComponent"),
    "source": lambda o: (
        (o.get("source") or {}).get("component") or o.get("reportingComponent") or ""
    ),
    "type": _path("type"),
}

# events.k8s.io/v1 events are stored as core/v1 events: its field labels read the stored form.
EVENTS_V1_FIELDS = {
    **COMMON_FIELDS,
    **{
        f"regarding.{f}": EVENT_FIELDS[f"involvedObject.{f}"]
        for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    },
    "reason": EVENT_FIELDS["reason"],
    "reportingController": EVENT_FIELDS["reportingComponent"],
    "deprecatedSource": EVENT_FIELDS["source"],
    "type": EVENT_FIELDS["type"],
}

# (core/v1 field, events.k8s.io/v1 field) pairs of the Event conversion.
_EVENT_FIELD_PAIRS = (
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("related", "related"),
    ("reportingComponent", "reportingController"),
    ("reportingInstance", "reportingInstance"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("eventTime", "eventTime"),
    ("action", "action"),
    ("reason", "reason"),
    ("type", "type"),
    ("series", "series"),
)


def event_to_core(obj: dict[str, Any]) -> dict[str, Any]:
    """An events.k8s.io/v1 Event in its stored core/v1 form."""
    out: dict[str, Any] = {"apiVersion": "v1", "kind": "Event", "metadata": obj.get("metadata", {})}
    for core, v1 in _EVENT_FIELD_PAIRS:
        if v1 in obj:
            out[core] = obj[v1]
    return out


def event_from_core(obj: dict[str, Any]) -> dict[str, Any]:
    """A stored core/v1 Event as events.k8s.io/v1 serves it."""
    out: dict[str, Any] = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": obj.get("metadata", {}),
    }
    for core, v1 in _EVENT_FIELD_PAIRS:
        if core in obj:
            out[v1] = obj[core]
    # What Go's encoding of events.k8s.io/v1 Event always writes: struct fields (never omitted)
    # and timestamps without omitempty, null when unset.
    out.setdefault("eventTime", None)
    out.setdefault("regarding", {})
    out.setdefault("deprecatedSource", {})
    out.setdefault("deprecatedFirstTimestamp", None)
    out.setdefault("deprecatedLastTimestamp", None)
    return out


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
            {**COMMON_FIELDS, "status.phase": _path("status", "phase")},
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
            {**COMMON_FIELDS, "type": _path("type")},
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


def _stored_only(status: frozenset[str]) -> list[ResourceInfo]:
    """Kinds a cluster's manifests carry that are stored and served here but that nothing acts on
    (no RBAC enforcement, no PDB controller): so a chart's YAML applies as a whole. Deployments
    and ReplicaSets are run by `deployment.py` / `replicaset.py` when the stack is up."""
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
            )
        ),
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
