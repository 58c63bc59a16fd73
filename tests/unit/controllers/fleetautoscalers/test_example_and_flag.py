"""The in-process policy example, loaded as the controller's --autoscaler-policy-modules flag does,
and that flag's errors for modules that cannot be imported (property-based)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.apis.autoscaling.v1 import FleetAutoscaleReview, new_fleet_autoscale_review
from agones.cmd import controller as cmd
from agones.controllers.fleetautoscalers import REGISTRY, Scale, inprocess, webhook
from agones.featuregates import FeatureGates

from .fixtures import fleet

EXAMPLE = Path(__file__).parents[4] / "examples" / "autoscaler-python-policy"


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cmd.add_flags(parser)
    return parser.parse_args(["--min-port", "7000", "--max-port", "8000", *argv])


@pytest.fixture
def example_on_path() -> Iterator[None]:
    sys.modules.pop("studio_policy", None)  # imported fresh, so it registers itself here
    sys.path.insert(0, str(EXAMPLE))
    try:
        yield
    finally:
        sys.path.remove(str(EXAMPLE))
        sys.modules.pop("studio_policy", None)
        REGISTRY.unregister("studio-buffer")


async def test_example_policy_through_the_flag(example_on_path: None) -> None:
    config, errors = cmd.config_from_args(parse(["--autoscaler-policy-modules", "studio_policy"]))
    assert errors == []
    assert config.autoscaler_policy_modules == ["studio_policy"]
    assert "studio-buffer" in REGISTRY.names()
    manifest = (EXAMPLE / "fleetautoscaler.yaml").read_text()
    assert 'url: "python:studio-buffer"' in manifest

    async def size(replicas: int, allocated: int) -> Scale:
        f = fleet(replicas, allocated)
        review = new_fleet_autoscale_review(f, "uid", FeatureGates())
        answer = await inprocess.call_policy(REGISTRY, "studio-buffer", review, 5.0)
        assert isinstance(answer, FleetAutoscaleReview)
        return webhook.scale_from_review(answer, f)

    assert await size(10, 2) == Scale(7)  # under half allocated: buffer 5
    assert await size(10, 6) == Scale(16)  # half or more: buffer 10
    assert await size(120, 100) == Scale(100)  # capped


def test_unimportable_module_is_a_config_error() -> None:
    _, errors = cmd.config_from_args(parse(["--autoscaler-policy-modules", "no_such_module_x1"]))
    assert errors == [
        "could not import autoscaler policy module no_such_module_x1: "
        "No module named 'no_such_module_x1'"
    ]


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_characters=","), max_size=20))
def test_any_module_list_gives_lines_not_exceptions(suffix: str) -> None:
    # One module name, prefixed so no real module is ever imported by chance.
    value = f"agones_test_absent_{suffix}"
    _, errors = cmd.config_from_args(parse(["--autoscaler-policy-modules", value]))
    wanted = [m.strip() for m in value.split(",") if m.strip()]
    assert len(errors) == len(wanted)
    for line in errors:
        assert line.startswith("could not import autoscaler policy module ")
        assert "\n" not in line or "\n" in value


def test_review_round_trips() -> None:
    review = new_fleet_autoscale_review(fleet(3, 1), "u", FeatureGates())
    decoded = msgspec.json.decode(webhook.encode_review(review), type=FleetAutoscaleReview)
    assert decoded == review
