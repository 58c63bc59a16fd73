"""Shared helpers for the agones.dev/v1 tests: the scheme, and comparison modulo Go artefacts."""

from __future__ import annotations

from typing import Any

import pytest

from agones.apis.scheme import Scheme, load
from agones.featuregates import FeatureGates


@pytest.fixture(scope="session")
def scheme() -> Scheme:
    return load()


@pytest.fixture
def gates() -> FeatureGates:
    return FeatureGates()


def strip_go_artefacts(obj: Any) -> Any:
    """Drop what Go's serialisation adds and the port does not model: `creationTimestamp: null`,
    empty `resources: {}`, and a `metadata` left empty by those removals."""
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            if key == "creationTimestamp" and value is None:
                continue
            if key == "resources" and value == {}:
                continue
            value = strip_go_artefacts(value)
            if key == "metadata" and value == {}:
                continue
            out[key] = value
        return out
    if isinstance(obj, list):
        return [strip_go_artefacts(v) for v in obj]
    return obj
