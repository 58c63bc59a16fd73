"""Custom resources: schema validation (422 with causes), defaults, pruning, subresources, printer
columns, short names and categories, and CRD deletion."""

from __future__ import annotations

import pytest

from tests.cluster import Cluster
from tests.conformance.conftest import CRD, established, install_crd, new_crd, widget_crd_manifest
from tests.waiting import wait_for


def _causes(resp: object) -> list[tuple[str, str, str]]:
    details = resp.body["details"]  # type: ignore[attr-defined]
    return sorted((c["reason"], c["field"], c["message"]) for c in details["causes"])


def test_defaults_are_applied(cluster: Cluster, namespace: str, widgets: CRD) -> None:
    resp = cluster.api.post(
        widgets.path(namespace), widgets.obj("defaults", {"ports": [{"containerPort": 7000}]})
    )
    assert resp.status == 201, resp
    spec = resp.body["spec"]
    assert spec["replicas"] == 1
    assert spec["color"] == "blue"
    assert spec["ports"] == [{"containerPort": 7000, "protocol": "UDP"}]


def test_unknown_fields_are_pruned_except_where_preserved(
    cluster: Cluster, namespace: str, widgets: CRD
) -> None:
    body = widgets.obj(
        "pruned",
        {
            "replicas": 2,
            "bogus": 1,
            "template": {"anything": {"goes": True}},
            "ports": [{"containerPort": 1, "extra": "x"}],
        },
    )
    body["topLevelJunk"] = {"a": 1}
    resp = cluster.api.post(widgets.path(namespace), body)
    assert resp.status == 201, resp
    assert "bogus" not in resp.body["spec"]
    assert "topLevelJunk" not in resp.body
    assert "extra" not in resp.body["spec"]["ports"][0]
    assert resp.body["spec"]["template"] == {"anything": {"goes": True}}
    stored = cluster.api.get(widgets.path(namespace, "pruned")).body
    assert "bogus" not in stored["spec"]


def test_strict_field_validation_rejects_unknown_fields(
    cluster: Cluster, namespace: str, widgets: CRD
) -> None:
    body = widgets.obj("strict", {"replicas": 2, "bogus": 1})
    resp = cluster.api.post(widgets.path(namespace), body, fieldValidation="Strict")
    assert resp.status == 400
    assert resp.body["reason"] == "BadRequest"
    assert 'unknown field "spec.bogus"' in resp.body["message"]


@pytest.mark.parametrize(
    ("spec", "cause"),
    [
        pytest.param(
            {"ports": [{"containerPort": 7000, "protocol": "SCTP"}]},
            (
                "FieldValueNotSupported",
                "spec.ports[0].protocol",
                'Unsupported value: "SCTP": supported values: "UDP", "TCP", "TCPUDP"',
            ),
            id="enum",
        ),
        pytest.param(
            {"replicas": -1},
            (
                "FieldValueInvalid",
                "spec.replicas",
                "Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
            ),
            id="minimum",
        ),
        pytest.param(
            {"ports": [{"containerPort": 70000}]},
            (
                "FieldValueInvalid",
                "spec.ports[0].containerPort",
                "Invalid value: 70000: spec.ports[0].containerPort in body should be less than or equal to 65535",
            ),
            id="maximum",
        ),
        pytest.param(
            {"ports": [{"name": "p"}]},
            ("FieldValueRequired", "spec.ports[0].containerPort", "Required value"),
            id="required",
        ),
        pytest.param(
            {"replicas": "three"},
            (
                "FieldValueTypeInvalid",
                "spec.replicas",
                'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
            ),
            id="type",
        ),
        pytest.param(
            {"tags": ["a", "b", "a"]},
            ("FieldValueDuplicate", "spec.tags[2]", 'Duplicate value: "a"'),
            id="list-type-set",
        ),
    ],
)
def test_schema_validation_is_422_with_causes(
    cluster: Cluster, namespace: str, widgets: CRD, spec: dict, cause: tuple[str, str, str]
) -> None:
    resp = cluster.api.post(widgets.path(namespace), widgets.obj("invalid", spec))
    assert resp.status == 422, resp
    assert resp.body["reason"] == "Invalid"
    assert resp.body["details"]["kind"] == widgets.kind
    assert resp.body["details"]["group"] == widgets.group
    assert cause in _causes(resp)
    assert resp.body["message"].startswith(f'{widgets.kind}.{widgets.group} "invalid" is invalid: ')


def test_max_length(cluster: Cluster, namespace: str, widgets: CRD) -> None:
    resp = cluster.api.post(widgets.path(namespace), widgets.obj("toolong", {"size": "enormous"}))
    assert resp.status == 422
    ((reason, path, _),) = _causes(resp)
    assert path == "spec.size"
    assert reason in ("FieldValueTooLong", "FieldValueInvalid")


def test_int_or_string(cluster: Cluster, namespace: str, widgets: CRD) -> None:
    assert (
        cluster.api.post(widgets.path(namespace), widgets.obj("ios-int", {"target": 5})).status
        == 201
    )
    assert (
        cluster.api.post(widgets.path(namespace), widgets.obj("ios-str", {"target": "50%"})).status
        == 201
    )
    assert (
        cluster.api.post(widgets.path(namespace), widgets.obj("ios-bad", {"target": True})).status
        == 422
    )


def test_several_errors_are_aggregated(cluster: Cluster, namespace: str, widgets: CRD) -> None:
    resp = cluster.api.post(
        widgets.path(namespace), widgets.obj("multi", {"replicas": -1, "color": "pink"})
    )
    assert resp.status == 422
    # The schema's two causes and the scale subresource's check of .spec.replicas.
    assert len(resp.body["details"]["causes"]) == 3
    assert resp.body["message"].count("spec.") >= 3
    assert ": [" in resp.body["message"]


def test_update_is_validated_too(cluster: Cluster, namespace: str, widgets: CRD) -> None:
    cluster.api.post(widgets.path(namespace), widgets.obj("upd-valid"))
    resp = cluster.api.patch(widgets.path(namespace, "upd-valid"), {"spec": {"color": "pink"}})
    assert resp.status == 422


def test_scale_subresource(cluster: Cluster, namespace: str, widgets: CRD) -> None:
    cluster.api.post(widgets.path(namespace), widgets.obj("scaled", {"replicas": 2}))
    cluster.api.patch(
        widgets.path(namespace, "scaled", "status"),
        {"status": {"replicas": 2, "selector": "app=scaled"}},
    )
    scale = cluster.api.get(widgets.path(namespace, "scaled", "scale"))
    assert scale.status == 200
    assert scale.body["kind"] == "Scale"
    assert scale.body["apiVersion"] == "autoscaling/v1"
    assert scale.body["spec"]["replicas"] == 2
    assert scale.body["status"] == {"replicas": 2, "selector": "app=scaled"}
    patched = cluster.api.patch(
        widgets.path(namespace, "scaled", "scale"), {"spec": {"replicas": 5}}
    )
    assert patched.status == 200, patched
    assert patched.body["spec"]["replicas"] == 5
    assert cluster.api.get(widgets.path(namespace, "scaled")).body["spec"]["replicas"] == 5
    scale = cluster.api.get(widgets.path(namespace, "scaled", "scale")).body
    scale["spec"]["replicas"] = 3
    put = cluster.api.put(widgets.path(namespace, "scaled", "scale"), scale)
    assert put.status == 200
    assert cluster.api.get(widgets.path(namespace, "scaled")).body["spec"]["replicas"] == 3


def test_printer_columns_in_table(cluster: Cluster, namespace: str, widgets: CRD) -> None:
    cluster.api.post(
        widgets.path(namespace), widgets.obj("printed", {"replicas": 4, "color": "red"})
    )
    cluster.api.patch(widgets.path(namespace, "printed", "status"), {"status": {"state": "Ready"}})
    resp = cluster.api.request(
        "GET",
        widgets.path(namespace, "printed"),
        accept="application/json;as=Table;v=v1;g=meta.k8s.io",
    )
    assert resp.status == 200, resp
    assert resp.body["kind"] == "Table"
    cols = [c["name"] for c in resp.body["columnDefinitions"]]
    assert cols == ["Name", "Replicas", "Color", "State", "Age"]
    (row,) = resp.body["rows"]
    assert row["cells"][:4] == ["printed", 4, "red", "Ready"]
    assert row["object"]["metadata"]["name"] == "printed"


def test_short_name_and_category_in_discovery(cluster: Cluster, widgets: CRD) -> None:
    resources = cluster.api.get(f"/apis/{widgets.group}/{widgets.version}").body["resources"]
    main = next(r for r in resources if r["name"] == widgets.plural)
    assert main["shortNames"] == [widgets.short]
    assert main["categories"] == [widgets.category]
    assert main["singularName"] == widgets.kind.lower()


def test_crd_status_is_established_with_accepted_names(cluster: Cluster, widgets: CRD) -> None:
    crd = cluster.api.get(
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{widgets.name}"
    ).body
    conds = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conds["Established"] == "True"
    assert conds["NamesAccepted"] == "True"
    assert crd["status"]["acceptedNames"]["plural"] == widgets.plural
    assert crd["status"]["storedVersions"] == [widgets.version]


def test_invalid_crd_is_rejected(cluster: Cluster) -> None:
    bad = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "wrongname.conformance.agones-py.test"},
        "spec": {
            "group": "conformance.agones-py.test",
            "scope": "Namespaced",
            "names": {"plural": "things", "kind": "Thing"},
            "versions": [],
        },
    }
    resp = cluster.api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", bad)
    assert resp.status == 422
    assert resp.body["reason"] == "Invalid"


def test_deleting_a_crd_removes_its_resources(cluster: Cluster, namespace: str) -> None:
    crd = new_crd("gadget")
    install_crd(cluster, crd)
    assert cluster.api.post(crd.path(namespace), crd.obj("g1")).status == 201
    cluster.api.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd.name}")
    wait_for(
        lambda: (
            cluster.api.get(
                f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd.name}"
            ).status
            == 404
        ),
        timeout=60,
        what="CRD gone",
    )
    wait_for(
        lambda: cluster.api.get(crd.path(namespace, "g1")).status == 404,
        timeout=60,
        what="custom resources gone",
    )


def test_crd_deletion_waits_for_custom_resource_finalizers(
    cluster: Cluster, namespace: str
) -> None:
    crd = new_crd("blocker")
    install_crd(cluster, crd)
    crd_path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd.name}"
    assert (
        cluster.api.post(
            crd.path(namespace), crd.obj("held", finalizers=["example.com/hold"])
        ).status
        == 201
    )
    try:
        cluster.api.delete(crd_path)
        held = wait_for(
            lambda: (
                (r := cluster.api.get(crd.path(namespace, "held"))).status == 200
                and r.body["metadata"].get("deletionTimestamp")
                and r
            ),
            timeout=60,
            what="custom resource marked for deletion",
        )
        assert held.body["metadata"]["finalizers"] == ["example.com/hold"]
        assert cluster.api.get(crd_path).body["metadata"]["deletionTimestamp"]
    finally:
        cluster.api.patch(crd.path(namespace, "held"), {"metadata": {"finalizers": None}})
    wait_for(lambda: cluster.api.get(crd_path).status == 404, timeout=60, what="CRD gone")


def test_crd_serves_several_versions_of_one_storage(cluster: Cluster, namespace: str) -> None:
    crd = new_crd("duo")
    manifest = widget_crd_manifest(crd)
    v1 = manifest["spec"]["versions"][0]
    beta = {**v1, "name": "v1beta1", "storage": False}
    manifest["spec"]["versions"] = [v1, beta]
    resp = cluster.api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", manifest)
    assert resp.status == 201, resp
    wait_for(lambda: established(cluster, crd.name), what="CRD established")
    wait_for(
        lambda: cluster.api.get(f"/apis/{crd.group}/v1beta1").status == 200, what="v1beta1 served"
    )
    try:
        body = crd.obj("dual", {"replicas": 2})
        body["apiVersion"] = f"{crd.group}/v1beta1"
        created = cluster.api.post(
            f"/apis/{crd.group}/v1beta1/namespaces/{namespace}/{crd.plural}", body
        )
        assert created.status == 201, created
        assert created.body["apiVersion"] == f"{crd.group}/v1beta1"
        as_v1 = cluster.api.get(crd.path(namespace, "dual")).body
        assert as_v1["apiVersion"] == f"{crd.group}/v1"
        assert as_v1["spec"]["replicas"] == 2
        group = cluster.api.get(f"/apis/{crd.group}").body
        assert group["preferredVersion"]["version"] == "v1"
        assert [v["version"] for v in group["versions"]] == ["v1", "v1beta1"]
    finally:
        cluster.api.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd.name}")


def test_non_structural_schema_is_rejected(cluster: Cluster) -> None:
    crd = new_crd("loose")
    manifest = widget_crd_manifest(crd)
    spec_schema = manifest["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec_schema["properties"]["untyped"] = {"description": "no type"}
    resp = cluster.api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", manifest)
    assert resp.status == 422, resp
    fields = [c["field"] for c in resp.body["details"]["causes"]]
    # With one version (or all versions sharing their schema) the internal CRD holds the schema
    # at spec.validation, and v1.28 reports it there.
    assert "spec.validation.openAPIV3Schema.properties[spec].properties[untyped].type" in fields


def test_scale_subresource_checks_spec_replicas(
    cluster: Cluster, namespace: str, widgets: CRD
) -> None:
    # Beside the schema's minimum, the scale subresource's own check (ValidateScaleSpec) reports
    # the specReplicasPath as written, leading dot included.
    resp = cluster.api.post(widgets.path(namespace), widgets.obj("minus", {"replicas": -1}))
    assert resp.status == 422, resp
    causes = [(c["field"], c["message"]) for c in resp.body["details"]["causes"]]
    assert (".spec.replicas", "Invalid value: -1: should be a non-negative integer") in causes
    assert any(f == "spec.replicas" for f, _ in causes), causes


def test_scale_body_of_the_wrong_shape_is_400(
    cluster: Cluster, namespace: str, widgets: CRD
) -> None:
    cluster.api.post(widgets.path(namespace), widgets.obj("scale-shape", {"replicas": 1}))
    body = {"metadata": [{"name": "scale-shape"}], "spec": {"replicas": 2}}
    resp = cluster.api.put(widgets.path(namespace, "scale-shape", "scale"), body)
    assert resp.status == 400, resp
    assert resp.body["reason"] == "BadRequest"
    assert cluster.api.get(widgets.path(namespace, "scale-shape")).body["spec"]["replicas"] == 1


def test_a_wrong_type_on_an_enum_field_also_fails_the_enum(
    cluster: Cluster, namespace: str, widgets: CRD
) -> None:
    """kube-openapi's SchemaValidator runs every validator of a node, its type check and its enum
    check alike, so a number where a string enum is expected gives both causes."""
    spec = {"ports": [{"containerPort": 7000, "protocol": 5}]}
    resp = cluster.api.post(widgets.path(namespace), widgets.obj("invalid", spec))
    assert resp.status == 422, resp
    assert sorted(_causes(resp)) == [
        (
            "FieldValueNotSupported",
            "spec.ports[0].protocol",
            'Unsupported value: 5: supported values: "UDP", "TCP", "TCPUDP"',
        ),
        (
            "FieldValueTypeInvalid",
            "spec.ports[0].protocol",
            'Invalid value: "integer": spec.ports[0].protocol in body must be of type string: '
            '"integer"',
        ),
    ]
