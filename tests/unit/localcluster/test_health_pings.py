"""`simulated.HealthPings`: one timer pings every simulated game added (fake clock)."""

from __future__ import annotations

from agones.clock import FakeClock
from agones.localcluster.nodes.simulated import HealthPings


class Game:
    def __init__(self) -> None:
        self.pings = 0

    def ping(self) -> None:
        self.pings += 1


def test_games_are_pinged_when_added_then_every_interval_by_one_timer() -> None:
    clock = FakeClock()
    pings = HealthPings(2.0, clock)
    first, second = Game(), Game()
    pings.add(first)
    assert first.pings == 1
    clock.step(1.0)
    pings.add(second)
    assert (first.pings, second.pings, clock.pending_timers()) == (1, 1, 1)
    clock.step(1.0)
    assert (first.pings, second.pings) == (2, 2)
    clock.step(4.0)
    assert (first.pings, second.pings, clock.pending_timers()) == (4, 4, 1)


def test_a_discarded_game_is_not_pinged_and_the_timer_stops_with_the_last() -> None:
    clock = FakeClock()
    pings = HealthPings(2.0, clock)
    game = Game()
    pings.add(game)
    pings.discard(game)
    clock.step(2.0)
    assert (game.pings, clock.pending_timers()) == (1, 0)
    pings.add(game)
    assert (game.pings, clock.pending_timers()) == (2, 1)
