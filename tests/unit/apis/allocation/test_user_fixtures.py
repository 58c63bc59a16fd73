"""GameServerAllocation requests written the way users write them, handled as Agones handles them."""

from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from agones.apis.allocation.v1 import GameServerAllocation, apply_defaults, converter, validate
from agones.apis.meta import schema
from agones.featuregates import FeatureGates

DIR = Path(__file__).resolve().parents[3] / "fixtures" / "gameserverallocation"
CASES = sorted((DIR / "expected").glob("*.yaml"))


def test_every_manifest_has_an_expectation() -> None:
    manifests = {p.name for p in DIR.glob("*.yaml")}
    covered = {yaml.safe_load(p.read_text()).get("manifest", p.name) for p in CASES}
    assert manifests == covered


@pytest.mark.parametrize("case", CASES, ids=[p.stem for p in CASES])
def test_request(case: Path) -> None:
    expected: dict[str, Any] = yaml.safe_load(case.read_text())
    raw = yaml.safe_load((DIR / expected.get("manifest", case.name)).read_text())
    gates = FeatureGates.parse(expected["gates"])
    cleaned, errs = schema.check_types(raw, GameServerAllocation)
    assert errs == []
    gsa = msgspec.convert(cleaned, GameServerAllocation)
    apply_defaults(gsa, gates)
    assert [str(e) for e in validate(gsa, gates)] == expected["errors"]
    if "spec" in expected:
        converter(gsa)
        assert msgspec.to_builtins(gsa.spec) == expected["spec"]
