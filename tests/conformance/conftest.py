"""Conformance fixtures: a uniquely named CRD (`widgets`) served for the whole session."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.cluster import Cluster
from tests.waiting import wait_for


@dataclass(frozen=True)
class CRD:
    group: str
    version: str
    plural: str
    kind: str
    short: str
    category: str

    @property
    def name(self) -> str:
        return f"{self.plural}.{self.group}"

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"

    def path(self, namespace: str, name: str = "", sub: str = "") -> str:
        out = f"/apis/{self.group}/{self.version}/namespaces/{namespace}/{self.plural}"
        if name:
            out += f"/{name}"
        if sub:
            out += f"/{sub}"
        return out

    def obj(self, name: str, spec: dict | None = None, **meta: object) -> dict:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "metadata": {"name": name, **meta},
            "spec": spec if spec is not None else {"replicas": 1},
        }


def widget_crd_manifest(crd: CRD) -> dict:
    port = {
        "type": "object",
        "required": ["containerPort"],
        "properties": {
            "name": {"type": "string"},
            "containerPort": {"type": "integer", "minimum": 1, "maximum": 65535},
            "protocol": {"type": "string", "enum": ["UDP", "TCP", "TCPUDP"], "default": "UDP"},
        },
    }
    spec = {
        "type": "object",
        "properties": {
            "replicas": {"type": "integer", "minimum": 0, "default": 1},
            "color": {"type": "string", "enum": ["red", "green", "blue"], "default": "blue"},
            "size": {"type": "string", "maxLength": 5},
            "ports": {"type": "array", "items": port},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "target": {"x-kubernetes-int-or-string": True},
            "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "selector": {"type": "string"},
        },
    }
    status = {
        "type": "object",
        "properties": {
            "replicas": {"type": "integer"},
            "state": {"type": "string"},
            "selector": {"type": "string"},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": crd.name},
        "spec": {
            "group": crd.group,
            "scope": "Namespaced",
            "names": {
                "plural": crd.plural,
                "singular": crd.kind.lower(),
                "kind": crd.kind,
                "shortNames": [crd.short],
                "categories": [crd.category],
            },
            "versions": [
                {
                    "name": crd.version,
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {"spec": spec, "status": status},
                        }
                    },
                    "subresources": {
                        "status": {},
                        "scale": {
                            "specReplicasPath": ".spec.replicas",
                            "statusReplicasPath": ".status.replicas",
                            "labelSelectorPath": ".status.selector",
                        },
                    },
                    "additionalPrinterColumns": [
                        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                        {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
                        {"name": "State", "type": "string", "jsonPath": ".status.state"},
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    ],
                }
            ],
        },
    }


def established(cluster: Cluster, name: str) -> bool:
    resp = cluster.api.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
    conds = (resp.body or {}).get("status", {}).get("conditions") or []
    return any(c["type"] == "Established" and c["status"] == "True" for c in conds)


def install_crd(cluster: Cluster, crd: CRD) -> None:
    resp = cluster.api.post(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widget_crd_manifest(crd)
    )
    assert resp.status == 201, resp
    wait_for(lambda: established(cluster, crd.name), what=f"CRD {crd.name} established")
    wait_for(
        lambda: cluster.api.get(f"/apis/{crd.group}/{crd.version}").status == 200, what="discovery"
    )


def new_crd(prefix: str = "widget") -> CRD:
    suffix = uuid.uuid4().hex[:8]
    return CRD(
        f"c{suffix}.conformance.agones-py.test",
        "v1",
        f"{prefix}s",
        prefix.capitalize(),
        f"{prefix[:2]}{suffix[:4]}",
        f"cat{suffix}",
    )


@pytest.fixture(scope="session")
def widgets(cluster: Cluster) -> Iterator[CRD]:
    crd = new_crd()
    install_crd(cluster, crd)
    try:
        yield crd
    finally:
        cluster.api.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd.name}")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every conformance test needs a cluster (select them with `-m cluster`)."""
    for item in items:
        if "tests/conformance/" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.cluster)
