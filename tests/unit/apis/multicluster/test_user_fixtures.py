"""GameServerAllocationPolicies written the way users write them, admitted through the scheme."""

from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from agones.apis.scheme import load

DIR = Path(__file__).resolve().parents[3] / "fixtures" / "gameserverallocationpolicy"
CASES = sorted((DIR / "expected").glob("*.yaml"))


def test_every_manifest_has_an_expectation() -> None:
    assert {p.name for p in DIR.glob("*.yaml")} == {p.name for p in CASES}


@pytest.mark.parametrize("case", CASES, ids=[p.stem for p in CASES])
def test_policy(case: Path) -> None:
    expected: dict[str, Any] = yaml.safe_load(case.read_text())
    admission = load().admit(yaml.safe_load((DIR / case.name).read_text()))
    # Error causes compare as a set (reference §12).
    assert sorted(str(e) for e in admission.errors) == sorted(expected["errors"])
    if "output" in expected:
        assert msgspec.to_builtins(admission.obj) == expected["output"]
