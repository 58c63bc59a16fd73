"""The GameServer controller against the in-memory API: the lifecycle and its corner cases."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest

from agones.apis.agones.v1.gameserver import GameServer
from agones.clock import FakeClock
from agones.featuregates import FeatureGates

from .fakeapi import api_error
from .harness import game_server, running

pytestmark = pytest.mark.timeout(30)

SIDECARS_OFF = FeatureGates().with_values(SidecarContainers=False)


async def test_dynamic_lifecycle_create_to_ready_to_deleted() -> None:
    async with running() as h:
        await h.create(game_server("gs1"))
        starting = await h.wait_state("gs1", "Starting")
        (port,) = starting["spec"]["ports"]
        assert 7000 <= port["hostPort"] <= 7010
        assert starting["metadata"]["finalizers"] == ["agones.dev/controller"]

        pod = h.pod("gs1")
        assert pod is not None
        assert pod["metadata"]["ownerReferences"][0]["uid"] == starting["metadata"]["uid"]
        game = pod["spec"]["containers"][0]
        assert game["ports"] == [
            {"containerPort": 7654, "hostPort": port["hostPort"], "protocol": "UDP"}
        ]
        assert pod["spec"]["initContainers"][0]["name"] == "agones-gameserver-sidecar"

        await h.schedule("gs1")
        scheduled = await h.wait_state("gs1", "Scheduled")
        assert scheduled["status"]["address"] == "127.0.0.2"
        assert scheduled["status"]["nodeName"] == "node-1"
        assert scheduled["status"]["ports"] == [{"name": "default", "port": port["hostPort"]}]
        assert scheduled["status"]["addresses"] == [
            {"type": "InternalIP", "address": "127.0.0.2"},
            {"type": "Hostname", "address": "node-1"},
            {"type": "PodIP", "address": "10.0.0.7"},
        ]

        await h.set_state("gs1", "RequestReady")
        await h.wait_state("gs1", "Ready")
        # The controller's own writes from create to Ready: one per transition, no conflicts.
        assert h.api.writes[("update", "gameservers")] == 4
        assert h.api.writes[("create", "pods")] == 1
        assert h.counter.counts()["node-1"].ready == 1

        await h.set_state("gs1", "Shutdown")
        await h.wait_gone("gameservers", "gs1")
        assert h.pod("gs1") is None
        assert h.allocator.allocators[0].taken_count() == 0
        # The write that removed the finalizer deleted it: nothing of it stays remembered.
        await h.api.wait_for(
            lambda: h.controller.game_server_cache.get_by_key("default/gs1") is None
        )
        assert len(h.controller.game_server_cache) == 0
        await h.api.wait_for(lambda: len(h.event_reasons("gs1")) >= 6)
        reasons = h.event_reasons("gs1")
        assert reasons[:5] == [
            ("PortAllocation", "Port allocated"),
            ("Creating", "Pod gs1 created"),
            ("Scheduled", "Address and port populated"),
            ("Ready", "SDK.Ready() complete"),
            ("Shutdown", "Deletion started"),
        ]
        assert ("Shutdown", "Deleting Pod gs1") in reasons


async def test_ready_before_scheduled_fills_the_address() -> None:
    async with running() as h:
        await h.create(game_server("gs1"))
        await h.wait_state("gs1", "Starting")
        # The SDK's Ready() lands before the controller saw the pod scheduled.
        await h.set_state("gs1", "RequestReady")
        await h.schedule("gs1")
        ready = await h.wait_state("gs1", "Ready")
        assert ready["status"]["address"] == "127.0.0.2"
        assert ready["status"]["nodeName"] == "node-1"
        await h.api.wait_for(lambda: ("Ready", "SDK.Ready() complete") in h.event_reasons("gs1"))
        assert ("Ready", "Address and port populated") in h.event_reasons("gs1")


async def test_failed_port_allocation_write_gives_the_port_back() -> None:
    async with running(port_range=(7000, 7000)) as h:
        h.api.faults[("update", "gameservers")].extend(
            [api_error(409, "Conflict"), api_error(500, "InternalError")]
        )
        await h.create(game_server("gs1"))
        creating = await h.wait_state("gs1", "Starting")
        assert creating["spec"]["ports"][0]["hostPort"] == 7000
        # Two failed writes released their port each time: only one map, one port taken.
        ra = h.allocator.allocators[0]
        assert ra.port_allocations == [{7000}]


@pytest.mark.parametrize(
    ("ports", "want_spec", "want_status"),
    [
        pytest.param(
            [{"name": "s", "portPolicy": "Static", "containerPort": 7654, "hostPort": 9000}],
            [{"name": "s", "hostPort": 9000, "containerPort": 7654, "protocol": "UDP"}],
            [{"name": "s", "port": 9000}],
            id="static",
        ),
        pytest.param(
            [{"name": "n", "portPolicy": "None", "containerPort": 7654}],
            [{"name": "n", "containerPort": 7654, "protocol": "UDP"}],
            [{"name": "n", "port": 7654}],
            id="none-publishes-container-port",
        ),
        pytest.param(
            [
                {
                    "name": "t",
                    "portPolicy": "Static",
                    "containerPort": 7654,
                    "hostPort": 9000,
                    "protocol": "TCPUDP",
                }
            ],
            [
                {"name": "t-tcp", "hostPort": 9000, "containerPort": 7654, "protocol": "TCP"},
                {"name": "t-udp", "hostPort": 9000, "containerPort": 7654, "protocol": "UDP"},
            ],
            [{"name": "t-tcp", "port": 9000}, {"name": "t-udp", "port": 9000}],
            id="static-tcpudp-split",
        ),
    ],
)
async def test_port_policies_reach_status(
    ports: list[dict[str, Any]], want_spec: list[dict[str, Any]], want_status: list[dict[str, Any]]
) -> None:
    async with running() as h:
        await h.create(game_server("gs1", *ports))
        await h.wait_state("gs1", "Starting")
        await h.schedule("gs1")
        scheduled = await h.wait_state("gs1", "Scheduled")
        keys = ("name", "hostPort", "containerPort", "protocol")
        got = [{k: p[k] for k in keys if k in p} for p in scheduled["spec"]["ports"]]
        assert got == want_spec
        assert scheduled["status"]["ports"] == want_status


async def test_passthrough_and_tcpudp_dynamic() -> None:
    async with running() as h:
        await h.create(
            game_server(
                "gs1",
                {"name": "p", "portPolicy": "Passthrough"},
                {"name": "d", "containerPort": 7654, "protocol": "TCPUDP"},
            )
        )
        gs = await h.wait_state("gs1", "Starting")
        by_name = {p["name"]: p for p in gs["spec"]["ports"]}
        assert set(by_name) == {"p", "d-tcp", "d-udp"}
        assert by_name["p"]["containerPort"] == by_name["p"]["hostPort"]
        assert by_name["d-tcp"]["hostPort"] == by_name["d-udp"]["hostPort"]
        assert by_name["d-tcp"]["hostPort"] != by_name["p"]["hostPort"]
        pod = h.pod("gs1")
        assert pod is not None
        assert (
            pod["metadata"]["annotations"]["agones.dev/container-passthrough-port-assignment"]
            == '{"game":[0]}'
        )


async def test_two_game_servers_never_share_a_port_on_one_node() -> None:
    async with running(port_range=(7000, 7003)) as h:
        for i in range(4):
            await h.create(game_server(f"gs{i}"))
        ports = set()
        for i in range(4):
            gs = await h.wait_state(f"gs{i}", "Starting")
            ports.add(gs["spec"]["ports"][0]["hostPort"])
        assert ports == {7000, 7001, 7002, 7003}


async def test_invalid_pod_moves_to_error() -> None:
    async with running() as h:
        h.api.faults[("create", "pods")].append(
            api_error(422, "Invalid", 'Pod "gs1" is invalid: spec.containers[0].image: Required')
        )
        await h.create(game_server("gs1"))
        errored = await h.wait_state("gs1", "Error")
        assert "agones.dev/errored-at" in errored["metadata"]["annotations"]
        await h.api.wait_for(lambda: h.event_reasons("gs1")[-1:])
        await h.events.flush()
        assert any(r == "Error" and "is invalid" in m for r, m in h.event_reasons("gs1"))
        assert h.pod("gs1") is None


async def test_dev_game_server_goes_ready_without_a_pod() -> None:
    async with running() as h:
        gs = game_server(
            "dev",
            {"name": "default", "portPolicy": "Static", "hostPort": 7777, "containerPort": 7777},
        )
        gs["metadata"]["annotations"]["agones.dev/dev-address"] = "192.168.1.5"
        await h.create(gs)
        ready = await h.wait_state("dev", "Ready")
        assert ready["status"]["address"] == "192.168.1.5"
        assert ready["status"]["nodeName"] == "192.168.1.5"
        assert ready["status"]["addresses"] == [{"type": "InternalIP", "address": "192.168.1.5"}]
        assert ready["status"]["ports"] == [{"name": "default", "port": 7777}]
        assert h.pod("dev") is None
        await h.set_state("dev", "Shutdown")
        await h.wait_gone("gameservers", "dev")


async def test_without_native_sidecars_records_the_ready_container() -> None:
    async with running(gates=SIDECARS_OFF) as h:
        await h.create(game_server("gs1"))
        await h.wait_state("gs1", "Starting")
        pod = h.pod("gs1")
        assert pod is not None
        assert pod["spec"]["containers"][0]["name"] == "agones-gameserver-sidecar"
        assert "initContainers" not in pod["spec"]
        await h.schedule("gs1")
        await h.wait_state("gs1", "Scheduled")
        await h.set_state("gs1", "RequestReady")
        ready = await h.wait_state("gs1", "Ready")
        assert ready["metadata"]["annotations"]["agones.dev/ready-container-id"] == (
            "containerd://game-1"
        )
        pod = h.pod("gs1")
        assert pod is not None
        assert pod["metadata"]["annotations"]["agones.dev/ready-container-id"] == (
            "containerd://game-1"
        )


async def test_kubectl_delete_removes_pod_then_finalizer() -> None:
    async with running() as h:
        from agones.client.versioned.resources import GAME_SERVERS

        await h.create(game_server("gs1"))
        await h.wait_state("gs1", "Starting")
        await h.schedule("gs1")
        await h.wait_state("gs1", "Scheduled")
        await h.api.delete(GAME_SERVERS, "gs1", "default")
        await h.wait_gone("gameservers", "gs1")
        assert h.pod("gs1") is None
        assert h.allocator.allocators[0].taken_count() == 0
        # The write that removed the finalizer deleted it: nothing of it stays remembered.
        await h.api.wait_for(
            lambda: h.controller.game_server_cache.get_by_key("default/gs1") is None
        )
        assert len(h.controller.game_server_cache) == 0


async def test_errored_at_uses_the_injected_clock() -> None:
    """With a fake clock nothing moves until time does; the Error annotation carries that time."""
    clock = FakeClock(start=1_767_225_600.0)  # 2026-01-01T00:00:00Z
    async with running(clock=clock) as h:
        h.api.faults[("create", "pods")].append(api_error(403, "Forbidden", "quota exceeded"))
        await h.create(game_server("gs1"))
        await clock.wait_for_timers(1)  # the informer's add was queued, rate-limited
        gs = h.gs("gs1")
        assert gs is not None and gs["status"]["state"] == "PortAllocation"  # queued, time frozen
        clock.step(90)  # the first (rate-limited) retry fires at 20 ms
        errored = await h.wait_state("gs1", "Error")
        assert errored["metadata"]["annotations"]["agones.dev/errored-at"] == "2026-01-01T00:01:30Z"


async def test_port_kept_when_the_allocation_write_may_have_happened() -> None:
    async with running(port_range=(7000, 7001)) as h:
        h.api.faults[("update", "gameservers")].append(TimeoutError())  # type: ignore[arg-type]
        await h.create(game_server("gs1"))
        gs = await h.wait_state("gs1", "Starting")
        # The first allocation's port is not reused: two ports are taken, one is the GameServer's.
        ra = h.allocator.allocators[0]
        assert ra.taken_count() == 2
        assert gs["spec"]["ports"][0]["hostPort"] in ra.port_allocations[0]


async def test_pod_already_exists_is_reused() -> None:
    async with running() as h:
        h.api.faults[("create", "pods")].append(api_error(409, "AlreadyExists", "exists"))
        await h.create(game_server("gs1"))
        await h.wait_state("gs1", "Starting")
        await h.api.wait_for(
            lambda: ("Creating", "Pod already exists, reused") in h.event_reasons("gs1")
        )


async def test_transient_pod_create_error_retries_with_a_warning() -> None:
    async with running() as h:
        h.api.faults[("create", "pods")].append(api_error(500, "InternalError", "etcd hiccup"))
        await h.create(game_server("gs1"))
        await h.wait_state("gs1", "Starting")
        assert h.pod("gs1") is not None
        await h.events.flush()
        assert ("Creating", "error creating Pod for GameServer gs1") in h.event_reasons("gs1")
        assert h.api.writes[("create", "pods")] == 2


async def test_the_write_that_finishes_a_deletion_is_not_remembered() -> None:
    """Removing the last finalizer of a GameServer being deleted deletes it: its delete event may
    come before the write returns, so remembering the write would keep it forever."""
    async with running() as h:
        from agones.controllers.gameservers.gameservers import deep_copy

        await h.create(game_server("gs1"))
        starting = await h.wait_state("gs1", "Starting")
        gs = msgspec.convert(starting, GameServer)
        h.controller.game_server_cache.mutation(gs)
        assert len(h.controller.game_server_cache) == 1
        done = deep_copy(gs)
        done.meta.deletion_timestamp = "2026-01-01T00:00:00Z"
        done.meta.finalizers = []
        await h.controller._update(done)
        assert len(h.controller.game_server_cache) == 0


async def test_two_queues_syncing_one_game_server_write_its_transition_once() -> None:
    """A creation-queue sync still on a GameServer and a main-queue sync of it (its pod got
    scheduled) run at once: the second waits for the first and finds Scheduled already written,
    instead of writing Scheduled again from the same cached object (a 409)."""
    async with running() as h:
        await h.create(game_server("gs1"))
        await h.wait_state("gs1", "Starting")
        await h.controller.shut_down_with_drain()  # only the syncs below act from here on
        await h.schedule("gs1")
        await h.api.wait_for(lambda: h.controller.pod_lister.list()[0].status)
        before = h.api.writes[("update", "gameservers")]
        update = h.api.update

        async def over_the_network(*args: Any, **kwargs: Any) -> Any:
            await asyncio.sleep(0.01)  # a real write suspends the sync: another may run
            return await update(*args, **kwargs)

        h.api.update = over_the_network  # type: ignore[method-assign]
        sync = h.controller.sync_game_server
        await asyncio.gather(sync("default/gs1"), sync("default/gs1"), sync("default/gs1"))
        await h.wait_state("gs1", "Scheduled")
        assert h.api.conflicts == 0
        assert h.api.writes[("update", "gameservers")] - before == 1
        assert len(h.controller.syncing) == 0


async def test_a_deleted_game_server_leaves_nothing_in_the_event_correlator() -> None:
    async with running() as h:
        await h.create(game_server("gs1"))
        await h.wait_state("gs1", "Starting")
        await h.schedule("gs1")
        await h.wait_state("gs1", "Scheduled")
        await h.set_state("gs1", "RequestReady")
        await h.wait_state("gs1", "Ready")
        await h.events.flush()
        assert h.events.cached() > 0
        await h.set_state("gs1", "Shutdown")
        await h.wait_gone("gameservers", "gs1")
        await h.events.flush()
        await h.api.wait_for(lambda: h.events.cached() == 0)
        assert h.events.correlator._keys_of == {}


async def _tick(clock: FakeClock, steps: int = 1) -> None:
    """Move the fake clock 10 ms `steps` times, giving the informers real time after each step."""
    for _ in range(steps):
        await clock.advance(0.01)
        await asyncio.sleep(0.002)


async def _advance_until(h: Any, clock: FakeClock, name: str, state: str) -> dict[str, Any]:
    """`_tick` until `name` is in `state`."""
    for _ in range(500):
        gs = h.gs(name)
        if gs is not None and gs.get("status", {}).get("state") == state:
            return gs  # type: ignore[no-any-return]
        await _tick(clock)
    raise AssertionError(f"{name} never reached {state}: {h.gs(name)}")


async def test_a_ready_within_the_scheduled_write_delay_makes_the_scheduled_write_unnecessary() -> (
    None
):
    """The pod got its IPs; the controller holds its Scheduled write; the SDK's Ready() lands
    meanwhile: the controller fills the address with Ready, and never writes Scheduled."""
    clock = FakeClock()
    async with running(clock=clock, scheduled_write_delay=0.5) as h:
        await h.create(game_server("gs1"))
        await _advance_until(h, clock, "gs1", "Starting")
        before = h.api.writes[("update", "gameservers")]
        await h.schedule("gs1")
        await _tick(clock, 20)  # 0.2 s of fake time: the sync saw the IPs, and holds the write
        assert "default/gs1" in h.controller._addressed_at
        gs = h.gs("gs1")
        assert gs is not None and gs["status"]["state"] == "Starting"
        await h.set_state("gs1", "RequestReady")
        ready = await _advance_until(h, clock, "gs1", "Ready")
        assert ready["status"]["address"] == "127.0.0.2"
        assert ready["status"]["nodeName"] == "node-1"
        await clock.advance(1.0)  # the held sync comes back and finds nothing to do
        await asyncio.sleep(0.05)
        assert h.api.writes[("update", "gameservers")] - before == 1  # Ready only
        assert h.api.conflicts == 0
        assert h.controller._addressed_at == {}


async def test_a_game_slower_than_the_scheduled_write_delay_is_scheduled_after_it() -> None:
    clock = FakeClock()
    async with running(clock=clock, scheduled_write_delay=0.5) as h:
        await h.create(game_server("gs1"))
        await _advance_until(h, clock, "gs1", "Starting")
        await h.schedule("gs1")
        await h.api.wait_for(lambda: h.controller.pod_lister.list()[0].status)
        await _tick(clock, 40)  # 0.4 s of fake time: still within the delay
        gs = h.gs("gs1")
        assert gs is not None and gs["status"]["state"] == "Starting"
        seen = h.controller._addressed_at["default/gs1"]
        scheduled = await _advance_until(h, clock, "gs1", "Scheduled")
        assert clock.monotonic() >= seen + 0.5
        assert scheduled["status"]["address"] == "127.0.0.2"
        assert h.api.conflicts == 0
        assert h.controller._addressed_at == {}
