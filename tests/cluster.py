"""A cluster for tests: the local API server by default, any cluster when KUBECONFIG is set.

`Cluster` wraps a kubeconfig and offers what conformance tests need through the official
`kubernetes` client only: raw requests (`api.request`) that return the status code and decoded body,
streaming watches, and fault injection (local server only: `cluster.local` tells which).
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import kubernetes

from agones.localcluster import ServerOptions, ThreadedAPIServer

JSON = "application/json"


@dataclass
class Response:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"Response({self.status}, {json.dumps(self.body)[:400]})"


class Api:
    """Raw Kubernetes API calls through the official client's transport (TLS, auth)."""

    def __init__(self, kubeconfig: str) -> None:
        config = kubernetes.client.Configuration()
        kubernetes.config.load_kube_config(config_file=kubeconfig, client_configuration=config)
        self.client = kubernetes.client.ApiClient(config)
        self.host = config.host

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: dict[str, Any] | list[tuple[str, Any]] | None = None,
        content_type: str = JSON,
        accept: str = JSON,
    ) -> Response:
        params = list(query.items()) if isinstance(query, dict) else list(query or [])
        headers = {"Accept": accept}
        if body is not None:
            headers["Content-Type"] = content_type
        method_, url, hdrs_, body_, _ = self.client.param_serialize(
            method,
            path,
            query_params=params,
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        resp = self.client.call_api(method_, url, header_params=hdrs_, body=body_)
        raw, status, hdrs = resp.read(), resp.status, dict(resp.headers or {})
        text = raw.decode() if isinstance(raw, bytes) else (raw or "")
        try:
            decoded = json.loads(text) if text else None
        except json.JSONDecodeError:
            decoded = text
        return Response(status, decoded, hdrs)

    def raw(
        self,
        method: str,
        path: str,
        data: bytes | None,
        content_type: str,
        accept: str = JSON,
        headers: dict[str, str] | None = None,
    ) -> Response:
        """Send bytes as they are (any content type, with any extra `headers`), through the
        client's connection pool. A protobuf response keeps its bytes as the body."""
        extra = headers or {}
        _, url, headers, _, _ = self.client.param_serialize(
            method, path, header_params={"Accept": accept}, auth_settings=["BearerToken"]
        )
        headers.update(extra)
        headers["Content-Type"] = content_type
        resp = self.client.rest_client.pool_manager.request(method, url, body=data, headers=headers)
        if resp.headers.get("Content-Type", "").startswith("application/vnd.kubernetes.protobuf"):
            return Response(resp.status, resp.data, dict(resp.headers))
        text = resp.data.decode()
        try:
            decoded = json.loads(text) if text else None
        except json.JSONDecodeError:
            decoded = text
        return Response(resp.status, decoded, dict(resp.headers))

    def get(self, path: str, **query: Any) -> Response:
        return self.request("GET", path, query=query)

    def post(self, path: str, body: Any, **query: Any) -> Response:
        return self.request("POST", path, body, query)

    def put(self, path: str, body: Any, **query: Any) -> Response:
        return self.request("PUT", path, body, query)

    def patch(self, path: str, body: Any, patch_type: str = "merge", **query: Any) -> Response:
        if patch_type == "apply":
            qs = "&".join(f"{k}={v}" for k, v in query.items())
            return self.raw(
                "PATCH",
                f"{path}?{qs}" if qs else path,
                json.dumps(body).encode(),
                "application/apply-patch+yaml",
            )
        ctype = {
            "merge": "application/merge-patch+json",
            "json": "application/json-patch+json",
            "strategic": "application/strategic-merge-patch+json",
            "apply": "application/apply-patch+yaml",
        }[patch_type]
        return self.request("PATCH", path, body, query, content_type=ctype)

    def delete(self, path: str, body: Any = None, **query: Any) -> Response:
        return self.request("DELETE", path, body, query)

    def watch(self, path: str, timeout: float = 30.0, **query: Any) -> Iterator[dict[str, Any]]:
        """Yield watch events (decoded JSON lines) until the server ends the stream."""
        params = [("watch", "true"), *query.items()]
        method_, url, hdrs_, _, _ = self.client.param_serialize(
            "GET",
            path,
            query_params=params,
            header_params={"Accept": JSON},
            auth_settings=["BearerToken"],
        )
        resp = self.client.call_api(
            method_, url, header_params=hdrs_, _request_timeout=timeout
        ).response
        try:
            buf = b""
            for chunk in resp.stream(4096, decode_content=False):
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        yield json.loads(line)
        finally:
            resp.release_conn()


@dataclass
class Cluster:
    kubeconfig: str
    local: bool
    url: str = ""
    ca_file: str | None = None
    token: str | None = None
    api: Api = field(init=False)

    def ssl_context(self) -> ssl.SSLContext | None:
        return ssl.create_default_context(cafile=self.ca_file) if self.ca_file else None

    def __post_init__(self) -> None:
        self.api = Api(self.kubeconfig)

    def fault(self, action: str, **params: Any) -> Any:
        """Inject a fault into the local server (`close-watches`, `compact`, `fail-writes`, ...)."""
        if not self.local:
            raise RuntimeError("fault injection needs the local API server")
        query = "&".join(f"{k}={v}" for k, v in params.items())
        req = urllib.request.Request(f"{self.url}/_faults/{action}?{query}", method="POST")
        with urllib.request.urlopen(req, timeout=10, context=self.ssl_context()) as resp:
            return json.loads(resp.read())

    def kubectl(
        self, *args: str, stdin: str | None = None, check: bool = True, cache_dir: str = ""
    ) -> subprocess.CompletedProcess[str]:
        exe = shutil.which("kubectl")
        if exe is None:
            raise FileNotFoundError(
                "kubectl is not installed (.ci/install-system-deps installs it)"
            )
        cmd = [exe, "--kubeconfig", self.kubeconfig, *args]
        if cache_dir:
            cmd.insert(1, f"--cache-dir={cache_dir}")
        proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=60)
        if check and proc.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({proc.returncode}): {proc.stderr}"
            )
        return proc

    def create_namespace(self, prefix: str = "conf") -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:8]}"
        resp = self.api.post(
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
        )
        assert resp.status == 201, resp
        return name

    def delete_namespace(self, name: str) -> None:
        self.api.delete(f"/api/v1/namespaces/{name}")


def start_cluster() -> tuple[Cluster, ThreadedAPIServer | None]:
    """The cluster tests run against: KUBECONFIG's when set, else a fresh local server."""
    kubeconfig = os.environ.get("KUBECONFIG")
    if kubeconfig:
        return Cluster(kubeconfig, local=False), None
    # LOCALCLUSTER_TLS=1 runs the suite over HTTPS with a bearer token.
    tls = os.environ.get("LOCALCLUSTER_TLS") == "1"
    runner = ThreadedAPIServer(
        ServerOptions(
            bookmark_interval=0.5,
            history_size=1000,
            watcher_capacity=200,
            tls=tls,
            token="conformance-token" if tls else None,
        )
    )
    srv = runner.start()
    return Cluster(
        srv.kubeconfig, local=True, url=srv.url, ca_file=srv.ca_file, token=srv.options.token
    ), runner
