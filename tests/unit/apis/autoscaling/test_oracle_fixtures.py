"""Agones' own FleetAutoscaler examples, as real Agones defaulted and accepted them."""

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agones.apis.autoscaling.v1.validation import validate
from agones.featuregates import DEFAULT_GATES
from tests.unit.apis.autoscaling.helpers import NOW, defaulted

# A copy of the Agones oracle fixtures (the FleetAutoscaler and allocation files), kept in the
# repository so that CI on a clean checkout runs these tests.
ORACLE = Path(__file__).resolve().parents[3] / "fixtures" / "agones-oracle" / "valid"
FIXTURES = sorted(ORACLE.glob("fleetautoscaler-*.json"))


def test_fixtures_found() -> None:
    assert len(FIXTURES) >= 11


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_defaults_match_and_validate_accepts(path: Path) -> None:
    fixture: dict[str, Any] = json.loads(path.read_text())
    raw = fixture["input"]
    # The apiserver puts the request's namespace on the object.
    raw["metadata"]["namespace"] = fixture["output"]["metadata"]["namespace"]
    obj = defaulted(raw)
    assert msgspec.to_builtins(obj) == fixture["output"]
    assert validate(obj, DEFAULT_GATES, NOW) == []
