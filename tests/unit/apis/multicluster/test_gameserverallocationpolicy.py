from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from agones.apis.meta import schema
from agones.apis.multicluster.v1 import (
    ConnectionInfoIterator,
    GameServerAllocationPolicy,
    connection_order,
    validate,
)
from agones.featuregates import DEFAULT_GATES


def policy(priority: int, weight: int, cluster: str, **info: Any) -> GameServerAllocationPolicy:
    return msgspec.convert(
        {
            "apiVersion": "multicluster.agones.dev/v1",
            "kind": "GameServerAllocationPolicy",
            "metadata": {"name": f"{cluster}-{priority}-{weight}"},
            "spec": {
                "priority": priority,
                "weight": weight,
                "connectionInfo": {"clusterName": cluster, "namespace": "default", **info},
            },
        },
        GameServerAllocationPolicy,
    )


def picks(*values: int) -> Callable[[int], int]:
    """An `intn` returning the given values in turn, checking each is within range."""
    queue = list(values)

    def intn(n: int) -> int:
        value = queue.pop(0)
        assert 0 <= value < n
        return value

    return intn


def names(order: list[Any]) -> list[str]:
    return [info.cluster_name for info in order]


@pytest.mark.parametrize(
    ("policies", "intn", "expected"),
    [
        pytest.param([], picks(), [], id="no-policies"),
        pytest.param(
            [policy(2, 10, "late"), policy(1, 10, "early")],
            picks(0, 0),
            ["early", "late"],
            id="priority-ascending",
        ),
        pytest.param(
            [policy(1, 10, "a"), policy(1, 30, "b")],
            picks(10, 0),
            ["b", "a"],
            id="weighted-pick-by-name-order",
        ),
        pytest.param(
            [policy(1, 10, "a"), policy(1, 30, "b")],
            picks(9, 0),
            ["a", "b"],
            id="weighted-pick-first",
        ),
        pytest.param(
            [policy(1, 10, "a"), policy(1, 20, "a"), policy(1, 15, "b")],
            picks(15, 0),
            ["b", "a"],
            id="cluster-weight-is-integer-mean",
        ),
        pytest.param(
            [policy(1, 10, "a"), policy(2, 10, "a"), policy(2, 10, "b")],
            picks(0, 0),
            ["a", "b"],
            id="never-repeat-a-cluster",
        ),
        pytest.param(
            [policy(1, 0, "zero"), policy(2, 5, "next")],
            picks(0),
            ["next"],
            id="zero-weight-priority-skipped",
        ),
    ],
)
def test_connection_order(
    policies: list[GameServerAllocationPolicy], intn: Callable[[int], int], expected: list[str]
) -> None:
    assert names(connection_order(policies, intn)) == expected


def test_iterator_is_lazy_and_ends() -> None:
    it = ConnectionInfoIterator([policy(1, 1, "a")], picks(0))
    assert next(it).cluster_name == "a"
    with pytest.raises(StopIteration):
        next(it)


def test_returns_first_policy_connection_info_of_cluster() -> None:
    order = connection_order(
        [
            policy(1, 10, "a", allocationEndpoints=["34.1.2.3"]),
            policy(1, 10, "a", allocationEndpoints=["other"]),
        ],
        picks(0),
    )
    assert [o.allocation_endpoints for o in order] == [["34.1.2.3"]]


def admit(
    spec: dict[str, Any], metadata: dict[str, Any] | None = None
) -> list[tuple[str, str, str]]:
    raw = {
        "apiVersion": "multicluster.agones.dev/v1",
        "kind": "GameServerAllocationPolicy",
        "metadata": {"name": "policy"} if metadata is None else metadata,
        "spec": spec,
    }
    cleaned, errs = schema.check_types(raw, GameServerAllocationPolicy)
    if not errs:
        obj = msgspec.convert(cleaned, GameServerAllocationPolicy)
        schema.apply_schema_defaults(obj)
        errs = validate(obj, DEFAULT_GATES)
    return [(e.field, e.reason, e.body()) for e in errs]


INFO = {
    "clusterName": "c",
    "namespace": "default",
    "allocationEndpoints": ["a.example"],
    "secretName": "s",
}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({"priority": 1, "weight": 100, "connectionInfo": INFO}, [], id="ok"),
        pytest.param(
            {"weight": 1, "connectionInfo": INFO},
            [("spec.priority", "FieldValueRequired", "Required value")],
            id="priority-required",
        ),
        pytest.param(
            {"priority": 1, "connectionInfo": INFO},
            [("spec.weight", "FieldValueRequired", "Required value")],
            id="weight-required",
        ),
        pytest.param(
            {"priority": -1, "weight": 1, "connectionInfo": INFO},
            [
                (
                    "spec.priority",
                    "FieldValueInvalid",
                    "Invalid value: -1: spec.priority in body should be greater than or equal to 0",
                )
            ],
            id="priority-negative",
        ),
        pytest.param(
            {"priority": 1, "weight": -1, "connectionInfo": INFO},
            [
                (
                    "spec.weight",
                    "FieldValueInvalid",
                    "Invalid value: -1: spec.weight in body should be greater than or equal to 0",
                )
            ],
            id="weight-negative",
        ),
        pytest.param(
            {"priority": 1, "weight": 1, "connectionInfo": {"clusterName": "c"}},
            [("spec.connectionInfo.namespace", "FieldValueRequired", "Required value")],
            id="namespace-required",
        ),
        pytest.param(
            {"priority": 1, "weight": 1, "connectionInfo": {**INFO, "allocationEndpoints": []}},
            [
                (
                    "spec.connectionInfo.allocationEndpoints",
                    "FieldValueInvalid",
                    "Invalid value: 0: spec.connectionInfo.allocationEndpoints in body should have at least 1 items",
                )
            ],
            id="endpoints-min-items",
        ),
        pytest.param(
            {"priority": 1, "weight": 1, "connectionInfo": {**INFO, "serverCa": "not base64!"}},
            [
                (
                    "spec.connectionInfo.serverCa",
                    "FieldValueInvalid",
                    'Invalid value: "not base64!": spec.connectionInfo.serverCa in body must be of type byte: "not base64!"',
                )
            ],
            id="server-ca-byte-format",
        ),
        pytest.param(
            {"priority": "high", "weight": [], "connectionInfo": INFO},
            [
                (
                    "spec.priority",
                    "FieldValueTypeInvalid",
                    'Invalid value: "string": spec.priority in body must be of type integer: "string"',
                ),
                (
                    "spec.weight",
                    "FieldValueTypeInvalid",
                    'Invalid value: "array": spec.weight in body must be of type integer: "array"',
                ),
            ],
            id="wrong-json-types-all-reported",
        ),
    ],
)
def test_validate(spec: dict[str, Any], expected: list[tuple[str, str, str]]) -> None:
    assert admit(spec) == expected


def test_validate_checks_metadata_as_the_apiserver_does() -> None:
    spec = {"priority": 1, "weight": 1, "connectionInfo": {"namespace": "default"}}
    assert admit(spec, {"generateName": "policy-"}) == []
    assert admit(spec, {"labels": {"a": "b c"}}) == [
        ("metadata.name", "FieldValueRequired", "Required value: name or generateName is required"),
        (
            "metadata.labels",
            "FieldValueInvalid",
            'Invalid value: "b c": a valid label must be an empty string or consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character "
            "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
    ]
