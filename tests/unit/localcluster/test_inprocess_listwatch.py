"""The in-process ListerWatcher (`apiserver.inprocess`) answers as the HTTP list and watch do.

Each case runs the same list or watch through `RESTListWatches` (HTTP, the local API server) and
`InProcessListWatches` (its registry and store) and compares what the Reflector would be given:
items, resourceVersions, continue tokens, events, and the errors raised.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from agones.client.config import load_config
from agones.client.errors import ApiError, GoneError
from agones.client.rest import Resource, RESTClient
from agones.client.versioned.resources import CONFIG_MAPS, NAMESPACES
from agones.informers import ListerWatcher, RESTListWatches, StructDecoder, WatchEvent
from agones.localcluster import LocalAPIServer
from agones.localcluster.apiserver.inprocess import InProcessListWatches
from agones.localcluster.apiserver.store import copy_of

NS = "default"


@dataclass
class Env:
    server: LocalAPIServer
    rest: RESTClient
    http: RESTListWatches
    local: InProcessListWatches

    def both(
        self, resource: Resource = CONFIG_MAPS, namespace: str | None = NS, **kw: Any
    ) -> tuple[ListerWatcher, ListerWatcher]:
        args = {"label_selector": None, "field_selector": None, "decoder": None, **kw}
        return (
            self.http.list_watch(resource, namespace, **args),
            self.local.list_watch(resource, namespace, **args),
        )

    async def configmap(self, name: str, ns: str = NS, **labels: str) -> dict[str, Any]:
        body = {"metadata": {"name": name, "labels": labels}, "data": {"k": name}}
        out: dict[str, Any] = await self.rest.create(CONFIG_MAPS, body, namespace=ns)
        return out

    async def relabel(self, name: str, **labels: str) -> dict[str, Any]:
        patch = {"metadata": {"labels": labels}}
        out: dict[str, Any] = await self.rest.patch(CONFIG_MAPS, name, patch, namespace=NS)
        return out


@pytest.fixture
async def env() -> AsyncIterator[Env]:
    # No retries on Retry-After: the errors compared are the server's first answers (a too-large
    # resourceVersion would otherwise be asked ten times, a second apart, as client-go does).
    async with (
        LocalAPIServer() as server,
        RESTClient(load_config(server.kubeconfig), max_retries=0) as rest,
    ):
        await rest.create(NAMESPACES, {"metadata": {"name": "other"}})
        yield Env(server, rest, RESTListWatches(rest), InProcessListWatches(server.registry, 0.05))


async def events(
    lw: ListerWatcher, rv: str, count: int, skip_bookmarks: bool = True
) -> list[WatchEvent]:
    """The first `count` events of a watch from `rv` (bookmarks left out unless asked for)."""
    out: list[WatchEvent] = []
    stream = lw.watch(rv, 60)

    async def take() -> None:
        async for event in stream:
            if skip_bookmarks and event.type == "BOOKMARK":
                continue
            out.append(event)
            if len(out) == count:
                return

    try:
        await asyncio.wait_for(take(), 20)
    finally:
        await stream.aclose()  # type: ignore[attr-defined]
    return out


def summary(evs: list[WatchEvent]) -> list[tuple[str, Any]]:
    return [(e.type, e.object) for e in evs]


async def listed(lw: ListerWatcher, rv: str, limit: int | None) -> list[tuple[list[Any], str, str]]:
    """Every page of a list, as (items, resourceVersion, continue)."""
    pages = []
    page = await lw.list(rv, limit, None)
    pages.append((page.items, page.resource_version, page.continue_))
    while page.continue_:
        page = await lw.list(rv, limit, page.continue_)
        pages.append((page.items, page.resource_version, page.continue_))
    return pages


LIST_CASES = [
    pytest.param("0", None, {}, NS, id="any-version"),
    pytest.param("", None, {}, NS, id="consistent"),
    pytest.param("0", 2, {}, NS, id="pages"),
    pytest.param("", 1, {}, None, id="pages-all-namespaces"),
    pytest.param("0", None, {"label_selector": "app=a"}, NS, id="label-selector"),
    pytest.param("0", None, {"label_selector": "app!=a,app"}, NS, id="set-based-selector"),
    pytest.param("0", None, {"field_selector": "metadata.name=c2"}, None, id="field-selector"),
    pytest.param("0", 1, {"label_selector": "app=b"}, NS, id="selector-pages"),
    pytest.param("0", None, {}, "other", id="one-namespace"),
]


@pytest.mark.parametrize(("rv", "limit", "selectors", "namespace"), LIST_CASES)
async def test_list_matches_http(
    env: Env, rv: str, limit: int | None, selectors: dict[str, str], namespace: str | None
) -> None:
    for i, app in enumerate(["a", "b", "a", "b", "c"]):
        await env.configmap(f"c{i}", **{"app": app})
    await env.configmap("c2", "other", app="a")
    http, local = env.both(namespace=namespace, **selectors)
    want = await listed(http, rv, limit)
    assert want[0][0]  # the case lists something
    assert await listed(local, rv, limit) == want


async def test_list_at_an_exact_version_and_typed_items(env: Env) -> None:
    first = await env.configmap("c0")
    await env.configmap("c1")
    await env.rest.delete(CONFIG_MAPS, "c0", NS)
    rv = first["metadata"]["resourceVersion"]
    decoder = StructDecoder(dict[str, Any])
    http, local = env.both(decoder=decoder)
    want = await listed(http, rv, 10)
    assert [i["metadata"]["name"] for i in want[0][0]] == ["c0"]
    assert await listed(local, rv, 10) == want


async def _raised(call: Any) -> ApiError:
    with pytest.raises(ApiError) as info:
        await call
    return info.value


ERROR_CASES = [
    pytest.param(CONFIG_MAPS, {"label_selector": "app in (a"}, "0", 400, id="bad-label-selector"),
    pytest.param(CONFIG_MAPS, {"field_selector": "spec.nope=1"}, "0", 400, id="unknown-field"),
    pytest.param(Resource("example.com", "v1", "widgets"), {}, "0", 404, id="unknown-resource"),
    pytest.param(CONFIG_MAPS, {}, "99999", 504, id="too-large-version"),
    pytest.param(CONFIG_MAPS, {}, "x", 400, id="bad-version"),
]


@pytest.mark.parametrize(("resource", "selectors", "rv", "code"), ERROR_CASES)
async def test_list_errors_match_http(
    env: Env, resource: Resource, selectors: dict[str, str], rv: str, code: int
) -> None:
    http, local = env.both(resource, **selectors)
    want = await _raised(http.list(rv, 5, None))
    got = await _raised(local.list(rv, 5, None))
    assert (
        (type(got), got.status_code, got.reason)
        == (type(want), want.status_code, want.reason)
        == (type(got), code, got.reason)
    )


async def test_compacted_exact_list_and_continue_are_gone(env: Env) -> None:
    for i in range(3):
        await env.configmap(f"c{i}")
    rv = str(env.server.store.rv)
    http, local = env.both()
    first = await local.list("0", 1, None)
    await env.configmap("later")
    env.server.faults.compact()
    for lw in (http, local):
        with pytest.raises(GoneError):
            await lw.list(str(int(rv) - 1), 1, None)
        with pytest.raises(GoneError):
            await lw.list("", 1, first.continue_)


async def test_watch_from_a_list_sees_creates_updates_and_deletes_with_the_final_object(
    env: Env,
) -> None:
    await env.configmap("before")
    http, local = env.both()
    rv = (await local.list("0", None, None)).resource_version
    await env.configmap("c1", app="a")
    await env.relabel("c1", app="b")
    await env.rest.delete(CONFIG_MAPS, "c1", NS)
    want = await events(http, rv, 3)
    got = await events(local, rv, 3)
    assert summary(got) == summary(want)
    assert [e.type for e in got] == ["ADDED", "MODIFIED", "DELETED"]
    final = got[2].object
    assert final["metadata"]["labels"] == {"app": "b"}
    assert int(final["metadata"]["resourceVersion"]) == env.server.store.rv


async def test_watch_resumes_from_a_version_in_the_middle(env: Env) -> None:
    created = [await env.configmap(f"c{i}") for i in range(4)]
    middle = created[1]["metadata"]["resourceVersion"]
    http, local = env.both()
    got = await events(local, middle, 2)
    assert [e.object["metadata"]["name"] for e in got] == ["c2", "c3"]
    assert summary(got) == summary(await events(http, middle, 2))


@pytest.mark.parametrize("rv", ["0", ""], ids=["zero", "empty"])
async def test_watch_without_a_version_starts_with_the_current_state(env: Env, rv: str) -> None:
    await env.configmap("c0")
    await env.configmap("c1")
    http, local = env.both()
    got = await events(local, rv, 2)
    assert [(e.type, e.object["metadata"]["name"]) for e in got] == [
        ("ADDED", "c0"),
        ("ADDED", "c1"),
    ]
    assert summary(got) == summary(await events(http, rv, 2))


async def test_watch_from_a_compacted_version_is_a_410_error_event(env: Env) -> None:
    old = (await env.configmap("c0"))["metadata"]["resourceVersion"]
    await env.configmap("c1")
    env.server.faults.compact()
    http, local = env.both()
    want, got = (await events(http, old, 1))[0], (await events(local, old, 1))[0]
    assert got.type == want.type == "ERROR"
    assert got.object["code"] == want.object["code"] == 410
    assert got.object["reason"] == want.object["reason"] == "Expired"


SELECTOR_WATCHES = [
    pytest.param(
        {"label_selector": "app=a"},
        ["ADDED c2", "ADDED c1", "DELETED c1", "ADDED c3", "DELETED c3"],
        id="label",
    ),
    pytest.param(
        {"field_selector": "metadata.name=c1"},
        ["ADDED c1", "MODIFIED c1", "MODIFIED c1"],
        id="field",
    ),
    pytest.param(
        {"label_selector": "app=a", "field_selector": "metadata.name!=c2"},
        ["ADDED c1", "DELETED c1", "ADDED c3", "DELETED c3"],
        id="both",
    ),
]


@pytest.mark.parametrize(("selectors", "expected"), SELECTOR_WATCHES)
async def test_watch_selectors_report_objects_entering_and_leaving(
    env: Env, selectors: dict[str, str], expected: list[str]
) -> None:
    http, local = env.both(**selectors)
    rv = (await local.list("0", None, None)).resource_version
    await env.configmap("c1", app="b")
    await env.configmap("c2", app="a")
    await env.relabel("c1", app="a")
    await env.relabel("c1", app="b")
    await env.configmap("c3", app="a")
    await env.rest.delete(CONFIG_MAPS, "c3", NS)
    got = await events(local, rv, len(expected))
    assert [f"{e.type} {e.object['metadata']['name']}" for e in got] == expected
    assert summary(got) == summary(await events(http, rv, len(expected)))


async def test_watch_of_one_namespace_and_of_a_cluster_scoped_resource(env: Env) -> None:
    http, local = env.both(namespace="other")
    rv = (await local.list("0", None, None)).resource_version
    await env.configmap("here", NS)
    await env.configmap("there", "other")
    got = await events(local, rv, 1)
    assert [e.object["metadata"]["name"] for e in got] == ["there"]
    assert summary(got) == summary(await events(http, rv, 1))
    http, local = env.both(NAMESPACES, namespace=NS)  # the namespace is ignored, as in the path
    assert await listed(local, "0", None) == await listed(http, "0", None)


async def test_watch_sends_bookmarks_at_the_store_version(env: Env) -> None:
    _, local = env.both()
    rv = (await local.list("0", None, None)).resource_version
    await env.configmap("c0")
    await env.rest.create(NAMESPACES, {"metadata": {"name": "elsewhere"}})
    got = await events(local, rv, 2, skip_bookmarks=False)
    assert got[0].type == "ADDED"
    assert got[1].type == "BOOKMARK"
    assert got[1].object == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": str(env.server.store.rv)},
    }


async def test_watch_ends_when_the_store_closes_it(env: Env) -> None:
    _, local = env.both()
    rv = (await local.list("0", None, None)).resource_version
    seen: list[WatchEvent] = []

    async def consume() -> None:
        async for event in local.watch(rv, 60):
            seen.append(event)

    task = asyncio.create_task(consume())
    await env.configmap("c0")
    while not seen:
        await asyncio.sleep(0.01)
    assert env.server.faults.close_watches() == 1
    await asyncio.wait_for(task, 10)
    assert env.server.store.watcher_count() == 0


async def test_objects_handed_out_are_private_copies(env: Env) -> None:
    await env.configmap("c0")
    _, local = env.both()
    page = await local.list("0", None, None)
    page.items[0]["data"]["k"] = "changed"
    rv = page.resource_version
    await env.relabel("c0", app="x")
    event = (await events(local, rv, 1))[0]
    event.object["metadata"]["labels"]["app"] = "changed"
    stored = env.server.store.get("/configmaps", NS, "c0")
    assert stored is not None
    assert copy_of(stored)["data"] == {"k": "c0"}
    assert stored.obj["metadata"]["labels"] == {"app": "x"}
