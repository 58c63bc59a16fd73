"""The kubelet's volume manager for one process pod: it reads the ConfigMaps and Secrets the
pod's volumes and env name (`fetch_sources`: a missing one is None, the start path decides), sets
the pod's files up before any container starts (`prepare_files`: retried every second while a
volume cannot be set up, a persistentVolumeClaim not yet bound included (`volumes_pvc`), the
containers `ContainerCreating`), and keeps them in sync
(`sync_volumes`: every `KubeletConfig.volume_sync_period` seconds the sources are read again and
the projected volumes rewritten atomically when they, or the pod's labels and annotations,
changed).
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any, Protocol

import structlog

from ...client.errors import ApiError
from ...client.rest import RESTClient
from ...client.versioned.resources import CONFIG_MAPS, SECRETS
from . import envvars, volumes
from .envvars import PodAddresses
from .initcontainers import pause
from .podfiles import InCluster, PodFiles
from .volumes import VolumeError
from .volumes_pvc import resolve_claims

log = structlog.get_logger("agones.localcluster.nodes.volumemanager")


class Config(Protocol):
    state_dir: str | None
    in_cluster: InCluster | None
    volume_sync_period: float


class Host(Protocol):
    client: RESTClient

    @property
    def config(self) -> Config: ...


class Runner(Protocol):
    """What this module uses of a `podrunner.PodRunner`."""

    name: str
    pod: dict[str, Any]
    pod_ip: str
    node_ip: str
    terminating: bool
    stopped: asyncio.Event
    files: PodFiles | None
    _sources: dict[tuple[str, str], dict[str, Any] | None]

    @property
    def kubelet(self) -> Host: ...
    async def write_status(self) -> None: ...


def pod_state_dir(state_dir: str | None) -> Path:
    """Where pods' files go: `state_dir`, else a directory under the temporary one."""
    return Path(state_dir or Path(tempfile.gettempdir()) / "agones-local-pods")


async def fetch_sources(
    client: RESTClient, pod: dict[str, Any]
) -> dict[tuple[str, str], dict[str, Any] | None]:
    """The ConfigMaps and Secrets the pod's volumes and env name (None: not found)."""
    resources = {"secret": SECRETS, "configMap": CONFIG_MAPS}
    namespace = pod["metadata"]["namespace"]
    wanted = volumes.referenced_sources(pod) | envvars.referenced_sources(pod)
    sources: dict[tuple[str, str], dict[str, Any] | None] = {}
    for kind, name in sorted(wanted):
        try:
            sources[(kind, name)] = await client.get(resources[kind], name, namespace=namespace)
        except ApiError as err:
            if err.status_code not in (400, 404):
                raise
            sources[(kind, name)] = None
    return sources


async def prepare_files(runner: Runner) -> PodFiles | None:
    """The pod's volume and service-account files, once its volumes can be set up (its
    containers wait as ContainerCreating meanwhile); None when the pod is deleted first."""
    config = runner.kubelet.config
    reported = False
    while not runner.terminating:
        runner._sources = await fetch_sources(runner.kubelet.client, runner.pod)
        try:
            claims = await resolve_claims(
                lambda res, name, ns: runner.kubelet.client.get(res, name, namespace=ns),
                runner.pod["metadata"]["namespace"],
                runner.pod,
            )
            return PodFiles.prepare(
                runner.pod,
                pod_state_dir(config.state_dir),
                runner._sources,
                config.in_cluster,
                PodAddresses(runner.pod_ip, runner.node_ip),
                claims,
            )
        except VolumeError as err:
            log.info("waiting for volume", pod=runner.name, error=str(err))
            if not reported:
                reported = True
                await runner.write_status()
            if await pause(runner, 1.0):
                return None
    return None


async def sync_volumes(runner: Runner) -> None:
    """Rewrite the pod's projected volumes when their sources change (see the docstring)."""
    config = runner.kubelet.config
    while not runner.terminating and runner.files is not None:
        if await pause(runner, config.volume_sync_period):
            return
        try:
            runner._sources = await fetch_sources(runner.kubelet.client, runner.pod)
            changed = runner.files.refresh(
                runner.pod,
                runner._sources,
                config.in_cluster,
                PodAddresses(runner.pod_ip, runner.node_ip),
            )
        except (VolumeError, ApiError, OSError) as err:
            log.info("volume sync failed", pod=runner.name, error=str(err))
            continue
        if changed:
            log.info("volumes updated", pod=runner.name, volumes=changed)
