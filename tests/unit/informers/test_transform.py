"""Informer transforms: applied to listed, watched and deleted objects before they are cached or
handed to handlers (tombstones excepted), and to writes remembered in the shared MutationCache;
settable only before start; `transform_strip_managed_fields` never mutates its input."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from agones.apis.agones.v1.gameserver import GameServer
from agones.client.versioned.resources import GAME_SERVERS as RES
from agones.clock import FakeClock
from agones.informers import ListWatch, ResourceEventHandlerFuncs, SharedIndexInformer
from agones.informers.transform import transform_strip_managed_fields

from .fakeapi import FakeAPI, gs
from .test_informer import until

MANAGED = [{"manager": "kubelet", "operation": "Update", "fieldsV1": {"f:status": {}}}]


def managed(name: str) -> dict[str, Any]:
    obj = gs(name)
    obj["metadata"]["managedFields"] = MANAGED
    return obj


def test_strip_from_a_dict_keeps_the_rest_and_the_input() -> None:
    obj = managed("a")
    stripped = transform_strip_managed_fields(obj)
    assert "managedFields" not in stripped["metadata"]
    assert stripped["metadata"]["name"] == "a"
    assert obj["metadata"]["managedFields"] == MANAGED


def test_strip_from_a_typed_object_keeps_the_input() -> None:
    typed = msgspec.convert(managed("a"), GameServer)
    stripped = transform_strip_managed_fields(typed)
    assert stripped.metadata.managed_fields is msgspec.UNSET
    assert stripped.metadata.name == "a"
    assert typed.metadata.managed_fields == MANAGED


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(gs("plain"), id="dict-without"),
        pytest.param(msgspec.convert(gs("plain"), GameServer), id="typed-without"),
        pytest.param("not an object", id="other"),
    ],
)
def test_strip_returns_objects_without_managed_fields_as_they_are(obj: Any) -> None:
    assert transform_strip_managed_fields(obj) is obj


async def test_listed_watched_and_deleted_objects_are_transformed() -> None:
    api = FakeAPI()
    api.create(managed("listed"))
    informer = SharedIndexInformer(ListWatch(api, RES), clock=FakeClock())
    informer.set_transform(transform_strip_managed_fields)
    seen: list[tuple[str, Any]] = []
    informer.add_event_handler(
        ResourceEventHandlerFuncs(
            add_func=lambda o: seen.append(("add", o)),
            update_func=lambda _old, new: seen.append(("update", new)),
            delete_func=lambda o: seen.append(("delete", o)),
        )
    )
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(informer.wait_for_sync(), 2)
        watched = api.create(managed("watched"))
        api.update({**watched, "status": {"state": "Ready"}})
        api.delete("default/listed")
        await until(lambda: len(seen) == 4)
        assert [kind for kind, _ in seen] == ["add", "add", "update", "delete"]
        assert all("managedFields" not in obj["metadata"] for _, obj in seen)
        assert "managedFields" not in informer.indexer.get_by_key("default/watched")["metadata"]

        cache = informer.mutation_cache()
        written = managed("watched")
        written["metadata"]["resourceVersion"] = str(api.rv + 100)
        cache.mutation(written)
        assert "managedFields" not in cache.get_by_key("default/watched")["metadata"]

        with pytest.raises(RuntimeError):
            informer.set_transform(transform_strip_managed_fields)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
