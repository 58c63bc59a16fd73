"""The whole local cluster in one object: what `agones local up` runs and e2e tests start.

`LocalStack(StackOptions(...))`: `start()` brings up, in order, the local API server (graceful pod
deletion on), the CRDs from `crds/` (waiting until they are served), the namespace `agones-system`,
the `agones-sdk` ServiceAccount in `default` (as the Helm chart installs it), the admission
webhooks in-process over HTTPS with a generated certificate (the Service
`agones-controller-service` points at them; the Mutating/ValidatingWebhookConfigurations carry the
certificate as their CA bundle), the allocation API on the same server (an `Allocator` with its
own informers, registered through the APIService `v1.allocation.agones.dev`, so
`kubectl create -f gameserverallocation.yaml` works; `extensions_replicas` such servers behind the
one Service, each with its own allocator and share of the candidates; with `extensions_process`
each is an `agones extensions` child process instead, given the same certificate), the default
StorageClass, the cluster DNS server (`clusterdns`, relayed into every pod's network namespace at
`POD_DNS_ADDRESS:53`), the simulated nodes with their scheduler and kubelets (in this process, or
with `nodes_process` as a child process, `nodes.process`, so the API server keeps this event loop
to itself), the deployment, replicaset, statefulset, endpoints and volume controllers and the pod
mesh, the
controller as a child process (`agones controller`, so it can be killed and restarted:
`stop_controller(kill=True)` / `start_controller()`), and the allocator service as another
(`agones allocator` on 127.0.0.1:`allocator_port`, mutual TLS with certificates generated into
`allocator_certs`: its `tls/` and `client-ca/`, and a client's pair and CA in `client/`). `stop()` undoes all of it, killing every
process it started. `ThreadedStack` runs one on its own loop in a thread for synchronous callers.

`WriteCounter` counts the requests that change state at the API server (every verb except
get/list/watch), by client, the User-Agent's product: `agones-py` is the controller, `Python`
(aiohttp's default) sidecar processes, `agones-local-kubelet`, `-scheduler` and `-sdkserver` the
in-process kubelets, scheduler and simulated sidecars, `agones-extensions` the allocation API,
`kubectl` kubectl; those answered 409 are counted again in `conflicts`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import signal
import socket
import sys
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import structlog
import yaml
from aiohttp import web

from ..allocator.certs import AllocatorCertDirs, write_allocator_certs
from ..client.config import load_config
from ..client.errors import ApiError
from ..client.rest import Resource, RESTClient
from ..client.versioned.resources import NODES, STORAGE_CLASSES
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
from .apiserver.errors import StatusError
from .apiserver.server import LocalAPIServer, ServerOptions
from .apiserver.services import ADDRESS_ANNOTATION
from .clusterdns import ClusterDNS
from .controllers.deployment import DeploymentController
from .controllers.endpoints import EndpointsController
from .controllers.replicaset import ReplicaSetController
from .controllers.statefulset import StatefulSetController
from .controllers.volumes import LocalVolumeProvisioner, default_storage_class
from .extensions_children import ExtensionsChildren, wait_ready
from .nodes.imagemap import ImageProgram
from .nodes.kubelet import Kubelet
from .nodes.podfiles import InCluster
from .nodes.podmesh import PodMesh
from .nodes.podrunner import KubeletConfig
from .nodes.process import NodesConfig
from .nodes.scheduler import Scheduler, node_object
from .nodes.serviceproxy import ServiceProxy
from .nodes.spawn import start_process
from .nodes.volumemanager import pod_state_dir

log = structlog.get_logger("agones.localcluster.stack")

REPO_ROOT = Path(__file__).resolve().parents[2]
CRDS = Resource("apiextensions.k8s.io", "v1", "customresourcedefinitions", namespaced=False)
NAMESPACES = Resource("", "v1", "namespaces", namespaced=False)
SERVICES = Resource("", "v1", "services")
SERVICE_ACCOUNTS = Resource("", "v1", "serviceaccounts")
# The namespaces the Helm chart's `gameservers.namespaces` names by default: each gets the
# `agones-sdk` ServiceAccount game server pods run as.
GAMESERVER_NAMESPACES = ("default",)
MUTATING = Resource(
    "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", namespaced=False
)
VALIDATING = Resource(
    "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", namespaced=False
)
APISERVICES = Resource("apiregistration.k8s.io", "v1", "apiservices", namespaced=False)
SYSTEM_NAMESPACE = "agones-system"
SDK_SERVICE_ACCOUNT = "agones-sdk"
USER_AGENT = "agones-local-kubelet"
POD_DNS_ADDRESS = "127.0.0.10"
"""The cluster DNS server's address inside each pod's network namespace (kube-dns' 10.96.0.10)."""
IN_CLUSTER_TOKEN = "agones-local-service-account"
"""The token pods' in-cluster config carries (the stack's API server asks for none)."""
"""User-Agents of the in-process clients (the kubelets; `-scheduler`; `-sdkserver` for the
simulated sidecars), so the write counter can tell them apart."""


@dataclass
class StackOptions:
    nodes: int = 1
    """How many simulated nodes."""
    first_node_address: str = "127.0.0.2"
    """Node i gets this address + i (all must be loopback 127.x.y.z)."""
    api_port: int = 0
    """Port of the API server on 127.0.0.1 (0: a free one)."""
    kubeconfig: str | None = None
    """Where to write the kubeconfig (None: a temporary file)."""
    min_port: int = 7000
    max_port: int = 8000
    """The controller's default port range."""
    gates: str = ""
    """Feature gates for the controller, webhooks and sidecars."""
    log_dir: str | None = None
    """Where the controller's and containers' logs go (None: discarded)."""
    controller_args: list[str] = field(default_factory=list)
    """Extra `agones controller` flags."""
    simulate_all: bool = False
    """Simulate every pod (no local processes)."""
    images: list[ImageProgram] = field(default_factory=list)
    """The user's image → local program entries (`nodes.imagemap`), before the built-in map."""
    use_netns: bool | None = None
    """Per-pod network namespaces (None: when supported)."""
    use_mountns: bool | None = None
    """Per-pod UTS/IPC/mount and per-container mount/PID namespaces (None: when supported)."""
    controller: bool = True
    """Start the controller child process."""
    allocation_batch_wait_time: float = 0.0
    """The allocator's idle sleep (0: serve a lone request at once; Agones: 0.5)."""
    extensions_replicas: int = 1
    """Webhook + allocation API servers behind the extensions Service (each its own allocator)."""
    extensions_process: bool = False
    """Run each of them as an `agones extensions` child process (its own CPU, as in a cluster)
    instead of in the stack's process (where tests can reach `allocators`)."""
    allocator_service: bool = True
    """Run the allocator service (`agones allocator`, gRPC + REST on one mTLS port) as a child."""
    allocator_port: int = 0
    """Its port on 127.0.0.1 (0: a free one)."""
    agones: bool = True
    """Install and run agones-py's own components (CRDs, webhooks, allocation API, controller,
    allocator); False: a bare cluster (API server, nodes, scheduler, kubelets, deployment,
    replicaset, statefulset, endpoints and volume controllers, cluster DNS, service proxy) for
    `helm install` to fill."""
    nodes_process: bool = False
    """Run the scheduler and kubelets (with the simulated sidecars) as a child process
    (`nodes.process`), off the API server's event loop; False: in this process (`kubelet` and
    `scheduler` are then reachable, as tests of the kubelet need)."""
    allocator_certs_dir: str | None = None
    """Where its generated certificates go (`tls/`, `client-ca/`, `client/`; None: a temporary
    directory)."""
    dns_port: int = 0
    """The cluster DNS server's port on 127.0.0.1 (0: a free one; pods reach it at
    `POD_DNS_ADDRESS:53` in their network namespace)."""


def node_addresses(count: int, first: str) -> dict[str, str]:
    base = ipaddress.IPv4Address(first)
    out = {}
    for i in range(count):
        addr = base + i
        if not addr.is_loopback:
            raise ValueError(f"node address {addr} is not a loopback address")
        out[f"agones-local-node-{i + 1}"] = str(addr)
    return out


def _client_of(user_agent: str) -> str:
    return user_agent.split(" ")[0].split("/")[0] or "unknown"


class WriteCounter:
    """Counts state-changing API requests by (client, verb, resource)."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str, str]] = Counter()
        self.conflicts: Counter[tuple[str, str, str]] = Counter()
        """The counted requests answered 409 Conflict (stale resourceVersion or AlreadyExists)."""

    def install(self, server: LocalAPIServer) -> None:
        inner = server.handler.handle

        async def counting(request: web.Request, target: Any) -> web.StreamResponse:
            if request.method not in ("GET", "HEAD", "OPTIONS"):
                ua = request.headers.get("User-Agent", "")
                parts = [p for p in request.path.split("/") if p]
                if "namespaces" in parts and len(parts) > parts.index("namespaces") + 2:
                    parts = parts[parts.index("namespaces") + 2 :]
                else:
                    parts = parts[2:] if parts and parts[0] == "api" else parts[3:]
                resource = parts[0] if parts else ""
                if len(parts) > 2:
                    resource += "/" + parts[2]
                key = (_client_of(ua), request.method, resource)
                self.counts[key] += 1
                try:
                    response = await inner(request, target)
                except StatusError as err:
                    if err.code == 409:
                        self.conflicts[key] += 1
                    raise
                if response.status == 409:
                    self.conflicts[key] += 1
                return response
            return await inner(request, target)

        server.handler.handle = counting  # type: ignore[method-assign]

    def total(self, client: str | None = None, resource: str | None = None) -> int:
        return sum(
            n
            for (c, _, r), n in self.counts.items()
            if (client is None or c == client) and (resource is None or r.startswith(resource))
        )


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (for a child process to bind)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _terminate(proc: asyncio.subprocess.Process | None, kill: bool, timeout: float) -> None:
    """SIGTERM (or SIGKILL) a child and wait for it; SIGKILL when it outlives `timeout`."""
    if proc is None or proc.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), timeout)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()


class LocalStack:
    def __init__(self, options: StackOptions | None = None) -> None:
        self.options = options or StackOptions()
        if self.options.extensions_replicas < 1:
            raise ValueError(
                f"extensions replicas must be at least 1, not {self.options.extensions_replicas}"
            )
        self.gates = FeatureGates.parse(self.options.gates)
        self.addresses = node_addresses(self.options.nodes, self.options.first_node_address)
        self.api = LocalAPIServer(
            ServerOptions(
                port=self.options.api_port,
                kubeconfig=self.options.kubeconfig,
                graceful_pod_deletion=True,
                bookmark_interval=5.0,
                in_cluster_tls=True,
            )
        )
        self.writes = WriteCounter()
        self.client: RESTClient | None = None
        self.factory: SharedInformerFactory | None = None
        self.kubelet: Kubelet | None = None
        self.scheduler: Scheduler | None = None
        self.nodes_proc: asyncio.subprocess.Process | None = None
        """The nodes process (`nodes_process`); `kubelet` and `scheduler` are then None."""
        self._nodes_dir: tempfile.TemporaryDirectory[str] | None = None
        self.replica_sets: ReplicaSetController | None = None
        self.deployments: DeploymentController | None = None
        self.endpoints: EndpointsController | None = None
        self.stateful_sets: StatefulSetController | None = None
        self.volumes: LocalVolumeProvisioner | None = None
        self.dns: ClusterDNS | None = None
        self.mesh: PodMesh | None = None
        self._events: EventBroadcaster | None = None
        self.service_proxy: ServiceProxy | None = None
        self.extensions: list[tuple[WebhookServer, APIServer]] = []
        self.extensions_procs: list[asyncio.subprocess.Process] = []
        self.extensions_ports: list[int] = []
        self._extensions_tmp: tempfile.TemporaryDirectory[str] | None = None
        self.allocators: list[Allocator] = []
        self._allocator_factories: list[SharedInformerFactory] = []
        self._ca: bytes = b""
        self.controller_proc: asyncio.subprocess.Process | None = None
        self._tasks: list[asyncio.Task[Any]] = []
        self._clients: list[RESTClient] = []
        self.allocator_proc: asyncio.subprocess.Process | None = None
        self.allocator_port = 0
        self.allocator_health_port = 0
        self.allocator_certs: AllocatorCertDirs | None = None
        self._certs_tmp: tempfile.TemporaryDirectory[str] | None = None

    @property
    def kubeconfig(self) -> str:
        return self.api.kubeconfig

    async def start(self) -> None:
        await self.api.start()
        self.writes.install(self.api)
        config = load_config(self.api.kubeconfig)
        config.user_agent = USER_AGENT
        config.qps = 0
        self.client = RESTClient(config)
        self._clients = [
            RESTClient(replace(config, user_agent=f"agones-local-{who}"))
            for who in ("scheduler", "sdkserver", "controller-manager")
        ]
        self._clients.append(RESTClient(replace(config, user_agent="agones-extensions")))
        if self.options.agones:
            await self._install_crds()
            await self._ensure(NAMESPACES, {"metadata": {"name": SYSTEM_NAMESPACE}})
            for ns in GAMESERVER_NAMESPACES:
                await self._ensure(
                    SERVICE_ACCOUNTS, {"metadata": {"name": SDK_SERVICE_ACCOUNT}}, ns
                )
            await self._start_webhooks()
        for name, address in self.addresses.items():
            await self._ensure(NODES, node_object(name, address))
        await self._ensure(STORAGE_CLASSES, default_storage_class())
        self.factory = SharedInformerFactory(self.client)
        self.dns = ClusterDNS(self.factory)
        await self.dns.start("127.0.0.1", self.options.dns_port)
        if self.options.nodes_process:
            await self._start_nodes_process()
        else:
            await self._start_nodes_in_process()
        self.replica_sets = ReplicaSetController(self._clients[2], self.factory)
        self.deployments = DeploymentController(self._clients[2], self.factory)
        self.endpoints = EndpointsController(self._clients[2], self.factory)
        self._events = EventBroadcaster(self._clients[2])
        self.stateful_sets = StatefulSetController(
            self._clients[2],
            self.factory,
            self._events.new_recorder("statefulset-controller"),
        )
        if self.kubelet is not None:  # with `nodes_process` the nodes process runs the mesh
            self.mesh = PodMesh(self.kubelet.runners, self.factory)
        self.volumes = LocalVolumeProvisioner(
            self._clients[2],
            self.factory,
            pod_state_dir(self._kubelet_config().state_dir) / "persistentvolumes",
        )
        self.service_proxy = ServiceProxy(self._clients[2], self.factory)
        self.factory.start()
        # Without Agones' CRDs (a bare cluster) the GameServer informer syncs once they exist.
        await self.factory.wait_for_cache_sync(30 if self.options.agones else 3)
        if self.scheduler is not None:
            self._tasks.append(asyncio.create_task(self.scheduler.run()))
        self._tasks.append(asyncio.create_task(self.replica_sets.run()))
        self._tasks.append(asyncio.create_task(self.deployments.run()))
        self._tasks.append(asyncio.create_task(self.endpoints.run()))
        self._tasks.append(asyncio.create_task(self.stateful_sets.run()))
        self._tasks.append(asyncio.create_task(self.volumes.run()))
        if self.mesh is not None:
            self._tasks.append(asyncio.create_task(self.mesh.run()))
        self._tasks.append(asyncio.create_task(self._events.run()))
        self._tasks.append(asyncio.create_task(self.service_proxy.run()))
        if not self.options.agones:
            return
        await self._start_allocation()
        if self.options.controller:
            await self.start_controller()
        if self.options.allocator_service:
            await self.start_allocator_service()

    def _kubelet_config(self) -> KubeletConfig:
        return KubeletConfig(
            kubeconfig=self.api.kubeconfig,
            api_port=self.api.port,
            node_addresses=self.addresses,
            gates=self.gates,
            use_netns=self.options.use_netns,
            use_mountns=self.options.use_mountns,
            log_dir=self.options.log_dir,
            simulate_all=self.options.simulate_all,
            images=self.options.images,
            kubelet_client_token=self.api.kubelets.token,
            in_cluster=InCluster(
                "127.0.0.1",
                self.api.in_cluster_port,
                self.api.in_cluster_ca_pem or b"",
                self.api.options.token or IN_CLUSTER_TOKEN,
            ),
            dns_server=POD_DNS_ADDRESS if self.dns is not None else None,
            dns_target=(self.dns.host, self.dns.port) if self.dns is not None else None,
        )

    async def _start_nodes_in_process(self) -> None:
        """The scheduler and kubelets on this loop, on the stack's informer factory."""
        assert self.factory is not None and self.client is not None
        self.scheduler = Scheduler(self._clients[0], self.factory)
        self.kubelet = Kubelet(
            self.client, self.factory, self._kubelet_config(), sdk_client=self._clients[1]
        )
        await self.kubelet.serve()

    async def _start_nodes_process(self, timeout: float = 60.0) -> None:
        """The scheduler and kubelets as a child process (`nodes.process`); returns once its
        caches synced."""
        self._nodes_dir = tempfile.TemporaryDirectory(prefix="agones-nodes-")
        root = Path(self._nodes_dir.name)
        kubelet = self._kubelet_config()
        assert kubelet.in_cluster is not None
        config = NodesConfig(
            kubeconfig=kubelet.kubeconfig,
            api_port=kubelet.api_port,
            ready_file=str(root / "ready"),
            node_addresses=dict(self.addresses),
            gates=self.options.gates,
            use_netns=self.options.use_netns,
            use_mountns=self.options.use_mountns,
            log_dir=self.options.log_dir,
            simulate_all=self.options.simulate_all,
            images=[[i.image, *i.command] for i in kubelet.images],
            kubelet_client_token=kubelet.kubelet_client_token,
            dns_server=kubelet.dns_server,
            dns_target=list(kubelet.dns_target) if kubelet.dns_target else None,
            in_cluster_host=kubelet.in_cluster.host,
            in_cluster_port=kubelet.in_cluster.port,
            in_cluster_ca_pem=kubelet.in_cluster.ca_pem.decode(),
            in_cluster_token=kubelet.in_cluster.token,
            sync_timeout=30 if self.options.agones else 3,
        )
        (root / "config.json").write_text(config.to_json())
        argv = [
            sys.executable,
            "-m",
            "agones.localcluster.nodes.process",
            str(root / "config.json"),
        ]
        self.nodes_proc = await self._spawn(argv, "nodes.log")
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not (root / "ready").exists():
            if self.nodes_proc.returncode is not None:
                raise RuntimeError(f"the nodes process exited ({self.nodes_proc.returncode})")
            if loop.time() > deadline:
                raise RuntimeError("the nodes process did not become ready")
            await asyncio.sleep(0.05)

    async def _stop_nodes(self) -> None:
        """Stop the kubelets' pods (in-process) or the nodes process (it stops its pods)."""
        if self.kubelet is not None:
            await self.kubelet.stop()
        proc, self.nodes_proc = self.nodes_proc, None
        await _terminate(proc, False, 30.0)
        if self._nodes_dir is not None:
            self._nodes_dir.cleanup()
            self._nodes_dir = None

    async def _ensure(self, res: Resource, body: dict[str, Any], ns: str | None = None) -> None:
        assert self.client is not None
        try:
            await self.client.create(res, body, namespace=ns)
        except ApiError as err:
            if err.status_code != 409:
                raise

    async def _install_crds(self) -> None:
        assert self.client is not None
        names = []
        for path in sorted((REPO_ROOT / "crds").glob("*.yaml")):
            for doc in yaml.safe_load_all(path.read_text()):
                if doc and doc.get("kind") == "CustomResourceDefinition":
                    await self._ensure(CRDS, doc)
                    names.append(doc["metadata"]["name"])
        if not names:
            raise RuntimeError(f"no CRDs found under {REPO_ROOT / 'crds'}")
        for _ in range(200):
            served = 0
            for name in names:
                crd = await self.client.get(CRDS, name)
                conds = (crd.get("status") or {}).get("conditions") or []
                served += any(c["type"] == "Established" and c["status"] == "True" for c in conds)
            if served == len(names):
                return
            await asyncio.sleep(0.05)
        raise RuntimeError("CRDs were not established")

    async def _start_webhooks(self) -> None:
        """`extensions_replicas` webhook servers behind the one Service, each serving its own
        allocation API (see `_start_allocation`), in this process or as child processes."""
        hosts = [f"{SERVICE_NAME}.{SYSTEM_NAMESPACE}.svc", SERVICE_NAME, "localhost", "127.0.0.1"]
        cert, key = self_signed(hosts)
        self._ca = cert
        if self.options.extensions_process:
            o = self.options
            self._extensions_tmp = tempfile.TemporaryDirectory(prefix="agones-extensions-")
            children = ExtensionsChildren(
                self._spawn,
                free_port,
                self.api.kubeconfig,
                o.extensions_replicas,
                o.allocation_batch_wait_time,
                o.gates,
            )
            self.extensions_procs = children.procs
            self.extensions_ports = children.ports
            await children.start(cert, key, Path(self._extensions_tmp.name))
        else:
            for _ in range(self.options.extensions_replicas):
                api = APIServer()
                server = WebhookServer(self.gates, server_ssl_context(cert, key), api=api)
                await server.start("127.0.0.1", 0)
                self.extensions.append((server, api))
                self.extensions_ports.append(server.port or 0)
        addresses = ",".join(f"127.0.0.1:{port}" for port in self.extensions_ports)
        service = {
            "metadata": {
                "name": SERVICE_NAME,
                "namespace": SYSTEM_NAMESPACE,
                "annotations": {ADDRESS_ANNOTATION: addresses},
            },
            "spec": {"ports": [{"name": "webhooks", "port": 443, "targetPort": 8081}]},
        }
        await self._ensure(SERVICES, service, SYSTEM_NAMESPACE)
        mutating, validating = webhook_configurations(cert, SYSTEM_NAMESPACE)
        await self._ensure(MUTATING, mutating)
        await self._ensure(VALIDATING, validating)

    async def _start_allocation(self) -> None:
        """One allocator per extensions replica (its own client, informers, events and share of
        the candidates), then the APIService that routes the allocation API to them."""
        count = len(self.extensions)
        for index, (_, api) in enumerate(self.extensions):  # in this process only
            client = self._clients[-1]
            factory = SharedInformerFactory(client)
            events = EventBroadcaster(client)
            settings = AllocatorSettings(
                batch_wait_time=self.options.allocation_batch_wait_time,
                partition=Partition(index, count),
            )
            allocator = Allocator(
                client,
                factory,
                events,
                self.gates,
                settings,
                multi_cluster=MultiClusterAllocator(factory, self.gates),
            )
            factory.start()
            self._allocator_factories.append(factory)
            self._tasks.append(asyncio.create_task(events.run()))
            await allocator.start()
            self.allocators.append(allocator)
            Extensions(allocator).register_api_resource(api)
        await self._ensure(APISERVICES, api_service(self._ca, SYSTEM_NAMESPACE))

    @property
    def webhooks(self) -> WebhookServer | None:
        return self.extensions[0][0] if self.extensions else None

    @property
    def allocator(self) -> Allocator | None:
        return self.allocators[0] if self.allocators else None

    def controller_argv(self) -> list[str]:
        o = self.options
        argv = [
            sys.executable,
            "-m",
            "agones",
            "controller",
            f"--kubeconfig={self.api.kubeconfig}",
            f"--min-port={o.min_port}",
            f"--max-port={o.max_port}",
            "--http-port=0",
        ]
        if o.gates:
            argv.append(f"--feature-gates={o.gates}")
        return [*argv, *o.controller_args]

    async def start_controller(self) -> None:
        self.controller_proc = await self._spawn(self.controller_argv(), "controller.log")

    def _allocator_argv(self) -> list[str]:
        certs = self.allocator_certs
        assert certs is not None
        return [
            sys.executable,
            "-m",
            "agones",
            "allocator",
            f"--kubeconfig={self.api.kubeconfig}",
            "--address=127.0.0.1",
            f"--http-port={self.allocator_port}",
            f"--grpc-port={self.allocator_port}",
            f"--health-port={self.allocator_health_port}",
            f"--tls-dir={certs.tls}",
            f"--client-ca-dir={certs.client_ca}",
            f"--allocation-batch-wait-time={self.options.allocation_batch_wait_time}s",
            *([f"--feature-gates={self.options.gates}"] if self.options.gates else []),
        ]

    async def start_allocator_service(self, timeout: float = 60.0) -> None:
        """Generate its certificates, start `agones allocator`, wait for its `/ready`."""
        if self.allocator_certs is None:
            root = self.options.allocator_certs_dir
            if root is None:
                self._certs_tmp = tempfile.TemporaryDirectory(prefix="agones-allocator-")
                root = self._certs_tmp.name
            self.allocator_certs = write_allocator_certs(Path(root), ["localhost", "127.0.0.1"])
            self.allocator_port = self.options.allocator_port or free_port()
            self.allocator_health_port = free_port()
        self.allocator_proc = await self._spawn(self._allocator_argv(), "allocator.log")
        await wait_ready(
            self.allocator_proc, self.allocator_health_port, "agones allocator", timeout
        )

    async def stop_allocator_service(self, timeout: float = 15.0) -> None:
        proc, self.allocator_proc = self.allocator_proc, None
        await _terminate(proc, False, timeout)

    async def _spawn(self, argv: list[str], log_name: str) -> asyncio.subprocess.Process:
        out: Any = asyncio.subprocess.DEVNULL
        if self.options.log_dir:
            Path(self.options.log_dir).mkdir(parents=True, exist_ok=True)
            out = open(Path(self.options.log_dir) / log_name, "ab")  # noqa: SIM115
        try:
            return await start_process(
                argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=out,
                stderr=asyncio.subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        finally:
            if out is not asyncio.subprocess.DEVNULL:
                out.close()

    async def stop_controller(self, kill: bool = False, timeout: float = 15.0) -> None:
        proc, self.controller_proc = self.controller_proc, None
        await _terminate(proc, kill, timeout)

    async def stop(self) -> None:
        """Stop everything `start` started (also after a failed start); a step that fails does
        not keep the later ones from running (the first failure is raised at the end)."""
        failures: list[BaseException] = []

        async def step(coro: Any) -> None:
            try:
                await coro
            except Exception as err:
                log.exception("local stack stop step failed")
                failures.append(err)

        await step(self.stop_allocator_service())
        await step(self.stop_controller())
        await step(self._stop_nodes())
        for allocator in self.allocators:
            await step(allocator.stop())
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for factory in self._allocator_factories:
            await step(factory.shutdown())
        if self.factory is not None:
            await step(self.factory.shutdown())
        for server, _ in self.extensions:
            await step(server.stop())
        if self.dns is not None:
            await step(self.dns.stop())
        procs, self.extensions_procs = self.extensions_procs, []
        for proc in procs:
            await step(_terminate(proc, False, 15.0))
        if self._extensions_tmp is not None:
            self._extensions_tmp.cleanup()
        for client in [*([self.client] if self.client is not None else []), *self._clients]:
            await step(client.close())
        await step(self.api.stop())
        if self._certs_tmp is not None:
            self._certs_tmp.cleanup()
        if failures:
            raise failures[0]

    async def __aenter__(self) -> LocalStack:
        try:
            await self.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


class ThreadedStack:
    """A `LocalStack` on its own event loop in a daemon thread."""

    def __init__(self, options: StackOptions | None = None) -> None:
        self.stack = LocalStack(options)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def start(self, timeout: float = 120.0) -> LocalStack:
        self._thread.start()
        try:
            self.call(self.stack.start(), timeout)
        except BaseException:
            self.stop()
            raise
        return self.stack

    def call(self, coro: Any, timeout: float = 60.0) -> Any:
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()  # not left running beside whatever the caller does next
            raise

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.call(self.stack.stop(), 60)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
