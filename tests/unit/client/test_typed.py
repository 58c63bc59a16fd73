"""TypedClient / TypedInformer decode straight into a msgspec Struct."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
from aiohttp.test_utils import TestServer

from agones.client.config import Config
from agones.client.rest import RESTClient
from agones.client.typed import TypedClient, TypedInformer
from agones.informers import SharedInformerFactory

from ..informers.fakeapi import RES, FakeAPI, gs
from .test_rest import GS, Recorder, make_app


class Meta(msgspec.Struct, omit_defaults=True):
    name: str = ""
    namespace: str = ""
    resource_version: str = msgspec.field(name="resourceVersion", default="")
    labels: dict[str, str] = {}


class GameServer(msgspec.Struct, omit_defaults=True):
    metadata: Meta = msgspec.field(default_factory=Meta)
    spec: dict[str, Any] = {}
    echo: Any = None


@pytest.fixture
async def typed() -> AsyncIterator[tuple[TypedClient[GameServer], Recorder]]:
    rec = Recorder()
    srv = TestServer(make_app(rec), host="127.0.0.1")
    await srv.start_server()
    rest = RESTClient(Config(host=str(srv.make_url("")).rstrip("/"), qps=0))
    yield TypedClient(rest, GS, GameServer, namespace="default"), rec
    await rest.close()
    await srv.close()


async def test_typed_round_trip(typed: tuple[TypedClient[GameServer], Recorder]) -> None:
    client, rec = typed
    got = await client.get("gs1")
    assert isinstance(got, GameServer) and got.metadata.name == "gs1"
    created = await client.create(GameServer(Meta(name="new", namespace="default"), {"x": 1}))
    assert rec.requests[-1][4] == {
        "metadata": {"name": "new", "namespace": "default"},
        "spec": {"x": 1},
    }
    assert created.echo["spec"] == {"x": 1}
    await client.update(GameServer(Meta(name="gs2", namespace="default")))
    assert rec.requests[-1][:2] == ("PUT", "/apis/agones.dev/v1/namespaces/default/gameservers/gs2")
    with pytest.raises(TypeError, match="no status subresource"):
        await client.update_status(GameServer(Meta(name="gs2")))
    patched = await client.patch("gs3", {"spec": {}}, patch_type="json")
    assert patched.metadata.name == "gs3"
    items, rv, _ = await client.list()
    assert rv == "5" and items[0].metadata.name == "a"


async def test_typed_informer_caches_structs() -> None:
    api = FakeAPI()
    api.create(gs("a", role="x"))
    factory = SharedInformerFactory(api, 0)  # type: ignore[arg-type]
    informer: TypedInformer[GameServer] = TypedInformer(factory, RES, GameServer)
    informer.informer().reflector.rand = random.Random(0)
    factory.start()
    assert (await factory.wait_for_cache_sync(2)) == {"gameservers.agones.dev": True}
    (obj,) = informer.lister().by_namespace("default").list("role=x")
    assert isinstance(obj, GameServer) and obj.metadata.resource_version == "101"
    assert TypedInformer(factory, RES, GameServer).informer() is informer.informer(), (
        "one informer per resource"
    )
    api.bookmark()
    api.create(gs("b"))
    await asyncio.wait_for(
        _until(lambda: informer.informer().last_sync_resource_version() == "103"), 2
    )
    assert isinstance(informer.lister().by_namespace("default").get("b"), GameServer)
    await factory.shutdown()
    await asyncio.sleep(0)


async def _until(cond: Any) -> None:
    while not cond():
        await asyncio.sleep(0)
