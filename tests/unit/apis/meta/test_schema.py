import enum
from typing import Annotated, Any

import msgspec
import pytest
from msgspec import UNSET, UnsetType

from agones.apis.field import Path
from agones.apis.meta import schema
from agones.apis.meta.intstr import IntOrStr
from agones.apis.meta.schema import crd


class Color(enum.StrEnum):
    RED = "Red"
    BLUE = "Blue"


class Inner(msgspec.Struct, rename="camel", omit_defaults=True):
    count: Annotated[int, crd(default=0, minimum=0)] | UnsetType = UNSET
    capacity: Annotated[int, crd(default=1000, maximum=1000)] | UnsetType = UNSET
    values: Annotated[list[str], crd(default=[], list_type="set", max_items=3)] | UnsetType = UNSET


class Box(msgspec.Struct, rename="camel", omit_defaults=True):
    name: Annotated[str, crd(required=True, max_length=5, pattern="^[a-z]+$")] | UnsetType = UNSET
    color: Color | UnsetType = UNSET
    flag: bool | UnsetType = UNSET
    size: IntOrStr | UnsetType = UNSET
    inner: Annotated[Inner, crd(go="value")] | UnsetType = UNSET
    items: dict[str, Inner] | UnsetType = UNSET
    ptr: Annotated[Inner, crd(go="ptr")] | UnsetType = UNSET
    always: Annotated[str, crd(go="always")] | UnsetType = UNSET
    nullable_list: Annotated[list[int], crd(go="always")] | UnsetType | None = UNSET
    raw: Annotated[dict[str, Any], crd(preserve_unknown=True)] | UnsetType = UNSET


def test_check_types_collects_every_error() -> None:
    raw = {
        "name": 5,
        "color": "Green",
        "flag": "yes",
        "size": True,
        "inner": {"count": "1", "values": [1]},
        "items": {"a": {"capacity": 1.5}},
        "unknown": 1,
    }
    _, errs = schema.check_types(raw, Box)
    assert [str(e) for e in errs] == [
        'name: Invalid value: "integer": name in body must be of type string: "integer"',
        'color: Unsupported value: "Green": supported values: "Red", "Blue"',
        'flag: Invalid value: "string": flag in body must be of type boolean: "string"',
        'size: Invalid value: "boolean": size in body must be of type integer,string: "boolean"',
        'inner.count: Invalid value: "string": inner.count in body must be of type integer: "string"',
        'inner.values[0]: Invalid value: "integer": inner.values[0] in body must be of type string: "integer"',
        'items.a.capacity: Invalid value: "number": items.a.capacity in body must be of type integer: "number"',
    ]
    assert {e.reason for e in errs} == {"FieldValueTypeInvalid", "FieldValueNotSupported"}


def test_check_types_prunes_null_of_non_nullable_and_unknown_fields() -> None:
    cleaned, errs = schema.check_types(
        {"name": None, "nullableList": None, "raw": {"x": {"y": None}}, "zzz": 1}, Box
    )
    assert errs == []
    assert cleaned == {"nullableList": None, "raw": {"x": {"y": None}}}


def test_schema_defaults_and_validation() -> None:
    box = msgspec.convert({"inner": {"values": ["a", "a"]}, "items": {"k": {}}}, Box)
    schema.apply_schema_defaults(box)
    assert msgspec.to_builtins(box)["items"] == {"k": {"count": 0, "capacity": 1000, "values": []}}
    assert box.inner is not UNSET and box.inner.values == ["a", "a"]
    errs = schema.validate_schema(box, Path())
    assert [str(e) for e in errs] == [
        "name: Required value",
        'inner.values[1]: Duplicate value: "a"',
    ]


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        pytest.param(
            {"name": "abcdef"}, ["name: Too long: may not be more than 5 bytes"], id="max-length"
        ),
        pytest.param(
            {"name": "ABC"},
            ["name: Invalid value: \"ABC\": name in body should match '^[a-z]+$'"],
            id="pattern",
        ),
        pytest.param(
            {"name": "a", "inner": {"count": -1}},
            [
                "inner.count: Invalid value: -1: inner.count in body should be greater than or equal to 0"
            ],
            id="minimum",
        ),
        pytest.param(
            {"name": "a", "inner": {"capacity": 1001}},
            [
                "inner.capacity: Invalid value: 1001: inner.capacity in body should be less than or equal to 1000"
            ],
            id="maximum",
        ),
        pytest.param(
            {"name": "a", "inner": {"values": ["a", "b", "c", "d"]}},
            ["inner.values: Too many: 4: must have at most 3 items"],
            id="max-items",
        ),
    ],
)
def test_validate_schema_messages(raw: dict[str, Any], want: list[str]) -> None:
    box = msgspec.convert(raw, Box)
    assert [str(e) for e in schema.validate_schema(box, Path())] == want


def test_go_roundtrip() -> None:
    box = msgspec.convert(
        {"flag": False, "name": "", "ptr": {}, "items": {}, "raw": {"keep": 0}}, Box
    )
    schema.go_roundtrip(box)
    assert msgspec.to_builtins(box) == {
        "inner": {},  # struct value: always written
        "ptr": {},  # pointer to an empty struct stays
        "always": "",  # no omitempty: zero written
        "nullableList": None,  # nil slice without omitempty: null
        "raw": {"keep": 0},  # raw JSON untouched
    }


def test_crd_rejects_unknown_keys() -> None:
    with pytest.raises(TypeError):
        crd(minimun=1)


def test_object_meta_go_roundtrip() -> None:
    from agones.apis.meta.objectmeta import ObjectMeta

    meta = msgspec.convert(
        {
            "ownerReferences": [{"kind": "X", "controller": False}],
            "deletionGracePeriodSeconds": 0,
            "labels": {},
            "generation": 0,
        },
        ObjectMeta,
    )
    schema.go_roundtrip(meta)
    assert msgspec.to_builtins(meta) == {
        "deletionGracePeriodSeconds": 0,  # *int64: only nil is omitted
        "ownerReferences": [
            {"apiVersion": "", "kind": "X", "name": "", "uid": "", "controller": False}
        ],
    }
