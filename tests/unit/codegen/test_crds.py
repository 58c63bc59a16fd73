"""The generated CRDs: valid structural apiextensions v1 CRDs, the subresources and columns of
reference §1, and schemas that accept what Agones itself returned (the oracle fixtures).

Validity is judged by the local API server's own CRD and custom-resource validation
(`agones.localcluster.apiserver.crd` / `.schema`), so these tests also pin what that server accepts."""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agones.apis.scheme import load
from agones.apis.structural.defaulting import apply_defaults, prune
from agones.apis.structural.validation import validate_custom_resource
from agones.featuregates import Feature, FeatureGates
from agones.localcluster.apiserver.crd import validate_crd
from agones.localcluster.apiserver.crdschema import prune_crd_schema_fields
from tools.codegen import crds, k8s_schemas

ROOT = Path(__file__).resolve().parents[3]
# Copies of the Agones oracle fixtures (what Agones itself returned), kept in the repository.
ORACLE = ROOT / "tests" / "fixtures" / "agones-oracle" / "valid"
FILES = {
    "GameServer": "gameserver.yaml",
    "GameServerSet": "gameserverset.yaml",
    "Fleet": "fleet.yaml",
    "FleetAutoscaler": "fleetautoscaler.yaml",
    "GameServerAllocationPolicy": "gameserverallocationpolicy.yaml",
}


def registered() -> set[str]:
    return {k.kind for k in load().kinds()}


@functools.cache
def _load_crd(name: str) -> dict[str, Any]:
    text = (ROOT / "crds" / name).read_text()
    assert text.startswith(crds.HEADER)
    data: dict[str, Any] = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return data


def read_crd(kind: str) -> dict[str, Any]:
    """The CRD on disk (shared between tests: do not mutate)."""
    if kind not in registered():
        pytest.skip(f"{kind} is not registered in the scheme on this branch")
    return _load_crd(FILES[kind])


def schema_of(kind: str) -> dict[str, Any]:
    crd = read_crd(kind)
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def test_one_crd_per_stored_kind_and_none_for_allocation() -> None:
    on_disk = {p.name for p in (ROOT / "crds").glob("*.yaml")}
    expected = {FILES[k] for k in registered() if k in FILES}
    assert on_disk == expected
    assert "GameServerAllocation" not in {k.kind for k in crds.crd_kinds()}


@pytest.mark.parametrize("kind", list(FILES), ids=list(FILES))
def test_crd_is_valid_and_structural(kind: str) -> None:
    crd = read_crd(kind)
    assert (crd["apiVersion"], crd["kind"]) == (
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
    )
    assert [str(e) for e in validate_crd(crd)] == []
    assert prune_crd_schema_fields(copy.deepcopy(crd)) == []  # strict decoding finds no stray key


def server_errors(value: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """Paths the local API server would complain about when storing `value` strictly: the fields
    it would prune, then the validation errors of what is left."""
    pruned = copy.deepcopy(value)
    dropped = prune(pruned, schema, root=True)
    return dropped + [e.field for e in validate_custom_resource(pruned, schema)]


SUBRESOURCES = [
    pytest.param(
        "GameServer",
        {"scale": {"specReplicasPath": ".spec.immutableReplicas",
                   "statusReplicasPath": ".status.immutableReplicas"}},
        id="GameServer-no-status-only-scale",
    ),
    pytest.param(
        "GameServerSet",
        {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                 "statusReplicasPath": ".status.replicas",
                                 "labelSelectorPath": ".status.labelSelector"}},
        id="GameServerSet-status-and-scale",
    ),
    pytest.param(
        "Fleet",
        {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                 "statusReplicasPath": ".status.replicas",
                                 "labelSelectorPath": ".status.labelSelector"}},
        id="Fleet-status-and-scale",
    ),
    pytest.param("FleetAutoscaler", {"status": {}}, id="FleetAutoscaler-status"),
    pytest.param("GameServerAllocationPolicy", None, id="GameServerAllocationPolicy-none"),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "expected"), SUBRESOURCES)
def test_subresources(kind: str, expected: dict[str, Any] | None) -> None:
    assert read_crd(kind)["spec"]["versions"][0].get("subresources") == expected


NAMES = [
    pytest.param("GameServer", "agones.dev", ["gs"], id="gs"),
    pytest.param("GameServerSet", "agones.dev", ["gss", "gsset"], id="gss"),
    pytest.param("Fleet", "agones.dev", ["flt"], id="flt"),
    pytest.param("FleetAutoscaler", "autoscaling.agones.dev", ["fas"], id="fas"),
    pytest.param("GameServerAllocationPolicy", "multicluster.agones.dev", ["gsap"], id="gsap"),
]


@pytest.mark.parametrize(("kind", "group", "short_names"), NAMES)
def test_group_and_short_names(kind: str, group: str, short_names: list[str]) -> None:
    crd = read_crd(kind)
    assert crd["spec"]["group"] == group
    assert crd["spec"]["names"]["shortNames"] == short_names
    assert crd["spec"]["scope"] == "Namespaced"


COLUMNS = [
    pytest.param(
        "GameServer",
        [("State", ".status.state"), ("Address", ".status.address"),
         ("Port", ".status.ports[0].port"), ("Node", ".status.nodeName"),
         ("Age", ".metadata.creationTimestamp")],
        id="GameServer",
    ),
    pytest.param(
        "Fleet",
        [("Scheduling", ".spec.scheduling"), ("Desired", ".spec.replicas"),
         ("Current", ".status.replicas"), ("Allocated", ".status.allocatedReplicas"),
         ("Ready", ".status.readyReplicas"), ("Age", ".metadata.creationTimestamp")],
        id="Fleet",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("kind", "columns"), COLUMNS)
def test_printer_columns(kind: str, columns: list[tuple[str, str]]) -> None:
    got = read_crd(kind)["spec"]["versions"][0]["additionalPrinterColumns"]
    assert [(c["name"], c["jsonPath"]) for c in got] == columns


def _at(schema: dict[str, Any], path: str) -> dict[str, Any]:
    node = schema
    for part in path.split("."):
        if part == "[]":
            node = node["items"]
        elif part == "{}":
            node = node["additionalProperties"]
        else:
            node = node["properties"][part]
    return node


SCHEMA_FACTS = [
    ("GameServer", "spec.ports.[].portPolicy", {"enum": ["Dynamic", "Static", "Passthrough", "None"]}),
    ("GameServer", "spec.ports", {"nullable": True}),
    ("GameServer", "spec.counters", {"maxProperties": 1000}),
    ("GameServer", "spec.counters.{}.capacity", {"default": 1000, "minimum": 0}),
    ("GameServer", "spec.lists.{}.values", {"x-kubernetes-list-type": "set", "maxItems": 1000, "default": []}),
    ("GameServer", "spec.immutableReplicas", {"default": 1, "minimum": 1, "maximum": 1}),
    ("GameServer", "spec.template.spec.containers.[].ports.[].containerPort", {"type": "integer"}),
    ("GameServer", "spec.template.spec.containers.[].livenessProbe.httpGet.port", {"x-kubernetes-int-or-string": True}),
    ("GameServer", "spec.template.spec.containers.[].resources.limits.{}", {"x-kubernetes-int-or-string": True}),
    ("GameServer", "spec.template.metadata.creationTimestamp", {"nullable": True}),
    ("GameServer", "status.reservedUntil", {"nullable": True, "format": "date-time"}),
    # No status subresource: Agones' schema checks these on every GameServer update.
    ("GameServer", "status.counters", {"maxProperties": 1000}),
    ("GameServer", "status.lists", {"maxProperties": 1000}),
    ("GameServer", "status.immutableReplicas", {"default": 1, "minimum": 1, "maximum": 1}),
    ("Fleet", "spec.strategy.rollingUpdate.maxSurge", {"x-kubernetes-int-or-string": True}),
    ("Fleet", "spec.strategy.type", {"enum": ["Recreate", "RollingUpdate"]}),
    ("FleetAutoscaler", "spec.sync.fixedInterval.seconds", {"minimum": 0}),
    ("FleetAutoscaler", "spec.policy.schedule.between.start", {"type": "string", "format": None}),
    ("FleetAutoscaler", "spec.policy.schedule.between.end", {"type": "string", "format": None}),
    ("Fleet", "spec.priorities.[].order", {"default": "Ascending"}),
    ("Fleet", "spec.template.metadata.labels", {"type": "object"}),
    ("GameServerSet", "spec.replicas", {"minimum": 0}),
    ("GameServerSet", "status.shutdownReplicas", {"minimum": 0}),
    ("GameServerSet", "status.players.count", {"minimum": 0}),
    ("Fleet", "status.readyReplicas", {"minimum": 0}),
    ("Fleet", "status.counters", {"maxProperties": 1000}),
    ("Fleet", "status.counters.{}.count", {"default": 0, "minimum": 0}),
    ("Fleet", "status.lists.{}.allocatedCapacity", {"minimum": 0}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "path", "expected"), SCHEMA_FACTS, ids=[f"{k}:{p}" for k, p, _ in SCHEMA_FACTS]
)
def test_schema_facts(kind: str, path: str, expected: dict[str, Any]) -> None:
    node = _at(schema_of(kind), path)
    assert {k: node.get(k) for k in expected} == expected


def test_required_fields() -> None:
    gs = schema_of("GameServer")
    # As Agones ships it, the top level requires nothing: a missing spec is the webhook's to
    # default (and the template's required fields then fail).
    assert "required" not in gs
    assert _at(gs, "spec")["required"] == ["template"]
    assert _at(gs, "spec.template.spec")["required"] == ["containers"]
    assert _at(gs, "spec.template.spec.containers.[]")["required"] == ["name"]
    assert _at(schema_of("GameServerSet"), "spec")["required"] == ["replicas", "template"]


def _oracle_cases() -> list[Any]:
    cases = []
    for path in sorted(ORACLE.glob("*.json")):
        kind = json.loads(path.read_text())["output"]["kind"]
        if kind != "GameServerAllocation":
            cases.append(pytest.param(path, kind, id=path.stem))
    return cases


@pytest.mark.parametrize(("path", "kind"), _oracle_cases())
def test_oracle_output_validates_without_pruning(path: Path, kind: str) -> None:
    """What Agones stored is accepted by our schema; nothing of it would be pruned, and our
    schema's defaults add nothing to it."""
    output = json.loads(path.read_text())["output"]
    assert server_errors(output, schema_of(kind)) == []
    assert apply_defaults(copy.deepcopy(output), schema_of(kind)) == output


def test_oracle_fixtures_are_present() -> None:
    assert len(_oracle_cases()) >= 30


def test_schema_rejects_what_agones_schema_rejects() -> None:
    gs = json.loads((ORACLE / "gameserver-examples-gameserver.json").read_text())["output"]
    gs["spec"]["ports"][0]["protocol"] = "SCTP"
    gs["spec"]["lists"] = {"players": {"capacity": 1001, "values": ["a", "a"]}}
    del gs["spec"]["template"]["spec"]["containers"]
    errors = set(server_errors(gs, schema_of("GameServer")))
    assert errors == {
        "spec.ports[0].protocol",
        "spec.lists.players.capacity",
        "spec.lists[players].values[1]",  # the list-type pass names entries by key,
        "spec.template.spec.containers",
    }


def test_gameserver_status_is_checked_like_agones_schema() -> None:
    gs = json.loads((ORACLE / "gameserver-examples-gameserver.json").read_text())["output"]
    gs["status"]["counters"] = {f"c{i}": {"count": 0, "capacity": 1} for i in range(1001)}
    gs["status"]["immutableReplicas"] = 2
    errors = set(server_errors(gs, schema_of("GameServer")))
    assert errors == {"status.counters", "status.immutableReplicas"}


def test_k8s_data_file_is_in_canonical_form() -> None:
    # The refresh command writes exactly this rendering; hand edits would show here.
    data = k8s_schemas.load()
    assert k8s_schemas.render(data) == k8s_schemas.DATA_FILE.read_text()
    assert set(data["roots"]) <= set(data["definitions"])


# -- the server's CRD validation catches what our generator must never emit -------------------


def crd_with(schema: dict[str, Any], **version: Any) -> dict[str, Any]:
    """A minimal CRD serving one version with `schema` (and extra version fields)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "things", "kind": "Thing"},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1", "served": True, "storage": True,
                 "schema": {"openAPIV3Schema": schema}, **version}
            ],
        },
    }  # fmt: skip


OK = {"type": "object", "properties": {"a": {"type": "string"}}}
BAD_SCHEMAS = [
    pytest.param({"type": "object", "properties": {"a": {}}}, "must not be empty for specified object fields", id="untyped"),
    pytest.param({"type": "object", "properties": {"a": {"$ref": "#/x"}}}, "$ref is not supported", id="ref"),
    pytest.param(
        {"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}},
                                                "additionalProperties": {"type": "string"}}}},
        "mutual exclusive", id="props-and-additional",
    ),
    pytest.param(
        {"type": "object", "properties": {"a": {"type": "string", "x-kubernetes-int-or-string": True}}},
        "must be empty if x-kubernetes-int-or-string is true", id="int-or-string-typed",
    ),
    pytest.param(
        {"type": "object", "properties": {"a": {"type": "array", "x-kubernetes-list-type": "set",
                                                "items": {"type": "object"}}}},
        "must be atomic as item of a list with x-kubernetes-list-type=set", id="set-of-objects",
    ),
    pytest.param(
        {"type": "object", "properties": {"a": {"type": "array", "x-kubernetes-list-type": "bag",
                                                "items": {"type": "string"}}}},
        'Unsupported value: "bag"', id="unknown-list-type",
    ),
    pytest.param(
        {"type": "object", "properties": {"a": {"type": "array", "x-kubernetes-list-map-keys": ["k"],
                                                "items": {"type": "string"}}}},
        "must be map if x-kubernetes-list-map-keys is non-empty", id="map-keys-without-map",
    ),
    pytest.param(
        {"type": "object", "properties": {"a": {"type": "integer", "minimum": 1, "default": 0}}},
        "default: Invalid value: 0: a: Invalid value: 0: a in body should be greater than or equal to 1",
        id="bad-default",
    ),
    pytest.param({"type": "object", "properties": {"a": {"type": "str"}}}, 'Unsupported value: "str"', id="bad-type"),
    pytest.param(
        {"type": "object", "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}},
        "must not specify anything other than name and generateName", id="root-metadata",
    ),
    pytest.param({"type": "array", "items": {"type": "string"}}, "must be object at the root", id="root-array"),
]  # fmt: skip


def test_server_accepts_a_good_schema() -> None:
    assert validate_crd(crd_with(OK)) == []


@pytest.mark.parametrize(("schema", "message"), BAD_SCHEMAS)
def test_server_rejects_schema(schema: dict[str, Any], message: str) -> None:
    errors = [str(e) for e in validate_crd(crd_with(schema))]
    assert any(message in e for e in errors), errors


COLUMN = {"name": "State", "type": "string", "jsonPath": ".status.state"}
SCALE = {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}
BAD_VERSIONS = [
    pytest.param({"additionalPrinterColumns": [{**COLUMN, "type": "float"}]},
                 'additionalPrinterColumns[0].type: Unsupported value: "float"', id="column-type"),
    pytest.param({"additionalPrinterColumns": [{**COLUMN, "jsonPath": "status.state"}]},
                 "must be a simple json path starting with .", id="column-path"),
    pytest.param({"subresources": {"scale": {**SCALE, "specReplicasPath": ".status.replicas"}}},
                 "should be a json path under .spec", id="scale-spec-path"),
    pytest.param({"subresources": {"scale": {**SCALE, "statusReplicasPath": ".spec.replicas"}}},
                 "should be a json path under .status", id="scale-status-path"),
    pytest.param({"subresources": {"scale": {**SCALE, "labelSelectorPath": ".metadata.labels"}}},
                 "should be a json path under either .spec or .status", id="scale-selector-path"),
]  # fmt: skip


def test_server_accepts_good_columns_and_scale() -> None:
    good = crd_with(
        OK,
        additionalPrinterColumns=[COLUMN],
        subresources={"scale": {**SCALE, "labelSelectorPath": ".status.labelSelector"}},
    )
    assert validate_crd(good) == []


@pytest.mark.parametrize(("version", "message"), BAD_VERSIONS)
def test_server_rejects_version(version: dict[str, Any], message: str) -> None:
    errors = [str(e) for e in validate_crd(crd_with(OK, **version))]
    assert any(message in e for e in errors), errors


WALK = {
    "type": "object",
    "required": ["n"],
    "properties": {
        "n": {"type": "integer", "minimum": 0, "maximum": 3},
        "e": {"type": "string", "enum": ["A", "B"]},
        "s": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "i": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
        "m": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "boolean"}},
        "z": {"type": "string", "nullable": True},
        "p": {"type": "string", "pattern": "^[a-z]+$"},
    },
}  # fmt: skip
WALK_CASES = [
    pytest.param(
        {"n": 1, "e": "A", "s": ["x"], "i": "5%", "m": {"a": True}, "z": None}, [], id="ok"
    ),
    pytest.param({}, ["n"], id="required"),
    pytest.param({"n": 4}, ["n"], id="maximum"),
    pytest.param({"n": True}, ["n"], id="bool-is-not-integer"),
    pytest.param({"n": 0, "e": "C"}, ["e"], id="enum"),
    pytest.param({"n": 0, "s": ["x", "x"]}, ["s[1]"], id="set"),
    pytest.param({"n": 0, "i": 1.5}, ["i"], id="int-or-string"),
    pytest.param({"n": 0, "m": {"a": True, "b": 1}}, ["m", "m.b"], id="map"),
    pytest.param({"n": 0, "e": None}, ["e"], id="null"),
    pytest.param({"n": 0, "p": "A"}, ["p"], id="pattern"),
    pytest.param({"n": 0, "x": 1}, ["x"], id="unknown-field-pruned"),
]


@pytest.mark.parametrize(("value", "paths"), WALK_CASES)
def test_server_errors(value: dict[str, Any], paths: list[str]) -> None:
    assert sorted(server_errors(value, WALK)) == sorted(paths)


@pytest.mark.parametrize("enabled", [True, False], ids=["gate-on", "gate-off"])
def test_scheduled_autoscaler_gate_shapes_the_policy(enabled: bool) -> None:
    kinds = {k.kind: k for k in crds.crd_kinds()}
    if "FleetAutoscaler" not in kinds:
        pytest.skip("FleetAutoscaler is not registered on this branch")
    gates = FeatureGates({Feature.SCHEDULED_AUTOSCALER: enabled})
    crd = crds.crd(kinds["FleetAutoscaler"], gates)
    schema = crd["spec"]["versions"][0]["schema"]
    policy = _at(schema["openAPIV3Schema"], "spec.policy")
    assert ("Schedule" in policy["properties"]["type"]["enum"]) is enabled
    assert ("chain" in policy["properties"]) is enabled
    assert ("schedule" in policy["properties"]) is enabled
    if enabled:
        entry = _at(policy, "chain.[]")
        assert (
            "chain" not in entry["properties"]
            and "Chain" not in entry["properties"]["type"]["enum"]
        )
        inner = _at(entry, "schedule.policy")
        assert {"schedule", "chain"}.isdisjoint(inner["properties"])
    assert validate_crd(crd) == []


def test_k8s_data_matches_the_installed_client_of_the_same_version() -> None:
    """The refresh is reproducible: same client version, same data (other versions may differ)."""
    import kubernetes

    data = k8s_schemas.load()
    if kubernetes.__version__ not in data["source"]:
        pytest.skip(f"data comes from {data['source']}, installed {kubernetes.__version__}")
    assert k8s_schemas.collect() == data
