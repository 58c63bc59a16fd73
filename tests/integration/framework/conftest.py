"""Cluster access for the framework's integration tests.

`cluster_kubeconfig` resolves, in order: the project's `kubeconfig` fixture, the `cluster` fixture's
`.kubeconfig` (the local API server's test harness), then `$KUBECONFIG`; it skips the test when none
is available or the API server does not answer. `fault_proxy` puts a fault-injecting HTTP proxy
between our client and that server, so 410/429/500 and dropped watches can be forced on any cluster.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agones.client.config import load_kube_config
from agones.client.rest import RESTClient

from .faultproxy import FaultProxy


def _lookup(request: pytest.FixtureRequest, name: str) -> Any:
    try:
        return request.getfixturevalue(name)
    except pytest.FixtureLookupError:
        return None


@pytest.fixture
def cluster_kubeconfig(request: pytest.FixtureRequest) -> str:
    path = _lookup(request, "kubeconfig")
    if path is None:
        cluster = _lookup(request, "cluster")
        path = getattr(cluster, "kubeconfig", None)
    path = path or os.environ.get("KUBECONFIG")
    if not path:
        pytest.skip("no cluster: neither a kubeconfig/cluster fixture nor $KUBECONFIG")
    return str(path)


@pytest.fixture
async def client(cluster_kubeconfig: str) -> AsyncIterator[RESTClient]:
    rest = RESTClient(load_kube_config(cluster_kubeconfig))
    try:
        await rest.request("GET", "/version")
    except Exception as err:
        await rest.close()
        pytest.skip(f"cluster not reachable: {err}")
    yield rest
    await rest.close()


@pytest.fixture
async def fault_proxy(client: RESTClient) -> AsyncIterator[FaultProxy]:
    proxy = FaultProxy(client)
    await proxy.start()
    yield proxy
    await proxy.stop()


@pytest.fixture
def test_label() -> str:
    return f"agones-py-test-{uuid.uuid4().hex[:8]}"
