"""A pod's `persistentVolumeClaim` volumes, resolved to the directories that back them.

`claim_names(pod)` lists the claims a pod's volumes name (volume name → claim name).
`claim_directory(claim, volume)` is the directory of a bound claim's PersistentVolume (`hostPath`
or `local` path); a claim that is missing, not yet `Bound`, or bound to a volume of another kind
raises `volumes.VolumeError`, so the kubelet waits and retries as it does for a missing ConfigMap
(on Kubernetes the pod stays ContainerCreating until its volumes mount).
`resolve_claims(get, namespace, pod)` does both with `get(resource, name, namespace)` reading the
API server, giving `PodFiles.prepare` its `claims` (volume name → directory): the pod's mount of
that volume IS the directory, so what a container writes there outlives the pod.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ...client.errors import ApiError
from ...client.rest import Resource
from ...client.versioned.resources import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES
from .volumes import VolumeError

Obj = dict[str, Any]
Getter = Callable[[Resource, str, str | None], Awaitable[Obj]]


def claim_names(pod: Obj) -> dict[str, str]:
    out = {}
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        source = volume.get("persistentVolumeClaim")
        if isinstance(source, dict) and source.get("claimName"):
            out[str(volume["name"])] = str(source["claimName"])
    return out


def claim_directory(claim: Obj | None, volume: Obj | None, claim_name: str = "") -> Path:
    """The directory behind a bound claim (see the module docstring)."""
    if claim is None:
        raise VolumeError(f'persistentvolumeclaim "{claim_name}" not found')
    name = claim["metadata"]["name"]
    if (claim.get("status") or {}).get("phase") != "Bound" or volume is None:
        raise VolumeError(f'persistentvolumeclaim "{name}" is not bound')
    spec = volume.get("spec") or {}
    for kind in ("hostPath", "local"):
        path = (spec.get(kind) or {}).get("path")
        if path:
            return Path(path)
    raise VolumeError(
        f'persistentvolume "{volume["metadata"]["name"]}" has no local path for claim "{name}"'
    )


async def _get(get: Getter, res: Resource, name: str, namespace: str | None) -> Obj | None:
    try:
        return await get(res, name, namespace)
    except ApiError as err:
        if err.status_code == 404:
            return None
        raise


async def resolve_claims(get: Getter, namespace: str, pod: Obj) -> dict[str, Path]:
    """Volume name → directory for each of the pod's claims (creating the directory)."""
    out = {}
    for volume_name, claim_name in claim_names(pod).items():
        claim = await _get(get, PERSISTENT_VOLUME_CLAIMS, claim_name, namespace)
        volume_ref = ((claim or {}).get("spec") or {}).get("volumeName")
        volume = await _get(get, PERSISTENT_VOLUMES, str(volume_ref), None) if volume_ref else None
        path = claim_directory(claim, volume, claim_name)
        path.mkdir(parents=True, exist_ok=True)
        out[volume_name] = path
    return out
