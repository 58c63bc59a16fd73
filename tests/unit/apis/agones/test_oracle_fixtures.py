"""Every agones.dev/v1 oracle fixture: defaults give what Agones stored, and validation accepts it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from agones.apis.agones.v1.common import VERSION_ANNOTATION
from agones.apis.scheme import Scheme
from agones.featuregates import FeatureGates
from agones.version import VERSION

from .conftest import strip_go_artefacts

# Copies of the Agones oracle fixtures (what Agones itself returned), kept in the repository.
ORACLE = Path(__file__).resolve().parents[3] / "fixtures" / "agones-oracle" / "valid"
KINDS = {"GameServer", "GameServerSet", "Fleet"}


def _fixtures() -> list[Any]:
    params = []
    for path in sorted(ORACLE.glob("*.json")):
        data = json.loads(path.read_text())
        if data["input"].get("kind") in KINDS:
            params.append(pytest.param(data, id=path.stem))
    return params


FIXTURES = _fixtures()


def test_all_oracle_fixtures_are_present() -> None:
    assert len(FIXTURES) == 22  # 15 GameServers and 7 Fleets


def _expected(data: dict[str, Any]) -> dict[str, Any]:
    """The oracle output with build-specific values replaced by ours."""
    out = copy.deepcopy(data["output"])
    annotations = out["metadata"].get("annotations", {})
    if VERSION_ANNOTATION in annotations:  # the build string is run-specific (notes)
        annotations[VERSION_ANNOTATION] = VERSION
    return strip_go_artefacts(out)


def _input(data: dict[str, Any]) -> dict[str, Any]:
    inp = copy.deepcopy(data["input"])
    # The request's namespace is set by the apiserver, not by defaulting.
    inp["metadata"]["namespace"] = data["output"]["metadata"]["namespace"]
    return inp


# Fields whose schema allows null; any other null is pruned by the apiserver, and so by decode.
NULLABLE = {
    "creationTimestamp",
    "deletionTimestamp",
    "reservedUntil",
    "ports",
    "addresses",
    "players",
}


def _prune_nulls(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _prune_nulls(v) for k, v in obj.items() if v is not None or k in NULLABLE}
    if isinstance(obj, list):
        return [_prune_nulls(v) for v in obj]
    return obj


@pytest.mark.parametrize("data", FIXTURES)
def test_decode_encode_round_trip_is_lossless(scheme: Scheme, data: dict[str, Any]) -> None:
    obj = scheme.decode(data["input"])
    assert scheme.encode(obj) == _prune_nulls(data["input"])
    assert scheme.encode(scheme.decode(data["output"])) == data["output"]


@pytest.mark.parametrize("data", FIXTURES)
def test_apply_defaults_gives_oracle_output(
    scheme: Scheme, gates: FeatureGates, data: dict[str, Any]
) -> None:
    obj = scheme.decode(_input(data))
    scheme.apply_defaults(obj, gates)
    assert strip_go_artefacts(scheme.encode(obj)) == _expected(data)


@pytest.mark.parametrize("data", FIXTURES)
def test_validate_accepts_oracle_objects(
    scheme: Scheme, gates: FeatureGates, data: dict[str, Any]
) -> None:
    admission = scheme.admit(_input(data), gates)
    assert admission.errors == []
    # What Agones stored is itself valid, and defaulting it again changes nothing Agones would.
    stored = scheme.decode(data["output"])
    assert scheme.validate(stored, gates) == []
