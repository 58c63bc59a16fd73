"""Shared pieces of the property-based suites that throw malformed input at every surface.

Profiles (`HYPOTHESIS_PROFILE`): `ci` (the default) sizes each suite so that one CI run sends
well over 10,000 malformed inputs in total in under a minute or two; `thorough` multiplies every
suite's examples by ten for a longer hunt. No example database: runs are reproducible from the
printed seed, and nothing is written to the repository.

Counts: every suite `count(surface, n)`s what it sends and asserts (`assert_enough`) that its
surface got at least 10,000 inputs in the run (`examples()` of it under `thorough`); pytest's
terminal summary lists the counts ("malformed inputs sent").

Strategies: `json_values` (any JSON document, shallow), `mutated(valid)` (a valid object with one
path replaced by garbage, deleted, or retyped: the inputs that reach deep into validation), and
`texts` that favour the characters parsers trip on.
"""

from __future__ import annotations

import copy
import logging
import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

SCALE = {"ci": 1, "thorough": 10}
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")

for _name in SCALE:
    settings.register_profile(
        _name,
        deadline=None,
        database=None,
        print_blob=True,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.filter_too_much,
            HealthCheck.function_scoped_fixture,
        ],
    )
settings.load_profile(PROFILE if PROFILE in SCALE else "ci")


def examples(ci_count: int) -> int:
    """How many examples a suite runs under the active profile."""
    return ci_count * SCALE.get(PROFILE, 1)


REQUIRED_PER_SURFACE = 10_000
"""What each surface's suite must send in one `ci` run (issue 15's must-show)."""

SENT: dict[str, int] = {}
"""Malformed inputs sent in this session, by surface; the terminal summary prints them."""


def count(surface: str, n: int = 1) -> None:
    """Record `n` malformed inputs sent to `surface` (e.g. "local API server")."""
    SENT[surface] = SENT.get(surface, 0) + n


def sent_to(surface: str) -> int:
    return SENT.get(surface, 0)


def assert_enough(surface: str) -> None:
    """The suites of `surface` sent at least `REQUIRED_PER_SURFACE` inputs under this profile."""
    want = examples(REQUIRED_PER_SURFACE)
    assert sent_to(surface) >= want, f"{surface}: {sent_to(surface)} inputs sent, want {want}"


AWKWARD = [
    "",
    " ",
    "0",
    "-1",
    "1e309",
    "null",
    "true",
    "{",
    "[",
    "%",
    "%00",
    "\x00",
    "é",
    "🙂",
    "a" * 300,
    "../..",
    "a=b",
    "a in (b",
    "!",
    ",",
    "1.5",
    "NaN",
    "9" * 25,
]

texts = st.one_of(
    st.sampled_from(AWKWARD),
    st.text(max_size=30),
    st.text(alphabet="abc=!,()-./ 0123456789", max_size=40),
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
)

json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(texts, inner, max_size=4)),
    max_leaves=12,
)


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn, valid: Any) -> Any:
    """`valid` with one node replaced by any JSON value, removed, or wrapped in a list."""
    obj = copy.deepcopy(valid)
    paths = [p for p in _paths(obj) if p]
    if not paths:
        return draw(json_values)
    # Indices, not `sampled_from(list)`: an integers strategy is built once and cached, a
    # sampled_from of a fresh list is built and validated again on every draw.
    path = paths[draw(st.integers(0, len(paths) - 1))]
    parent = obj
    for step in path[:-1]:
        parent = parent[step]
    action = ("replace", "delete", "wrap")[draw(st.integers(0, 2))]
    if action == "delete":
        del parent[path[-1]]
    elif action == "wrap":
        parent[path[-1]] = [parent[path[-1]]]
    else:
        parent[path[-1]] = draw(json_values)
    return obj


class LogRecorder(logging.Handler):
    """Keeps what the servers log at WARNING and above, and every record with a traceback."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info or record.levelno >= logging.ERROR:
            self.records.append(record)

    def problems(self) -> list[str]:
        return [self.format(r) for r in self.records]
