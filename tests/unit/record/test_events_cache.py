"""EventCorrelator against client-go v1.28 `events_cache.go`, step by step on a fake clock.

Each scenario is a list of steps `(seconds to advance, object, type, reason, message)` and the
outcome client-go gives each: "create" / "patch" with the count written, or "skip" (spam filter).
Every write that is not skipped is taken as successful (`update_state`), as `recordToSink` does.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from agones.clock import FakeClock
from agones.record.events_cache import (
    AGGREGATE_PREFIX,
    Event,
    EventCorrelator,
    UniqueNanos,
    event_name,
)

T0 = 1_700_000_000.0


def ref(
    name: str = "gs-1", uid: str = "u-1", kind: str = "GameServer", field_path: str = ""
) -> dict[str, str]:
    involved = {
        "kind": kind,
        "namespace": "default",
        "name": name,
        "uid": uid,
        "apiVersion": "agones.dev/v1",
        "resourceVersion": "7",
    }
    if field_path:
        involved["fieldPath"] = field_path
    return involved


def new_event(
    clock: FakeClock, involved: dict[str, str], type_: str, reason: str, message: str
) -> Event:
    now = clock.now()
    return Event(
        dict(involved),
        type_,
        reason,
        message,
        "gameserver-controller",
        "host-1",
        event_name(involved["name"], int(now * 1e9)),
        "default",
        now,
        now,
    )


@dataclass
class Outcome:
    kind: str  # "create", "patch" or "skip"
    count: int
    message: str
    name: str


def run(
    steps: list[tuple[float, dict[str, str], str, str, str]],
) -> tuple[list[Outcome], EventCorrelator]:
    clock = FakeClock(T0)
    correlator = EventCorrelator(clock)
    out: list[Outcome] = []
    for advance, involved, type_, reason, message in steps:
        clock.step(advance)
        result = correlator.correlate(new_event(clock, involved, type_, reason, message))
        event = result.event
        if result.skip:
            out.append(Outcome("skip", event.count, event.message, event.name))
            continue
        out.append(
            Outcome("patch" if result.patch else "create", event.count, event.message, event.name)
        )
        correlator.update_state(event)
    return out, correlator


GS = ref()


def kinds(out: list[Outcome]) -> list[tuple[str, int]]:
    return [(o.kind, o.count) for o in out]


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        pytest.param(
            [(0, GS, "Normal", "Creating", "Pod gs-1 created")] * 3,
            [("create", 1), ("patch", 2), ("patch", 3)],
            id="exact-repeats-fold-into-count",
        ),
        pytest.param(
            [(0, GS, "Normal", "Creating", "m"), (0, GS, "Warning", "Creating", "m")],
            [("create", 1), ("create", 1)],
            id="type-is-part-of-the-event-key",
        ),
        pytest.param(
            [
                (0, ref(field_path="spec.containers{a}"), "Normal", "Started", "m"),
                (0, ref(field_path="spec.containers{b}"), "Normal", "Started", "m"),
                (0, ref(field_path="spec.containers{a}"), "Normal", "Started", "m"),
            ],
            [("create", 1), ("create", 1), ("patch", 2)],
            id="field-path-is-part-of-the-event-key",
        ),
        pytest.param(
            [(0, GS, "Normal", "Same", "same")] * 30 + [(300, GS, "Normal", "Same", "same")],
            [("create", 1)]
            + [("patch", n) for n in range(2, 26)]
            + [("skip", n) for n in range(26, 31)]
            + [("patch", 31)],
            id="spam-filter-burst-25-and-skipped-ones-still-counted",
        ),
        pytest.param(
            [(0, GS, "Normal", f"Reason{i}", "m") for i in range(26)]
            + [(0, GS, "Warning", "Other", "m"), (0, ref("gs-2", "u-2"), "Normal", "Reason0", "m")],
            [("create", 1)] * 25 + [("skip", 1), ("skip", 1), ("create", 1)],
            id="spam-key-is-source-and-object-without-type-or-reason",
        ),
        pytest.param(
            [(0, GS, "Normal", "R", "m")] * 26
            + [
                (299, GS, "Normal", "R", "m"),
                (1, GS, "Normal", "R", "m"),
                (0, GS, "Normal", "R", "m"),
            ],
            [("create", 1)]
            + [("patch", n) for n in range(2, 26)]
            + [("skip", 26), ("skip", 27), ("patch", 28), ("skip", 29)],
            id="spam-bucket-refills-one-per-300s",
        ),
    ],
)
def test_correlation_follows_client_go(
    steps: list[tuple[float, dict[str, str], str, str, str]], expected: list[tuple[str, int]]
) -> None:
    out, _ = run(steps)
    assert kinds(out) == expected


def test_ten_distinct_messages_become_one_combined_event() -> None:
    steps = [(1, GS, "Warning", "Unhealthy", f"failure {i}") for i in range(12)]
    out, _ = run(steps)
    assert [(o.kind, o.count, o.message) for o in out[:9]] == [
        ("create", 1, f"failure {i}") for i in range(9)
    ]
    # The 10th distinct message: a new Event named at the correlation time, prefixed.
    assert (out[9].kind, out[9].count) == ("create", 1)
    assert out[9].message == AGGREGATE_PREFIX + "failure 9"
    assert out[9].name == event_name("gs-1", int((T0 + 10) * 1e9))
    # Then each new message patches the combined Event.
    assert [(o.kind, o.count, o.message, o.name) for o in out[10:]] == [
        ("patch", 2, AGGREGATE_PREFIX + "failure 10", out[9].name),
        ("patch", 3, AGGREGATE_PREFIX + "failure 11", out[9].name),
    ]


def test_a_remembered_message_is_not_combined() -> None:
    """Aggregation keeps 9 messages: one still among them is below the threshold and patches
    its own Event (client-go pops any; this port pops the oldest, here `failure 0`)."""
    steps = [(1, GS, "Warning", "Unhealthy", f"failure {i}") for i in range(10)]
    steps += [
        (1, GS, "Warning", "Unhealthy", "failure 5"),
        (1, GS, "Warning", "Unhealthy", "failure 0"),
    ]
    out, _ = run(steps)
    assert (out[10].kind, out[10].count, out[10].message) == ("patch", 2, "failure 5")
    assert out[10].name == out[5].name
    assert (out[11].kind, out[11].message) == ("patch", AGGREGATE_PREFIX + "failure 0")


@pytest.mark.parametrize(
    ("gap", "combined"),
    [
        pytest.param(600, True, id="600s-is-within"),
        pytest.param(601, False, id="601s-starts-afresh"),
    ],
)
def test_the_aggregation_window_is_ten_minutes_since_the_last_similar_event(
    gap: float, combined: bool
) -> None:
    steps = [(100, GS, "Warning", "Unhealthy", f"failure {i}") for i in range(9)]
    steps.append((gap, GS, "Warning", "Unhealthy", "failure 9"))
    out, _ = run(steps)
    assert out[-1].message.startswith(AGGREGATE_PREFIX) is combined


def test_a_game_server_set_creating_1000_writes_25_events() -> None:
    """SuccessfulCreate on one GameServerSet, one message per GameServer: 9 Events, then the
    combined one written 16 times (a create and 15 patches), then the spam filter."""
    gss = ref("fleet-abcde", "u-gss", kind="GameServerSet")
    steps = [
        (0, gss, "Normal", "SuccessfulCreate", f"Created gameserver: fleet-abcde-{i}")
        for i in range(1000)
    ]
    out, correlator = run(steps)
    written = [o for o in out if o.kind != "skip"]
    assert len(written) == 25
    assert [o.kind for o in written].count("create") == 10
    assert written[-1].count == 16 and written[-1].message.startswith(AGGREGATE_PREFIX)
    assert out[-1].kind == "skip" and out[-1].count == 991
    correlator.forget("u-gss")
    assert correlator.cached() == 0


def test_forget_and_eviction_keep_the_uid_index_exact() -> None:
    clock = FakeClock(T0)
    correlator = EventCorrelator(clock, cache_size=2)
    for i in range(5):
        event = new_event(clock, ref(f"gs-{i}", f"u-{i}"), "Normal", "Ready", "ready")
        correlator.update_state(correlator.correlate(event).event)
    assert correlator.cached() == 6
    assert set(correlator._keys_of) == {"u-3", "u-4"}
    correlator.forget("u-3")
    assert set(correlator._keys_of) == {"u-4"}
    assert correlator.cached() == 3


def test_names_never_repeat_within_one_clock_reading() -> None:
    nanos = UniqueNanos()
    at = 1_764_633_600.123456  # a float of seconds: ~240 ns apart at best
    assert [nanos(at), nanos(at), nanos(at - 1e-6)] == [
        int(at * 1e9),
        int(at * 1e9) + 1,
        int(at * 1e9) + 2,
    ]
