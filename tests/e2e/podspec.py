"""Helpers of the pod-spec e2e tests (volumes, env, init containers, termination): make a process
pod, read what its containers printed (the kubelet's per-container log), wait for its status."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from agones.localcluster.nodes.logs import ReadOptions, read_log
from tests.e2e.framework import Framework


def python(code: str) -> list[str]:
    """A container command: this interpreter running `code` (unbuffered)."""
    return [sys.executable, "-u", "-c", code]


def pod(spec: dict[str, Any], prefix: str = "podspec") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{prefix}-{uuid.uuid4().hex[:6]}"},
        "spec": spec,
    }


def create(framework: Framework, obj: dict[str, Any]) -> str:
    kind = obj.get("kind", "Pod")
    plural = {"Pod": "pods", "ConfigMap": "configmaps", "Secret": "secrets"}[kind]
    resp = framework.api.post(f"/api/v1/namespaces/{framework.namespace}/{plural}", obj)
    assert resp.status == 201, resp
    return str(obj["metadata"]["name"])


def log_of(framework: Framework, name: str, container: str) -> str:
    """What the container printed so far, every run of it in order (local stack: the kubelet's
    CRI log files, `<log_dir>/pods/<ns>_<pod>_<uid>/<container>/<restart>.log`)."""
    assert framework.stack is not None and framework.stack.stack.options.log_dir
    root = Path(framework.stack.stack.options.log_dir) / "pods"
    runs = sorted(
        root.glob(f"{framework.namespace}_{name}_*/{container}/*.log"),
        key=lambda p: int(p.stem) if p.stem.isdigit() else -1,
    )
    out = b""
    for run in runs:
        try:
            out += read_log(run.read_bytes(), ReadOptions())
        except FileNotFoundError:
            continue
    return out.decode(errors="replace")


def wait_log(
    framework: Framework, name: str, container: str, text: str, timeout: float = 30
) -> str:
    return str(
        framework.wait(
            f"{text!r} in {container}'s log",
            lambda: out if text in (out := log_of(framework, name, container)) else None,
            timeout,
        )
    )


def statuses(framework: Framework, name: str, key: str = "containerStatuses") -> list[Any]:
    return list(((framework.pod(name) or {}).get("status") or {}).get(key) or [])


def phase(framework: Framework, name: str) -> str:
    return str(((framework.pod(name) or {}).get("status") or {}).get("phase") or "")


def kubectl_status(framework: Framework, name: str) -> str:
    """The STATUS column `kubectl get pod` prints."""
    out = subprocess.run(
        [
            "kubectl",
            "--kubeconfig",
            framework.kubeconfig,
            "-n",
            framework.namespace,
            "get",
            "pod",
            name,
            "--no-headers",
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout.split()
    return out[2] if len(out) > 2 else ""
