"""`listing._page`: a page of `limit` matching entries (0: all) and whether more matched, the
entry that stopped the page consumed from the source. Without selectors it takes a short cut;
both ways must give the same page, flag and rest of the source."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agones.apis.meta.labelselector import EVERYTHING
from agones.localcluster.apiserver.listing import _page
from agones.localcluster.apiserver.selectors import parse_label_selector


class _Entry:
    def __init__(self, i: int, labels: dict[str, str]) -> None:
        self.obj: dict[str, Any] = {"metadata": {"name": f"o{i}", "labels": labels}}


class _Info:
    fields: dict[str, Any] = {}


def _entries(n: int) -> list[_Entry]:
    return [_Entry(i, {"all": "yes"}) for i in range(n)]


def _run(n: int, limit: int, selector: str) -> tuple[list[str], bool, list[str]]:
    labels = parse_label_selector(selector) if selector else EVERYTHING
    source = iter(_entries(n))
    page, more = _page(_Info(), source, labels, (), limit)  # type: ignore[arg-type]
    names = [e.obj["metadata"]["name"] for e in page]
    return names, more, [e.obj["metadata"]["name"] for e in source]


@pytest.mark.parametrize(
    ("n", "limit", "page", "more", "rest"),
    [
        pytest.param(0, 0, 0, False, 0, id="empty"),
        pytest.param(5, 0, 5, False, 0, id="no-limit"),
        pytest.param(5, 2, 2, True, 2, id="limit-below: the stopper is consumed"),
        pytest.param(5, 5, 5, False, 0, id="limit-equal"),
        pytest.param(5, 9, 5, False, 0, id="limit-above"),
    ],
)
def test_page_without_selectors(n: int, limit: int, page: int, more: bool, rest: int) -> None:
    names, got_more, left = _run(n, limit, "")
    assert (len(names), got_more, len(left)) == (page, more, rest)
    assert names == [f"o{i}" for i in range(page)]


@given(st.integers(0, 30), st.integers(0, 40))
def test_the_short_cut_pages_as_a_selector_matching_everything_does(n: int, limit: int) -> None:
    assert _run(n, limit, "") == _run(n, limit, "all=yes")
