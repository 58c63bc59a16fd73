"""apps/v1 StatefulSets, ControllerRevisions and the storage kinds at the local API server over
real HTTP: defaults as kube-apiserver stores them, 422s with kube-apiserver's field paths, the
spec fields an update may not change, the scale subresource, the default StorageClass admission,
and a property: a malformed StatefulSet or claim is a 4xx `Status`, never a 5xx."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.localcluster import ServerOptions, ThreadedAPIServer
from tests.cluster import Cluster
from tests.fuzzing import examples, json_values, mutated


def statefulset(name: str = "web", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "i"}]},
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                }
            ],
        },
    }
    body["spec"].update(spec)
    return body


def claim(name: str = "c", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    body["spec"].update(spec)
    return body


@pytest.fixture(scope="module")
def local() -> Iterator[Cluster]:
    runner = ThreadedAPIServer(ServerOptions())
    srv = runner.start()
    yield Cluster(srv.kubeconfig, local=True, url=srv.url)
    runner.stop()


@pytest.fixture(scope="module")
def ns(local: Cluster) -> str:
    return local.create_namespace("sts")


def sts_path(ns: str, name: str = "") -> str:
    return f"/apis/apps/v1/namespaces/{ns}/statefulsets" + (f"/{name}" if name else "")


def causes(resp: Any) -> list[tuple[str, str]]:
    details = resp.body.get("details") or {}
    return [(c.get("field", ""), c.get("message", "")) for c in details.get("causes") or []]


def test_defaults_as_kube_apiserver_stores_them(local: Cluster, ns: str) -> None:
    resp = local.api.post(sts_path(ns), statefulset("defaults"))
    assert resp.status == 201, resp.body
    spec = resp.body["spec"]
    assert spec["replicas"] == 1
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["revisionHistoryLimit"] == 10
    assert spec["persistentVolumeClaimRetentionPolicy"] == {
        "whenDeleted": "Retain",
        "whenScaled": "Retain",
    }
    template = spec["volumeClaimTemplates"][0]
    assert (template["apiVersion"], template["kind"]) == ("v1", "PersistentVolumeClaim")
    assert template["spec"]["volumeMode"] == "Filesystem"
    assert template["status"] == {"phase": "Pending"}
    assert spec["template"]["spec"]["restartPolicy"] == "Always"
    assert resp.body["metadata"]["generation"] == 1


@pytest.mark.parametrize(
    ("spec", "field", "text"),
    [
        pytest.param(
            {"replicas": -1}, "spec.replicas", "greater than or equal to 0", id="replicas"
        ),
        pytest.param(
            {"podManagementPolicy": "Fast"},
            "spec.podManagementPolicy",
            "must be 'OrderedReady' or 'Parallel'",
            id="policy",
        ),
        pytest.param(
            {"updateStrategy": {"type": "Sometimes"}},
            "spec.updateStrategy",
            "must be 'RollingUpdate' or 'OnDelete'",
            id="strategy",
        ),
        pytest.param(
            {"updateStrategy": {"type": "OnDelete", "rollingUpdate": {"partition": 1}}},
            "spec.updateStrategy.rollingUpdate",
            "only allowed for updateStrategy 'RollingUpdate'",
            id="ondelete-rolling",
        ),
        pytest.param(
            {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": -2}}},
            "spec.updateStrategy.rollingUpdate.partition",
            "greater than or equal to 0",
            id="partition",
        ),
        pytest.param({"selector": None}, "spec.selector", "Required value", id="no-selector"),
        pytest.param(
            {"selector": {}},
            "spec.selector",
            "empty selector is invalid for statefulset",
            id="empty-selector",
        ),
        pytest.param(
            {"selector": {"matchLabels": {"app": "other"}}},
            "spec.template.metadata.labels",
            "`selector` does not match template `labels`",
            id="selector-mismatch",
        ),
        pytest.param(
            {"persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Keep"}},
            "spec.persistentVolumeClaimRetentionPolicy.whenDeleted",
            'Unsupported value: "Keep"',
            id="retention",
        ),
        pytest.param(
            {"minReadySeconds": -1}, "spec.minReadySeconds", "greater than or equal to 0", id="mrs"
        ),
        pytest.param(
            {"ordinals": {"start": -1}}, "spec.ordinals.start", "greater than or equal", id="start"
        ),
    ],
)
def test_invalid_statefulsets_name_the_field(
    local: Cluster, ns: str, spec: dict[str, Any], field: str, text: str
) -> None:
    body = statefulset("bad")
    body["spec"].update(spec)
    if spec.get("selector") is None and "selector" in spec:
        del body["spec"]["selector"]
    resp = local.api.post(sts_path(ns), body)
    assert resp.status == 422, resp.body
    assert any(f == field and text in m for f, m in causes(resp)), causes(resp)


def test_restart_policy_and_active_deadline(local: Cluster, ns: str) -> None:
    body = statefulset("bad-pod")
    body["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    body["spec"]["template"]["spec"]["activeDeadlineSeconds"] = 5
    resp = local.api.post(sts_path(ns), body)
    assert resp.status == 422
    fields = {f for f, _ in causes(resp)}
    assert {
        "spec.template.spec.restartPolicy",
        "spec.template.spec.activeDeadlineSeconds",
    } <= fields


def test_only_the_mutable_spec_may_change(local: Cluster, ns: str) -> None:
    assert local.api.post(sts_path(ns), statefulset("immutable")).status == 201
    resp = local.api.patch(sts_path(ns, "immutable"), {"spec": {"serviceName": "other"}})
    assert resp.status == 422
    assert causes(resp)[0][0] == "spec"
    assert "updates to statefulset spec for fields other than 'replicas'" in causes(resp)[0][1]
    ok = local.api.patch(
        sts_path(ns, "immutable"),
        {"spec": {"replicas": 3, "updateStrategy": {"type": "OnDelete", "rollingUpdate": None}}},
    )
    assert ok.status == 200, ok.body
    assert ok.body["metadata"]["generation"] == 2


def test_scale_subresource(local: Cluster, ns: str) -> None:
    assert local.api.post(sts_path(ns), statefulset("scaled")).status == 201
    scale = local.api.get(sts_path(ns, "scaled") + "/scale")
    assert scale.status == 200
    assert scale.body["kind"] == "Scale"
    assert scale.body["spec"] == {"replicas": 1}
    assert scale.body["status"]["selector"] == "app=web"
    patched = local.api.patch(sts_path(ns, "scaled") + "/scale", {"spec": {"replicas": 4}})
    assert patched.status == 200, patched.body
    assert local.api.get(sts_path(ns, "scaled")).body["spec"]["replicas"] == 4


def test_kubectl_get_sts_columns(local: Cluster, ns: str) -> None:
    local.api.post(sts_path(ns), statefulset("columns"))
    out = local.kubectl("get", "sts", "columns", "-n", ns).stdout
    header, row = out.splitlines()[:2]
    assert header.split() == ["NAME", "READY", "AGE"]
    assert row.split()[:2] == ["columns", "0/1"]


@pytest.mark.parametrize(
    ("spec", "field", "text"),
    [
        pytest.param(
            {"accessModes": []},
            "spec.accessModes",
            "at least 1 access mode is required",
            id="no-modes",
        ),
        pytest.param(
            {"accessModes": ["WriteSometimes"]},
            "spec.accessModes",
            'Unsupported value: "WriteSometimes"',
            id="bad-mode",
        ),
        pytest.param({"resources": {}}, "spec.resources[storage]", "Required value", id="no-size"),
        pytest.param(
            {"resources": {"requests": {"storage": "0"}}},
            "spec.resources[storage]",
            "must be greater than zero",
            id="zero-size",
        ),
    ],
)
def test_invalid_claims(
    local: Cluster, ns: str, spec: dict[str, Any], field: str, text: str
) -> None:
    resp = local.api.post(f"/api/v1/namespaces/{ns}/persistentvolumeclaims", claim("bad", **spec))
    assert resp.status == 422, resp.body
    assert any(f == field and text in m for f, m in causes(resp)), causes(resp)


def test_claims_get_the_default_class_and_keep_their_spec(local: Cluster, ns: str) -> None:
    sc = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {
            "name": "fast",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        },
        "provisioner": "example.com/none",
    }
    created_sc = local.api.post("/apis/storage.k8s.io/v1/storageclasses", sc)
    assert created_sc.status == 201, created_sc.body
    assert (created_sc.body["reclaimPolicy"], created_sc.body["volumeBindingMode"]) == (
        "Delete",
        "Immediate",
    )
    path = f"/api/v1/namespaces/{ns}/persistentvolumeclaims"
    created = local.api.post(path, claim("defaulted"))
    assert created.status == 201
    assert created.body["spec"]["storageClassName"] == "fast"
    assert created.body["status"] == {"phase": "Pending"}
    explicit = local.api.post(path, claim("explicit", storageClassName=""))
    assert explicit.body["spec"]["storageClassName"] == ""
    bind = local.api.patch(f"{path}/defaulted", {"spec": {"volumeName": "pv-1"}})
    assert bind.status == 200, bind.body
    change = local.api.patch(f"{path}/defaulted", {"spec": {"accessModes": ["ReadWriteMany"]}})
    assert change.status == 422
    assert causes(change)[0][0] == "spec"


def test_controller_revision_data_is_immutable(local: Cluster, ns: str) -> None:
    path = f"/apis/apps/v1/namespaces/{ns}/controllerrevisions"
    body = {"metadata": {"name": "r"}, "data": {"a": 1}, "revision": 1}
    assert local.api.post(path, body).status == 201
    assert local.api.patch(f"{path}/r", {"data": {"a": 2}}).status == 422
    missing = local.api.post(path, {"metadata": {"name": "r2"}, "revision": 1})
    assert missing.status == 422
    assert causes(missing)[0][0] == "data"


@settings(max_examples=examples(150))
@given(body=mutated(statefulset("fuzz")))
def test_malformed_statefulsets_get_a_4xx_status(local: Cluster, ns: str, body: Any) -> None:
    resp = local.api.raw("POST", sts_path(ns), json.dumps(body).encode(), "application/json")
    assert resp.status < 500, (body, resp.body)
    if resp.status >= 400:
        assert resp.body["kind"] == "Status", resp.body
        if resp.status == 422:
            assert all(f for f, _ in causes(resp)), resp.body
    else:
        local.api.delete(sts_path(ns, "fuzz"))


@settings(max_examples=examples(100))
@given(body=mutated(claim("fuzz")), verb=st.sampled_from(["POST", "PUT"]))
def test_malformed_claims_get_a_4xx_status(local: Cluster, ns: str, body: Any, verb: str) -> None:
    path = f"/api/v1/namespaces/{ns}/persistentvolumeclaims"
    if verb == "PUT":
        seeded = local.api.post(path, claim("seed"))
        current = seeded.body if seeded.status == 201 else local.api.get(f"{path}/seed").body
        body = copy.deepcopy(body) if isinstance(body, dict) else body
        if isinstance(body, dict) and isinstance(body.get("metadata"), dict):
            body["metadata"]["name"] = "seed"
            body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        path += "/seed"
    resp = local.api.raw(verb, path, json.dumps(body).encode(), "application/json")
    assert resp.status < 500, (body, resp.body)
    if resp.status >= 400:
        assert resp.body["kind"] == "Status", resp.body
    elif verb == "POST":
        local.api.delete(f"{path}/fuzz")


@settings(max_examples=examples(150))
@given(
    patch=st.one_of(mutated({"spec": statefulset()["spec"]}), json_values),
    target=st.sampled_from(["", "/scale", "/status"]),
    ctype=st.sampled_from(
        ["application/merge-patch+json", "application/strategic-merge-patch+json"]
    ),
)
def test_malformed_patches_of_a_statefulset_get_a_4xx_status(
    local: Cluster, ns: str, patch: Any, target: str, ctype: str
) -> None:
    path = sts_path(ns, "patched")
    if local.api.get(path).status == 404:
        assert local.api.post(sts_path(ns), statefulset("patched")).status == 201
    before = local.api.get(path).body
    resp = local.api.raw("PATCH", path + target, json.dumps(patch).encode(), ctype)
    assert resp.status < 500, (patch, resp.body)
    if resp.status >= 400:
        assert resp.body["kind"] == "Status", resp.body
        assert local.api.get(path).body == before  # a refused patch changes nothing
