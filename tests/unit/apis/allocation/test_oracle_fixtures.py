"""Agones' own GameServerAllocation examples: the spec Agones answered with is the defaulted one.

The status comes from the allocation itself (another module's business), not from defaults.
"""

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agones.apis.allocation.v1 import (
    GameServerAllocation,
    GameServerAllocationStatus,
    apply_defaults,
    converter,
    validate,
)
from agones.apis.meta import schema
from agones.featuregates import DEFAULT_GATES

ORACLE = Path(__file__).resolve().parents[3] / "fixtures" / "agones-oracle" / "valid"
FIXTURES = sorted(ORACLE.glob("gameserverallocation-*.json"))


def test_fixtures_found() -> None:
    assert len(FIXTURES) >= 7


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
def test_defaulted_spec_matches(path: Path) -> None:
    fixture: dict[str, Any] = json.loads(path.read_text())
    cleaned, errs = schema.check_types(fixture["input"], GameServerAllocation)
    assert errs == []
    gsa = msgspec.convert(cleaned, GameServerAllocation)
    apply_defaults(gsa, DEFAULT_GATES)
    assert validate(gsa, DEFAULT_GATES) == []
    converter(gsa)
    assert msgspec.to_builtins(gsa.spec) == fixture["output"]["spec"]
    # The status Agones returned decodes into the typed status and encodes back unchanged.
    status = msgspec.convert(fixture["output"]["status"], GameServerAllocationStatus)
    assert msgspec.to_builtins(status) == fixture["output"]["status"]
