"""Indexer, keys, label selectors, listers, RealFIFO and the reflector back-off."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agones.client.errors import NotFoundError
from agones.clock import FakeClock
from agones.flowcontrol import ExponentialBackoffManager
from agones.informers import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Delta,
    DeltaType,
    GenericLister,
    Indexer,
    RealFIFO,
    meta_namespace_index_func,
    meta_namespace_key,
    split_meta_namespace_key,
)
from agones.informers.labels import (
    SelectorError,
    label_selector_as_selector,
    parse,
    selector_from_set,
)

from .fakeapi import gs


def by_fleet(obj: Any) -> list[str]:
    fleet = obj["metadata"]["labels"].get("agones.dev/fleet")
    return [fleet] if fleet else []


def test_keys() -> None:
    assert meta_namespace_key(gs("a", "ns")) == "ns/a"
    assert meta_namespace_key({"metadata": {"name": "node-1"}}) == "node-1"
    assert meta_namespace_key(DeletedFinalStateUnknown("ns/x", None)) == "ns/x"
    assert split_meta_namespace_key("ns/a") == ("ns", "a")
    assert split_meta_namespace_key("node") == ("", "node")
    with pytest.raises(ValueError):
        split_meta_namespace_key("a/b/c")
    with pytest.raises(ValueError):
        meta_namespace_key({"metadata": {}})


def test_indexer_keeps_indices_exact() -> None:
    idx = Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func, "fleet": by_fleet})
    idx.add(gs("a", "ns1", **{"agones.dev/fleet": "f1"}))
    idx.add(gs("b", "ns1", **{"agones.dev/fleet": "f1"}))
    idx.add(gs("c", "ns2"))
    assert sorted(idx.index_keys("fleet", "f1")) == ["ns1/a", "ns1/b"]
    idx.update(gs("a", "ns1", **{"agones.dev/fleet": "f2"}))
    assert idx.index_keys("fleet", "f1") == ["ns1/b"]
    assert [o["metadata"]["name"] for o in idx.by_index("fleet", "f2")] == ["a"]
    idx.delete(gs("b", "ns1"))
    assert sorted(idx.list_index_func_values("fleet")) == ["f2"]
    assert len(idx.by_index(NAMESPACE_INDEX, "ns1")) == 1
    assert [
        o["metadata"]["name"]
        for o in idx.index("fleet", gs("z", "x", **{"agones.dev/fleet": "f2"}))
    ] == ["a"]
    idx.replace([gs("d", "ns3")], "9")
    assert idx.list_keys() == ["ns3/d"]
    assert idx.list_index_func_values("fleet") == []
    with pytest.raises(ValueError, match="does not exist"):
        idx.by_index("nope", "x")
    idx.add_indexers({"name": lambda o: [o["metadata"]["name"]]})
    assert idx.index_keys("name", "d") == ["ns3/d"]
    with pytest.raises(ValueError, match="conflict"):
        idx.add_indexers({"name": by_fleet})


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        pytest.param("", {"a": "b"}, True, id="empty-matches-all"),
        pytest.param("a=b", {"a": "b"}, True, id="eq"),
        pytest.param("a==b", {"a": "c"}, False, id="double-eq"),
        pytest.param("a!=b", {}, True, id="neq-missing"),
        pytest.param("a in (x, y),c", {"a": "y", "c": ""}, True, id="in-and-exists"),
        pytest.param("a notin (x)", {"a": "x"}, False, id="notin"),
        pytest.param("!a", {"a": "1"}, False, id="not-exists"),
        # Go's parser reads "()" as the set holding the empty string.
        pytest.param("a in ()", {"a": ""}, True, id="empty-parens-mean-empty-value"),
        pytest.param(
            "agones.dev/fleet=f1,agones.dev/sdk-gs-session-ready",
            {"agones.dev/fleet": "f1"},
            False,
            id="prefixed",
        ),
    ],
)
def test_label_selector_parse_and_match(
    selector: str, labels: dict[str, str], expected: bool
) -> None:
    assert parse(selector).matches(labels) is expected


@pytest.mark.parametrize("bad", ["a=(b", "=b", "a in (x"], ids=["paren", "no-key", "unclosed"])
def test_label_selector_errors(bad: str) -> None:
    with pytest.raises(SelectorError):
        parse(bad)


def test_label_selector_spec() -> None:
    sel = label_selector_as_selector(
        {
            "matchLabels": {"app": "x"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}],
        }
    )
    assert sel.matches({"app": "x", "tier": "web"}) and not sel.matches({"app": "x", "tier": "db"})
    assert label_selector_as_selector({}).matches({"any": "thing"})
    assert not label_selector_as_selector(None).matches({})
    with pytest.raises(SelectorError, match='"Nope" is not a valid label selector operator'):
        label_selector_as_selector({"matchExpressions": [{"key": "a", "operator": "Nope"}]})
    assert selector_from_set({"b": "2", "a": "1"}).matches({"a": "1", "b": "2"})
    assert str(selector_from_set({"b": "2", "a": "1"})) == "a=1,b=2"


def test_lister_by_namespace_and_selector() -> None:
    idx = Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func})
    for obj in (gs("a", "ns1", role="x"), gs("b", "ns1"), gs("c", "ns2", role="x")):
        idx.add(obj)
    lister = GenericLister(idx, "gameservers")
    assert sorted(o["metadata"]["name"] for o in lister.list("role=x")) == ["a", "c"]
    assert [o["metadata"]["name"] for o in lister.by_namespace("ns1").list("role=x")] == ["a"]
    assert lister.by_namespace("ns2").get("c")["metadata"]["name"] == "c"
    with pytest.raises(NotFoundError) as info:
        lister.by_namespace("ns2").get("a")
    assert info.value.status["reason"] == "NotFound"
    assert info.value.status["message"] == 'gameservers "a" not found'


@pytest.mark.parametrize(
    ("resource", "group", "message", "details"),
    [
        pytest.param(
            "gameserver",
            "agones.dev",
            'gameserver.agones.dev "a" not found',
            {"name": "a", "group": "agones.dev", "kind": "gameserver"},
            id="generated-lister-singular-with-group",
        ),
        pytest.param(
            "gameservers",
            "agones.dev",
            'gameservers.agones.dev "a" not found',
            {"name": "a", "group": "agones.dev", "kind": "gameservers"},
            id="generic-lister-plural-with-group",
        ),
        pytest.param("pod", "", 'pod "a" not found', {"name": "a", "kind": "pod"}, id="core"),
    ],
)
def test_lister_not_found_names_the_group_resource_as_go_does(
    resource: str, group: str, message: str, details: dict[str, str]
) -> None:
    lister = GenericLister(
        Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func}), resource, group
    )
    with pytest.raises(NotFoundError) as info:
        lister.by_namespace("ns").get("a")
    assert info.value.status["message"] == message
    assert info.value.status["details"] == details


async def test_real_fifo_replace_emits_tombstones_first_then_replaced() -> None:
    known = Indexer()
    deltas: list[tuple[Delta, bool]] = []

    def process(delta: Delta, initial: bool) -> None:
        deltas.append((delta, initial))
        if delta.type is DeltaType.DELETED:
            known.delete(delta.object)
        else:
            known.update(delta.object)

    fifo = RealFIFO(process, known)
    fifo.replace([gs("a"), gs("b")], "1")
    assert [(d.type, init) for d, init in deltas] == [(DeltaType.REPLACED, True)] * 2
    assert fifo.has_synced()
    deltas.clear()
    fifo.replace([gs("b"), gs("c")], "2")
    types = [(d.type, meta_namespace_key(d.object)) for d, _ in deltas]
    assert types == [
        (DeltaType.DELETED, "default/a"),
        (DeltaType.REPLACED, "default/b"),
        (DeltaType.REPLACED, "default/c"),
    ]
    tombstone = deltas[0][0].object
    assert (
        isinstance(tombstone, DeletedFinalStateUnknown) and tombstone.obj["metadata"]["name"] == "a"
    )
    assert all(not initial for _, initial in deltas)
    deltas.clear()
    await fifo.resync()
    assert {d.type for d, _ in deltas} == {DeltaType.SYNC}


async def test_real_fifo_resync_yields_between_batches_and_reads_each_object_at_its_turn() -> None:
    """A resync lets other tasks run after each batch; an object updated or deleted meanwhile is
    resynced as it is now (or not at all), never as the copy the resync started from."""
    known = Indexer()
    for name in "abcdef":
        known.add(gs(name))
    synced: list[tuple[str, str]] = []

    def process(delta: Delta, _initial: bool) -> None:
        md = delta.object["metadata"]
        synced.append((md["name"], md.get("labels", {}).get("v", "old")))

    fifo = RealFIFO(process, known)
    resync = asyncio.create_task(fifo.resync(batch=2))
    await asyncio.sleep(0)  # the first batch (a, b) is out; the resync is waiting its turn
    assert [n for n, _ in synced] == ["a", "b"]
    newer = gs("e")
    newer["metadata"]["labels"] = {"v": "new"}
    known.update(newer)  # what a watch event would do while the resync waits
    known.delete(gs("f"))
    await resync
    assert synced == [("a", "old"), ("b", "old"), ("c", "old"), ("d", "old"), ("e", "new")]


def test_backoff_manager_sequence_cap_and_reset() -> None:
    clock = FakeClock()
    manager = ExponentialBackoffManager(0.8, 30, 120, 2.0, 1.0, clock, rand=lambda: 0.5)
    seq = [manager.backoff() for _ in range(8)]
    # 0.8 doubling to the 30 s cap, each stretched by jitter 1.0 x rand 0.5.
    assert seq == pytest.approx([1.2, 2.4, 4.8, 9.6, 19.2, 38.4, 45.0, 45.0])
    clock.step(121)
    assert manager.backoff() == pytest.approx(1.2)
    no_jitter = ExponentialBackoffManager(0.8, 30, 120, 2.0, 0.0, clock)
    assert [no_jitter.backoff() for _ in range(7)] == pytest.approx(
        [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30]
    )
