"""MutationCache: the newer of cached and written, TTL and LRU bounds, include_adds (fake time)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from agones.apis.agones.v1.gameserver import GameServer
from agones.clock import FakeClock
from agones.informers import NAMESPACE_INDEX, Indexer, MutationCache, meta_namespace_index_func
from agones.informers.mutation_cache import compare_resource_version
from agones.informers.shared_informer import SharedIndexInformer
from agones.informers.store import meta_namespace_key


def obj(name: str, rv: str, ns: str = "default", fleet: str = "") -> dict[str, Any]:
    labels = {"agones.dev/fleet": fleet} if fleet else {}
    return {"metadata": {"name": name, "namespace": ns, "resourceVersion": rv, "labels": labels}}


def by_fleet(o: Any) -> list[str]:
    fleet = o["metadata"]["labels"].get("agones.dev/fleet")
    return [fleet] if fleet else []


def make(
    *cached: dict[str, Any], include_adds: bool = False, ttl: float = 60, max_entries: int = 100
) -> tuple[MutationCache, Indexer, FakeClock]:
    indexer = Indexer(
        meta_namespace_key, {NAMESPACE_INDEX: meta_namespace_index_func, "fleet": by_fleet}
    )
    for o in cached:
        indexer.add(o)
    clock = FakeClock()
    cache = MutationCache(
        indexer, ttl=ttl, include_adds=include_adds, max_entries=max_entries, clock=clock
    )
    return cache, indexer, clock


def rv(o: Any) -> str | None:
    return None if o is None else str(o["metadata"]["resourceVersion"])


@pytest.mark.parametrize(
    ("lhs", "rhs", "want"),
    [
        pytest.param("1", "2", -1, id="older"),
        pytest.param("10", "9", 1, id="integer-not-string-order"),
        pytest.param("5", "5", 0, id="equal"),
        pytest.param("", "0", 0, id="empty-is-zero"),
    ],
)
def test_compare_resource_version(lhs: str, rhs: str, want: int) -> None:
    assert compare_resource_version(obj("a", lhs), obj("a", rhs)) == want


def test_compare_refuses_a_non_integer_version() -> None:
    with pytest.raises(ValueError, match="not an unsigned integer"):
        compare_resource_version(obj("a", "abc"), obj("a", "1"))


@pytest.mark.parametrize(
    ("cached_rv", "written_rv", "want_rv", "still_remembered"),
    [
        pytest.param("5", "6", "6", True, id="cache-lags-the-write"),
        pytest.param("6", "6", "6", False, id="cache-caught-up"),
        pytest.param("7", "6", "7", False, id="cache-newer-than-the-write"),
    ],
)
def test_get_by_key_returns_the_newer(
    cached_rv: str, written_rv: str, want_rv: str, still_remembered: bool
) -> None:
    cache, _, _ = make(obj("a", cached_rv))
    cache.mutation(obj("a", written_rv))
    assert rv(cache.get_by_key("default/a")) == want_rv
    assert (len(cache) == 1) is still_remembered


def test_an_older_mutation_does_not_replace_a_newer_one() -> None:
    cache, _, _ = make(obj("a", "1"))
    cache.mutation(obj("a", "4"))
    cache.mutation(obj("a", "3"))
    assert rv(cache.get_by_key("default/a")) == "4"


def test_entries_expire_after_ttl() -> None:
    cache, _, clock = make(obj("a", "1"), ttl=10)
    cache.mutation(obj("a", "2"))
    clock.step(9.9)
    assert rv(cache.get_by_key("default/a")) == "2"
    clock.step(0.1)
    assert rv(cache.get_by_key("default/a")) == "1"
    assert len(cache) == 0


def test_least_recently_used_entry_goes_first() -> None:
    cache, _, _ = make(obj("a", "1"), obj("b", "1"), obj("c", "1"), max_entries=2)
    cache.mutation(obj("a", "2"))
    cache.mutation(obj("b", "2"))
    cache.get_by_key("default/a")  # a is now the most recently used
    cache.mutation(obj("c", "2"))
    assert [rv(cache.get_by_key(f"default/{k}")) for k in "abc"] == ["2", "1", "2"]


@pytest.mark.parametrize(
    ("include_adds", "want"),
    [pytest.param(False, None, id="absent-reads-absent"), pytest.param(True, "3", id="adds")],
)
def test_key_missing_from_the_cache(include_adds: bool, want: str | None) -> None:
    cache, _, _ = make(include_adds=include_adds)
    cache.mutation(obj("new", "3"))
    assert rv(cache.get_by_key("default/new")) == want


def test_by_index_merges_written_objects() -> None:
    cache, _, _ = make(obj("a", "1", fleet="f"), obj("b", "1", fleet="f"), include_adds=True)
    cache.mutation(obj("a", "2", fleet="f"))
    cache.mutation(obj("c", "5", fleet="f"))  # created by us, not seen by the informer yet
    cache.mutation(obj("d", "5", fleet="other"))
    got = {o["metadata"]["name"]: rv(o) for o in cache.by_index("fleet", "f")}
    assert got == {"a": "2", "b": "1", "c": "5"}


def test_by_index_without_adds_lists_only_cached_keys() -> None:
    cache, _, _ = make(obj("a", "1", fleet="f"))
    cache.mutation(obj("c", "5", fleet="f"))
    assert [o["metadata"]["name"] for o in cache.by_index("fleet", "f")] == ["a"]


def test_forget_and_unkeyable_objects() -> None:
    cache, _, _ = make(obj("a", "1"))
    cache.mutation(obj("a", "2"))
    cache.forget("default/a")
    assert rv(cache.get_by_key("default/a")) == "1"
    cache.mutation({"metadata": {}})  # no name: ignored
    assert len(cache) == 0


def test_typed_objects() -> None:
    def typed(version: str) -> GameServer:
        meta = {"name": "gs", "namespace": "ns", "resourceVersion": version}
        return msgspec.convert({"metadata": meta}, GameServer)

    cached, written = typed("3"), typed("4")
    indexer = Indexer(meta_namespace_key, {NAMESPACE_INDEX: meta_namespace_index_func})
    indexer.add(cached)
    cache = MutationCache(indexer, clock=FakeClock())
    cache.mutation(written)
    assert cache.get_by_key("ns/gs") is written


def test_an_informer_shares_one_mutation_cache() -> None:
    informer = SharedIndexInformer(lister_watcher=None, clock=FakeClock())  # type: ignore[arg-type]
    assert informer.mutation_cache() is informer.mutation_cache()
    assert informer.mutation_cache().backing is informer.indexer
