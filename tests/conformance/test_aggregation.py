"""APIService proxying: a group-version served by a Service (local only: the backend listens on
127.0.0.1)."""

from __future__ import annotations

import uuid

from agones.localcluster.services import ADDRESS_ANNOTATION
from tests.cluster import Cluster, wait_for
from tests.conformance.backend import Backend


def test_apiservice_proxies_its_group(local_only: Cluster, namespace: str) -> None:
    cluster = local_only
    group = f"agg{uuid.uuid4().hex[:6]}.agones-py.test"
    with Backend(group, (f"aggsvc.{namespace}.svc",)) as backend:
        svc = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": "aggsvc",
                "annotations": {ADDRESS_ANNOTATION: f"127.0.0.1:{backend.port}"},
            },
            "spec": {"ports": [{"port": 443}]},
        }
        assert cluster.api.post(f"/api/v1/namespaces/{namespace}/services", svc).status == 201
        name = f"v1.{group}"
        apiservice = {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": name},
            "spec": {
                "group": group,
                "version": "v1",
                "service": {"namespace": namespace, "name": "aggsvc", "port": 443},
                "caBundle": backend.ca_bundle,
                "groupPriorityMinimum": 1000,
                "versionPriority": 15,
            },
        }
        path = f"/apis/apiregistration.k8s.io/v1/apiservices/{name}"
        assert (
            cluster.api.post("/apis/apiregistration.k8s.io/v1/apiservices", apiservice).status
            == 201
        )
        try:

            def available() -> bool:
                conds = (cluster.api.get(path).body.get("status") or {}).get("conditions") or []
                return any(c["type"] == "Available" and c["status"] == "True" for c in conds)

            wait_for(available, what="APIService available")
            groups = {g["name"] for g in cluster.api.get("/apis").body["groups"]}
            assert group in groups
            disc = cluster.api.get(f"/apis/{group}/v1").body
            assert disc["resources"][0]["name"] == "echoes"
            resp = cluster.api.post(
                f"/apis/{group}/v1/namespaces/{namespace}/echoes",
                {"apiVersion": f"{group}/v1", "kind": "Echo", "spec": {"x": 1}},
            )
            assert resp.status == 201
            assert resp.body["status"] == {"echoedBy": "backend", "namespace": namespace}
            assert resp.body["spec"] == {"x": 1}
        finally:
            cluster.api.delete(path)
