"""The local stack's Agones parts (`stack.LocalStack` runs them unless `StackOptions(agones=False)`).

* `install(client)`: the CRDs from `crds/` (`install_crds`, the one CRD installer, also the
  simulator's: it returns once they are Established), the namespace `agones-system`, the
  `agones-sdk` ServiceAccount in each of `GAMESERVER_NAMESPACES` (as the Helm chart installs it).
* `start_webhooks(stack)`: the admission webhooks over HTTPS with a generated certificate,
  `extensions_replicas` servers in-process (`WebhookServer`, each with its own `APIServer`) or,
  with `extensions_process`, `agones extensions` child processes (`extensions_children`) given
  the same certificate; the Service `agones-controller-service` points at all of them, and the
  Mutating/ValidatingWebhookConfigurations carry the certificate as their CA bundle.
* `start_allocation(stack)`: one `Allocator` per in-process server (its own client, informers
  listing and watching in-process, events and share of the candidates), then the APIService `v1.allocation.agones.dev` that routes
  the allocation API to them.
* `controller_argv(stack)` and `allocator_argv(stack)`: the `agones controller` and `agones
  allocator` child processes' command lines; `allocator_certs(stack)` generates the allocator
  service's mutual-TLS certificates into `allocator_certs_dir` (or a temporary directory): its
  `tls/` and `client-ca/`, and a client's pair and CA in `client/`.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any, Protocol

import yaml

from ..allocator.certs import AllocatorCertDirs, write_allocator_certs
from ..client.rest import RESTClient
from ..client.versioned.resources import APISERVICES, NAMESPACES, SERVICE_ACCOUNTS, SERVICES
from ..client.versioned.resources import CUSTOM_RESOURCE_DEFINITIONS as CRDS
from ..client.versioned.resources import MUTATING_WEBHOOK_CONFIGURATIONS as MUTATING
from ..client.versioned.resources import VALIDATING_WEBHOOK_CONFIGURATIONS as VALIDATING
from ..controllers.gameserverallocations import Allocator, AllocatorSettings, Partition
from ..controllers.gameserverallocations.controller import Extensions
from ..controllers.gameserverallocations.multicluster import MultiClusterAllocator
from ..extensions.apiserver import APIServer
from ..extensions.certs import self_signed, server_ssl_context
from ..extensions.configurations import SERVICE_NAME, api_service, webhook_configurations
from ..extensions.server import WebhookServer
from ..featuregates import FeatureGates
from ..informers import SharedInformerFactory
from ..record import EventBroadcaster
from .apiserver.inprocess import InProcessListWatches
from .apiserver.server import LocalAPIServer
from .apiserver.services import ADDRESS_ANNOTATION
from .extensions_children import ExtensionsChildren
from .stack_cluster import ensure
from .stack_options import StackOptions
from .stack_processes import free_port

REPO_ROOT = Path(__file__).resolve().parents[2]
# The namespaces the Helm chart's `gameservers.namespaces` names by default: each gets the
# `agones-sdk` ServiceAccount game server pods run as.
GAMESERVER_NAMESPACES = ("default",)
SYSTEM_NAMESPACE = "agones-system"
SDK_SERVICE_ACCOUNT = "agones-sdk"


class Stack(Protocol):
    """What this module uses of a `stack.LocalStack`."""

    options: StackOptions
    gates: FeatureGates
    api: LocalAPIServer
    list_watches: InProcessListWatches
    extensions: list[tuple[WebhookServer, APIServer]]
    extensions_procs: list[asyncio.subprocess.Process]
    extensions_ports: list[int]
    _extensions_tmp: tempfile.TemporaryDirectory[str] | None
    allocators: list[Allocator]
    _allocator_factories: list[SharedInformerFactory]
    _ca: bytes
    _tasks: list[asyncio.Task[Any]]
    _clients: list[RESTClient]
    client: RESTClient | None
    allocator_port: int
    allocator_health_port: int
    allocator_certs: AllocatorCertDirs | None
    _certs_tmp: tempfile.TemporaryDirectory[str] | None

    async def _spawn(self, argv: list[str], log_name: str) -> asyncio.subprocess.Process: ...


async def install(client: RESTClient) -> None:
    """The CRDs, the `agones-system` namespace and the game servers' ServiceAccounts."""
    await install_crds(client)
    await ensure(client, NAMESPACES, {"metadata": {"name": SYSTEM_NAMESPACE}})
    for ns in GAMESERVER_NAMESPACES:
        await ensure(client, SERVICE_ACCOUNTS, {"metadata": {"name": SDK_SERVICE_ACCOUNT}}, ns)


async def install_crds(client: RESTClient) -> None:
    """Create (or keep) every CRD under `crds/`; return once all are Established."""
    names = []
    for path in sorted((REPO_ROOT / "crds").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") == "CustomResourceDefinition":
                await ensure(client, CRDS, doc)
                names.append(doc["metadata"]["name"])
    if not names:
        raise RuntimeError(f"no CRDs found under {REPO_ROOT / 'crds'}")
    for _ in range(200):
        served = 0
        for name in names:
            crd = await client.get(CRDS, name)
            conds = (crd.get("status") or {}).get("conditions") or []
            served += any(c["type"] == "Established" and c["status"] == "True" for c in conds)
        if served == len(names):
            return
        await asyncio.sleep(0.05)
    raise RuntimeError("CRDs were not established")


async def start_webhooks(stack: Stack) -> None:
    """`extensions_replicas` webhook servers behind the one Service, each serving its own
    allocation API (see `start_allocation`), in this process or as child processes."""
    assert stack.client is not None
    hosts = [f"{SERVICE_NAME}.{SYSTEM_NAMESPACE}.svc", SERVICE_NAME, "localhost", "127.0.0.1"]
    cert, key = self_signed(hosts)
    stack._ca = cert
    o = stack.options
    if o.extensions_process:
        stack._extensions_tmp = tempfile.TemporaryDirectory(prefix="agones-extensions-")
        children = ExtensionsChildren(
            stack._spawn,
            free_port,
            stack.api.kubeconfig,
            o.extensions_replicas,
            o.allocation_batch_wait_time,
            o.gates,
            client_budget_args(o),
        )
        stack.extensions_procs = children.procs
        stack.extensions_ports = children.ports
        await children.start(cert, key, Path(stack._extensions_tmp.name))
    else:
        for _ in range(o.extensions_replicas):
            api = APIServer()
            server = WebhookServer(stack.gates, server_ssl_context(cert, key), api=api)
            await server.start("127.0.0.1", 0)
            stack.extensions.append((server, api))
            stack.extensions_ports.append(server.port or 0)
    addresses = ",".join(f"127.0.0.1:{port}" for port in stack.extensions_ports)
    service = {
        "metadata": {
            "name": SERVICE_NAME,
            "namespace": SYSTEM_NAMESPACE,
            "annotations": {ADDRESS_ANNOTATION: addresses},
        },
        "spec": {"ports": [{"name": "webhooks", "port": 443, "targetPort": 8081}]},
    }
    await ensure(stack.client, SERVICES, service, SYSTEM_NAMESPACE)
    mutating, validating = webhook_configurations(cert, SYSTEM_NAMESPACE)
    await ensure(stack.client, MUTATING, mutating)
    await ensure(stack.client, VALIDATING, validating)


async def start_allocation(stack: Stack) -> None:
    """One allocator per extensions replica (its own client, informers, events and share of
    the candidates), then the APIService that routes the allocation API to them."""
    assert stack.client is not None
    count = len(stack.extensions)
    for index, (_, api) in enumerate(stack.extensions):  # in this process only
        client = stack._clients[-1]
        factory = SharedInformerFactory(client, list_watches=stack.list_watches)
        events = EventBroadcaster(client)
        settings = AllocatorSettings(
            batch_wait_time=stack.options.allocation_batch_wait_time,
            partition=Partition(index, count),
        )
        allocator = Allocator(
            client,
            factory,
            events,
            stack.gates,
            settings,
            multi_cluster=MultiClusterAllocator(factory, stack.gates),
        )
        factory.start()
        stack._allocator_factories.append(factory)
        stack._tasks.append(asyncio.create_task(events.run()))
        await allocator.start()
        stack.allocators.append(allocator)
        Extensions(allocator).register_api_resource(api)
    await ensure(stack.client, APISERVICES, api_service(stack._ca, SYSTEM_NAMESPACE))


def client_budget_args(options: StackOptions) -> list[str]:
    return [
        f"--api-server-qps={options.client_qps}",
        f"--api-server-qps-burst={options.client_burst}",
    ]


def controller_argv(stack: Stack) -> list[str]:
    o = stack.options
    argv = [
        sys.executable,
        "-m",
        "agones",
        "controller",
        f"--kubeconfig={stack.api.kubeconfig}",
        f"--min-port={o.min_port}",
        f"--max-port={o.max_port}",
        "--http-port=0",
        *client_budget_args(o),
    ]
    if o.gates:
        argv.append(f"--feature-gates={o.gates}")
    return [*argv, *o.controller_args]


def allocator_certs(stack: Stack) -> None:
    """The allocator service's certificates and ports, chosen once (kept across restarts)."""
    if stack.allocator_certs is not None:
        return
    root = stack.options.allocator_certs_dir
    if root is None:
        stack._certs_tmp = tempfile.TemporaryDirectory(prefix="agones-allocator-")
        root = stack._certs_tmp.name
    stack.allocator_certs = write_allocator_certs(Path(root), ["localhost", "127.0.0.1"])
    stack.allocator_port = stack.options.allocator_port or free_port()
    stack.allocator_health_port = free_port()


def allocator_argv(stack: Stack) -> list[str]:
    certs = stack.allocator_certs
    assert certs is not None
    return [
        sys.executable,
        "-m",
        "agones",
        "allocator",
        f"--kubeconfig={stack.api.kubeconfig}",
        "--address=127.0.0.1",
        f"--http-port={stack.allocator_port}",
        f"--grpc-port={stack.allocator_port}",
        f"--health-port={stack.allocator_health_port}",
        f"--tls-dir={certs.tls}",
        f"--client-ca-dir={certs.client_ca}",
        f"--allocation-batch-wait-time={stack.options.allocation_batch_wait_time}s",
        *client_budget_args(stack.options),
        *([f"--feature-gates={stack.options.gates}"] if stack.options.gates else []),
    ]
