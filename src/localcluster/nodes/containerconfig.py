"""What one container of a process pod is started with (the kubelet's `generateContainerConfig`):
`container_config(runner, spec, use_mounts, remap)` is its argv and env.

* env from `envvars.make_environment` (the pod's ConfigMaps and Secrets as last read), `$(VAR)`
  expanded in `command` and `args`;
* the Agones sidecar gets `KUBECONFIG` (and, without network namespaces, free ports through flags
  and `HEALTH_PORT`); without network namespaces a container's first host port is `PORT`;
* the program from the image map (`imagemap.local_program`: the user's entries, then the built-in
  ones); a container without one waits (`PLACEHOLDER`) and leaves on SIGTERM;
* with mount namespaces the argv is wrapped in the container init (`mounts.container_init_argv`)
  with the container's bind mounts, their missing mount points made on the host first
  (`CreateContainerError` when that fails); without, the fallback rewrites mountPaths.

`envvars.ContainerConfigError` (or `CreateContainerError`) when the container cannot be made yet.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Protocol

from .containers import REPO_ROOT, SIDECAR_NAME
from .envvars import ContainerConfigError, EnvSources, PodAddresses, expand, make_environment
from .imagemap import ImageProgram, local_program
from .mounts import MOUNT_POINTS, container_init_argv
from .podfiles import PodFiles

PLACEHOLDER = (
    "import signal, sys; signal.signal(signal.SIGTERM, lambda *_: sys.exit(0)); signal.pause()"
)
"""What a container without a local program runs: it waits, and leaves on SIGTERM."""


class CreateContainerError(ContainerConfigError):
    """The runtime could not create the container (its mount points cannot be made)."""

    reason = "CreateContainerError"


class Config(Protocol):
    kubeconfig: str
    images: list[ImageProgram]


class Host(Protocol):
    @property
    def config(self) -> Config: ...


class Runner(Protocol):
    """What this module uses of a `podrunner.PodRunner`."""

    uid: str
    pod: dict[str, Any]
    pod_ip: str
    node_ip: str
    files: PodFiles | None
    _use_netns: bool
    _health_port: int
    _sources: dict[tuple[str, str], dict[str, Any] | None]

    @property
    def kubelet(self) -> Host: ...


def _ports(
    runner: Runner,
    c: dict[str, Any],
    argv: list[str] | None,
    env: dict[str, str],
    remap: dict[str, str],
) -> list[str] | None:
    """The sidecar's KUBECONFIG and, in the host namespace, the ports programs are told."""
    if c.get("name") == SIDECAR_NAME:
        env["KUBECONFIG"] = runner.kubelet.config.kubeconfig
        if argv is None:
            argv = [sys.executable, "-m", "agones", "sdkserver", *c.get("args", [])]
        if not runner._use_netns:
            argv = [a for a in argv if not a.startswith(("--grpc-port", "--http-port"))]
            argv += [f"--grpc-port={remap['AGONES_SDK_GRPC_PORT']}"]
            argv += [f"--http-port={remap['AGONES_SDK_HTTP_PORT']}"]
            env["HEALTH_PORT"] = str(runner._health_port)
    elif not runner._use_netns:
        env.update({k: v for k, v in remap.items() if k in env})
        ports = [p for p in c.get("ports") or [] if p.get("hostPort")]
        if ports:
            env["PORT"] = str(ports[0]["hostPort"])
    return argv


def container_config(
    runner: Runner, c: dict[str, Any], use_mounts: bool, remap: dict[str, str]
) -> tuple[list[str], dict[str, str]]:
    """The argv and env one container runs with (see the module docstring)."""
    env = make_environment(
        c,
        runner.pod,
        EnvSources.from_pairs(runner._sources),
        PodAddresses(runner.pod_ip, runner.node_ip),
    )
    argv = _ports(
        runner,
        c,
        [expand(a, env) for a in local_program(c, runner.kubelet.config.images) or []] or None,
        env,
        remap,
    )
    if argv is None:
        argv = [sys.executable, "-c", PLACEHOLDER]
    files = runner.files
    assert files is not None
    argv = files.container_argv(c, argv)
    env = files.container_env(c, env)
    if use_mounts:
        mounts = files.container_mounts(c)
        try:
            for m in mounts:
                MOUNT_POINTS.ensure(m.target, Path(m.source).is_file(), runner.uid)
        except OSError as err:
            raise CreateContainerError(f"cannot make mount point: {err}") from err
        workdir = str(c.get("workingDir") or (REPO_ROOT if REPO_ROOT.is_dir() else "/"))
        argv = container_init_argv(mounts, argv, workdir)
    return argv, env
