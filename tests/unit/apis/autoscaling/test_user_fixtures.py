"""FleetAutoscaler manifests written the way users write them, admitted as Agones admits them."""

from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from agones.apis.autoscaling.v1 import FleetAutoscaler, apply_defaults
from agones.apis.autoscaling.v1.validation import validate
from agones.apis.meta import schema
from agones.featuregates import FeatureGates
from tests.unit.apis.autoscaling.helpers import NOW

DIR = Path(__file__).resolve().parents[3] / "fixtures" / "fleetautoscaler"
CASES = sorted((DIR / "expected").glob("*.yaml"))


def test_every_manifest_has_an_expectation() -> None:
    manifests = {p.name for p in DIR.glob("*.yaml")}
    covered = {yaml.safe_load(p.read_text()).get("manifest", p.name) for p in CASES}
    assert manifests == covered
    assert {
        "buffer.yaml",
        "webhook-url.yaml",
        "counter.yaml",
        "list.yaml",
        "schedule.yaml",
        "chain.yaml",
        "wasm.yaml",
    } <= manifests


@pytest.mark.parametrize("case", CASES, ids=[p.stem for p in CASES])
def test_manifest(case: Path) -> None:
    expected: dict[str, Any] = yaml.safe_load(case.read_text())
    raw = yaml.safe_load((DIR / expected.get("manifest", case.name)).read_text())
    gates = FeatureGates.parse(expected["gates"])
    cleaned, errs = schema.check_types(raw, FleetAutoscaler)
    obj = None
    if not errs:
        obj = msgspec.convert(cleaned, FleetAutoscaler)
        apply_defaults(obj, gates)
        errs = validate(obj, gates, NOW)
    assert [str(e) for e in errs] == expected["errors"]
    if "output" in expected:
        assert msgspec.to_builtins(obj) == expected["output"]
