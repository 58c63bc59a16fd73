"""`LazyPath` reads as the `Path` built eagerly by the same steps."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agones.apis.field import Path
from agones.apis.meta.lazypath import LazyPath

Step = tuple[str, object]


def _eager(root: Path, steps: list[Step]) -> Path:
    p = root
    for kind, part in steps:
        p = p.index(part) if kind == "index" else p.child(str(part))  # type: ignore[arg-type]
    return p


def _lazy(root: Path, steps: list[Step]) -> Path:
    p = root
    for i, (kind, part) in enumerate(steps):
        if i == 0:
            p = LazyPath(p, part, kind == "index")
        else:
            p = p.index(part) if kind == "index" else p.child(str(part))  # type: ignore[arg-type]
    return p


@pytest.mark.parametrize(
    ("root", "steps", "want"),
    [
        pytest.param(Path(), [("child", "spec")], "spec", id="root-child"),
        pytest.param(Path("spec"), [("child", "ports")], "spec.ports", id="child"),
        pytest.param(Path("spec"), [("index", 0)], "spec[0]", id="index"),
        pytest.param(
            Path("spec"),
            [("child", "ports"), ("index", 2), ("child", "hostPort")],
            "spec.ports[2].hostPort",
            id="nested",
        ),
        pytest.param(Path(), [("index", 1), ("child", "x")], "[1].x", id="root-index"),
    ],
)
def test_lazy_path_text(root: Path, steps: list[Step], want: str) -> None:
    lazy = _lazy(root, steps)
    assert str(lazy) == want == str(_eager(root, steps))
    assert lazy == _eager(root, steps) and hash(lazy) == hash(_eager(root, steps))
    assert str(lazy.key("k")) == f"{want}[k]"
    assert str(lazy.child("a", "b")) == f"{want}.a.b"


_steps = st.lists(
    st.one_of(
        st.tuples(st.just("child"), st.text(min_size=1, max_size=5)),
        st.tuples(st.just("index"), st.integers(0, 99)),
    ),
    min_size=1,
    max_size=6,
)


@given(root=st.sampled_from([Path(), Path("spec"), Path("a", "b")]), steps=_steps)
def test_lazy_path_is_the_eager_path(root: Path, steps: list[Step]) -> None:
    assert str(_lazy(root, steps)) == str(_eager(root, steps))
