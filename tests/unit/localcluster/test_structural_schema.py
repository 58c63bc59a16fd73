"""Structural schemas: defaulting, pruning, validation messages, structural checks."""

import pytest

from agones.apis.structural.defaulting import apply_defaults, prune
from agones.apis.structural.validation import (
    go_regexp,
    list_type_errors,
    validate,
    validate_custom_resource,
)
from agones.localcluster.apiserver.crdschema import prune_schema_fields, structural_errors

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer", "minimum": 1, "default": 1},
                "mode": {"type": "string", "enum": ["A", "B"]},
                "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 4},
                "ports": {
                    "type": "array",
                    "maxItems": 2,
                    "items": {
                        "type": "object",
                        "required": ["port"],
                        "properties": {
                            "port": {"type": "integer"},
                            "proto": {"type": "string", "default": "UDP"},
                        },
                    },
                },
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "ios": {"x-kubernetes-int-or-string": True},
                "opt": {"type": "string", "nullable": True},
                "keys": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["k"],
                    "items": {"type": "object", "properties": {"k": {"type": "string"}}},
                },
            },
        }
    },
}


def test_defaults_fill_absent_fields_recursively() -> None:
    obj = {"spec": {"ports": [{"port": 1}, {"port": 2, "proto": "TCP"}]}}
    apply_defaults(obj, SCHEMA)
    assert obj == {
        "spec": {"replicas": 1, "ports": [{"port": 1, "proto": "UDP"}, {"port": 2, "proto": "TCP"}]}
    }


def test_prune_drops_unknown_fields_and_keeps_preserved() -> None:
    obj = {
        "apiVersion": "x/v1",
        "kind": "K",
        "metadata": {"name": "n"},
        "junk": 1,
        "spec": {
            "bogus": 1,
            "free": {"any": {"thing": 1}},
            "labels": {"a": "b"},
            "ports": [{"port": 1, "x": 2}],
        },
    }
    dropped = prune(obj, SCHEMA, root=True)
    assert sorted(dropped) == ["junk", "spec.bogus", "spec.ports[0].x"]
    assert obj == {
        "apiVersion": "x/v1",
        "kind": "K",
        "metadata": {"name": "n"},
        "spec": {"free": {"any": {"thing": 1}}, "labels": {"a": "b"}, "ports": [{"port": 1}]},
    }


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param(
            {"replicas": 0},
            "spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1",
            id="minimum",
        ),
        pytest.param(
            {"replicas": "x"},
            'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
            id="type",
        ),
        pytest.param(
            {"replicas": True},
            'spec.replicas: Invalid value: "boolean": spec.replicas in body must be of type integer: "boolean"',
            id="bool-is-not-int",
        ),
        pytest.param(
            {"mode": "C"},
            'spec.mode: Unsupported value: "C": supported values: "A", "B"',
            id="enum",
        ),
        pytest.param(
            {"name": "ABC"},
            "spec.name: Invalid value: \"ABC\": spec.name in body should match '^[a-z]+$'",
            id="pattern",
        ),
        pytest.param(
            {"name": "abcdef"}, "spec.name: Too long: may not be more than 4 bytes", id="max-length"
        ),
        pytest.param({"ports": [{}]}, "spec.ports[0].port: Required value", id="required"),
        pytest.param(
            {"ports": [{"port": 1}] * 3},
            "spec.ports: Too many: 3: must have at most 2 items",
            id="max-items",
        ),
        pytest.param(
            {"labels": {"a": 1}},
            'spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"',
            id="additional-properties",
        ),
        pytest.param(
            {"ios": 1.5},
            'spec.ios: Invalid value: "number": spec.ios in body must be of type integer,string: "number"',
            id="int-or-string",
        ),
        pytest.param(
            {"replicas": None},
            'spec.replicas: Invalid value: "null": spec.replicas in body must be of type integer: "null"',
            id="null",
        ),
        pytest.param(
            {"keys": [{"k": "a"}, {"k": "a"}]},
            'spec.keys[1]: Duplicate value: map[string]interface {}{"k":"a"}',
            id="list-map-duplicate",
        ),
    ],
)
def test_validation_messages(spec: dict, message: str) -> None:
    # The schema pass, then the list-type pass (duplicates), as validate_custom_resource runs them.
    errs = validate({"spec": spec}, SCHEMA) + list_type_errors({"spec": spec}, SCHEMA)
    assert [str(e) for e in errs] == [message]


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({"replicas": 3, "mode": "A", "name": "ab", "ios": "50%"}, id="valid"),
        pytest.param({"opt": None}, id="nullable"),
        pytest.param({"ios": 5}, id="int-or-string-int"),
        pytest.param({"replicas": 2.0}, id="integral-float"),
    ],
)
def test_valid_objects(spec: dict) -> None:
    assert validate({"spec": spec}, SCHEMA) == []


def test_root_required_fields() -> None:
    schema = {"type": "object", "required": ["spec"], "properties": {"spec": {"type": "object"}}}
    errs = validate_custom_resource({"apiVersion": "a/v1", "kind": "K", "metadata": {}}, schema)
    assert [str(e) for e in errs] == ["spec: Required value"]


@pytest.mark.parametrize(
    ("node", "errors"),
    [
        pytest.param(
            {"type": "object", "properties": {"spec": {"type": "object"}}}, [], id="structural"
        ),
        pytest.param(
            {"type": "object", "properties": {"spec": {"properties": {"a": {"type": "string"}}}}},
            [
                "s.properties[spec].type: Required value: must not be empty for specified object fields"
            ],
            id="missing-type",
        ),
        pytest.param(
            {"type": "object", "properties": {"l": {"type": "array"}}},
            ["s.properties[l].items: Required value: must be specified"],
            id="array-without-items",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "m": {
                        "type": "object",
                        "properties": {"a": {"type": "string"}},
                        "additionalProperties": {"type": "string"},
                    }
                },
            },
            [
                "s.properties[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"
            ],
            id="properties-and-additional",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}
                },
            },
            [
                "s.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"
            ],
            id="root-metadata",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {"p": {"type": "string", "x-kubernetes-int-or-string": True}},
            },
            [
                "s.properties[p].type: Forbidden: must be empty if x-kubernetes-int-or-string is true"
            ],
            id="int-or-string-with-type",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {"free": {"x-kubernetes-preserve-unknown-fields": True}},
            },
            [],
            id="preserve-without-type",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "spec": {
                        "type": "object",
                        "properties": {"n": {"type": "integer", "minimum": 1, "default": 0}},
                    }
                },
            },
            [
                "s.properties[spec].properties[n].default: Invalid value: 0: spec.n: Invalid value: 0: spec.n in body should be greater than or equal to 1"
            ],
            id="invalid-default",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "p": {
                        "x-kubernetes-int-or-string": True,
                        "anyOf": [{"type": "integer"}, {"type": "string"}],
                    }
                },
            },
            [],
            id="int-or-string-any-of",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {"p": {"anyOf": [{"type": "integer"}, {"type": "string"}]}},
            },
            [
                "s.properties[p].type: Required value: must not be empty for specified object fields",
                "s.properties[p].anyOf[0].type: Forbidden: must be empty to be structural",
                "s.properties[p].anyOf[1].type: Forbidden: must be empty to be structural",
            ],
            id="typed-any-of-without-int-or-string",
        ),
        pytest.param(
            {"type": "object", "properties": {"p": {"$ref": "#/definitions/x"}}},
            [
                "s.properties[p].$ref: Forbidden: $ref is not supported",
                "s.properties[p].type: Required value: must not be empty for specified object fields",
            ],
            id="ref",
        ),
        pytest.param(
            {"type": "object", "properties": {"p": {"type": "str"}}},
            [
                's.properties[p].type: Unsupported value: "str": supported values: "array", '
                '"boolean", "integer", "number", "object", "string"'
            ],
            id="unknown-type",
        ),
        pytest.param(
            {
                "type": "object",
                "properties": {
                    "p": {
                        "type": "array",
                        "x-kubernetes-list-type": "set",
                        "items": {"type": "object"},
                    }
                },
            },
            [
                's.properties[p].items.x-kubernetes-map-type: Invalid value: "": must be atomic '
                "as item of a list with x-kubernetes-list-type=set"
            ],
            id="set-of-granular-objects",
        ),
    ],
)
def test_structural_errors(node: dict, errors: list[str]) -> None:
    assert [str(e) for e in structural_errors(node, "s")] == errors


def test_prune_schema_fields_walks_every_subschema() -> None:
    node = {
        "type": "object",
        "x-unknown": 1,
        "properties": {"a": {"type": "array", "items": {"type": "string", "bad": True}}},
        "additionalProperties": {"type": "string", "also": 1},
        "anyOf": [{"required": ["a"], "oops": 0}],
        "not": {"what": 1},
    }
    dropped = prune_schema_fields(node, "s")
    assert sorted(dropped) == [
        "s.additionalProperties.also",
        "s.anyOf[0].oops",
        "s.not.what",
        "s.properties.a.items.bad",
        "s.x-unknown",
    ]
    assert prune_schema_fields(node, "s") == []


@pytest.mark.parametrize(
    ("pattern", "value", "matches"),
    [
        pytest.param("^[a-z]+$", "abc", True, id="anchored"),
        pytest.param("^[a-z]+$", "abc\n", False, id="dollar-is-end-of-text"),
        pytest.param("^[$a]+$", "$a", True, id="dollar-in-class-is-literal"),
        pytest.param("^[]$]+$", "]$", True, id="bracket-first-in-class"),
        pytest.param("^a\\$$", "a$", True, id="escaped-dollar"),
        pytest.param("b", "abc", True, id="unanchored-search"),
    ],
)
def test_go_regexp(pattern: str, value: str, matches: bool) -> None:
    assert (go_regexp(pattern).search(value) is not None) is matches


def test_pattern_must_compile() -> None:
    node = {"type": "object", "properties": {"p": {"type": "string", "pattern": "(["}}}
    errs = [str(e) for e in structural_errors(node, "s")]
    assert len(errs) == 1
    assert errs[0].startswith(
        's.properties[p].pattern: Invalid value: "([": must be a valid regular expression'
    )


def test_pattern_rejects_a_trailing_newline() -> None:
    schema = {"type": "string", "pattern": "^[a-z]+$"}
    assert validate("abc", schema, "spec.s") == []
    assert [e.field for e in validate("abc\n", schema, "spec.s")] == ["spec.s"]
