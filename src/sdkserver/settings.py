"""The SDK sidecar's settings (Agones `cmd/sdk-server` flags), one typed dataclass.

Defaults are Agones'; `agones sdkserver` (`agones.cmd.sdkserver`) derives its flags and
environment variables from these fields (`cmd.flags.bind_settings`) and nowhere else reads them
from the command line. The metadata keys are the binder's (`flags.DURATION` is "go-duration").
"""

from __future__ import annotations

from dataclasses import dataclass, field

GO_DURATION = {"flag": "go-duration"}
"""Field metadata: a float of seconds given on the command line as a Go duration (`500ms`)."""
NO_ENV = {"env": False}
"""Field metadata: a flag with no environment variable."""


@dataclass(frozen=True)
class SDKServerSettings:
    """Configuration of the SDK sidecar; defaults are Agones'."""

    gameserver_name: str = ""
    """Name of the GameServer this sidecar serves (cluster mode)."""
    pod_namespace: str = ""
    """Namespace of that GameServer (cluster mode)."""
    local: bool = False
    """Local development mode: no Kubernetes, an in-memory GameServer."""
    file: str = ""
    """Local mode: a GameServer manifest (YAML or JSON) to start from, re-read when it changes."""
    test: str = ""
    """Comma-separated request names expected by a conformance test run; non-empty → test mode."""
    sdk_name: str = ""
    """Name of the SDK under test, added to the logs in test mode."""
    timeout: int = 0
    """Local/test mode: seconds to run before exiting (0: until signalled)."""
    delay: int = 0
    """Seconds to wait before starting."""
    address: str = "localhost"
    """Address the gRPC and HTTP ports bind to ("" binds every interface)."""
    grpc_port: int = 9357
    """Port of the gRPC SDK service."""
    http_port: int = 9358
    """Port of the REST gateway."""
    health_port: int = 8080
    """Port of /healthz and /gshealthz (cluster mode)."""
    kubeconfig: str = ""
    """Kubeconfig for running out of the cluster."""
    graceful_termination: bool = field(default=True, metadata=NO_ENV)
    """On SIGTERM keep serving until the GameServer is Shutdown (cluster mode)."""
    log_level: str = "Info"
    """Log level: Error, Info, Debug or Trace."""
    request_rate_limit: float = field(default=0.5, metadata=GO_DURATION)
    """Seconds each GameServer write waits so that rapid SDK calls coalesce (Go duration text)."""
    feature_gates: str = ""
    """Feature gates as a query string, e.g. `PlayerTracking=true`."""
    first_write_immediately: bool = False
    """(agones-py) Write a change at once when its operation was idle for a rate-limit window."""
    health_autostart: bool = False
    """(agones-py) Start health checks initialDelaySeconds after start, not on the first probe."""
