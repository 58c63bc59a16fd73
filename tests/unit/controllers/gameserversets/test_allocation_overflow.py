"""The allocation-overflow rules: which Allocated GameServers already match, how labels and
annotations are applied (Agones `AllocationOverflow.CountMatches` / `Apply`)."""

from __future__ import annotations

import msgspec
import pytest

from agones.apis.agones.v1.common import AllocationOverflow
from agones.controllers.gameserversets.allocation_overflow import apply_overflow, count_matches

from .fixtures import gs, names


def overflow(labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None):
    raw = {}
    if labels is not None:
        raw["labels"] = labels
    if annotations is not None:
        raw["annotations"] = annotations
    return msgspec.convert(raw, AllocationOverflow)


@pytest.mark.parametrize(
    ("ao", "want_count", "want_rest"),
    [
        pytest.param(overflow({"drain": "yes"}), 1, ["a-plain", "a-annotated"], id="labels"),
        pytest.param(
            overflow(annotations={"note": "x"}), 1, ["a-plain", "a-labelled"], id="annotations"
        ),
        pytest.param(
            overflow({"drain": "yes"}, {"note": "x"}),
            0,
            ["a-plain", "a-labelled", "a-annotated"],
            id="both-must-match",
        ),
        pytest.param(overflow(), 3, [], id="empty-overflow-matches-every-allocated"),
    ],
)
def test_count_matches_only_counts_allocated(
    ao: AllocationOverflow, want_count: int, want_rest: list[str]
) -> None:
    servers = [
        gs("ready-labelled", "Ready", labels={"drain": "yes"}),
        gs("a-plain", "Allocated"),
        gs("a-labelled", "Allocated", labels={"drain": "yes"}),
        gs("a-annotated", "Allocated", annotations={"note": "x"}),
    ]
    count, rest = count_matches(ao, servers)
    assert (count, names(rest)) == (want_count, want_rest)


def test_apply_adds_labels_and_annotations_keeping_the_rest() -> None:
    server = gs("a", "Allocated", labels={"keep": "1"})
    apply_overflow(overflow({"drain": "yes"}, {"note": "x"}), server)
    assert server.meta.get_labels() == {
        "agones.dev/gameserverset": "set",
        "keep": "1",
        "drain": "yes",
    }
    assert server.meta.get_annotations() == {"note": "x"}


def test_apply_without_annotations_leaves_them_absent() -> None:
    server = gs("a", "Allocated")
    apply_overflow(overflow({"drain": "yes"}), server)
    assert server.meta.annotations is msgspec.UNSET
