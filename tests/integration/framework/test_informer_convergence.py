"""An informer converges to the server's exact state across dropped watches, 410s, 429s and 500s."""

from __future__ import annotations

import asyncio
import contextlib
import random
from typing import Any

import pytest

from agones.client.errors import ApiError, NotFoundError
from agones.client.rest import RESTClient
from agones.client.versioned.resources import CONFIG_MAPS as CONFIGMAPS
from agones.informers import DeletedFinalStateUnknown, ListWatch, SharedIndexInformer
from agones.informers.meta import get_name, get_resource_version

from .faultproxy import FaultProxy

pytestmark = pytest.mark.cluster

NS = "default"


class Mirror:
    """What the handlers saw: must end equal to the server."""

    def __init__(self) -> None:
        self.state: dict[str, str] = {}

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self.state[get_name(obj)] = get_resource_version(obj)

    def on_update(self, old: Any, new: Any) -> None:
        self.state[get_name(new)] = get_resource_version(new)

    def on_delete(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            obj = obj.obj
        self.state.pop(get_name(obj), None)


async def server_state(client: RESTClient, label: str) -> dict[str, str]:
    listed = await client.list(CONFIGMAPS, NS, label_selector=f"test={label}")
    return {get_name(o): get_resource_version(o) for o in listed["items"]}


async def converge(
    informer: SharedIndexInformer, mirror: Mirror, client: RESTClient, label: str
) -> None:
    want = await server_state(client, label)
    for _ in range(300):
        cached = {get_name(o): get_resource_version(o) for o in informer.indexer.list()}
        if cached == want and mirror.state == want:
            return
        await asyncio.sleep(0.05)
        want = await server_state(client, label)
    assert cached == want
    assert mirror.state == want


async def test_informer_converges_through_faults(
    client: RESTClient, fault_proxy: FaultProxy, test_label: str
) -> None:
    rng = random.Random(4)
    via_proxy = RESTClient(fault_proxy.config())
    informer = SharedIndexInformer(
        ListWatch(via_proxy, CONFIGMAPS, NS, label_selector=f"test={test_label}"),
        name="configmaps",
        page_size=3,
    )
    # Fast back-off so the test is quick; the sequence itself is unit-tested.
    informer.reflector.backoff.initial = 0.05
    informer.reflector.backoff.cap = 0.2
    informer.reflector.backoff._duration = 0.05
    mirror = Mirror()
    informer.add_event_handler(mirror)
    names = [f"cm-{i}" for i in range(8)]
    for name in names[:4]:
        await client.create(
            CONFIGMAPS,
            {"metadata": {"name": name, "labels": {"test": test_label}}, "data": {"v": "0"}},
            NS,
        )
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(informer.wait_for_sync(), 10)
        faults = [
            ("watch", "410"),
            ("watch", "429"),
            ("watch", "500"),
            ("list", "429"),
            ("list", "500"),
            ("drop", ""),
            ("list", "410"),
        ]
        for step in range(60):
            name = rng.choice(names)
            try:
                if rng.random() < 0.3:
                    await client.delete(CONFIGMAPS, name, NS)
                else:
                    try:
                        current = await client.get(CONFIGMAPS, name, NS)
                        current["data"] = {"v": str(step)}
                        await client.update(CONFIGMAPS, current, NS)
                    except NotFoundError:
                        await client.create(
                            CONFIGMAPS,
                            {
                                "metadata": {"name": name, "labels": {"test": test_label}},
                                "data": {"v": str(step)},
                            },
                            NS,
                        )
            except NotFoundError:
                pass
            if step % 8 == 0:
                kind, fault = faults[(step // 8) % len(faults)]
                if kind == "drop":
                    fault_proxy.drop_watches()
                else:
                    fault_proxy.inject(kind, fault)
                    fault_proxy.drop_watches()  # force a new request so the fault is hit
            await asyncio.sleep(0.01)
        await converge(informer, mirror, client, test_label)
        assert {f for _, f in fault_proxy.injected} >= {"410", "429", "500"}
        assert informer.reflector.lists >= 2, "at least one relist happened"
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await via_proxy.close()
        for name in names:
            with contextlib.suppress(NotFoundError):
                await client.delete(CONFIGMAPS, name, NS)


async def server_fault(client: RESTClient, action: str) -> None:
    """The local API server's own fault injection (skips the test on other servers)."""
    try:
        await client.request("POST", f"/_faults/{action}")
    except ApiError as err:
        pytest.skip(f"server has no fault injection ({err.status_code})")


async def test_informer_converges_through_server_compaction(
    client: RESTClient, test_label: str
) -> None:
    """Real 410s: the server forgets its history and drops every watch, several times mid-churn."""
    rng = random.Random(7)
    await server_fault(client, "compact")
    informer = SharedIndexInformer(
        ListWatch(client, CONFIGMAPS, NS, label_selector=f"test={test_label}"), name="configmaps"
    )
    informer.reflector.backoff.initial = informer.reflector.backoff._duration = 0.05
    informer.reflector.backoff.cap = 0.2
    mirror = Mirror()
    informer.add_event_handler(mirror)
    names = [f"cc-{i}" for i in range(6)]
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(informer.wait_for_sync(), 10)
        for step in range(40):
            name = rng.choice(names)
            body = {
                "metadata": {"name": name, "labels": {"test": test_label}},
                "data": {"v": str(step)},
            }
            try:
                if rng.random() < 0.3:
                    await client.delete(CONFIGMAPS, name, NS)
                else:
                    try:
                        current = await client.get(CONFIGMAPS, name, NS)
                        current["data"] = body["data"]
                        await client.update(CONFIGMAPS, current, NS)
                    except NotFoundError:
                        await client.create(CONFIGMAPS, body, NS)
            except NotFoundError:
                pass
            if step % 10 == 5:
                # Move the server's RV past ours with a write we do not watch, forget history and
                # drop the watch: re-watching from our RV must get a real 410 and relist.
                noise = {"metadata": {"name": f"{test_label}-noise-{step}"}}
                await client.create(CONFIGMAPS, noise, NS)
                await client.delete(CONFIGMAPS, noise["metadata"]["name"], NS)
                await server_fault(client, "compact")
                await server_fault(client, "close-watches")
            await asyncio.sleep(0.01)
        await converge(informer, mirror, client, test_label)
        assert informer.reflector.lists >= 2
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        for name in names:
            with contextlib.suppress(NotFoundError):
                await client.delete(CONFIGMAPS, name, NS)
