"""The allocator service's settings (Agones `cmd/allocator` `config`), with Agones' defaults.

Flags and environment variables map onto these in `cmd/allocator.py` (one flag per field, by
`cmd.flags.bind_settings`), nowhere else. Durations are seconds, given as Go durations. A port of -1 is off; gRPC and REST on the same port share one listener.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..controllers.gameserverallocations.partition import Partition

# Given on the command line as a Go duration (`500ms`); see `cmd.flags.bind_settings`.
DURATION = {"flag": "go-duration"}


@dataclass
class AllocatorServiceSettings:
    http_port: int = -1
    """Port of the REST API (`POST /gameserverallocation`); -1 = off (Helm: 8443)."""
    grpc_port: int = -1
    """Port of the gRPC API; -1 = off; equal to `http_port` = one listener for both (Helm: 8443)."""
    address: str = ""
    """Address the API ports bind to; "" = every interface."""
    health_port: int = 8080
    """Port of `/live`, `/ready` and `/metrics` (plain HTTP)."""
    api_server_qps: int = 400
    """Sustained queries per second to the API server."""
    api_server_qps_burst: int = 500
    """Burst of queries per second to the API server."""
    prometheus_exporter: bool = True
    """Serve Prometheus metrics on `/metrics` of the health port."""
    disable_mtls: bool = False
    """Accept clients without a certificate (TLS stays on)."""
    disable_tls: bool = False
    """Serve plaintext (implies no mTLS)."""
    tls_dir: str = "/home/allocator/tls/"
    """Directory of the serving certificate `tls.crt` and key `tls.key` (hot-reloaded)."""
    client_ca_dir: str = "/home/allocator/client-ca/"
    """Directory of the CAs client certificates must chain to: every `*.crt`/`*.pem` (hot-reloaded)."""
    cert_watch_interval: float = field(default=1.0, metadata=DURATION)
    """How often the certificate directories are looked at (Agones' fswatch batches 1 s)."""
    remote_allocation_timeout: float = field(default=10.0, metadata=DURATION)
    """Timeout of one call to a remote allocator (multi-cluster)."""
    total_remote_allocation_timeout: float = field(default=30.0, metadata=DURATION)
    """Timeout of all calls to one remote cluster, retries included."""
    allocation_batch_wait_time: float = field(default=0.5, metadata=DURATION)
    """Seconds the idle batch loop sleeps (Agones' fixed wait); 0 serves a lone request at once."""
    readiness_shutdown_duration: float = field(default=0.0, metadata=DURATION)
    """After SIGTERM, how long readiness fails before the listeners stop taking connections."""
    drain_timeout: float = field(default=30.0, metadata=DURATION)
    """After the listeners stop, how long in-flight requests may take to finish."""
    http_unallocated_status_code: int = 429
    """HTTP status (and the gRPC code mapped from it) of an UnAllocated answer."""
    log_level: str = "Info"
    """Log level."""
    allocation_partition: str = ""
    """`INDEX/COUNT`: this replica's preferred share of the candidates among COUNT replicas
    (agones#1856; "" = all of them, as Agones)."""

    def partition(self) -> Partition:
        """`allocation_partition` parsed; `ValueError` naming the flag when malformed."""
        return Partition.parse(self.allocation_partition)

    def mtls(self) -> bool:
        return not self.disable_tls and not self.disable_mtls
