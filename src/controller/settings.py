"""Controller settings with Agones' defaults (`cmd/controller/main.go`, Helm `values.yaml`).

Flags and environment variables map onto this in `src/cmd/`, nowhere else.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ControllerSettings:
    http_port: int = 8080
    """Port of /live, /ready and /metrics (0 picks a free port)."""
    num_workers: int = 64
    """Workers per work queue (binary default 64; Helm sets 100)."""
    api_server_qps: float = 400.0
    """Client-side QPS to the API server (binary default 100; Helm and the allocator use 400)."""
    api_server_qps_burst: int = 500
    """Client-side burst (binary default 200; Helm 500)."""
    resync_period: float = 30.0
    """Informer resync period in seconds (Agones: 30 s)."""
    cache_sync_timeout: float | None = None
    """Give up waiting for caches after this many seconds (None waits forever, as Agones does)."""
    leader_election: bool = False
    """Run controllers only while holding the Lease (Helm enables it when replicas > 1)."""
    lease_name: str = "agones-controller-lock"
    """Name of the coordination.k8s.io Lease."""
    pod_namespace: str = "agones-system"
    """Namespace of the Lease (the pod's own namespace)."""
    lease_duration: float = 15.0
    """Leader election LeaseDuration in seconds."""
    renew_deadline: float = 10.0
    """Leader election RenewDeadline in seconds."""
    retry_period: float = 2.0
    """Leader election RetryPeriod in seconds."""
    shutdown_timeout: float = 30.0
    """Bound on draining in-flight syncs at SIGTERM."""
    kubeconfig: str | None = None
    """Path of a kubeconfig; None uses $KUBECONFIG, in-cluster, then ~/.kube/config."""
    log_level: str = "info"
    """debug, info, warn or error."""
    prometheus_exporter: bool = True
    """Serve /metrics."""
