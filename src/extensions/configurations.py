"""The webhook configurations that send Agones' kinds to this server (Helm `extensions.yaml`).

`webhook_configurations(ca_bundle)` builds `agones-mutation-webhook` (webhook
`mutations.agones.dev`, path `/mutate`) and `agones-validation-webhook` (`validations.agones.dev`,
`/validate`) from `webhooks.ROUTES`, so the rules always match what the handlers serve: one rule
per (API group, operation set), failurePolicy Fail, AdmissionReview v1, through the Service
`agones-controller-service` in `namespace` (port 443). The GKE Autopilot pod webhook is not included.
`api_service(ca_bundle)` is the APIService `v1.allocation.agones.dev` that sends the allocation API
to the same Service (Helm's `groupPriorityMinimum` 1000, `versionPriority` 15).
"""

from __future__ import annotations

import base64
from typing import Any

from .webhooks import ROUTES

SERVICE_NAME = "agones-controller-service"
_PLURALS = {
    "GameServer": "gameservers",
    "GameServerSet": "gameserversets",
    "Fleet": "fleets",
    "FleetAutoscaler": "fleetautoscalers",
}


def _rules(path: str) -> list[dict[str, Any]]:
    grouped: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for route in ROUTES:
        if route.path != path or route.kind not in _PLURALS:
            continue
        key = (route.group, tuple(sorted(route.operations)))
        grouped.setdefault(key, []).append(_PLURALS[route.kind])
    return [
        {
            "apiGroups": [group],
            "apiVersions": ["v1"],
            "operations": list(operations),
            "resources": resources,
            "scope": "Namespaced",
        }
        for (group, operations), resources in sorted(grouped.items())
    ]


def _configuration(
    kind: str, name: str, webhook: str, path: str, ca_bundle: bytes, namespace: str
) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": [
            {
                "name": webhook,
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Fail",
                "timeoutSeconds": 10,
                "clientConfig": {
                    "service": {"name": SERVICE_NAME, "namespace": namespace, "path": path},
                    "caBundle": base64.b64encode(ca_bundle).decode(),
                },
                "rules": _rules(path),
            }
        ],
    }


def webhook_configurations(
    ca_bundle: bytes, namespace: str = "agones-system"
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(MutatingWebhookConfiguration, ValidatingWebhookConfiguration) for a PEM CA bundle."""
    return (
        _configuration(
            "MutatingWebhookConfiguration",
            "agones-mutation-webhook",
            "mutations.agones.dev",
            "/mutate",
            ca_bundle,
            namespace,
        ),
        _configuration(
            "ValidatingWebhookConfiguration",
            "agones-validation-webhook",
            "validations.agones.dev",
            "/validate",
            ca_bundle,
            namespace,
        ),
    )


def api_service(ca_bundle: bytes, namespace: str = "agones-system") -> dict[str, Any]:
    """The APIService of `allocation.agones.dev/v1`, served by the extensions Service."""
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": "v1.allocation.agones.dev"},
        "spec": {
            "group": "allocation.agones.dev",
            "version": "v1",
            "service": {"name": SERVICE_NAME, "namespace": namespace, "port": 443},
            "caBundle": base64.b64encode(ca_bundle).decode(),
            "groupPriorityMinimum": 1000,
            "versionPriority": 15,
        },
    }
