"""The local stack with its extensions as child processes (`StackOptions(extensions_process=True)`):
each replica is a real `agones extensions` process behind the one Service, so the admission
webhooks still default and reject GameServers, the aggregated allocation API still allocates
(every server once across the two replicas), and `stop()` leaves no child running."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agones.localcluster.stack import StackOptions, ThreadedStack
from tests.cluster import Api
from tests.integration.gameserverallocations.harness import ready_game_server
from tests.waiting import wait_for

GS_PATH = "/apis/agones.dev/v1/namespaces/default/gameservers"
ALLOCATIONS = "/apis/allocation.agones.dev/v1/namespaces/default/gameserverallocations"
REQUEST = {
    "apiVersion": "allocation.agones.dev/v1",
    "kind": "GameServerAllocation",
    "spec": {"selectors": [{"matchLabels": {"agones.dev/fleet": "green-fleet"}}]},
}


@pytest.fixture(scope="module")
def threaded() -> Iterator[ThreadedStack]:
    options = StackOptions(
        nodes=1,
        controller=False,
        simulate_all=True,
        allocator_service=False,
        extensions_process=True,
        extensions_replicas=2,
    )
    stack = ThreadedStack(options)
    stack.start()
    yield stack
    procs = list(stack.stack.extensions_procs)
    stack.stop()
    assert procs and all(p.returncode is not None for p in procs)


def create_ready(api: Api, name: str) -> None:
    wanted = ready_game_server(name, "default", labels={"agones.dev/fleet": "green-fleet"})
    created = api.request("POST", GS_PATH, wanted)
    assert created.status == 201, created
    # the mutating webhook defaulted the port's protocol
    assert created.body["spec"]["ports"][0]["protocol"] == "UDP"
    body = created.body
    body["status"] = wanted["status"]
    assert api.request("PUT", f"{GS_PATH}/{name}", body).status == 200


def test_webhooks_and_allocation_api_served_by_child_processes(threaded: ThreadedStack) -> None:
    stack = threaded.stack
    assert stack.allocator is None and len(stack.extensions_procs) == 2
    api = Api(stack.kubeconfig)
    invalid = ready_game_server("bad", "default")
    invalid["spec"]["ports"][0]["portPolicy"] = "Nonsense"
    rejected = api.request("POST", GS_PATH, invalid)
    assert rejected.status == 422, rejected
    names = {f"child-gs-{i}" for i in range(6)}
    for name in sorted(names):
        create_ready(api, name)
    got: set[str] = set()

    def allocate_one() -> bool:
        answer = api.request("POST", ALLOCATIONS, REQUEST)
        assert answer.status == 201, answer
        status = answer.body["status"]
        if status["state"] != "Allocated":  # a replica's informer has not seen it yet
            return False
        assert status["gameServerName"] not in got
        got.add(status["gameServerName"])
        return True

    for _ in names:
        wait_for(allocate_one, timeout=30, interval=0.2, what="an allocation")
    assert got == names

    def none_left() -> bool:
        answer = api.request("POST", ALLOCATIONS, REQUEST)
        assert answer.status in (201, 500), answer  # 500: a replica lost its last retry
        state = answer.body.get("status", {}).get("state")
        assert state != "Allocated", answer
        return bool(state == "UnAllocated")

    wait_for(none_left, timeout=30, interval=0.2, what="UnAllocated once all are taken")


def test_child_processes_have_the_stack_client_budget(threaded: ThreadedStack) -> None:
    """As the controller and the allocator service: at Agones' 400 writes/s one extensions
    process answered every C = 50 allocation after 50 / 400 s = 125 ms once its burst was spent."""
    options = threaded.stack.options
    for proc in threaded.stack.extensions_procs:
        argv = Path(f"/proc/{proc.pid}/cmdline").read_bytes().decode().split("\0")
        assert f"--api-server-qps={options.client_qps}" in argv
        assert f"--api-server-qps-burst={options.client_burst}" in argv
