"""Go `time.ParseDuration` in seconds, for the durations Agones tools take as text (`500ms`, `1m30s`).

A thin view of `apis.meta.goduration` (Go's exact acceptance rules and error texts) in float seconds.
"""

from __future__ import annotations

from ..apis.meta.goduration import SECOND, parse_duration


def parse_go_duration(text: str) -> float:
    """Seconds in a Go duration string; `ValueError` with Go's message when it is not one."""
    return parse_duration(text) / SECOND
