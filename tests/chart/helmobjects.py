"""What a Helm release made, as REST paths: shared by the chart's install and deploy tests."""

from __future__ import annotations

from typing import Any

import yaml

from tools import helmchart

CLUSTER_SCOPED = {
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "PriorityClass",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
}
PLURALS = {
    "PriorityClass": "priorityclasses",
    "PodDisruptionBudget": "poddisruptionbudgets",
    "APIService": "apiservices",
}


def path_of(obj: dict[str, Any]) -> str:
    """The REST path of a rendered object (the kinds the chart renders)."""
    group, _, version = obj["apiVersion"].rpartition("/")
    base = f"/apis/{group}/{version}" if group else f"/api/{version}"
    plural = PLURALS.get(obj["kind"], obj["kind"].lower() + "s")
    namespace = obj["metadata"].get("namespace")
    scoped = f"/namespaces/{namespace}" if namespace else ""
    return f"{base}{scoped}/{plural}/{obj['metadata']['name']}"


def manifest_objects(release: dict[str, Any]) -> list[dict[str, Any]]:
    """The objects of a release's manifest, namespaced ones in the release namespace."""
    objs = [o for o in yaml.safe_load_all(release["manifest"]) if o]
    for obj in objs:  # Helm sets the release namespace on namespaced objects it applies
        if obj["kind"] not in CLUSTER_SCOPED:
            obj["metadata"].setdefault("namespace", helmchart.NAMESPACE)
    return objs
