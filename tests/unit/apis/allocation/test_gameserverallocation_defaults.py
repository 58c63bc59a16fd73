from typing import Any

import msgspec
import pytest

from agones.apis.allocation.v1 import converter
from agones.featuregates import DEFAULT_GATES, FeatureGates
from tests.unit.apis.allocation.helpers import defaulted, gsa

PLAYERS_ON = DEFAULT_GATES.with_values(PlayerAllocationFilter=True)
BASE = {
    "multiClusterSetting": {"policySelector": {}},
    "required": {},
    "scheduling": "Packed",
    "metadata": {},
}
FLEET = {"matchLabels": {"agones.dev/fleet": "green"}}


@pytest.mark.parametrize(
    ("spec", "gates", "expected"),
    [
        pytest.param(
            {},
            DEFAULT_GATES,
            {**BASE, "required": {"gameServerState": "Ready"}},
            id="empty-spec-required-defaulted",
        ),
        pytest.param(
            {"selectors": [FLEET]},
            DEFAULT_GATES,
            {**BASE, "selectors": [{**FLEET, "gameServerState": "Ready"}]},
            id="selector-state-ready-required-empty",
        ),
        pytest.param(
            {"selectors": [{**FLEET, "gameServerState": "Allocated"}], "scheduling": "Distributed"},
            DEFAULT_GATES,
            {
                **BASE,
                "selectors": [{**FLEET, "gameServerState": "Allocated"}],
                "scheduling": "Distributed",
            },
            id="given-values-kept",
        ),
        pytest.param(
            {"selectors": [FLEET], "priorities": [{"type": "Counter", "key": "rooms"}]},
            DEFAULT_GATES,
            {
                **BASE,
                "selectors": [{**FLEET, "gameServerState": "Ready"}],
                "priorities": [{"type": "Counter", "key": "rooms", "order": "Ascending"}],
            },
            id="priority-order-ascending",
        ),
        pytest.param(
            {"selectors": [{**FLEET, "players": {"minAvailable": 0, "maxAvailable": 99}}]},
            DEFAULT_GATES,
            {
                **BASE,
                "selectors": [
                    {**FLEET, "gameServerState": "Ready", "players": {"maxAvailable": 99}}
                ],
            },
            id="players-zero-min-dropped",
        ),
        pytest.param(
            {"selectors": [FLEET]},
            PLAYERS_ON,
            {**BASE, "selectors": [{**FLEET, "gameServerState": "Ready", "players": {}}]},
            id="players-added-with-filter-gate",
        ),
        pytest.param(
            {
                "selectors": [{**FLEET, "counters": {}, "lists": {}, "matchExpressions": []}],
                "counters": {},
            },
            DEFAULT_GATES,
            {**BASE, "selectors": [{**FLEET, "gameServerState": "Ready"}]},
            id="empty-collections-omitted",
        ),
        pytest.param(
            {"selectors": [{**FLEET, "counters": {"rooms": {"minCount": 1}}}]},
            DEFAULT_GATES,
            {
                **BASE,
                "selectors": [
                    {
                        **FLEET,
                        "gameServerState": "Ready",
                        "counters": {
                            "rooms": {
                                "minCount": 1,
                                "maxCount": 0,
                                "minAvailable": 0,
                                "maxAvailable": 0,
                            }
                        },
                    }
                ],
            },
            id="counter-selector-zeros-written",
        ),
        pytest.param(
            {
                "selectors": [FLEET],
                "counters": {"rooms": {"action": "Increment", "amount": 0}},
                "lists": {"p": {"addValues": []}},
            },
            DEFAULT_GATES,
            {
                **BASE,
                "selectors": [{**FLEET, "gameServerState": "Ready"}],
                "counters": {"rooms": {"action": "Increment", "amount": 0}},
                "lists": {"p": {}},
            },
            id="actions-pointers-kept-empty-lists-dropped",
        ),
        pytest.param(
            {
                "multiClusterSetting": {
                    "enabled": False,
                    "policySelector": {"matchLabels": {"c": "1"}},
                },
                "selectors": [FLEET],
            },
            DEFAULT_GATES,
            {
                **BASE,
                "multiClusterSetting": {"policySelector": {"matchLabels": {"c": "1"}}},
                "selectors": [{**FLEET, "gameServerState": "Ready"}],
            },
            id="multicluster-false-dropped",
        ),
    ],
)
def test_apply_defaults(
    spec: dict[str, Any], gates: FeatureGates, expected: dict[str, Any]
) -> None:
    assert msgspec.to_builtins(defaulted(gsa(spec), gates).spec) == expected


def test_converter_builds_selectors_from_deprecated_fields() -> None:
    obj = defaulted(gsa({"required": {"matchLabels": {"game": "g"}}, "preferred": [FLEET]}))
    converter(obj)
    spec = msgspec.to_builtins(obj.spec)
    assert spec["selectors"] == [
        {**FLEET, "gameServerState": "Ready"},
        {"matchLabels": {"game": "g"}, "gameServerState": "Ready"},
    ]
    assert spec["required"] == {"matchLabels": {"game": "g"}, "gameServerState": "Ready"}
    assert spec["preferred"] == [{**FLEET, "gameServerState": "Ready"}]
    # The copies are independent of the deprecated fields they came from.
    assert obj.spec.selectors[1] is not obj.spec.required


def test_converter_keeps_selectors() -> None:
    obj = defaulted(gsa({"selectors": [FLEET], "required": {"matchLabels": {"x": "y"}}}))
    converter(obj)
    assert msgspec.to_builtins(obj.spec)["selectors"] == [{**FLEET, "gameServerState": "Ready"}]
    # `required` is not defaulted when `selectors` is used.
    assert msgspec.to_builtins(obj.spec)["required"] == {"matchLabels": {"x": "y"}}


def test_converter_with_nothing_selects_ready() -> None:
    obj = defaulted(gsa({}))
    converter(obj)
    assert msgspec.to_builtins(obj.spec)["selectors"] == [{"gameServerState": "Ready"}]
