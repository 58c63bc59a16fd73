"""The local stack's cluster parts, with or without Agones (`stack.LocalStack` runs them).

`start_cluster(stack)` makes, once the API server is up: the simulated nodes' Node objects (node i
at `first_node_address` + i, `node_addresses`), the default StorageClass, the stack's informer
factory (listing and watching in-process), the cluster DNS server (`clusterdns`, relayed into every pod's network namespace at
`POD_DNS_ADDRESS:53`), the scheduler and kubelets (`start_nodes_in_process`, on the stack's
factory, or with `nodes_process` a child process, `nodes.process`, so the API server keeps the
stack's event loop to itself: `start_nodes_process`), and the local controllers (deployment,
replicaset, statefulset, endpoints, volumes), the pod mesh (in-process nodes only: the nodes
process runs its own) and the service proxy, running once the factory's caches synced.
`stop_nodes(stack)` stops the kubelets' pods or the nodes process. `kubelet_config(stack)` is what
the kubelets are given, in either place. `ensure(client, resource, body)` creates an object
unless it exists.
"""

from __future__ import annotations

import asyncio
import ipaddress
import sys
import tempfile
from pathlib import Path
from typing import Any, Protocol

from ..client.errors import ApiError
from ..client.rest import Resource, RESTClient
from ..client.versioned.resources import NODES, STORAGE_CLASSES
from ..featuregates import FeatureGates
from ..informers import SharedInformerFactory
from ..record import EventBroadcaster
from .apiserver.inprocess import InProcessListWatches
from .apiserver.server import LocalAPIServer
from .clusterdns import ClusterDNS
from .controllers.deployment import DeploymentController
from .controllers.endpoints import EndpointsController
from .controllers.replicaset import ReplicaSetController
from .controllers.statefulset import StatefulSetController
from .controllers.volumes import LocalVolumeProvisioner, default_storage_class
from .nodes.kubelet import Kubelet
from .nodes.podfiles import InCluster
from .nodes.podmesh import PodMesh
from .nodes.podrunner import KubeletConfig
from .nodes.process import NodesConfig
from .nodes.scheduler import Scheduler, node_object
from .nodes.serviceproxy import ServiceProxy
from .nodes.volumemanager import pod_state_dir
from .stack_options import StackOptions
from .stack_processes import terminate

USER_AGENT = "agones-local-kubelet"
"""User-Agents of the in-process clients (the kubelets; `-scheduler`; `-sdkserver` for the
simulated sidecars), so the write counter can tell them apart."""
POD_DNS_ADDRESS = "127.0.0.10"
"""The cluster DNS server's address inside each pod's network namespace (kube-dns' 10.96.0.10)."""
IN_CLUSTER_TOKEN = "agones-local-service-account"
"""The token pods' in-cluster config carries (the stack's API server asks for none)."""


def node_addresses(count: int, first: str) -> dict[str, str]:
    base = ipaddress.IPv4Address(first)
    out = {}
    for i in range(count):
        addr = base + i
        if not addr.is_loopback:
            raise ValueError(f"node address {addr} is not a loopback address")
        out[f"agones-local-node-{i + 1}"] = str(addr)
    return out


async def ensure(
    client: RESTClient, res: Resource, body: dict[str, Any], ns: str | None = None
) -> None:
    """Create `body` unless an object of its name exists."""
    try:
        await client.create(res, body, namespace=ns)
    except ApiError as err:
        if err.status_code != 409:
            raise


class Stack(Protocol):
    """What this module uses of a `stack.LocalStack`."""

    options: StackOptions
    gates: FeatureGates
    addresses: dict[str, str]
    api: LocalAPIServer
    list_watches: InProcessListWatches
    client: RESTClient | None
    factory: SharedInformerFactory | None
    kubelet: Kubelet | None
    scheduler: Scheduler | None
    nodes_proc: asyncio.subprocess.Process | None
    _nodes_dir: tempfile.TemporaryDirectory[str] | None
    replica_sets: ReplicaSetController | None
    deployments: DeploymentController | None
    endpoints: EndpointsController | None
    stateful_sets: StatefulSetController | None
    volumes: LocalVolumeProvisioner | None
    dns: ClusterDNS | None
    mesh: PodMesh | None
    _events: EventBroadcaster | None
    service_proxy: ServiceProxy | None
    _tasks: list[asyncio.Task[Any]]
    _clients: list[RESTClient]

    async def _spawn(self, argv: list[str], log_name: str) -> asyncio.subprocess.Process: ...


async def start_cluster(stack: Stack) -> None:
    """Nodes, StorageClass, cluster DNS, scheduler and kubelets, the local controllers."""
    assert stack.client is not None
    for name, address in stack.addresses.items():
        await ensure(stack.client, NODES, node_object(name, address))
    await ensure(stack.client, STORAGE_CLASSES, default_storage_class())
    stack.factory = SharedInformerFactory(stack.client, list_watches=stack.list_watches)
    stack.dns = ClusterDNS(stack.factory)
    await stack.dns.start("127.0.0.1", stack.options.dns_port)
    if stack.options.nodes_process:
        await start_nodes_process(stack)
    else:
        await start_nodes_in_process(stack)
    await _start_controllers(stack, stack.factory)


async def _start_controllers(stack: Stack, factory: SharedInformerFactory) -> None:
    """The local controllers, the pod mesh and the service proxy, once the caches synced."""
    manager = stack._clients[2]
    stack.replica_sets = ReplicaSetController(manager, factory)
    stack.deployments = DeploymentController(manager, factory)
    stack.endpoints = EndpointsController(manager, factory)
    stack._events = EventBroadcaster(manager)
    stack.stateful_sets = StatefulSetController(
        manager,
        factory,
        stack._events.new_recorder("statefulset-controller"),
    )
    if stack.kubelet is not None:  # with `nodes_process` the nodes process runs the mesh
        stack.mesh = PodMesh(stack.kubelet.runners, factory)
    stack.volumes = LocalVolumeProvisioner(
        manager,
        factory,
        pod_state_dir(kubelet_config(stack).state_dir) / "persistentvolumes",
    )
    stack.service_proxy = ServiceProxy(manager, factory)
    factory.start()
    # Without Agones' CRDs (a bare cluster) the GameServer informer syncs once they exist.
    await factory.wait_for_cache_sync(30 if stack.options.agones else 3)
    if stack.scheduler is not None:
        stack._tasks.append(asyncio.create_task(stack.scheduler.run()))
    stack._tasks.append(asyncio.create_task(stack.replica_sets.run()))
    stack._tasks.append(asyncio.create_task(stack.deployments.run()))
    stack._tasks.append(asyncio.create_task(stack.endpoints.run()))
    stack._tasks.append(asyncio.create_task(stack.stateful_sets.run()))
    stack._tasks.append(asyncio.create_task(stack.volumes.run()))
    if stack.mesh is not None:
        stack._tasks.append(asyncio.create_task(stack.mesh.run()))
    stack._tasks.append(asyncio.create_task(stack._events.run()))
    stack._tasks.append(asyncio.create_task(stack.service_proxy.run()))


def kubelet_config(stack: Stack) -> KubeletConfig:
    return KubeletConfig(
        kubeconfig=stack.api.kubeconfig,
        api_port=stack.api.port,
        node_addresses=stack.addresses,
        gates=stack.gates,
        use_netns=stack.options.use_netns,
        use_mountns=stack.options.use_mountns,
        log_dir=stack.options.log_dir,
        simulate_all=stack.options.simulate_all,
        images=stack.options.images,
        kubelet_client_token=stack.api.kubelets.token,
        in_cluster=InCluster(
            "127.0.0.1",
            stack.api.in_cluster_port,
            stack.api.in_cluster_ca_pem or b"",
            stack.api.options.token or IN_CLUSTER_TOKEN,
        ),
        dns_server=POD_DNS_ADDRESS if stack.dns is not None else None,
        dns_target=(stack.dns.host, stack.dns.port) if stack.dns is not None else None,
    )


async def start_nodes_in_process(stack: Stack) -> None:
    """The scheduler and kubelets on this loop, on the stack's informer factory."""
    assert stack.factory is not None and stack.client is not None
    stack.scheduler = Scheduler(stack._clients[0], stack.factory)
    stack.kubelet = Kubelet(
        stack.client, stack.factory, kubelet_config(stack), sdk_client=stack._clients[1]
    )
    await stack.kubelet.serve()


async def start_nodes_process(stack: Stack, timeout: float = 60.0) -> None:
    """The scheduler and kubelets as a child process (`nodes.process`); returns once its
    caches synced."""
    stack._nodes_dir = tempfile.TemporaryDirectory(prefix="agones-nodes-")
    root = Path(stack._nodes_dir.name)
    kubelet = kubelet_config(stack)
    assert kubelet.in_cluster is not None
    options = stack.options
    config = NodesConfig(
        kubeconfig=kubelet.kubeconfig,
        api_port=kubelet.api_port,
        ready_file=str(root / "ready"),
        node_addresses=dict(stack.addresses),
        gates=options.gates,
        use_netns=options.use_netns,
        use_mountns=options.use_mountns,
        log_dir=options.log_dir,
        simulate_all=options.simulate_all,
        images=[[i.image, *i.command] for i in kubelet.images],
        kubelet_client_token=kubelet.kubelet_client_token,
        dns_server=kubelet.dns_server,
        dns_target=list(kubelet.dns_target) if kubelet.dns_target else None,
        in_cluster_host=kubelet.in_cluster.host,
        in_cluster_port=kubelet.in_cluster.port,
        in_cluster_ca_pem=kubelet.in_cluster.ca_pem.decode(),
        in_cluster_token=kubelet.in_cluster.token,
        sync_timeout=30 if options.agones else 3,
    )
    (root / "config.json").write_text(config.to_json())
    argv = [sys.executable, "-m", "agones.localcluster.nodes.process", str(root / "config.json")]
    proc = await stack._spawn(argv, "nodes.log")
    stack.nodes_proc = proc
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not (root / "ready").exists():
        if proc.returncode is not None:
            raise RuntimeError(f"the nodes process exited ({proc.returncode})")
        if loop.time() > deadline:
            raise RuntimeError("the nodes process did not become ready")
        await asyncio.sleep(0.05)


async def stop_nodes(stack: Stack) -> None:
    """Stop the kubelets' pods (in-process) or the nodes process (it stops its pods)."""
    if stack.kubelet is not None:
        await stack.kubelet.stop()
    proc, stack.nodes_proc = stack.nodes_proc, None
    await terminate(proc, False, 30.0)
    if stack._nodes_dir is not None:
        stack._nodes_dir.cleanup()
        stack._nodes_dir = None
