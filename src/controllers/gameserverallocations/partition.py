"""Which replica prefers which candidates: the answer of this port to agones#1856.

Several allocator (or extensions) replicas watch the same GameServers and, sorting them the same
way, would all reach for the same first candidate; all but one write then fail with a conflict,
retry, and under load run out of retries (`Contention`). A `Partition(index, count)` gives each
replica a share of the candidates by a stable hash of the GameServer's uid (CRC-32, the same in
every process): `owns(gs)` is true for about 1/count of them. `find_game_server_for_allocation`
prefers an owned match within the winning selector and falls back to the whole set, so a replica
never answers UnAllocated while another replica's share still has a match; it then takes the last
match of that set, the one the owner would reach last, not the owner's next pick. Safety does not depend
on it: the allocation write carries the resourceVersion it read, so the API server refuses a second
allocation of the same GameServer whatever the replicas believe. `Partition()` (count 1) owns
everything: Agones' behaviour.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

from ...apis.agones.v1.gameserver import GameServer


@dataclass(frozen=True)
class Partition:
    index: int = 0
    """This replica's number, 0 ≤ index < count."""
    count: int = 1
    """How many replicas share the candidates (1: no partitioning)."""

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"partition {self.index} of {self.count}: need 0 <= index < count")

    @classmethod
    def parse(cls, text: str) -> Partition:
        """`INDEX/COUNT` (replica INDEX of COUNT), or empty for none; `ValueError` naming the
        `--allocation-partition` flag otherwise."""
        text = text.strip()
        if not text:
            return cls()
        index, sep, count = text.partition("/")
        if not sep or not index.strip().isdigit() or not count.strip().isdigit():
            raise ValueError(f"--allocation-partition {text!r}: want INDEX/COUNT, e.g. 0/2")
        try:
            return cls(int(index), int(count))
        except ValueError as err:
            raise ValueError(f"--allocation-partition {text!r}: {err}") from None

    def owned(self) -> Callable[[GameServer], bool] | None:
        """`owns`, or None when this replica owns everything (no partitioning)."""
        return None if self.count == 1 else self.owns

    def owns(self, gs: GameServer) -> bool:
        if self.count == 1:
            return True
        uid = gs.meta.uid if isinstance(gs.meta.uid, str) and gs.meta.uid else None
        key = uid or f"{gs.meta.get_namespace()}/{gs.meta.get_name()}"
        return zlib.crc32(key.encode()) % self.count == self.index
