"""Multi-cluster allocation through GameServerAllocationPolicies (the multi-cluster part of Agones
`pkg/gameserverallocations/allocator.go`: `applyMultiClusterAllocation`,
`allocateFromRemoteCluster`, `createRemoteClusterDialOption`).

`MultiClusterAllocator` is the `multi_cluster` hook of `Allocator`: `await hook(gsa, local)` lists
the policies of the GSA's namespace (all, or those `policySelector` selects; none is an error) and
tries their clusters in `ConnectionInfoIterator` order (priority ascending, weighted random within
a priority, each cluster once), returning the first Allocated result, else the last result (or
raising the last error when there is no result):

* a cluster without `allocationEndpoints` is this cluster: `local(gsa)` in the policy's namespace;
* otherwise the GSA is converted into an `AllocationRequest` (multi-cluster off, the policy's
  namespace) and sent over gRPC with mTLS to each endpoint in turn (`:443` when no port is given)
  until one answers: the client certificate is `tls.crt`/`tls.key` of the Secret `secretName` in
  the GSA's namespace, the server is trusted by `serverCa` and the Secret's `ca.crt` (the system
  roots when neither is given). Each call has `remote_allocation_timeout`; failures are retried
  with exponential back-off (`retry_steps` attempts from `retry_interval`, times `retry_factor`) within
  `total_remote_allocation_timeout`, except RESOURCE_EXHAUSTED (the remote had nothing), which
  ends the retries. An answer becomes an Allocated GSA whose `source` is the endpoint.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
import structlog

from ...allocator.converters import (
    convert_allocation_response_to_gsa,
    convert_gsa_to_allocation_request,
)
from ...allocator.proto import allocation_pb2 as pb
from ...apis.allocation.v1.gameserverallocation import (
    GameServerAllocation,
    GameServerAllocationSpec,
    GameServerAllocationState,
    GameServerAllocationStatus,
    MultiClusterSetting,
)
from ...apis.meta.labelselector import LabelSelector, label_selector_as_selector
from ...apis.meta.objectmeta import ObjectMeta
from ...apis.multicluster.v1.gameserverallocationpolicy import (
    ClusterConnectionInfo,
    ConnectionInfoIterator,
)
from ...client.errors import is_not_found
from ...client.informers.externalversions.factory import (
    SharedInformerFactory as TypedInformerFactory,
)
from ...featuregates import FeatureGates
from ...informers import SharedInformerFactory
from .allocator import LocalAllocate

DEFAULT_PORT = 443
ALLOCATE_METHOD = f"/{pb.DESCRIPTOR.services_by_name['AllocationService'].full_name}/Allocate"


class MultiClusterError(Exception):
    """The multi-cluster allocation could not be tried (no policy, bad secret, bad CA)."""


@dataclass
class RemoteAllocationSettings:
    remote_allocation_timeout: float = 10.0
    """Seconds one call to a remote allocator may take."""
    total_remote_allocation_timeout: float = 30.0
    """Seconds all calls to one remote cluster may take, retries included."""
    retry_steps: int = 7
    """Attempts per remote cluster (Agones' `remoteAllocationRetry`)."""
    retry_interval: float = 0.1
    """Seconds before the second attempt."""
    retry_factor: float = 2.0
    """Each later wait is this many times the previous one."""


def add_port(endpoint: str) -> str:
    """`addPort`: the endpoint with `:443` unless it names a port."""
    return endpoint if ":" in endpoint else f"{endpoint}:{DEFAULT_PORT}"


def _decode(value: Any) -> bytes | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


@dataclass(frozen=True)
class ClientCredentials:
    cert: bytes
    key: bytes
    roots: bytes | None

    def channel_credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(
            root_certificates=self.roots, private_key=self.key, certificate_chain=self.cert
        )


def client_credentials(secret: dict[str, Any], info: ClusterConnectionInfo) -> ClientCredentials:
    """The mTLS material for a cluster from its Secret and `serverCa` (`createRemoteClusterDialOption`)."""
    data = secret.get("data") or {}
    cert, key, ca = (
        _decode(data.get("tls.crt")),
        _decode(data.get("tls.key")),
        _decode(data.get("ca.crt")),
    )
    name = info.secret_name if isinstance(info.secret_name, str) else ""
    if cert is None or key is None:
        raise MultiClusterError(f"missing client certificate key pair in secret {name}")
    server_ca = _decode(info.server_ca)
    roots = b"\n".join(pem for pem in (server_ca, ca) if pem) or None
    for pem, what in ((server_ca, "server CA"), (ca, "client CA")):
        if pem is not None and b"-----BEGIN CERTIFICATE-----" not in pem:
            raise MultiClusterError(f"only PEM format is accepted for {what}")
    return ClientCredentials(cert, key, roots)


RemoteCall = Callable[[str, ClientCredentials, pb.AllocationRequest, float], Any]


async def grpc_remote_call(
    endpoint: str, credentials: ClientCredentials, request: pb.AllocationRequest, timeout: float
) -> pb.AllocationResponse:
    """One call to a remote allocator (Agones' `remoteAllocationCallback`)."""
    async with grpc.aio.secure_channel(endpoint, credentials.channel_credentials()) as channel:
        allocate = channel.unary_unary(
            ALLOCATE_METHOD,
            request_serializer=pb.AllocationRequest.SerializeToString,
            response_deserializer=pb.AllocationResponse.FromString,
        )
        response: pb.AllocationResponse = await allocate(request, timeout=timeout)
        return response


def _stops_retries(err: Exception) -> bool:
    return isinstance(err, grpc.aio.AioRpcError) and (
        err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    )


class MultiClusterAllocator:
    def __init__(
        self,
        factory: SharedInformerFactory,
        gates: FeatureGates,
        settings: RemoteAllocationSettings | None = None,
        *,
        remote_call: RemoteCall | None = None,
        intn: Callable[[int], int] | None = None,
        logger: Any = None,
    ) -> None:
        typed = TypedInformerFactory.from_generic(factory)
        self.policies = typed.multicluster().v1().game_server_allocation_policies().lister()
        self.secrets = typed.core().v1().secrets().lister()
        self.gates = gates
        self.settings = settings or RemoteAllocationSettings()
        self.remote_call: RemoteCall = remote_call or grpc_remote_call
        self.intn = intn
        self.log = (logger or structlog.get_logger()).bind(component="multicluster-allocation")

    async def __call__(
        self, gsa: GameServerAllocation, local: LocalAllocate
    ) -> GameServerAllocation:
        """`applyMultiClusterAllocation`."""
        namespace = gsa.metadata.get_namespace() if isinstance(gsa.metadata, ObjectMeta) else ""
        spec = gsa.spec if isinstance(gsa.spec, GameServerAllocationSpec) else None
        setting = spec.multi_cluster_setting if spec is not None else None
        policy_selector = (
            setting.policy_selector if isinstance(setting, MultiClusterSetting) else None
        )
        selector = label_selector_as_selector(
            policy_selector if isinstance(policy_selector, LabelSelector) else LabelSelector()
        )
        policies = [
            p
            for p in self.policies.game_server_allocation_policies(namespace).list()
            if selector.matches(
                p.metadata.get_labels() if isinstance(p.metadata, ObjectMeta) else {}
            )
        ]
        if not policies:
            raise MultiClusterError("no multi-cluster allocation policy is specified")
        result: GameServerAllocation | None = None
        error: Exception | None = None
        for info in ConnectionInfoIterator(policies, self.intn):
            try:
                if info.allocation_endpoints:
                    result = await self.allocate_from_remote_cluster(gsa, info, namespace)
                else:
                    result = await local(self._in_namespace(gsa, info))
                error = None
            except Exception as err:
                result, error = None, err
                self.log.error(
                    "cluster allocation failed", cluster=info.cluster_name, error=str(err)
                )
            if result is not None and _state(result) == GameServerAllocationState.ALLOCATED:
                return result
        if result is None:
            if error is not None:
                raise error
            raise MultiClusterError("no cluster of the multi-cluster policies could be tried")
        return result

    @staticmethod
    def _in_namespace(
        gsa: GameServerAllocation, info: ClusterConnectionInfo
    ) -> GameServerAllocation:
        target = info.namespace if isinstance(info.namespace, str) else ""
        current = gsa.metadata.get_namespace() if isinstance(gsa.metadata, ObjectMeta) else ""
        if target == current:
            return gsa
        moved = copy.deepcopy(gsa)
        if not isinstance(moved.metadata, ObjectMeta):
            moved.metadata = ObjectMeta()
        moved.metadata.namespace = target
        return moved

    def _credentials(self, namespace: str, info: ClusterConnectionInfo) -> ClientCredentials:
        name = info.secret_name if isinstance(info.secret_name, str) else ""
        try:
            secret = self.secrets.secrets(namespace).get(name)
        except Exception as err:
            if is_not_found(err) or isinstance(err, KeyError):
                raise MultiClusterError(f"secret {name} does not have data") from err
            raise
        return client_credentials(secret, info)

    async def allocate_from_remote_cluster(
        self, gsa: GameServerAllocation, info: ClusterConnectionInfo, namespace: str
    ) -> GameServerAllocation:
        """`allocateFromRemoteCluster`: forward to the cluster's endpoints, with retries."""
        credentials = self._credentials(namespace, info)
        request = convert_gsa_to_allocation_request(gsa, self.gates)
        request.multiClusterSetting.enabled = False
        request.namespace = info.namespace if isinstance(info.namespace, str) else ""
        endpoints = [add_port(e) for e in info.allocation_endpoints or []]
        s = self.settings
        try:
            endpoint, response = await asyncio.wait_for(
                self._with_retries(endpoints, credentials, request),
                s.total_remote_allocation_timeout,
            )
        except TimeoutError as err:
            raise MultiClusterError("remote allocation total timeout exceeded") from err
        return convert_allocation_response_to_gsa(response, endpoint, self.gates)

    async def _with_retries(
        self, endpoints: list[str], credentials: ClientCredentials, request: pb.AllocationRequest
    ) -> tuple[str, pb.AllocationResponse]:
        s = self.settings
        delay = s.retry_interval
        last: Exception = MultiClusterError("no allocation endpoint")
        for attempt in range(s.retry_steps):
            for endpoint in endpoints:
                try:
                    call = self.remote_call(
                        endpoint, credentials, request, s.remote_allocation_timeout
                    )
                    return endpoint, await call
                except Exception as err:
                    last = err
                    self.log.warning("remote allocation failed", endpoint=endpoint, error=str(err))
            # Like Agones, only the last endpoint's answer decides whether to retry.
            if _stops_retries(last):
                raise last
            if attempt + 1 < s.retry_steps:
                await asyncio.sleep(delay)
                delay *= s.retry_factor
        raise last


def _state(gsa: GameServerAllocation) -> str:
    status = gsa.status
    return str(status.state) if isinstance(status, GameServerAllocationStatus) else ""
