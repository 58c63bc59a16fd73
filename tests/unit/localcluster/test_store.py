"""The store: one resourceVersion sequence, replay, compaction, and non-blocking fan-out."""

import asyncio

import pytest

from agones.localcluster.apiserver import errors
from agones.localcluster.apiserver.store import Entry, Store, copy_of


def _obj(name: str, ns: str = "default", **labels: str) -> dict:
    return {"metadata": {"name": name, "namespace": ns, "labels": labels}}


def test_one_sequence_across_resources() -> None:
    store = Store()
    a = store.put("/configmaps", _obj("a"), None)
    b = store.put("/secrets", _obj("b"), None)
    c = store.put("/configmaps", _obj("c"), None)
    assert a.rv < b.rv < c.rv
    assert c.obj["metadata"]["resourceVersion"] == str(c.rv)


def test_list_is_ordered_and_resumable() -> None:
    store = Store()
    for ns, name in [("b", "2"), ("a", "9"), ("b", "1"), ("a", "1")]:
        store.put("/configmaps", _obj(name, ns), None)
    keys = [
        (e.obj["metadata"]["namespace"], e.obj["metadata"]["name"])
        for e in store.list("/configmaps")
    ]
    assert keys == [("a", "1"), ("a", "9"), ("b", "1"), ("b", "2")]
    after = [e.obj["metadata"]["name"] for e in store.list("/configmaps", "", ("a", "9"))]
    assert after == ["1", "2"]
    only_b = [e.obj["metadata"]["name"] for e in store.list("/configmaps", "b")]
    assert only_b == ["1", "2"]


async def test_watch_replays_after_resource_version() -> None:
    store = Store()
    first = store.put("/configmaps", _obj("a"), None)
    store.put("/configmaps", _obj("b"), None)
    w = store.watch("/configmaps", "", None, first.rv)
    batch = await w.next_batch(1)
    assert [(t, o["metadata"]["name"]) for t, o, _ in batch if o] == [("ADDED", "b")]


async def test_watch_without_version_sends_current_state() -> None:
    store = Store()
    store.put("/configmaps", _obj("a"), None)
    w = store.watch("/configmaps", "", None, None)
    batch = await w.next_batch(1)
    assert [t for t, _, _ in batch] == ["ADDED"]


def test_history_limit_compacts() -> None:
    store = Store(history_size=2)
    first = store.put("/configmaps", _obj("a"), None)
    for name in "bcd":
        store.put("/configmaps", _obj(name), None)
    with pytest.raises(errors.StatusError) as err:
        store.watch("/configmaps", "", None, first.rv)
    assert err.value.code == 410
    assert err.value.reason == "Expired"


def test_compact_expires_every_older_version() -> None:
    store = Store()
    first = store.put("/configmaps", _obj("a"), None)
    store.put("/configmaps", _obj("b"), None)
    store.compact()
    with pytest.raises(errors.StatusError):
        store.watch("/configmaps", "", None, first.rv)
    store.watch("/configmaps", "", None, store.rv)


def test_overrun_watcher_is_closed_and_writes_continue() -> None:
    store = Store(watcher_capacity=3)
    w = store.watch("/configmaps", "", None, store.rv)
    for i in range(10):
        store.put("/configmaps", _obj(f"o{i}"), None)
    assert w.closed
    assert store.watcher_count() == 0
    assert store.count("/configmaps") == 10


async def test_selector_watch_reports_leaving_as_deleted() -> None:
    store = Store()
    entry = store.put("/configmaps", _obj("a", color="red"), None)
    w = store.watch(
        "/configmaps", "", lambda o: o["metadata"]["labels"].get("color") == "red", entry.rv
    )
    store.put("/configmaps", _obj("a", color="blue"), entry)
    batch = await w.next_batch(1)
    ((kind, obj, _),) = batch
    assert kind == "DELETED"
    assert obj is not None and obj["metadata"]["labels"] == {"color": "red"}


async def test_next_batch_times_out_empty() -> None:
    store = Store()
    w = store.watch("/configmaps", "", None, store.rv)
    assert await asyncio.wait_for(w.next_batch(0.01), 1) == []


def test_list_at_rebuilds_a_past_state() -> None:
    store = Store()
    a = store.put("/configmaps", _obj("a"), None)
    b = store.put("/configmaps", _obj("b"), None)
    then = store.rv
    store.put(
        "/configmaps", {"metadata": {"name": "a", "namespace": "default", "labels": {"v": "2"}}}, a
    )
    store.delete("/configmaps", b)
    store.put("/configmaps", _obj("c"), None)
    past = store.list_at("/configmaps", "", then)
    assert [(e.obj["metadata"]["name"], e.obj["metadata"]["labels"]) for e in past] == [
        ("a", {}),
        ("b", {}),
    ]
    assert [e.rv for e in past] == [a.rv, b.rv]
    now = store.list_at("/configmaps", "", store.rv)
    assert [e.obj["metadata"]["name"] for e in now] == ["a", "c"]
    assert [
        e.obj["metadata"]["name"] for e in store.list_at("/configmaps", "", then, ("default", "a"))
    ] == ["b"]


def test_list_at_before_compaction_is_gone() -> None:
    store = Store(history_size=1)
    first = store.put("/configmaps", _obj("a"), None)
    store.put("/configmaps", _obj("b"), None)
    store.put("/configmaps", _obj("c"), None)
    with pytest.raises(errors.StatusError) as err:
        store.list_at("/configmaps", "", first.rv)
    assert err.value.code == 410


@pytest.mark.parametrize("stored", [True, False], ids=["from-its-json", "deep-copied"])
def test_copy_of_is_a_private_equal_copy(stored: bool) -> None:
    obj = {
        "metadata": {"name": "a", "labels": {"x": "1"}},
        "spec": {"n": 1.0, "l": [1, {"k": None}]},
    }
    entry = Store().put("/things", obj, None) if stored else Entry(obj, b"", 1)
    copied = copy_of(entry)
    assert copied == entry.obj
    assert type(copied["spec"]["n"]) is float
    copied["spec"]["l"][1]["k"] = "changed"
    copied["metadata"]["labels"]["x"] = "2"
    assert entry.obj["spec"]["l"][1]["k"] is None
    assert entry.obj["metadata"]["labels"] == {"x": "1"}
