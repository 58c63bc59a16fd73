"""Where network namespaces are not available the kubelet runs processes in the host namespace:
simple-game-server gets its host port as PORT and the sidecar free ports, and still comes Ready
and answers on its host port (README, "Simulated nodes and `agones local up`")."""

from __future__ import annotations

import os
import random
from collections.abc import Iterator

import pytest

from agones.localcluster.stack import StackOptions, ThreadedStack
from tests.e2e.framework import Framework, game_server, udp

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def host_ns() -> Iterator[Framework]:
    if os.environ.get("KUBECONFIG"):
        pytest.skip("runs its own local cluster")
    low = random.randrange(10000, 15000, 1000)  # below the ephemeral range
    threaded = ThreadedStack(
        StackOptions(
            nodes=1,
            first_node_address=f"127.{random.randrange(1, 250)}.{random.randrange(1, 250)}.1",
            min_port=low,
            max_port=low + 999,
            use_netns=False,
        )
    )
    threaded.start()
    fw = Framework(threaded.stack.kubeconfig, stack=threaded)
    try:
        yield fw
    finally:
        threaded.stop()


def test_simple_game_servers_without_namespaces(host_ns: Framework) -> None:
    a = host_ns.create_ready(game_server("fallback-a", simulate=False))
    b = host_ns.create_ready(game_server("fallback-b", simulate=False))
    host_port = a["status"]["ports"][0]["port"]
    assert host_port != b["status"]["ports"][0]["port"]
    for gs in (a, b):
        port = gs["status"]["ports"][0]["port"]
        assert udp("127.0.0.1", port, "GAMESERVER") == f"NAME: {gs['metadata']['name']}\n"
