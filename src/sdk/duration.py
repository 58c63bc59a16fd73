"""Go `time.ParseDuration` for the durations Agones tools take as text (`500ms`, `1m30s`, `10s`)."""

from __future__ import annotations

import re

_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


def parse_go_duration(text: str) -> float:
    """Seconds in a Go duration string; `ValueError` with Go's message when it is not one."""
    original = text
    sign = 1.0
    if text[:1] in "+-" and text:
        sign = -1.0 if text[0] == "-" else 1.0
        text = text[1:]
    if text == "0":
        return 0.0
    if not text:
        raise ValueError(f'time: invalid duration "{original}"')
    total = 0.0
    pos = 0
    while pos < len(text):
        match = _PART.match(text, pos)
        if match is None:
            if re.match(r"\d", text[pos:]) and not re.match(r"[\d.]+[a-zµμ]", text[pos:]):
                raise ValueError(f'time: missing unit in duration "{original}"')
            raise ValueError(f'time: invalid duration "{original}"')
        total += float(match.group(1)) * _UNITS[match.group(2)]
        pos = match.end()
    return sign * total
