"""Manifests written the way Agones users write them (tests/fixtures/agones/*.yaml).

Valid ones decode, default and validate to the stored object in `expected/<name>.yaml`; invalid ones
give exactly the errors listed in `expected/<name>.errors`, all at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from agones.apis.scheme import Scheme
from agones.featuregates import FeatureGates
from agones.version import VERSION

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "agones"
EXPECTED = FIXTURES / "expected"


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def _cases(suffix: str) -> list[Any]:
    return [
        pytest.param(p, id=p.stem)
        for p in sorted(FIXTURES.glob("*.yaml"))
        if (EXPECTED / (p.stem + suffix)).exists()
    ]


VALID = _cases(".yaml")
INVALID = _cases(".errors")


def test_every_fixture_has_an_expectation() -> None:
    assert len(VALID) + len(INVALID) == len(list(FIXTURES.glob("*.yaml"))) >= 10


@pytest.mark.parametrize("path", VALID)
def test_user_manifest_is_defaulted_as_agones_does(scheme: Scheme, path: Path) -> None:
    admission = scheme.admit(_load(path), FeatureGates())
    assert admission.errors == []
    expected = _load(EXPECTED / path.name)
    annotations = expected["metadata"].get("annotations", {})
    if "agones.dev/sdk-version" in annotations:
        annotations["agones.dev/sdk-version"] = VERSION
    assert scheme.encode(admission.obj) == expected


@pytest.mark.parametrize("path", INVALID)
def test_invalid_user_manifest_reports_every_error(scheme: Scheme, path: Path) -> None:
    admission = scheme.admit(_load(path), FeatureGates())
    want = (EXPECTED / (path.stem + ".errors")).read_text().splitlines()
    # Error causes compare as a set (reference §12): the schema walks properties in its own order.
    assert sorted(str(e) for e in admission.errors) == sorted(want)
