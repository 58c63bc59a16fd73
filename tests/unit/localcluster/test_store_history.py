"""The store's history keeps past versions as JSON bytes: a watch replayed from any kept
resourceVersion, with or without a selector, sees what a watcher live since then saw; a list at a
past revision sees the state of that moment; and the history holds no decoded objects."""

from __future__ import annotations

import gc
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agones.localcluster.apiserver.store import Store
from agones.localcluster.apiserver.watch import Predicate, Watcher

KEY = "/configmaps"
NAMES = ["a", "b", "c", "d"]


def _obj(name: str, app: str, n: int) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "default", "labels": {"app": app}},
        "data": {"n": str(n), "nested": {"list": [n, {"k": app}]}},
    }


def _app_is_a(obj: dict[str, Any]) -> bool:
    return bool(obj["metadata"]["labels"].get("app") == "a")


SELECTORS: dict[str, Predicate | None] = {"all": None, "app=a": _app_is_a}

ops = st.lists(
    st.tuples(st.sampled_from(["put", "delete"]), st.sampled_from(NAMES), st.sampled_from("ab")),
    min_size=1,
    max_size=40,
)


def _seen(w: Watcher) -> list[tuple[str, str, str, str, str]]:
    """(type, name, resourceVersion, app, n) of each event queued on `w`."""
    out = []
    for typ, obj, _raw in w._items:
        assert obj is not None
        md = obj["metadata"]
        out.append((typ, md["name"], md["resourceVersion"], md["labels"]["app"], obj["data"]["n"]))
    return out


def _state(entries: list[Any]) -> list[tuple[str, int, str]]:
    return [(e.obj["metadata"]["name"], e.rv, e.obj["data"]["n"]) for e in entries]


@given(ops, st.sampled_from([3, 100]))
def test_replays_and_past_lists_match_what_was_live(
    steps: list[tuple[str, str, str]], history_size: int
) -> None:
    store = Store(history_size=history_size)
    start = store.rv
    live = {label: store.watch(KEY, "", pred, start) for label, pred in SELECTORS.items()}
    seen_at: list[tuple[int, dict[str, int], list[tuple[str, int, str]]]] = []
    for i, (op, name, app) in enumerate(steps):
        current = store.get(KEY, "default", name)
        if op == "put":
            store.put(KEY, _obj(name, app, i), current)
        elif current is not None:
            store.delete(KEY, current)
        else:
            continue
        counts = {label: len(w._items) for label, w in live.items()}
        seen_at.append((store.rv, counts, _state(list(store.list(KEY)))))
    compacted = store.resource(KEY).compacted_rv
    for rv, counts, state in seen_at:
        if rv < compacted:
            continue
        assert _state(store.list_at(KEY, "", rv)) == state
        for label, pred in SELECTORS.items():
            replayed = store.watch(KEY, "", pred, rv)
            assert _seen(replayed) == _seen(live[label])[counts[label] :]


def test_the_history_holds_no_decoded_objects() -> None:
    """Ten thousand updates of one object add a bounded number of tracked objects each, not
    a decoded copy of every version (what a full collection would have to walk)."""
    store = Store(history_size=10_000)
    entry = store.put(KEY, _obj("a", "a", 0), None)
    gc.collect()
    before = len(gc.get_objects())
    for n in range(1, 10_001):
        entry = store.put(KEY, _obj("a", "a", n), entry)
    gc.collect()
    assert len(gc.get_objects()) - before < 2 * 10_000
