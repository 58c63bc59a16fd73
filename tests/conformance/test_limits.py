"""kube-apiserver's request limits and decoding rules: body size, nesting, media types, query
parameters, request-line length, apply identity, and the managedFields non-apply writes record."""

from __future__ import annotations

import json

import pytest

from tests.cluster import Cluster

MiB = 1024 * 1024


def configmaps(namespace: str) -> str:
    return f"/api/v1/namespaces/{namespace}/configmaps"


def configmap(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def test_body_over_three_mebibytes_is_413(cluster: Cluster, namespace: str) -> None:
    body = json.dumps(configmap("huge", a="x" * (3 * MiB + 1))).encode()
    resp = cluster.api.raw("POST", configmaps(namespace), body, "application/json")
    assert resp.status == 413, resp
    assert resp.body["reason"] == "RequestEntityTooLarge"
    assert resp.body["message"] == "Request entity too large: limit is 3145728"
    assert cluster.api.get(f"{configmaps(namespace)}/huge").status == 404


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        pytest.param(
            '{"metadata":{"name":"deep"},"data":' + '{"a":' * 1500 + "1" + "}" * 1500 + "}",
            "application/json",
            id="json",
        ),
        pytest.param(
            "metadata: {name: deep}\ndata: " + "[" * 1500 + "]" * 1500,
            "application/yaml",
            id="yaml",
        ),
    ],
)
def test_deeply_nested_body_is_400(
    cluster: Cluster, namespace: str, body: str, content_type: str
) -> None:
    resp = cluster.api.raw("POST", configmaps(namespace), body.encode(), content_type)
    assert resp.status == 400, resp
    assert resp.body["kind"] == "Status"
    assert resp.body["reason"] == "BadRequest"


def test_text_plain_body_is_415(cluster: Cluster, namespace: str) -> None:
    body = json.dumps(configmap("plain")).encode()
    resp = cluster.api.raw("POST", configmaps(namespace), body, "text/plain")
    assert resp.status == 415, resp
    assert resp.body["reason"] == "UnsupportedMediaType"
    assert resp.body["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    )
    assert cluster.api.get(f"{configmaps(namespace)}/plain").status == 404


@pytest.mark.parametrize("watch", [False, True], ids=["list", "watch"])
def test_timeout_seconds_must_be_an_integer(cluster: Cluster, namespace: str, watch: bool) -> None:
    query = {"timeoutSeconds": "abc", **({"watch": "true"} if watch else {})}
    resp = cluster.api.get(configmaps(namespace), **query)
    assert resp.status == 400, resp
    assert resp.body["reason"] == "BadRequest"
    assert "abc" in resp.body["message"]


def test_long_label_selector_reaches_the_parser(cluster: Cluster, namespace: str) -> None:
    # Go's MaxHeaderBytes (1 MiB) admits a 70,000-character request line: a selector that long is
    # parsed, valid or not.
    invalid = cluster.api.get(configmaps(namespace), labelSelector="a" * 70000)
    assert invalid.status == 400, invalid
    assert invalid.body["reason"] == "BadRequest"
    valid = ",".join(f"k{i}=v" for i in range(12000))
    assert len(valid) > 70000
    listed = cluster.api.get(configmaps(namespace), labelSelector=valid)
    assert listed.status == 200, listed
    assert listed.body["items"] == []


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({"X-Pad": "a" * (MiB + 8192)}, id="one-header"),
        pytest.param({f"X-Pad-{i}": "a" * 8000 for i in range(140)}, id="many-headers"),
    ],
)
def test_request_headers_over_one_mebibyte_are_431(
    cluster: Cluster, namespace: str, headers: dict[str, str]
) -> None:
    # Go's http.Server reads at most MaxHeaderBytes (1 MiB) plus 4096 bytes of request line and
    # headers, counted together; past that it answers its bare 431 and closes the connection.
    resp = cluster.api.raw("GET", configmaps(namespace), None, "application/json", headers=headers)
    assert resp.status == 431, resp
    assert resp.body == "431 Request Header Fields Too Large"


def test_request_headers_under_one_mebibyte_are_served(cluster: Cluster, namespace: str) -> None:
    headers = {f"X-Pad-{i}": "a" * 8000 for i in range(120)}  # 960,000 bytes together
    resp = cluster.api.raw("GET", configmaps(namespace), None, "application/json", headers=headers)
    assert resp.status == 200, resp
    assert resp.body["items"] == []


@pytest.mark.parametrize(
    ("change", "message"),
    [
        pytest.param({"kind": "Secret"}, "invalid object type: /v1, Kind=Secret", id="kind"),
        pytest.param(
            {"apiVersion": "v2"}, "invalid object type: /v2, Kind=ConfigMap", id="version"
        ),
    ],
)
def test_apply_of_another_kind_or_version_is_400(
    cluster: Cluster, namespace: str, change: dict, message: str
) -> None:
    # fieldmanager's versionCheckManager, outermost of the apply managers, names the object's
    # group/version and kind.
    path = f"{configmaps(namespace)}/applied-{next(iter(change)).lower()}"
    config = {**configmap(path.rsplit("/", 1)[1], a="b"), **change}
    resp = cluster.api.patch(path, config, "apply", fieldManager="tester")
    assert resp.status == 400, resp
    assert resp.body["reason"] == "BadRequest"
    assert resp.body["message"] == message
    assert cluster.api.get(path).status == 404


def _owners(obj: dict) -> dict[tuple[str, str], dict]:
    return {(m["manager"], m["operation"]): m for m in obj["metadata"]["managedFields"]}


def test_create_and_update_record_managed_fields(cluster: Cluster, namespace: str) -> None:
    body = configmap("owned", a="1")
    body["metadata"]["labels"] = {"app": "x"}
    created = cluster.api.post(configmaps(namespace), body, fieldManager="creator")
    assert created.status == 201, created
    (entry,) = created.body["metadata"]["managedFields"]
    assert entry["manager"] == "creator"
    assert entry["operation"] == "Update"
    assert entry["apiVersion"] == "v1"
    assert entry["fieldsType"] == "FieldsV1"
    assert entry["time"]
    assert entry["fieldsV1"] == {
        "f:data": {".": {}, "f:a": {}},
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
    }
    # Another manager changes data.a and adds data.b: both are now its fields.
    created.body["data"] = {"a": "2", "b": "3"}
    updated = cluster.api.put(
        f"{configmaps(namespace)}/owned", created.body, fieldManager="updater"
    )
    assert updated.status == 200, updated
    owners = _owners(updated.body)
    assert owners[("updater", "Update")]["fieldsV1"] == {"f:data": {"f:a": {}, "f:b": {}}}
    assert "f:a" not in owners[("creator", "Update")]["fieldsV1"]["f:data"]
    # Without fieldManager, the manager is the user agent's product name.
    patched = cluster.api.patch(f"{configmaps(namespace)}/owned", {"data": {"c": "4"}})
    assert patched.status == 200, patched
    agent = cluster.api.client.user_agent.split("/")[0]
    assert _owners(patched.body)[(agent, "Update")]["fieldsV1"] == {"f:data": {"f:c": {}}}


def test_field_manager_is_validated(cluster: Cluster, namespace: str) -> None:
    resp = cluster.api.post(
        configmaps(namespace), configmap("long-manager"), fieldManager="m" * 129
    )
    assert resp.status == 422, resp
    assert resp.body["details"]["kind"] == "CreateOptions"
    assert [c["field"] for c in resp.body["details"]["causes"]] == ["fieldManager"]
