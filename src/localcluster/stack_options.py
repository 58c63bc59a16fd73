"""What a local stack runs (`stack.LocalStack`): `StackOptions`, one field a choice, each with its
default."""

from __future__ import annotations

from dataclasses import dataclass, field

from .nodes.imagemap import ImageProgram


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
    """Extra `agones controller` flags (after the stack's own, so they win)."""
    client_qps: int = 2000
    client_burst: int = 3000
    """The client budget per clientset (`--api-server-qps` / `--api-server-qps-burst`) of the
    controller, the allocator service and the `agones extensions` processes the stack runs. Agones' defaults (400 / 500, kept by the
    commands and the Helm chart) protect a shared kube-apiserver; the local API server serves
    several thousand writes/s, and at 400/s the controller's budget alone would cap a Fleet's
    scale-up at ~90 GameServers/s (5 GameServer writes each)."""
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
