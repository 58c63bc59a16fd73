from typing import Any

import pytest

from agones.featuregates import DEFAULT_GATES, FeatureGates
from tests.unit.apis.allocation.helpers import admit, causes, gsa

NO_COUNTS = DEFAULT_GATES.with_values(CountsAndLists=False)
PLAYERS_ON = DEFAULT_GATES.with_values(PlayerAllocationFilter=True)
INV, FORB, UNSUP = "FieldValueInvalid", "FieldValueForbidden", "FieldValueNotSupported"
FLEET = {"matchLabels": {"agones.dev/fleet": "green"}}


def selectors(*sels: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"selectors": list(sels), **spec}


@pytest.mark.parametrize(
    ("spec", "gates", "expected"),
    [
        pytest.param(selectors(FLEET), DEFAULT_GATES, [], id="ok"),
        pytest.param(
            selectors(FLEET, scheduling="Random"),
            DEFAULT_GATES,
            [
                (
                    "spec.scheduling",
                    UNSUP,
                    'Unsupported value: "Random": supported values: "Packed", "Distributed"',
                )
            ],
            id="scheduling",
        ),
        pytest.param(
            selectors({**FLEET, "gameServerState": "Shutdown"}),
            DEFAULT_GATES,
            [
                (
                    "spec.selectors[0].gameServerState",
                    INV,
                    'Invalid value: "Shutdown": GameServerState must be either Allocated or Ready',
                )
            ],
            id="selector-state",
        ),
        pytest.param(
            {
                "required": {"gameServerState": "Reserved"},
                "preferred": [{"gameServerState": "Creating"}],
            },
            DEFAULT_GATES,
            [
                (
                    "spec.required.gameServerState",
                    INV,
                    'Invalid value: "Reserved": GameServerState must be either Allocated or Ready',
                ),
                (
                    "spec.preferred[0].gameServerState",
                    INV,
                    'Invalid value: "Creating": GameServerState must be either Allocated or Ready',
                ),
            ],
            id="deprecated-forms-validated",
        ),
        pytest.param(
            selectors(
                {"matchExpressions": [{"key": "tier", "operator": "Like", "values": ["cache"]}]}
            ),
            DEFAULT_GATES,
            [
                (
                    "spec.selectors[0].labelSelector",
                    INV,
                    "Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement"
                    '{v1.LabelSelectorRequirement{Key:"tier", Operator:"Like", Values:[]string{"cache"}}}}: '
                    'Error converting label selector: "Like" is not a valid label selector operator',
                )
            ],
            id="label-selector-operator",
        ),
        pytest.param(
            selectors({**FLEET, "players": {"minAvailable": 10, "maxAvailable": 5}}),
            PLAYERS_ON,
            [
                (
                    "spec.selectors[0].players.minAvailable",
                    INV,
                    "Invalid value: 10: minAvailable cannot be greater than maxAvailable",
                )
            ],
            id="players-min-above-max",
        ),
        pytest.param(
            selectors({**FLEET, "players": {"minAvailable": -1, "maxAvailable": -2}}),
            PLAYERS_ON,
            [
                (
                    "spec.selectors[0].players.minAvailable",
                    INV,
                    "Invalid value: -1: must be greater than or equal to 0",
                ),
                (
                    "spec.selectors[0].players.maxAvailable",
                    INV,
                    "Invalid value: -2: must be greater than or equal to 0",
                ),
                (
                    "spec.selectors[0].players.minAvailable",
                    INV,
                    "Invalid value: -1: minAvailable cannot be greater than maxAvailable",
                ),
            ],
            id="players-negative",
        ),
        pytest.param(
            selectors({**FLEET, "players": {"minAvailable": 10, "maxAvailable": 5}}),
            DEFAULT_GATES,
            [],
            id="players-ignored-without-gate",
        ),
        pytest.param(
            selectors(
                {
                    **FLEET,
                    "counters": {
                        "rooms": {
                            "minCount": -1,
                            "maxCount": -2,
                            "minAvailable": -3,
                            "maxAvailable": -4,
                        }
                    },
                }
            ),
            DEFAULT_GATES,
            [
                (
                    "spec.selectors[0].counters[rooms].minCount",
                    INV,
                    "Invalid value: -1: must be greater than or equal to 0",
                ),
                (
                    "spec.selectors[0].counters[rooms].maxCount",
                    INV,
                    "Invalid value: -2: must be greater than or equal to 0",
                ),
                (
                    "spec.selectors[0].counters[rooms]",
                    INV,
                    "Invalid value: -2: maxCount must zero or greater than minCount -1",
                ),
                (
                    "spec.selectors[0].counters[rooms].minAvailable",
                    INV,
                    "Invalid value: -3: must be greater than or equal to 0",
                ),
                (
                    "spec.selectors[0].counters[rooms].maxAvailable",
                    INV,
                    "Invalid value: -4: must be greater than or equal to 0",
                ),
                (
                    "spec.selectors[0].counters[rooms]",
                    INV,
                    "Invalid value: -4: maxAvailable must zero or greater than minAvailable -3",
                ),
            ],
            id="counter-selector-all-rules",
        ),
        pytest.param(
            selectors({**FLEET, "counters": {"rooms": {"minCount": 5, "maxCount": 0}}}),
            DEFAULT_GATES,
            [],
            id="counter-selector-max-zero-unbounded",
        ),
        pytest.param(
            selectors({**FLEET, "lists": {"players": {"minAvailable": 5, "maxAvailable": 2}}}),
            DEFAULT_GATES,
            [
                (
                    "spec.selectors[0].lists[players]",
                    INV,
                    "Invalid value: 2: maxAvailable must zero or greater than minAvailable 5",
                )
            ],
            id="list-selector-max-below-min",
        ),
        pytest.param(
            selectors({**FLEET, "lists": {"players": {"minAvailable": -1}}}),
            DEFAULT_GATES,
            [
                (
                    "spec.selectors[0].lists[players].minAvailable",
                    INV,
                    "Invalid value: -1: must be greater than or equal to 0",
                )
            ],
            id="list-selector-negative",
        ),
        pytest.param(
            selectors(
                {
                    **FLEET,
                    "counters": {"rooms": {"minCount": 1}},
                    "lists": {"p": {"minAvailable": 1}},
                }
            ),
            NO_COUNTS,
            [
                (
                    "spec.selectors[0].counters",
                    FORB,
                    "Forbidden: Feature CountsAndLists must be enabled",
                ),
                (
                    "spec.selectors[0].lists",
                    FORB,
                    "Forbidden: Feature CountsAndLists must be enabled",
                ),
            ],
            id="selector-counters-lists-gate-off",
        ),
        pytest.param(
            selectors(FLEET, priorities=[{"type": "Gauge", "key": "rooms"}]),
            DEFAULT_GATES,
            [
                (
                    "spec.priorities[0]",
                    INV,
                    'Invalid value: "Gauge": type must be "Counter" or "List"',
                )
            ],
            id="priority-type",
        ),
        pytest.param(
            selectors(FLEET, priorities=[{"type": "Counter"}]),
            DEFAULT_GATES,
            [("spec.priorities[0]", INV, 'Invalid value: "Counter": key must not be nil')],
            id="priority-key-shows-type",
        ),
        pytest.param(
            selectors(FLEET, priorities=[{"type": "List", "key": "p", "order": "Sideways"}]),
            DEFAULT_GATES,
            [
                (
                    "spec.priorities[0]",
                    INV,
                    'Invalid value: "Sideways": order must be "Ascending" or "Descending"',
                )
            ],
            id="priority-order",
        ),
        pytest.param(
            selectors(FLEET, counters={"rooms": {"action": "Increment"}}),
            DEFAULT_GATES,
            [
                (
                    "spec.counters[rooms]",
                    INV,
                    'Invalid value: "null": amount must not be nil if action is not nil',
                )
            ],
            id="counter-action-without-amount",
        ),
        pytest.param(
            selectors(FLEET, counters={"rooms": {"amount": 1}}),
            DEFAULT_GATES,
            [
                (
                    "spec.counters[rooms]",
                    INV,
                    'Invalid value: "null": action must be "Increment" or "Decrement" if the amount is not nil',
                )
            ],
            id="counter-amount-without-action",
        ),
        pytest.param(
            selectors(FLEET, counters={"rooms": {"action": "Multiply", "amount": 2}}),
            DEFAULT_GATES,
            [],
            id="counter-action-not-enum-checked",
        ),
        pytest.param(
            selectors(
                FLEET, counters={"rooms": {"action": "Decrement", "amount": -1, "capacity": -5}}
            ),
            DEFAULT_GATES,
            [
                (
                    "spec.counters[rooms].amount",
                    INV,
                    "Invalid value: -1: must be greater than or equal to 0",
                ),
                (
                    "spec.counters[rooms].capacity",
                    INV,
                    "Invalid value: -5: must be greater than or equal to 0",
                ),
            ],
            id="counter-action-negative",
        ),
        pytest.param(
            selectors(FLEET, lists={"players": {"capacity": -1}}),
            DEFAULT_GATES,
            [
                (
                    "spec.lists[players].capacity",
                    INV,
                    "Invalid value: -1: must be greater than or equal to 0",
                )
            ],
            id="list-action-capacity",
        ),
        pytest.param(
            selectors(FLEET, lists={"players": {"capacity": 1001}}),
            DEFAULT_GATES,
            [],
            id="list-capacity-over-1000-fails-only-when-applied",
        ),
        pytest.param(
            selectors(
                FLEET,
                priorities=[{"type": "Counter", "key": "r"}],
                counters={"r": {"capacity": 1}},
                lists={"l": {}},
            ),
            NO_COUNTS,
            [
                (
                    "spec.priorities",
                    FORB,
                    "Forbidden: Feature CountsAndLists must be enabled if Priorities is specified",
                ),
                (
                    "spec.counters",
                    FORB,
                    "Forbidden: Feature CountsAndLists must be enabled if Counters is specified",
                ),
                (
                    "spec.lists",
                    FORB,
                    "Forbidden: Feature CountsAndLists must be enabled if Lists is specified",
                ),
            ],
            id="actions-gate-off",
        ),
        pytest.param(
            selectors(FLEET, metadata={"labels": {"bad key!": "v"}}),
            DEFAULT_GATES,
            [
                (
                    "spec.metadata.labels",
                    INV,
                    "Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', "
                    "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                    "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                )
            ],
            id="metadata-label-key",
        ),
        pytest.param(
            selectors(FLEET, metadata={"annotations": {"-bad": "x"}}),
            DEFAULT_GATES,
            [
                (
                    "spec.metadata.annotations",
                    INV,
                    "Invalid value: \"-bad\": name part must consist of alphanumeric characters, '-', '_' or '.', "
                    "and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                    "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                )
            ],
            id="metadata-annotation-key",
        ),
    ],
)
def test_validate(
    spec: dict[str, Any], gates: FeatureGates, expected: list[tuple[str, str, str]]
) -> None:
    assert causes(admit(gsa(spec), gates)) == expected


def test_wrong_json_types_reported_together() -> None:
    from agones.apis.allocation.v1 import GameServerAllocation
    from agones.apis.meta import schema

    _, errs = schema.check_types(
        gsa({"selectors": {"a": 1}, "scheduling": 3, "counters": {"r": {"amount": "one"}}}),
        GameServerAllocation,
    )
    assert [(e.field, e.reason) for e in errs] == [
        ("spec.selectors", "FieldValueTypeInvalid"),
        ("spec.scheduling", "FieldValueTypeInvalid"),
        ("spec.counters.r.amount", "FieldValueTypeInvalid"),
    ]
