"""Multi-cluster allocation decisions with policies and secrets in the caches and a fake remote."""

from __future__ import annotations

import base64
from typing import Any

import grpc
import msgspec
import pytest

from agones.allocator.proto import allocation_pb2 as pb
from agones.apis.allocation.v1 import GameServerAllocation, GameServerAllocationStatus
from agones.apis.multicluster.v1.gameserverallocationpolicy import (
    ClusterConnectionInfo,
    GameServerAllocationPolicy,
)
from agones.controllers.gameserverallocations.multicluster import (
    MultiClusterAllocator,
    MultiClusterError,
    RemoteAllocationSettings,
    add_port,
    client_credentials,
)
from agones.featuregates import FeatureGates
from agones.informers import SharedInformerFactory

PEM = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.mark.parametrize(
    ("endpoint", "want"),
    [
        ("10.0.0.1", "10.0.0.1:443"),
        ("10.0.0.1:8443", "10.0.0.1:8443"),
        ("a.example", "a.example:443"),
    ],
    ids=["ip", "ip-port", "name"],
)
def test_add_port(endpoint: str, want: str) -> None:
    assert add_port(endpoint) == want


@pytest.mark.parametrize(
    ("data", "server_ca", "error"),
    [
        ({"tls.crt": b64(PEM), "tls.key": b64(b"key")}, None, None),
        ({"tls.crt": b64(PEM)}, None, "missing client certificate key pair in secret s"),
        ({"tls.crt": b64(PEM), "tls.key": b64(b"k"), "ca.crt": b64(b"nope")}, None, "client CA"),
        ({"tls.crt": b64(PEM), "tls.key": b64(b"k")}, b64(b"nope"), "server CA"),
    ],
    ids=["pair", "no-key", "bad-ca", "bad-server-ca"],
)
def test_client_credentials(data: dict, server_ca: str | None, error: str | None) -> None:
    info = ClusterConnectionInfo(
        secret_name="s", namespace="ns", server_ca=server_ca or msgspec.UNSET
    )
    if error is None:
        creds = client_credentials({"data": data}, info)
        assert creds.cert == PEM and creds.roots is None
    else:
        with pytest.raises(MultiClusterError, match=error):
            client_credentials({"data": data}, info)


def policy(name: str, priority: int, info: dict[str, Any], labels: dict | None = None) -> Any:
    return msgspec.convert(
        {
            "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
            "spec": {"priority": priority, "weight": 1, "connectionInfo": info},
        },
        GameServerAllocationPolicy,
    )


class FakeRemote:
    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.calls: list[tuple[str, pb.AllocationRequest, float]] = []

    async def __call__(self, endpoint, credentials, request, timeout) -> pb.AllocationResponse:
        self.calls.append((endpoint, request, timeout))
        if self.failures:
            raise self.failures.pop(0)
        return pb.AllocationResponse(gameServerName="remote-gs", address="10.9.9.9")


def rpc_error(code: grpc.StatusCode) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details=code.name)


def allocator(policies: list[Any], remote: FakeRemote, steps: int = 7) -> MultiClusterAllocator:
    factory = SharedInformerFactory(client=None)  # type: ignore[arg-type]
    mc = MultiClusterAllocator(
        factory,
        FeatureGates(),
        RemoteAllocationSettings(retry_steps=steps, retry_interval=0.001),
        remote_call=remote,
        intn=lambda n: 0,
    )
    from agones.client.informers.externalversions.factory import SharedInformerFactory as Typed

    typed = Typed.from_generic(factory)
    for p in policies:
        typed.multicluster().v1().game_server_allocation_policies().informer().indexer.add(p)
    secret = {
        "metadata": {"name": "remote-secret", "namespace": "default"},
        "data": {"tls.crt": b64(PEM), "tls.key": b64(b"key")},
    }
    typed.core().v1().secrets().informer().indexer.add(secret)
    return mc


def gsa(policy_labels: dict | None = None) -> GameServerAllocation:
    setting: dict[str, Any] = {"enabled": True}
    if policy_labels is not None:
        setting["policySelector"] = {"matchLabels": policy_labels}
    return msgspec.convert(
        {
            "metadata": {"namespace": "default"},
            "spec": {"multiClusterSetting": setting, "selectors": [{}]},
        },
        GameServerAllocation,
    )


REMOTE = {
    "clusterName": "remote",
    "allocationEndpoints": ["10.0.0.1", "10.0.0.2:9443"],
    "secretName": "remote-secret",
    "namespace": "there",
}
LOCAL = {"clusterName": "local", "namespace": "here"}


def local_answer(state: str, seen: list[GameServerAllocation]):
    async def local(g: GameServerAllocation) -> GameServerAllocation:
        seen.append(g)
        g.status = GameServerAllocationStatus(
            state=state, game_server_name="local-gs", source="local"
        )
        return g

    return local


async def test_remote_first_by_priority_with_the_policy_namespace() -> None:
    remote = FakeRemote([])
    mc = allocator([policy("r", 1, REMOTE), policy("l", 2, LOCAL)], remote)
    out = await mc(gsa(), local_answer("Allocated", []))
    assert (out.status.game_server_name, out.status.source) == ("remote-gs", "10.0.0.1:443")
    _endpoint, request, timeout = remote.calls[0]
    assert (request.namespace, request.multiClusterSetting.enabled, timeout) == (
        "there",
        False,
        10.0,
    )


async def test_failing_endpoint_tries_the_next_then_retries() -> None:
    remote = FakeRemote([rpc_error(grpc.StatusCode.UNAVAILABLE)] * 3)
    mc = allocator([policy("r", 1, REMOTE)], remote)
    out = await mc(gsa(), local_answer("Allocated", []))
    assert out.status.source == "10.0.0.2:9443"
    assert [c[0] for c in remote.calls] == ["10.0.0.1:443", "10.0.0.2:9443"] * 2


async def test_remote_down_falls_back_to_the_local_cluster_in_its_namespace() -> None:
    remote = FakeRemote([rpc_error(grpc.StatusCode.UNAVAILABLE)] * 100)
    seen: list[GameServerAllocation] = []
    mc = allocator([policy("r", 1, REMOTE), policy("l", 2, LOCAL)], remote, steps=3)
    out = await mc(gsa(), local_answer("Allocated", seen))
    assert out.status.game_server_name == "local-gs"
    assert len(remote.calls) == 3 * 2  # 3 attempts over both endpoints
    assert seen[0].metadata.namespace == "here"


async def test_resource_exhausted_ends_the_retries() -> None:
    remote = FakeRemote([rpc_error(grpc.StatusCode.RESOURCE_EXHAUSTED)] * 100)
    mc = allocator([policy("r", 1, {**REMOTE, "allocationEndpoints": ["10.0.0.1"]})], remote)
    with pytest.raises(grpc.aio.AioRpcError):
        await mc(gsa(), local_answer("Allocated", []))
    assert len(remote.calls) == 1


async def test_unallocated_everywhere_returns_the_last_result() -> None:
    mc = allocator([policy("l", 1, LOCAL)], FakeRemote([]))
    out = await mc(gsa(), local_answer("UnAllocated", []))
    assert out.status.state == "UnAllocated"


@pytest.mark.parametrize(
    ("policies", "selector"),
    [([], None), ([policy("l", 1, LOCAL, {"zone": "a"})], {"zone": "b"})],
    ids=["none", "none-selected"],
)
async def test_without_a_policy_it_is_an_error(policies, selector) -> None:
    mc = allocator(policies, FakeRemote([]))
    with pytest.raises(MultiClusterError, match="no multi-cluster allocation policy"):
        await mc(gsa(selector), local_answer("Allocated", []))
