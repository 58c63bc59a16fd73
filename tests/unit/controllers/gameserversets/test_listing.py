"""Listing a set's GameServers: by the set index, controlled by the set, and through the shared
MutationCache so a write this process just made is what the next sync sees."""

from __future__ import annotations

from agones.apis.agones.v1.gameserver import GameServerState
from agones.controllers.gameserversets.gameserversets import (
    GAME_SERVER_SET_INDEX,
    game_server_set_index_func,
    list_game_servers_by_game_server_set_owner,
)
from agones.informers import Indexer, meta_namespace_key
from agones.informers.mutation_cache import MutationCache

from .fixtures import gs, gss, names


def cache_with(*servers: object) -> tuple[Indexer, MutationCache]:
    indexer = Indexer(meta_namespace_key, {GAME_SERVER_SET_INDEX: game_server_set_index_func})
    for server in servers:
        indexer.add(server)
    return indexer, MutationCache(indexer)


def with_rv(server: object, rv: str) -> object:
    server.metadata.resource_version = rv  # type: ignore[attr-defined]
    return server


def test_lists_only_servers_of_the_set_it_controls() -> None:
    other_set = gs("other", labels={"agones.dev/gameserverset": "another"})
    foreign = gs("foreign", owner_uid="someone-else")
    _, cache = cache_with(gs("mine"), other_set, foreign)
    assert names(list_game_servers_by_game_server_set_owner(cache, gss())) == ["mine"]


def test_a_write_is_seen_before_the_informer_catches_up() -> None:
    _, cache = cache_with(with_rv(gs("mine", "Ready"), "5"))
    written = with_rv(gs("mine", "Shutdown"), "6")
    cache.mutation(written)
    (listed,) = list_game_servers_by_game_server_set_owner(cache, gss())
    assert listed.state() == GameServerState.SHUTDOWN


def test_index_keys_by_namespace_and_set() -> None:
    assert game_server_set_index_func(gs("a")) == ["default/set"]
    assert game_server_set_index_func(gs("b", labels={"agones.dev/gameserverset": "x"})) == [
        "default/x"
    ]
    assert game_server_set_index_func({"not": "a GameServer"}) == []
