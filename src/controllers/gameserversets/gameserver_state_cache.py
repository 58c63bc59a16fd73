"""What this process created and deleted, per GameServerSet, until the informer shows it (Agones
`pkg/gameserversets/gameserver_state_cache.go`).

The GameServer cache lags the controller's own writes: right after creating ten GameServers the
lister may still show none, and a second sync would create ten more. So each write is remembered
here and `reconcile_with_updated_server_list(listed)` overlays it on what the lister returned:
* a GameServer created here and not yet listed is added to the result; once listed, the overlay is
  dropped and the listed object is used;
* a GameServer deleted here (set to Shutdown) is returned as the copy we marked deleted
  (`deletionTimestamp` set), so it no longer counts as up; the overlay is dropped, and the listed
  object returned, as soon as the listed object is being deleted itself (a deletion timestamp, as
  Agones checks, or the Shutdown state we wrote: as final, and counted the same), or is no longer
  listed at all. Dropping it once our Shutdown is listed, not only once the GameServer controller
  has deleted it, keeps a scale-down from holding a second copy of every GameServer it shuts down.
Entries are keyed by GameServer name within the set's entry, and a set's entry is dropped when the
set is deleted. The cache never holds anything the API did not confirm: callers record a creation
or deletion only after the write succeeded. What it keeps carries no `managedFields` (never read
here, and the larger part of a stored object).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from msgspec import UNSET

from ...apis.agones.v1.gameserver import GameServer
from ...apis.agones.v1.gameserverset import GameServerSet
from ...apis.meta.objectmeta import format_time
from ...clock import Clock, RealClock
from ..gameservers.gameservers import with_own_metadata


class GameServerSetCacheEntry:
    """Pending creations and deletions of one GameServerSet."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.pending_creation: dict[str, GameServer] = {}
        self.pending_deletion: dict[str, GameServer] = {}

    def created(self, gs: GameServer) -> None:
        """`gs` as the create answered it: the caller hands it over and keeps no reference."""
        if gs.metadata is not UNSET:
            gs.metadata.managed_fields = UNSET
        self.pending_creation[gs.meta.get_name()] = gs

    def deleted(self, gs: GameServer) -> None:
        """`gs` (shared: only its copy's metadata is changed) was set to Shutdown."""
        name = gs.meta.get_name()
        self.pending_creation.pop(name, None)
        clone = with_own_metadata(gs)
        clone.meta.managed_fields = UNSET
        clone.meta.deletion_timestamp = format_time(datetime.fromtimestamp(self.clock.now(), UTC))
        self.pending_deletion[name] = clone

    def reconcile_with_updated_server_list(self, listed: Sequence[GameServer]) -> list[GameServer]:
        """`listed` (the lister's view) corrected by the writes it does not show yet."""
        result: list[GameServer] = []
        found: set[str] = set()
        for gs in listed:
            name = gs.meta.get_name()
            deleted = self.pending_deletion.get(name)
            if deleted is None:
                result.append(gs)
            elif gs.is_being_deleted():
                result.append(gs)
                del self.pending_deletion[name]
            else:
                result.append(deleted)
            self.pending_creation.pop(name, None)
            found.add(name)
        for name in [n for n in self.pending_deletion if n not in found]:
            del self.pending_deletion[name]
        result.extend(self.pending_creation.values())
        return result

    def empty(self) -> bool:
        return not self.pending_creation and not self.pending_deletion


class GameServerStateCache:
    """One `GameServerSetCacheEntry` per GameServerSet (namespace/name)."""

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock = clock or RealClock()
        self._entries: dict[str, GameServerSetCacheEntry] = {}

    @staticmethod
    def _key(gss: GameServerSet) -> str:
        meta = gss.metadata
        if meta is UNSET:
            return "/"
        return f"{meta.get_namespace()}/{meta.get_name()}"

    def for_game_server_set(self, gss: GameServerSet) -> GameServerSetCacheEntry:
        key = self._key(gss)
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = GameServerSetCacheEntry(self.clock)
        return entry

    def delete_game_server_set(self, gss: GameServerSet) -> None:
        self._entries.pop(self._key(gss), None)

    def __len__(self) -> int:
        return len(self._entries)
