"""The generated typed clients, listers and informer accessors against an in-test API server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
from aiohttp.test_utils import TestServer

from agones.apis.agones.v1 import Fleet, GameServer
from agones.apis.agones.v1.fleet import FleetSpec, FleetStatus
from agones.apis.meta.objectmeta import ObjectMeta
from agones.client import errors
from agones.client.config import Config
from agones.client.gentype import Event, ObjectList
from agones.client.informers.externalversions import SharedInformerFactory
from agones.client.rest import RESTClient
from agones.client.versioned import Clientset
from agones.informers import ResourceEventHandlerFuncs
from tests.fakeapi import FakeServer

pytestmark = pytest.mark.timeout(30)


@pytest.fixture
async def server() -> AsyncIterator[tuple[FakeServer, TestServer]]:
    fake = FakeServer()
    test_server = TestServer(fake.app(), host="127.0.0.1")
    await test_server.start_server()
    try:
        yield fake, test_server
    finally:
        await test_server.close()


@pytest.fixture
async def clientset(server: tuple[FakeServer, TestServer]) -> AsyncIterator[Clientset]:
    _, test_server = server
    cs = Clientset.for_config(Config(host=str(test_server.make_url("")).rstrip("/")))
    try:
        yield cs
    finally:
        await cs.close()


def game_server(name: str, **labels: str) -> GameServer:
    return GameServer(
        api_version="agones.dev/v1",
        kind="GameServer",
        metadata=ObjectMeta(name=name, labels=labels or {"app": "x"}),
        spec=msgspec_spec(),
    )


def msgspec_spec() -> Any:
    from agones.apis.agones.v1.gameserver import GameServerPort, GameServerSpec

    return GameServerSpec(
        ports=[GameServerPort(name="default", container_port=7654)],
        template={"spec": {"containers": [{"name": "game", "image": "img"}]}},
    )


async def test_create_get_list_typed(
    server: tuple[FakeServer, TestServer], clientset: Clientset
) -> None:
    fake, _ = server
    gss = clientset.agones_v1().game_servers("default")
    created = await gss.create(game_server("a", app="x"))
    await gss.create(game_server("b", app="y"))
    assert isinstance(created, GameServer)
    assert created.metadata is not None and created.metadata.resource_version == "101"
    req = fake.requests[0]
    assert (req.method, req.path) == ("POST", "/apis/agones.dev/v1/namespaces/default/gameservers")
    assert req.body["spec"]["ports"] == [{"name": "default", "containerPort": 7654}]
    assert "status" not in req.body  # UNSET fields stay off the wire

    got = await gss.get("a")
    assert isinstance(got, GameServer) and got.ports()[0].container_port == 7654

    listed = await gss.list(label_selector="app=y")
    assert isinstance(listed, ObjectList)
    assert [g.metadata.name for g in listed.items] == ["b"]  # type: ignore[union-attr]
    assert listed.metadata.resource_version == "102"
    assert fake.requests[-1].query == {"labelSelector": "app=y"}


async def test_errors_are_typed(clientset: Clientset) -> None:
    gss = clientset.agones_v1().game_servers("default")
    with pytest.raises(errors.NotFoundError):
        await gss.get("missing")
    await gss.create(game_server("a"))
    with pytest.raises(errors.AlreadyExistsError):
        await gss.create(game_server("a"))


async def test_update_uses_optimistic_concurrency(clientset: Clientset) -> None:
    gss = clientset.agones_v1().game_servers("default")
    first = await gss.create(game_server("a"))
    first.meta.set_label("round", "1")
    updated = await gss.update(first)
    assert updated.meta.get_labels()["round"] == "1"
    first.meta.set_label("round", "2")  # still carries the old resourceVersion
    with pytest.raises(errors.ConflictError):
        await gss.update(first)


async def test_status_subresource_only_where_it_exists(
    server: tuple[FakeServer, TestServer], clientset: Clientset
) -> None:
    fake, _ = server
    fleets = clientset.agones_v1().fleets("ns1")
    fleet = await fleets.create(Fleet(metadata=ObjectMeta(name="f"), spec=FleetSpec(replicas=2)))
    fleet.status = FleetStatus(replicas=2, ready_replicas=1)
    stored = await fleets.update_status(fleet)
    assert fake.requests[-1].path == "/apis/agones.dev/v1/namespaces/ns1/fleets/f/status"
    assert isinstance(stored.status, FleetStatus) and stored.status.ready_replicas == 1
    assert not hasattr(clientset.agones_v1().game_servers("ns1"), "update_status")
    assert hasattr(clientset.agones_v1().game_server_sets("ns1"), "update_status")


async def test_patch_types_and_json_patch_test_op(
    server: tuple[FakeServer, TestServer], clientset: Clientset
) -> None:
    fake, _ = server
    gss = clientset.agones_v1().game_servers("default")
    created = await gss.create(game_server("a"))
    rv = created.meta.resource_version
    merged = await gss.patch("a", {"metadata": {"labels": {"k": "v"}}})
    assert fake.requests[-1].content_type == "application/merge-patch+json"
    assert merged.meta.get_labels()["k"] == "v"
    ops = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": rv},
        {"op": "add", "path": "/status", "value": {"state": "Ready"}},  # absent: add, as RFC 6902
    ]
    with pytest.raises(errors.InvalidError):  # rv is stale after the merge patch
        await gss.patch("a", ops, "json")
    assert fake.requests[-1].content_type == "application/json-patch+json"
    ops[0]["value"] = merged.meta.resource_version
    ready = await gss.patch("a", ops, "json", field_manager="test")
    assert ready.state() == "Ready"
    assert fake.requests[-1].query == {"fieldManager": "test"}


async def test_delete_and_delete_collection(
    server: tuple[FakeServer, TestServer], clientset: Clientset
) -> None:
    fake, _ = server
    gss = clientset.agones_v1().game_servers("default")
    for name, app in (("a", "x"), ("b", "x"), ("c", "y")):
        await gss.create(game_server(name, app=app))
    assert await gss.delete("a", propagation_policy="Background") is None
    req = fake.requests[-1]
    assert (req.method, req.path) == (
        "DELETE",
        "/apis/agones.dev/v1/namespaces/default/gameservers/a",
    )
    assert req.body == {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "propagationPolicy": "Background",
    }
    await gss.delete_collection(label_selector="app=x", dry_run=False)
    req = fake.requests[-1]
    assert (req.method, req.path, req.query) == (
        "DELETE",
        "/apis/agones.dev/v1/namespaces/default/gameservers",
        {"labelSelector": "app=x"},
    )
    assert [g.meta.name for g in (await gss.list()).items] == ["c"]


async def test_watch_yields_typed_events_and_raises_on_error(
    server: tuple[FakeServer, TestServer], clientset: Clientset
) -> None:
    fake, _ = server
    gss = clientset.agones_v1().game_servers("default")
    await gss.create(game_server("a"))
    stream = gss.watch(resource_version="0")
    event = await asyncio.wait_for(anext(stream), 5)
    assert isinstance(event, Event) and event.type == "ADDED"
    assert isinstance(event.object, GameServer) and event.object.meta.name == "a"
    await stream.aclose()

    fake.inject_watch_error = {
        "kind": "Status",
        "code": 410,
        "reason": "Expired",
        "message": "too old",
    }
    with pytest.raises(errors.ExpiredError):
        async for _ in gss.watch(resource_version="1"):
            pass


CORE_PATHS = [
    pytest.param("pods", ("ns",), "/api/v1/namespaces/ns/pods", id="pods"),
    pytest.param("nodes", (), "/api/v1/nodes", id="nodes-cluster-scoped"),
    pytest.param("events", ("ns",), "/api/v1/namespaces/ns/events", id="events"),
]


@pytest.mark.parametrize(("accessor", "args", "path"), CORE_PATHS)
async def test_core_kinds_are_plain_dicts(
    server: tuple[FakeServer, TestServer],
    clientset: Clientset,
    accessor: str,
    args: tuple[str, ...],
    path: str,
) -> None:
    fake, _ = server
    client = getattr(clientset.core_v1(), accessor)(*args)
    created = await client.create({"metadata": {"name": "o1"}, "spec": {"x": 1}})
    assert isinstance(created, dict) and created["spec"] == {"x": 1}
    assert fake.requests[-1].path == path
    assert (await client.get("o1"))["metadata"]["name"] == "o1"


async def test_leases_live_in_coordination(
    server: tuple[FakeServer, TestServer], clientset: Clientset
) -> None:
    fake, _ = server
    leases = clientset.coordination_v1().leases("agones-system")
    lease = await leases.create({"metadata": {"name": "lock"}, "spec": {"holderIdentity": "me"}})
    lease["spec"]["holderIdentity"] = "you"
    assert (await leases.update(lease))["spec"]["holderIdentity"] == "you"
    assert (
        fake.requests[-1].path
        == "/apis/coordination.k8s.io/v1/namespaces/agones-system/leases/lock"
    )
    assert hasattr(clientset.core_v1().pods("x"), "update_status")
    assert not hasattr(leases, "update_status")


async def test_informer_factory_accessors_listers_and_events(
    server: tuple[FakeServer, TestServer], clientset: Clientset
) -> None:
    _, test_server = server
    gss = clientset.agones_v1().game_servers("default")
    await gss.create(game_server("a", app="x"))
    await clientset.agones_v1().game_servers("other").create(game_server("b", app="y"))

    rest = RESTClient(Config(host=str(test_server.make_url("")).rstrip("/")))
    factory = SharedInformerFactory(rest, default_resync=0)
    informer = factory.agones().v1().game_servers().informer()
    assert factory.agones().v1().game_servers().informer() is informer  # one per resource
    lister = factory.agones().v1().game_servers().lister()
    node_informer = factory.core().v1().nodes().informer()
    seen: asyncio.Queue[Any] = asyncio.Queue()
    informer.add_event_handler(ResourceEventHandlerFuncs(add_func=seen.put_nowait))
    try:
        factory.start()
        synced = await factory.wait_for_cache_sync(10)
        assert synced and all(synced.values())
        assert node_informer in factory.informers()
        assert sorted(g.meta.name for g in lister.list()) == ["a", "b"]
        assert all(isinstance(g, GameServer) for g in lister.list())
        assert [g.meta.name for g in lister.list("app=y")] == ["b"]
        assert [g.meta.name for g in lister.game_servers("default").list()] == ["a"]
        assert lister.game_servers("other").get("b").meta.name == "b"
        with pytest.raises(errors.NotFoundError):
            lister.game_servers("default").get("b")

        await gss.create(game_server("c"))
        names = set()
        while "c" not in names:
            names.add((await asyncio.wait_for(seen.get(), 5)).meta.name)
        assert lister.game_servers("default").get("c").meta.name == "c"
    finally:
        await factory.shutdown()
        await rest.close()


async def test_node_lister_is_cluster_scoped(
    server: tuple[FakeServer, TestServer], clientset: Clientset
) -> None:
    _, test_server = server
    await clientset.core_v1().nodes().create({"metadata": {"name": "n1", "labels": {"zone": "a"}}})
    rest = RESTClient(Config(host=str(test_server.make_url("")).rstrip("/")))
    factory = SharedInformerFactory(rest)
    lister = factory.core().v1().nodes().lister()
    try:
        factory.start()
        await factory.wait_for_cache_sync(10)
        assert lister.get("n1")["metadata"]["labels"] == {"zone": "a"}
        assert [n["metadata"]["name"] for n in lister.list("zone=a")] == ["n1"]
        assert not hasattr(lister, "nodes")
    finally:
        await factory.shutdown()
        await rest.close()


async def test_allocation_client_is_create_only(
    server: tuple[FakeServer, TestServer], clientset: Clientset
) -> None:
    from agones.apis.allocation.v1 import GameServerAllocation

    fake, _ = server
    allocations = clientset.allocation_v1().game_server_allocations("default")
    assert not hasattr(allocations, "get") and not hasattr(allocations, "list")
    result = await allocations.create(GameServerAllocation(metadata=ObjectMeta(name="alloc")))
    assert isinstance(result, GameServerAllocation)
    assert (
        fake.requests[-1].path
        == "/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations"
    )
    assert not hasattr(SharedInformerFactory, "allocation")


async def test_fleet_autoscaler_client_decodes_policies(
    server: tuple[FakeServer, TestServer], clientset: Clientset
) -> None:
    from agones.apis.autoscaling.v1 import FleetAutoscaler

    fas = clientset.autoscaling_v1().fleet_autoscalers("default")
    body = {
        "apiVersion": "autoscaling.agones.dev/v1",
        "kind": "FleetAutoscaler",
        "metadata": {"name": "fas"},
        "spec": {
            "fleetName": "f",
            "policy": {"type": "Buffer", "buffer": {"bufferSize": "20%", "maxReplicas": 10}},
        },
    }
    created = await fas.create(msgspec.convert(body, FleetAutoscaler))
    assert isinstance(created, FleetAutoscaler)
    assert created.spec.policy.buffer.buffer_size == "20%"  # type: ignore[union-attr]
    assert hasattr(fas, "update_status")
