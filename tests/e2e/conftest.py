"""The e2e session fixture: the whole local stack (`agones.localcluster.stack`), or any cluster.

Without `KUBECONFIG` a `ThreadedStack` starts (API server, CRDs, webhooks, two simulated nodes on
a random 127.x.y.z subnet, the controller as a child process, a port range picked at random so
parallel runs on one machine do not collide). With `KUBECONFIG` the tests run against that cluster
(Agones installed); those that need the local stack (`local_stack`) skip there.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator

import pytest

from agones.localcluster.stack import StackOptions, ThreadedStack
from tests.e2e.framework import Framework


@pytest.fixture(scope="session")
def framework(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Framework]:
    kubeconfig = os.environ.get("KUBECONFIG")
    if kubeconfig:
        fw = Framework(kubeconfig, stack=None)
        try:
            yield fw
        finally:
            fw.cleanup()
        return
    low = random.randrange(20000, 30000, 1000)  # below the ephemeral range
    logs = str(tmp_path_factory.mktemp("agones-e2e-logs"))  # controller and container logs
    threaded = ThreadedStack(
        StackOptions(
            nodes=2,
            first_node_address=f"127.{random.randrange(1, 250)}.{random.randrange(1, 250)}.1",
            min_port=low,
            max_port=low + 999,
            log_dir=logs,
        )
    )
    threaded.start()
    fw = Framework(threaded.stack.kubeconfig, stack=threaded)
    try:
        yield fw
    finally:
        fw.cleanup()
        threaded.stop()


@pytest.fixture
def local_stack(framework: Framework) -> ThreadedStack:
    if framework.stack is None:
        pytest.skip("needs the local stack (local processes or killing the controller)")
    return framework.stack
