"""The framework's informer on the in-process ListerWatcher behaves as on HTTP.

The same scenario runs with two `SharedIndexInformer`s on one local API server, one listing and
watching over HTTP, one in-process: their handlers see the same notifications in the same order,
a Reflector relists after a 410 alike, and (hypothesis) after any sequence of creates, updates
and deletes both caches end equal, and equal to the server's state.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.client.config import load_config
from agones.client.errors import ApiError
from agones.client.rest import RESTClient
from agones.client.versioned.resources import CONFIG_MAPS, NAMESPACES
from agones.informers import (
    ListWatchSource,
    Reflector,
    RESTListWatches,
    SharedIndexInformer,
    SharedInformerFactory,
)
from agones.informers.meta import get_resource_version
from agones.informers.store import meta_namespace_key
from agones.localcluster import LocalAPIServer
from agones.localcluster.apiserver.inprocess import InProcessListWatches
from tests.waiting import wait_for_async

SENTINEL = "zz-end"


class Recorder:
    """Every notification of one informer, in order."""

    def __init__(self) -> None:
        self.seen: list[tuple[Any, ...]] = []

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self.seen.append(("add", key(obj), rv(obj), is_in_initial_list))

    def on_update(self, old: Any, new: Any) -> None:
        self.seen.append(("update", key(new), rv(old), rv(new)))

    def on_delete(self, obj: Any) -> None:
        self.seen.append(("delete", key(obj), rv(obj)))

    def saw(self, name: str) -> bool:
        return any(e[1].endswith("/" + name) for e in self.seen)


def key(obj: Any) -> str:
    return meta_namespace_key(obj)


def rv(obj: Any) -> str:
    return get_resource_version(obj)


class Pair:
    """An HTTP and an in-process informer factory on one server, for one namespace."""

    def __init__(self, server: LocalAPIServer, rest: RESTClient, namespace: str) -> None:
        self.server, self.rest, self.namespace = server, rest, namespace
        local = InProcessListWatches(server.registry, 5.0)
        sources: list[ListWatchSource] = [RESTListWatches(rest), local]
        self.factories = [
            SharedInformerFactory(rest, 0.0, namespace=namespace, list_watches=s) for s in sources
        ]

    def informers(self, label_selector: str | None) -> list[SharedIndexInformer]:
        return [
            f.for_resource(CONFIG_MAPS, label_selector=label_selector).informer()
            for f in self.factories
        ]

    async def start(self) -> None:
        for f in self.factories:
            f.start()
        for f in self.factories:
            assert all((await f.wait_for_cache_sync(20)).values())

    async def stop(self) -> None:
        for f in self.factories:
            await f.shutdown()

    async def write(self, op: str, name: str, app: str) -> None:
        """One create, merge patch or delete; a conflict or a missing object is skipped."""
        ns = self.namespace
        try:
            if op == "create":
                body = {"metadata": {"name": name, "labels": {"app": app}}, "data": {"v": app}}
                await self.rest.create(CONFIG_MAPS, body, namespace=ns)
            elif op == "update":
                patch = {"metadata": {"labels": {"app": app}}, "data": {"v": app + "'"}}
                await self.rest.patch(CONFIG_MAPS, name, patch, namespace=ns)
            else:
                await self.rest.delete(CONFIG_MAPS, name, ns)
        except ApiError as err:
            if err.status_code not in (404, 409):
                raise

    def server_state(self, app: str | None) -> dict[str, Any]:
        entries = self.server.store.list("/configmaps", self.namespace)
        return {
            f"{self.namespace}/{e.obj['metadata']['name']}": e.obj
            for e in entries
            if app is None or e.obj["metadata"]["labels"].get("app") == app
        }


def cache(informer: SharedIndexInformer) -> dict[str, Any]:
    return {key(o): o for o in informer.indexer.list()}


def versions(objects: dict[str, Any]) -> dict[str, tuple[str, Any]]:
    """Each object's resourceVersion and data (a listed built-in item has no kind or apiVersion,
    a watched one has: the caches hold both, as client-go's do)."""
    return {k: (rv(o), o.get("data")) for k, o in objects.items()}


@pytest.fixture
async def pair() -> AsyncIterator[Pair]:
    async with LocalAPIServer() as server, RESTClient(load_config(server.kubeconfig)) as rest:
        p = Pair(server, rest, "default")
        try:
            yield p
        finally:
            await p.stop()


@pytest.mark.parametrize("selector", [None, "app=a"], ids=["everything", "label-selector"])
async def test_handlers_see_the_same_notifications_in_the_same_order(
    pair: Pair, selector: str | None
) -> None:
    for name in ("c0", "c1", "c2"):
        await pair.write("create", name, "a")
    informers = pair.informers(selector)
    recorders = [Recorder(), Recorder()]
    for informer, recorder in zip(informers, recorders, strict=True):
        informer.add_event_handler(recorder)
    await pair.start()
    script = [
        ("create", "c3", "b"),
        ("update", "c0", "b"),
        ("update", "c3", "a"),
        ("delete", "c1", "a"),
        ("update", "c2", "a"),
        ("delete", "c3", "a"),
        ("create", "c1", "a"),
        ("create", SENTINEL, "a"),
    ]
    for op, name, app in script:
        await pair.write(op, name, app)
    await wait_for_async(lambda: all(r.saw(SENTINEL) for r in recorders), 20)
    http, local = recorders
    assert local.seen == http.seen
    assert [e[0] for e in local.seen].count("delete") >= 2
    assert cache(informers[1]) == cache(informers[0])
    assert versions(cache(informers[1])) == versions(pair.server_state(selector and "a"))


class ReplacedStore:
    """What a Reflector gives its store, kept as a dict by key."""

    def __init__(self) -> None:
        self.objects: dict[str, Any] = {}
        self.replaced: list[str] = []

    def add(self, obj: Any) -> None:
        self.objects[key(obj)] = obj

    update = add

    def delete(self, obj: Any) -> None:
        self.objects.pop(key(obj), None)

    def replace(self, items: list[Any], resource_version: str) -> None:
        self.objects = {key(o): o for o in items}
        self.replaced.append(resource_version)


async def test_reflector_relists_from_a_consistent_read_after_410(pair: Pair) -> None:
    await pair.write("create", "c0", "a")
    lw = InProcessListWatches(pair.server.registry, 5.0).list_watch(
        CONFIG_MAPS, "default", label_selector=None, field_selector=None, decoder=None
    )
    store = ReplacedStore()
    reflector = Reflector(lw, store, page_size=1)
    await reflector.list()
    listed_at = reflector.last_sync_resource_version
    await pair.write("create", "c1", "a")
    await pair.write("delete", "c0", "a")
    pair.server.faults.compact()
    with pytest.raises(Exception, match="watch expired"):
        await reflector.watch_once()
    assert reflector.last_sync_resource_version == listed_at
    await reflector.list()  # the exact list at `listed_at` is gone too: read the current state
    assert store.replaced == [listed_at, str(pair.server.store.rv)]
    assert versions(store.objects) == versions(pair.server_state(None))


OPS = st.lists(
    st.tuples(
        st.sampled_from(["create", "create", "update", "delete"]),
        st.sampled_from(["c0", "c1", "c2", "c3"]),
        st.sampled_from(["a", "b"]),
    ),
    max_size=25,
)


@pytest.fixture(scope="module")
def shared_server() -> Iterator[tuple[asyncio.AbstractEventLoop, LocalAPIServer, RESTClient]]:
    """One server for every example (each gets a namespace of its own), on a loop run per example."""
    loop = asyncio.new_event_loop()
    server = LocalAPIServer()
    loop.run_until_complete(server.start())
    rest = RESTClient(load_config(server.kubeconfig))
    try:
        yield loop, server, rest
    finally:
        loop.run_until_complete(rest.close())
        loop.run_until_complete(server.stop())
        loop.close()


_namespaces = itertools.count()  # one fresh namespace per example


@settings(max_examples=30)
@given(ops=OPS, selector=st.sampled_from([None, "app=a"]), before=st.integers(0, 25))
def test_random_writes_leave_both_caches_equal(
    shared_server: tuple[asyncio.AbstractEventLoop, LocalAPIServer, RESTClient],
    ops: list[tuple[str, str, str]],
    selector: str | None,
    before: int,
) -> None:
    loop, server, rest = shared_server
    loop.run_until_complete(
        _converge(server, rest, f"ns-{next(_namespaces)}", ops, selector, before)
    )


async def _converge(
    server: LocalAPIServer,
    rest: RESTClient,
    namespace: str,
    ops: list[tuple[str, str, str]],
    selector: str | None,
    before: int,
) -> None:
    """`before` writes ahead of the informers' first list, the rest while they watch."""
    await rest.create(NAMESPACES, {"metadata": {"name": namespace}})
    pair = Pair(server, rest, namespace)
    informers = pair.informers(selector)
    try:
        for op in ops[:before]:
            await pair.write(*op)
        await pair.start()
        for op in ops[before:]:
            await pair.write(*op)
        await pair.write("create", SENTINEL, "a")
        end = f"{namespace}/{SENTINEL}"
        await wait_for_async(lambda: all(end in i.indexer for i in informers), 20)
        assert cache(informers[1]) == cache(informers[0])
        assert versions(cache(informers[1])) == versions(pair.server_state(selector and "a"))
    finally:
        await pair.stop()
