"""The sidecar's state write diffs only what changed, and a store that offers `subscribe` is
followed through it (no watch task); `jsonpatch.diff` of shared subtrees equals that of copies."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agones.featuregates import FeatureGates
from agones.jsonpatch import apply_patch, diff
from agones.sdk.proto import sdk_pb2
from agones.sdkserver.clock import FakeClock
from agones.sdkserver.sdkserver import SDKServer, SDKServerOptions
from agones.sdkserver.store import InMemoryGameServerStore

from .test_cluster_sdkserver import GS, START

EMPTY = sdk_pb2.Empty()
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=12,
)


@given(
    old=st.dictionaries(st.text(max_size=3), JSON, max_size=4),
    key=st.text(max_size=3),
    value=JSON,
)
def test_diff_of_a_shallow_copy_equals_the_diff_of_a_deep_one(
    old: dict[str, Any], key: str, value: Any
) -> None:
    shallow = {**old, key: value}
    deep = copy.deepcopy(old)
    deep[key] = copy.deepcopy(value)
    ops = diff(old, shallow)
    assert ops == diff(old, deep)
    assert apply_patch(old, ops) == deep


class SubscribingStore(InMemoryGameServerStore):
    """An in-memory store offering `subscribe`; its watch must not be used."""

    def __init__(self, gs: dict[str, Any]) -> None:
        super().__init__(gs)
        self.callbacks: list[Callable[[dict[str, Any]], None]] = []

    def subscribe(self, callback: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        self.callbacks.append(callback)
        return lambda: self.callbacks.remove(callback)

    def _commit(self, gs: dict[str, Any]) -> dict[str, Any]:
        result = super()._commit(gs)
        for callback in list(self.callbacks):
            callback(copy.deepcopy(result))
        return result

    def watch(self) -> AsyncIterator[dict[str, Any]]:
        raise AssertionError("a subscribable store is not watched")


def server(store: InMemoryGameServerStore, clock: FakeClock) -> SDKServer:
    gates = FeatureGates()
    return SDKServer(store, gates, clock=clock, options=SDKServerOptions(), recorder=store)


async def test_the_state_write_patches_the_state_only_and_leaves_the_read_copy_alone() -> None:
    clock = FakeClock(START)
    store = InMemoryGameServerStore(copy.deepcopy(GS))
    sdk = server(store, clock)
    await sdk.run()
    read = await sdk.game_server()
    before = copy.deepcopy(read)
    await sdk.allocate(EMPTY)
    await clock.advance(0.5)
    ops = store.patches[-1]
    assert ops[0] == {"op": "test", "path": "/metadata/resourceVersion", "value": "10"}
    assert {op["path"] for op in ops[1:]} == {
        "/metadata/annotations",
        "/status/state",
    }
    assert read == before
    assert store.current["status"]["state"] == "Allocated"
    await sdk.stop()


async def test_a_subscribable_store_is_followed_through_its_subscription() -> None:
    clock = FakeClock(START)
    store = SubscribingStore(copy.deepcopy(GS))
    sdk = server(store, clock)
    stream = sdk.watch_game_server(EMPTY)
    await sdk.run()
    assert (await anext(stream)).object_meta.resource_version == "10"
    assert len(store.callbacks) == 1
    store.update(lambda gs: gs["metadata"].setdefault("labels", {}).update(x="y"))
    update = await anext(stream)
    assert (update.object_meta.resource_version, update.object_meta.labels["x"]) == ("11", "y")
    store.update(lambda gs: gs["metadata"].update(deletionTimestamp="2024-01-01T00:00:01Z"))
    assert sdk.shutdown_seen.is_set()
    await stream.aclose()
    await sdk.stop()
    assert store.callbacks == []
