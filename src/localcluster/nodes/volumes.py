"""The contents of a pod's volumes (`volume_payload`, pure) and the kubelet's `AtomicWriter` that
puts them on disk so that a reader never sees half an update.

`volume_payload(volume, pod, sources, token)` is relative path → (bytes, mode), or None for a kind
that is not projected from the API (emptyDir and hostPath: see `podfiles`):
* `configMap` (`data` and `binaryData`) and `secret`: every key, or the `items` named
  (`path`, `mode`), files with `defaultMode` (0644 by default); a missing object or item key
  fails unless `optional`;
* `downwardAPI`: `items` with `fieldRef` (labels and annotations as `k="v"` lines) or
  `resourceFieldRef` (`containerName` required);
* `projected`: the union of its `sources` (configMap, secret, downwardAPI, serviceAccountToken
  with its `path`), `defaultMode` for all.
A path that is absolute, has a `..` element, or is given twice fails, as the kubelet refuses it.
Failures raise `VolumeError` with the kubelet's "MountVolume.SetUp failed for volume ..." text; the
kubelet retries until it succeeds.

`AtomicWriter(directory).write(payload)` lays a volume out as Kubernetes' AtomicWriter does: the
files in a timestamped `..<time>` directory, a `..data` symlink to it, and for each top-level
name a symlink `name -> ..data/name`. An update writes a new timestamped directory, swaps
`..data` by `rename` (atomic), adds and removes the top-level links, then drops the old
directory; it does nothing when the payload is unchanged. A bind mount of the volume directory
therefore shows updates; a `subPath` mount pins the file it resolved to and never updates.
"""

from __future__ import annotations

import base64
import binascii
import os
import shutil
import time
from pathlib import Path, PurePosixPath
from typing import Any

from .envvars import ContainerConfigError, PodAddresses, field_value, resource_value

Obj = dict[str, Any]
Payload = dict[str, tuple[bytes, int]]
DEFAULT_MODE = 0o644
DATA_DIR = "..data"


class VolumeError(Exception):
    """A volume cannot be set up yet (its source is missing or malformed)."""


def _check_path(path: str, payload: Payload) -> str:
    parts = PurePosixPath(path).parts
    if not path or path.startswith("/") or ".." in parts or path.startswith(".."):
        raise VolumeError(f"invalid path {path!r}: must be relative and may not contain '..'")
    if path in payload:
        raise VolumeError(f"duplicate path {path!r}")
    return path


def _mode(value: Any, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 0o777:
        raise VolumeError(f"invalid mode {value!r}: must be a number between 0 and 0777")
    return value


def _b64(value: Any) -> bytes:
    try:
        return base64.b64decode(str(value), validate=True)
    except (binascii.Error, ValueError) as err:
        raise VolumeError(f"invalid base64 data: {err}") from err


def _keyed(
    kind: str, spec: Obj, sources: dict[tuple[str, str], Obj | None], namespace: str, mode: int
) -> Payload:
    """A configMap or secret (volume or projection): its keys, or the `items` named."""
    # a secret volume names it `secretName`, a projection `name`
    name = str((spec.get("secretName") if kind == "secret" else None) or spec.get("name") or "")
    obj = sources.get((kind, name))
    optional = bool(spec.get("optional"))
    if obj is None:
        if optional:
            return {}
        raise VolumeError(f'{kind.lower()} "{name}" not found')
    if kind == "secret":
        data = {str(k): _b64(v) for k, v in (obj.get("data") or {}).items()}
    else:
        data = {str(k): str(v).encode() for k, v in (obj.get("data") or {}).items()}
        data.update({str(k): _b64(v) for k, v in (obj.get("binaryData") or {}).items()})
    items = spec.get("items")
    out: Payload = {}
    if not items:
        for key, value in data.items():
            out[_check_path(key, out)] = (value, mode)
        return out
    for item in items:
        if not isinstance(item, dict):
            raise VolumeError("invalid item: must be an object")
        key = str(item.get("key") or "")
        if key not in data:
            if optional:
                continue
            label = "configmap" if kind == "configMap" else "secret"
            raise VolumeError(f"{label} references non-existent {label} key: {key}")
        out[_check_path(str(item.get("path") or ""), out)] = (
            data[key],
            _mode(item.get("mode"), mode),
        )
    return out


def _downward(pod: Obj, items: list[Any], addresses: PodAddresses, mode: int) -> Payload:
    out: Payload = {}
    for item in items:
        if not isinstance(item, dict):
            raise VolumeError("invalid item: must be an object")
        path = _check_path(str(item.get("path") or ""), out)
        try:
            if isinstance(item.get("fieldRef"), dict):
                text = field_value(pod, str(item["fieldRef"].get("fieldPath") or ""), addresses)
            elif isinstance(item.get("resourceFieldRef"), dict):
                ref = item["resourceFieldRef"]
                if not ref.get("containerName"):
                    raise VolumeError("resourceFieldRef: containerName is required in a volume")
                text = resource_value(pod, str(ref["containerName"]), ref)
            else:
                raise VolumeError(f"item {path!r} names neither fieldRef nor resourceFieldRef")
        except ContainerConfigError as err:
            raise VolumeError(str(err)) from err
        out[path] = (text.encode(), _mode(item.get("mode"), mode))
    return out


def _projected(
    spec: Obj,
    pod: Obj,
    sources: dict[tuple[str, str], Obj | None],
    addresses: PodAddresses,
    token: str | None,
) -> Payload:
    namespace = str((pod.get("metadata") or {}).get("namespace") or "")
    mode = _mode(spec.get("defaultMode"), DEFAULT_MODE)
    out: Payload = {}
    for source in spec.get("sources") or []:
        if not isinstance(source, dict):
            raise VolumeError("invalid projected source: must be an object")
        part: Payload = {}
        if isinstance(source.get("configMap"), dict):
            part = _keyed("configMap", source["configMap"], sources, namespace, mode)
        elif isinstance(source.get("secret"), dict):
            part = _keyed("secret", source["secret"], sources, namespace, mode)
        elif isinstance(source.get("downwardAPI"), dict):
            part = _downward(pod, list(source["downwardAPI"].get("items") or []), addresses, mode)
        elif isinstance(source.get("serviceAccountToken"), dict):
            if token is None:
                raise VolumeError("serviceAccountToken: the cluster issues no tokens to pods")
            path = str(source["serviceAccountToken"].get("path") or "")
            part = {_check_path(path, {}): (token.encode(), mode)}
        for path, value in part.items():
            out[_check_path(path, out)] = value
    return out


def volume_payload(
    volume: Obj,
    pod: Obj,
    sources: dict[tuple[str, str], Obj | None],
    addresses: PodAddresses,
    token: str | None = None,
) -> Payload | None:
    """The files of one volume (see the module docstring); None when it is not projected."""
    namespace = str((pod.get("metadata") or {}).get("namespace") or "")
    name = str(volume.get("name") or "")
    try:
        for kind in ("configMap", "secret"):
            if isinstance(volume.get(kind), dict):
                spec = volume[kind]
                mode = _mode(spec.get("defaultMode"), DEFAULT_MODE)
                return _keyed(kind, spec, sources, namespace, mode)
        if isinstance(volume.get("downwardAPI"), dict):
            spec = volume["downwardAPI"]
            mode = _mode(spec.get("defaultMode"), DEFAULT_MODE)
            return _downward(pod, list(spec.get("items") or []), addresses, mode)
        if isinstance(volume.get("projected"), dict):
            return _projected(volume["projected"], pod, sources, addresses, token)
    except VolumeError as err:
        raise VolumeError(f'MountVolume.SetUp failed for volume "{name}" : {err}') from err
    return None


def referenced_sources(pod: Obj) -> set[tuple[str, str]]:
    """(kind, name) of the ConfigMaps and Secrets the pod's volumes (and projections) name."""
    out: set[tuple[str, str]] = set()
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        specs = [volume]
        projected = volume.get("projected")
        if isinstance(projected, dict):
            specs += [s for s in projected.get("sources") or [] if isinstance(s, dict)]
        for spec in specs:
            if isinstance(spec.get("configMap"), dict):
                out.add(("configMap", str(spec["configMap"].get("name") or "")))
            if isinstance(spec.get("secret"), dict):
                secret = spec["secret"]
                out.add(("secret", str(secret.get("secretName") or secret.get("name") or "")))
    return out


class AtomicWriter:
    """Writes one volume's payload under `directory` (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def current(self) -> Payload:
        """What `..data` holds now (empty before the first write)."""
        data = self.directory / DATA_DIR
        out: Payload = {}
        if not data.is_dir():
            return out
        for root, _dirs, files in os.walk(data, followlinks=True):
            for file in files:
                path = Path(root) / file
                rel = path.relative_to(data).as_posix()
                out[rel] = (path.read_bytes(), path.stat().st_mode & 0o777)
        return out

    def write(self, payload: Payload) -> bool:
        """Make the volume hold `payload`; False when it already did."""
        self.directory.mkdir(parents=True, exist_ok=True)
        data = self.directory / DATA_DIR
        if data.is_symlink() and self.current() == payload:
            return False
        stamp = time.strftime("..%Y_%m_%d_%H_%M_%S.", time.gmtime()) + f"{time.time_ns()}"
        fresh = self.directory / stamp
        fresh.mkdir()
        for rel, (content, mode) in payload.items():
            path = fresh / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
            path.chmod(mode)
        old = os.readlink(data) if data.is_symlink() else None
        tmp = self.directory / "..data_tmp"
        if tmp.is_symlink():
            tmp.unlink()
        os.symlink(stamp, tmp)
        os.rename(tmp, data)
        tops = {PurePosixPath(rel).parts[0] for rel in payload}
        for top in tops:
            link = self.directory / top
            if not link.is_symlink():
                os.symlink(f"{DATA_DIR}/{top}", link)
        for entry in self.directory.iterdir():
            if entry.is_symlink() and not entry.name.startswith("..") and entry.name not in tops:
                entry.unlink()
        if old is not None and old != stamp:
            shutil.rmtree(self.directory / old, ignore_errors=True)
        return True
