"""Client configuration from a kubeconfig file or the in-cluster service account (client-go `rest.Config`).

`load_kube_config(path, context)` reads the current (or named) context: server, CA (file or data),
`insecure-skip-tls-verify`, client certificate/key (file or data), bearer token (or token file,
re-read once a minute for rotation) and basic auth. `in_cluster_config()` reads `KUBERNETES_SERVICE_HOST/PORT` and the mounted service
account (in `$AGONES_SERVICE_ACCOUNT_DIR` when set: where the local cluster's kubelet puts it when
it cannot mount it). `load_config(path)` picks: explicit path, `$KUBECONFIG`, in-cluster, then `~/.kube/config`.
QPS/burst default to Agones' Helm values (400/500), a budget each for the Kubernetes, apiextensions
and Agones clientsets (`throttle.py`). Errors are `ConfigError` with a clear message.
"""

from __future__ import annotations

import base64
import os
import ssl
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..version import VERSION

SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")
SERVICE_ACCOUNT_DIR_ENV = "AGONES_SERVICE_ACCOUNT_DIR"
"""Where the service-account files are when they cannot be mounted at `SERVICE_ACCOUNT_DIR` (the
local cluster's kubelet without mount namespaces sets it)."""
TOKEN_FILE_REFRESH = 60.0  # seconds between re-reads of a token file


class ConfigError(ValueError):
    pass


@dataclass
class Config:
    host: str
    """Base URL of the API server, e.g. https://127.0.0.1:6443."""
    ca_data: bytes | None = None
    """PEM CA bundle, the only roots trusted for the server; None uses the system store."""
    insecure: bool = False
    """Skip server certificate verification."""
    cert_data: bytes | None = None
    """PEM client certificate."""
    key_data: bytes | None = None
    """PEM client key."""
    token: str | None = None
    """Bearer token."""
    token_file: str | None = None
    """File re-read for the bearer token (service-account token rotation)."""
    username: str | None = None
    password: str | None = None
    qps: float = 400.0
    """Client-side requests per second of each clientset (Agones' apiServerQPS; 0 = unlimited)."""
    burst: int = 500
    """Client-side burst of each clientset (Agones' apiServerQPSBurst)."""
    user_agent: str = field(default_factory=lambda: f"agones-py/{VERSION}")
    timeout: float = 60.0
    """Timeout in seconds of a non-watch request."""

    now: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)
    """The clock the token file's re-reads are timed by."""
    _file_token: tuple[str, float] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def bearer_token(self) -> str | None:
        """The token; a token file is re-read at most once a minute (client-go's cached file
        token source), and a failed re-read keeps the last token read."""
        if not self.token_file:
            return self.token
        now = self.now()
        cached = self._file_token
        if cached is not None and now < cached[1]:
            return cached[0]
        try:
            token = Path(self.token_file).read_text().strip()
        except OSError as err:
            if cached is not None:
                return cached[0]
            raise ConfigError(f"cannot read token file {self.token_file}: {err}") from err
        self._file_token = (token, now + TOKEN_FILE_REFRESH)
        return token

    def ssl_context(self) -> ssl.SSLContext | None:
        if not self.host.startswith("https"):
            return None
        if self.ca_data:
            # As client-go: a configured CA is the only trust root, not an addition to the system's.
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.load_verify_locations(cadata=self.ca_data.decode())
        else:
            ctx = ssl.create_default_context()
        if self.insecure:
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if self.cert_data and self.key_data:
            # ssl wants files; keep them only for the duration of the load.
            with tempfile.TemporaryDirectory() as tmp:
                cert, key = Path(tmp, "cert.pem"), Path(tmp, "key.pem")
                cert.write_bytes(self.cert_data)
                key.touch(mode=0o600)
                key.write_bytes(self.key_data)
                ctx.load_cert_chain(str(cert), str(key))
        return ctx


def _data_or_file(entry: dict[str, Any], key: str, base: Path) -> bytes | None:
    data = entry.get(f"{key}-data")
    if data:
        try:
            return base64.b64decode(data)
        except ValueError as err:
            raise ConfigError(f"{key}-data is not valid base64") from err
    path = entry.get(key)
    if path:
        full = Path(path) if os.path.isabs(path) else base / path
        try:
            return full.read_bytes()
        except OSError as err:
            raise ConfigError(f"cannot read {key} {full}: {err}") from err
    return None


def _named(items: Any, name: str, kind: str) -> dict[str, Any]:
    for item in items or []:
        if isinstance(item, dict) and item.get("name") == name:
            value = item.get(kind)
            return value if isinstance(value, dict) else {}
    raise ConfigError(f"kubeconfig has no {kind} named {name!r}")


def load_kube_config(path: str | os.PathLike[str], context: str | None = None) -> Config:
    file = Path(path).expanduser()
    try:
        doc = yaml.safe_load(file.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(f"cannot load kubeconfig {file}: {err}") from err
    if not isinstance(doc, dict):
        raise ConfigError(f"kubeconfig {file} is not a mapping")
    context_name = context or doc.get("current-context")
    if not context_name:
        raise ConfigError(f"kubeconfig {file} has no current-context")
    ctx = _named(doc.get("contexts"), context_name, "context")
    cluster = _named(doc.get("clusters"), ctx.get("cluster", ""), "cluster")
    user = _named(doc.get("users"), ctx["user"], "user") if ctx.get("user") else {}
    for unsupported in ("exec", "auth-provider"):
        if user.get(unsupported):
            raise ConfigError(
                f"user of context {context_name!r} uses {unsupported!r} credentials, which are not "
                "supported: use a token, a client certificate or basic auth"
            )
    server = cluster.get("server")
    if not server:
        raise ConfigError(f"cluster of context {context_name!r} has no server")
    base = file.parent
    return Config(
        host=str(server).rstrip("/"),
        ca_data=_data_or_file(cluster, "certificate-authority", base),
        insecure=bool(cluster.get("insecure-skip-tls-verify", False)),
        cert_data=_data_or_file(user, "client-certificate", base),
        key_data=_data_or_file(user, "client-key", base),
        token=user.get("token"),
        token_file=user.get("tokenFile"),
        username=user.get("username"),
        password=user.get("password"),
    )


def in_cluster_config(sa_dir: Path | None = None) -> Config:
    if sa_dir is None:
        sa_dir = Path(os.environ.get(SERVICE_ACCOUNT_DIR_ENV) or SERVICE_ACCOUNT_DIR)
    host = os.environ.get("KUBERNETES_SERVICE_HOST")
    port = os.environ.get("KUBERNETES_SERVICE_PORT")
    if not host or not port:
        raise ConfigError("not in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set")
    token_file = sa_dir / "token"
    if not token_file.exists():
        raise ConfigError(f"not in a cluster: {token_file} does not exist")
    ca = sa_dir / "ca.crt"
    if ":" in host:
        host = f"[{host}]"
    return Config(
        host=f"https://{host}:{port}",
        ca_data=ca.read_bytes() if ca.exists() else None,
        token_file=str(token_file),
    )


def load_config(kubeconfig: str | None = None, context: str | None = None) -> Config:
    """Agones' order: --kubeconfig, then $KUBECONFIG, then in-cluster, then ~/.kube/config."""
    if kubeconfig:
        return load_kube_config(kubeconfig, context)
    env = os.environ.get("KUBECONFIG")
    if env:
        return load_kube_config(env.split(os.pathsep)[0], context)
    try:
        return in_cluster_config()
    except ConfigError:
        default = Path("~/.kube/config").expanduser()
        if default.exists():
            return load_kube_config(default, context)
        raise
