"""APIService proxying: a group-version served by a Service (local only: the backend listens on
127.0.0.1)."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

from agones.localcluster.apiserver.services import ADDRESS_ANNOTATION
from tests.cluster import Cluster, wait_for
from tests.conformance.backend import Backend


def test_apiservice_proxies_its_group(local_only: Cluster, namespace: str, tmp_path: Path) -> None:
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
            if shutil.which("kubectl"):
                manifest = json.dumps(
                    {
                        "apiVersion": f"{group}/v1",
                        "kind": "Echo",
                        "metadata": {"namespace": namespace},
                        "spec": {"y": 2},
                    }
                )
                out = cluster.kubectl(
                    "create", "-f", "-", "-o", "json", stdin=manifest, cache_dir=str(tmp_path)
                )
                assert json.loads(out.stdout)["status"]["echoedBy"] == "backend"
        finally:
            cluster.api.delete(path)


def test_apiservice_becomes_available_when_its_backend_does(
    local_only: Cluster, namespace: str
) -> None:
    cluster = local_only
    group = f"late{uuid.uuid4().hex[:6]}.agones-py.test"
    with Backend(group, (f"latesvc.{namespace}.svc",)) as backend:
        svc_path = f"/api/v1/namespaces/{namespace}/services"
        svc = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "latesvc"},
            "spec": {"ports": [{"port": 443}]},
        }
        assert cluster.api.post(svc_path, svc).status == 201
        name = f"v1.{group}"
        path = f"/apis/apiregistration.k8s.io/v1/apiservices/{name}"
        spec = {
            "group": group,
            "version": "v1",
            "service": {"namespace": namespace, "name": "latesvc", "port": 443},
            "caBundle": backend.ca_bundle,
            "groupPriorityMinimum": 1000,
            "versionPriority": 15,
        }
        body = {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": name},
            "spec": spec,
        }
        assert cluster.api.post("/apis/apiregistration.k8s.io/v1/apiservices", body).status == 201
        try:

            def condition() -> str:
                conds = (cluster.api.get(path).body.get("status") or {}).get("conditions") or []
                return next((c["status"] for c in conds if c["type"] == "Available"), "")

            wait_for(
                lambda: condition() == "False", what="APIService unavailable without endpoints"
            )
            assert cluster.api.get(f"/apis/{group}/v1").status == 503
            cluster.api.patch(
                f"{svc_path}/latesvc",
                {"metadata": {"annotations": {ADDRESS_ANNOTATION: f"127.0.0.1:{backend.port}"}}},
            )
            wait_for(lambda: condition() == "True", timeout=30, what="APIService available")
        finally:
            cluster.api.delete(path)
