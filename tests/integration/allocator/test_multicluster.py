"""Multi-cluster allocation between two local clusters, each with its own API server and allocator.

Cluster A holds a GameServerAllocationPolicy whose higher-priority cluster is B (reached through
B's allocator with a client certificate from a Secret in A) and whose lower-priority cluster is A
itself (no endpoints). A request to A's allocator lands on B; with B's allocator down, on A.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from agones.allocator.app import AllocatorApp
from agones.allocator.certs import write_pair
from agones.allocator.proto import allocation_pb2 as pb
from agones.allocator.settings import AllocatorServiceSettings
from agones.client.versioned.resources import SECRETS
from agones.featuregates import FeatureGates
from agones.pki import CertificateAuthority, Usage
from tests.allocator.harness import HOSTS, POLICIES, Certs, apply_policy_crd, grpc_allocate
from tests.integration.gameserverallocations.harness import (
    GAME_SERVERS,
    AllocationHarness,
    harness,
)
from tests.waiting import wait_for_async

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


@dataclass
class Cluster:
    harness: AllocationHarness
    app: AllocatorApp
    certs: Certs

    @property
    def port(self) -> int:
        return self.app.server.ports["mux"]


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def _start_allocator(h: AllocationHarness, ca: CertificateAuthority, root: Path) -> Cluster:
    certs = Certs(
        ca=ca,
        other_ca=ca,
        server=ca.issue("allocator", HOSTS, Usage.SERVER),
        client=ca.issue("matchmaker", [], Usage.CLIENT),
        stranger=ca.issue("unused", [], Usage.CLIENT),
        tls_dir=root / "tls",
        ca_dir=root / "client-ca",
    )
    write_pair(certs.tls_dir, certs.server)
    certs.ca_dir.mkdir(parents=True)
    (certs.ca_dir / "ca.crt").write_bytes(ca.cert_pem)
    settings = AllocatorServiceSettings(
        http_port=0,
        grpc_port=0,
        address="127.0.0.1",
        health_port=0,
        tls_dir=str(certs.tls_dir),
        client_ca_dir=str(certs.ca_dir),
        allocation_batch_wait_time=0.0,
        prometheus_exporter=False,
    )
    app = AllocatorApp(settings, FeatureGates(), h.rest)
    app.multi_cluster.settings.retry_interval = 0.01
    app.multi_cluster.settings.total_remote_allocation_timeout = 5.0
    await app.start()
    return Cluster(h, app, certs)


@pytest.fixture
async def clusters(tmp_path: Path) -> AsyncIterator[tuple[Cluster, Cluster]]:
    ca = CertificateAuthority.new("multicluster-ca")
    async with harness() as ha, harness() as hb:
        for h in (ha, hb):
            await apply_policy_crd(h.rest)
        a = await _start_allocator(ha, ca, tmp_path / "a")
        b = await _start_allocator(hb, ca, tmp_path / "b")
        try:
            yield a, b
        finally:
            for c in (a, b):
                if not c.app.server.shutting_down:
                    await c.app.server.shutdown()
                await c.app.stop()


async def _policies(a: Cluster, b: Cluster) -> None:
    client = a.certs.ca.issue("cluster-a", [], Usage.CLIENT)
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "allocator-client-to-b", "namespace": "default"},
        "type": "kubernetes.io/tls",
        "data": {
            "tls.crt": _b64(client.cert_pem),
            "tls.key": _b64(client.key_pem),
            "ca.crt": _b64(b.certs.ca.cert_pem),
        },
    }
    await a.harness.rest.create(SECRETS, secret, "default")
    for name, priority, info in (
        (
            "to-b",
            1,
            {
                "clusterName": "cluster-b",
                "allocationEndpoints": [f"127.0.0.1:{b.port}"],
                "secretName": "allocator-client-to-b",
                "namespace": "default",
            },
        ),
        ("self", 2, {"clusterName": "cluster-a", "namespace": "default"}),
    ):
        policy = {
            "apiVersion": "multicluster.agones.dev/v1",
            "kind": "GameServerAllocationPolicy",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"priority": priority, "weight": 100, "connectionInfo": info},
        }
        await a.harness.rest.create(POLICIES, policy, "default")
    lister = a.app.multi_cluster.policies.game_server_allocation_policies("default")
    await wait_for_async(lambda: len(lister.list()) == 2, what="policies in A's cache")
    secrets = a.app.multi_cluster.secrets.secrets("default")
    await wait_for_async(
        lambda: any(s["metadata"]["name"] == "allocator-client-to-b" for s in secrets.list()),
        what="the client secret in A's cache",
    )


def _request() -> pb.AllocationRequest:
    return pb.AllocationRequest(
        namespace="default",
        multiClusterSetting=pb.MultiClusterSetting(enabled=True),
        gameServerSelectors=[
            pb.GameServerSelector(matchLabels={"agones.dev/fleet": "green-fleet"})
        ],
    )


async def _ready_in_cache(c: Cluster, name: str) -> None:
    await c.harness.create_ready(name)
    cache = c.app.allocator.allocation_cache
    await wait_for_async(lambda: len(cache) == 1, what=f"{name} in the allocator's cache")


async def test_allocation_lands_on_the_higher_priority_remote_cluster(clusters) -> None:
    a, b = clusters
    await _ready_in_cache(a, "gs-a")
    await _ready_in_cache(b, "gs-b")
    await _policies(a, b)
    response = await grpc_allocate(a.port, a.certs, a.certs.client, _request())
    assert response.gameServerName == "gs-b"
    assert response.source == f"127.0.0.1:{b.port}"
    stored_b = await b.harness.rest.get(GAME_SERVERS, "gs-b", "default")
    assert stored_b["status"]["state"] == "Allocated"
    stored_a = await a.harness.rest.get(GAME_SERVERS, "gs-a", "default")
    assert stored_a["status"]["state"] == "Ready"


async def test_allocation_falls_back_to_the_local_cluster_when_the_remote_is_down(
    clusters,
) -> None:
    a, b = clusters
    await _ready_in_cache(a, "gs-a")
    await _ready_in_cache(b, "gs-b")
    await _policies(a, b)
    await b.app.server.shutdown()
    response = await grpc_allocate(a.port, a.certs, a.certs.client, _request())
    assert response.gameServerName == "gs-a"
    assert response.source == "local"
    stored_b = await b.harness.rest.get(GAME_SERVERS, "gs-b", "default")
    assert stored_b["status"]["state"] == "Ready"


async def test_without_a_policy_multi_cluster_fails_precondition(clusters) -> None:
    a, _ = clusters
    await _ready_in_cache(a, "gs-a")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await grpc_allocate(a.port, a.certs, a.certs.client, _request())
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "no multi-cluster allocation policy" in (err.value.details() or "")
