"""`GameServerStateCache`: our own pending creations and deletions overlaid on a lagging cache, so
the controller never creates twice nor counts a server it already shut down."""

from __future__ import annotations

from msgspec import UNSET

from agones.apis.scheduling import SchedulingStrategy
from agones.clock import FakeClock
from agones.controllers.gameserversets import GameServerStateCache, compute_reconciliation_action

from .fixtures import NOW, gs, gss, names


def test_created_but_not_listed_yet_is_added() -> None:
    cache = GameServerStateCache(FakeClock(NOW))
    e = cache.for_game_server_set(gss())
    e.created(gs("new", None))
    assert names(e.reconcile_with_updated_server_list([gs("old")])) == ["old", "new"]
    assert "new" in e.pending_creation


def test_created_and_listed_uses_the_listed_object_and_drops_the_overlay() -> None:
    cache = GameServerStateCache(FakeClock(NOW))
    e = cache.for_game_server_set(gss())
    e.created(gs("new", None))
    result = e.reconcile_with_updated_server_list([gs("new", "Ready")])
    assert [g.state() for g in result] == ["Ready"]
    assert e.empty()


def test_deleted_but_listed_alive_is_returned_as_deleted() -> None:
    cache = GameServerStateCache(FakeClock(NOW))
    e = cache.for_game_server_set(gss())
    e.deleted(gs("old"))
    (result,) = e.reconcile_with_updated_server_list([gs("old")])
    assert result.meta.is_being_deleted()
    assert result.meta.deletion_timestamp == "2023-11-14T22:13:20Z"
    assert "old" in e.pending_deletion


def test_deleted_overlay_dropped_once_the_list_shows_the_deletion() -> None:
    cache = GameServerStateCache(FakeClock(NOW))
    e = cache.for_game_server_set(gss())
    e.deleted(gs("old"))
    (result,) = e.reconcile_with_updated_server_list([gs("old", deleting=True)])
    assert result.meta.is_being_deleted()
    assert e.empty()


def test_deleted_overlay_dropped_once_the_list_shows_our_shutdown() -> None:
    """Our Shutdown, listed, counts as our overlay does (being deleted): the listed object is
    used and the overlay goes, instead of a second copy of the GameServer being kept until the
    GameServer controller has deleted it."""
    cache = GameServerStateCache(FakeClock(NOW))
    e = cache.for_game_server_set(gss())
    e.deleted(gs("old"))
    listed = gs("old", "Shutdown")
    assert e.reconcile_with_updated_server_list([listed]) == [listed]
    assert e.empty()


def test_what_is_kept_has_no_managed_fields() -> None:
    cache = GameServerStateCache(FakeClock(NOW))
    e = cache.for_game_server_set(gss())
    created, deleted = gs("new", None), gs("old")
    for obj in (created, deleted):
        obj.meta.managed_fields = [{"manager": "agones-controller", "operation": "Update"}]
    e.created(created)
    e.deleted(deleted)
    assert e.pending_creation["new"].meta.managed_fields is UNSET
    assert e.pending_deletion["old"].meta.managed_fields is UNSET
    assert deleted.meta.managed_fields, "the shared object deleted() was given is not changed"


def test_deleted_overlay_dropped_once_gone_from_the_list() -> None:
    cache = GameServerStateCache(FakeClock(NOW))
    e = cache.for_game_server_set(gss())
    e.deleted(gs("old"))
    assert e.reconcile_with_updated_server_list([]) == []
    assert e.empty()


def test_deleting_a_pending_creation_forgets_the_creation() -> None:
    cache = GameServerStateCache(FakeClock(NOW))
    e = cache.for_game_server_set(gss())
    e.created(gs("new", None))
    e.deleted(gs("new", None))
    assert e.pending_creation == {}
    assert e.reconcile_with_updated_server_list([]) == []


def test_overlay_does_not_mutate_the_cached_objects() -> None:
    cache = GameServerStateCache(FakeClock(NOW))
    e = cache.for_game_server_set(gss())
    listed = gs("old")
    e.deleted(listed)
    e.reconcile_with_updated_server_list([listed])
    assert not listed.meta.is_being_deleted()


def test_entries_per_set_and_dropped_with_the_set() -> None:
    cache = GameServerStateCache(FakeClock(NOW))
    one = cache.for_game_server_set(gss())
    assert cache.for_game_server_set(gss()) is one
    cache.delete_game_server_set(gss())
    assert len(cache) == 0
    assert cache.for_game_server_set(gss()) is not one


def test_a_lagging_cache_never_over_creates() -> None:
    """Created 3 for a set of 3, but the lister still shows none: nothing more is created; shut
    down 1 while the lister still shows it Ready: it is not counted as up."""
    cache = GameServerStateCache(FakeClock(NOW))
    e = cache.for_game_server_set(gss())
    for name in ("a", "b", "c"):
        e.created(gs(name, None))

    def action(listed: list, target: int) -> tuple[int, list[str]]:
        view = e.reconcile_with_updated_server_list(listed)
        got = compute_reconciliation_action(
            SchedulingStrategy.PACKED, view, {}, target, 64, 64, 5000, [], NOW
        )
        return got.num_servers_to_add, names(got.to_delete)

    assert action([], 3) == (0, [])
    assert action([gs("a", None)], 3) == (0, [])
    e.deleted(gs("a"))
    assert action([gs("a"), gs("b"), gs("c")], 3) == (1, [])
