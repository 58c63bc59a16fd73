"""One QPS/burst budget per clientset (Kubernetes, apiextensions, Agones), chosen by API group, as
client-go gives each clientset built from one config a token bucket of its own."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiohttp.test_utils import TestServer

from agones.client.config import Config
from agones.client.rest import Resource, RESTClient
from agones.client.throttle import (
    AGONES,
    APIEXTENSIONS,
    KUBERNETES,
    ClientsetName,
    ClientsetRateLimiters,
    clientset_of,
)
from agones.client.versioned.resources import (
    EVENTS,
    FLEETS,
    GAME_SERVER_ALLOCATIONS,
    GAME_SERVERS,
    PODS,
)
from agones.clock import FakeClock
from tests.fakeapi import FakeServer

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize(
    ("path", "clientset"),
    [
        pytest.param("/api/v1/namespaces/default/pods", KUBERNETES, id="core-pods"),
        pytest.param("/api/v1/namespaces/default/events", KUBERNETES, id="core-events"),
        pytest.param("/api/v1/nodes/n1", KUBERNETES, id="core-nodes"),
        pytest.param("/api", KUBERNETES, id="core-discovery"),
        pytest.param("/apis", KUBERNETES, id="group-discovery"),
        pytest.param("/version", KUBERNETES, id="version"),
        pytest.param(
            "/apis/coordination.k8s.io/v1/namespaces/ns/leases/l", KUBERNETES, id="leases"
        ),
        pytest.param("/apis/events.k8s.io/v1/events", KUBERNETES, id="events-group"),
        pytest.param("/apis/apps/v1/deployments", KUBERNETES, id="apps"),
        pytest.param(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x",
            APIEXTENSIONS,
            id="crds",
        ),
        pytest.param(
            "/apis/agones.dev/v1/namespaces/default/gameservers/gs/status", AGONES, id="gs"
        ),
        pytest.param(
            "/apis/allocation.agones.dev/v1/namespaces/d/gameserverallocations",
            AGONES,
            id="allocation",
        ),
        pytest.param("/apis/autoscaling.agones.dev/v1/fleetautoscalers", AGONES, id="autoscaling"),
        pytest.param(
            "/apis/multicluster.agones.dev/v1/gameserverallocationpolicies",
            AGONES,
            id="multicluster",
        ),
        pytest.param("/apis/notagones.dev/v1/things", KUBERNETES, id="suffix-not-a-subdomain"),
        pytest.param("/apis/agones.dev.evil.io/v1/things", KUBERNETES, id="prefix-only"),
    ],
)
def test_clientset_of_path(path: str, clientset: ClientsetName) -> None:
    assert clientset_of(path) == clientset


@pytest.mark.parametrize(
    ("res", "clientset"),
    [
        pytest.param(PODS, KUBERNETES, id="pods"),
        pytest.param(EVENTS, KUBERNETES, id="events"),
        pytest.param(GAME_SERVERS, AGONES, id="gameservers"),
        pytest.param(FLEETS, AGONES, id="fleets"),
        pytest.param(GAME_SERVER_ALLOCATIONS, AGONES, id="allocations"),
    ],
)
def test_clientset_of_generated_resources(res: Resource, clientset: ClientsetName) -> None:
    assert clientset_of(res.path("default", "x")) == clientset
    assert clientset_of(res.path()) == clientset


def test_budgets_are_independent() -> None:
    clock = FakeClock()
    limiters = ClientsetRateLimiters(1, 3, clock)
    pods, gs = PODS.path("d"), GAME_SERVERS.path("d")
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    buckets = [limiters.for_path(path) for path in (pods, gs, crds)]
    kube, agones, ext = [b for b in buckets if b is not None]
    assert kube is limiters.for_path(EVENTS.path("d"))
    assert len({id(kube), id(agones), id(ext)}) == 3
    assert [kube.try_accept() for _ in range(4)] == [True, True, True, False]
    assert [agones.try_accept() for _ in range(4)] == [True, True, True, False]
    assert ext.try_accept(), "the Agones and Kubernetes buckets are spent, not this one"
    clock.step(1)
    assert [kube.try_accept(), agones.try_accept(), ext.try_accept()] == [True] * 3
    assert not kube.try_accept()


@pytest.mark.parametrize("qps", [pytest.param(0, id="zero"), pytest.param(-1, id="negative")])
def test_no_qps_no_throttling(qps: float) -> None:
    limiters = ClientsetRateLimiters(qps, 10, FakeClock())
    assert limiters.for_path(PODS.path("d")) is None
    assert limiters.for_path(GAME_SERVERS.path("d")) is None


@pytest.fixture
async def served() -> AsyncIterator[tuple[RESTClient, FakeClock]]:
    fake = FakeServer()
    server = TestServer(fake.app(), host="127.0.0.1")
    await server.start_server()
    clock = FakeClock()
    client = RESTClient(
        Config(host=str(server.make_url("")).rstrip("/"), qps=1, burst=2), clock=clock
    )
    try:
        yield client, clock
    finally:
        await client.close()
        await server.close()


def event(name: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": "d"}}


async def test_events_do_not_eat_the_game_server_budget(
    served: tuple[RESTClient, FakeClock],
) -> None:
    client, clock = served
    for name in ("e1", "e2"):
        await client.create(EVENTS, event(name), "d")
    blocked = asyncio.create_task(client.create(EVENTS, event("e3"), "d"))
    await clock.wait_for_timers(1)
    body = {"apiVersion": "agones.dev/v1", "kind": "GameServer", "metadata": {"name": "gs"}}
    created = await asyncio.wait_for(client.create(GAME_SERVERS, body, "d"), 5)
    assert created["metadata"]["name"] == "gs"
    assert (await client.get(GAME_SERVERS, "gs", "d"))["metadata"]["name"] == "gs"
    assert not blocked.done(), "the Kubernetes budget is spent: the third Event waits"
    clock.step(1)
    assert (await asyncio.wait_for(blocked, 5))["metadata"]["name"] == "e3"
