"""Files a kubelet gives a pod's processes: volumes and the in-cluster service-account files.

`PodFiles.prepare(pod, ...)` writes every projected volume (`volumes.volume_payload`: configMap,
secret, downwardAPI, projected) with `volumes.AtomicWriter` into a directory of the pod's own,
`<root>/<namespace>_<pod>_<uid>/volumes/<volume>/` (emptyDir: an empty one; hostPath: the host
path itself); `refresh(pod, sources)` rewrites them when a ConfigMap or Secret changed, as the
kubelet's periodic volume sync does.

With mount namespaces (`in_mount_namespace`, see `mounts`) `container_mounts(container)` lists the
bind mounts that put them at each container's `volumeMounts[].mountPath` (and the service account
at `/var/run/secrets/kubernetes.io/serviceaccount`), read-only for secret, configMap, downwardAPI
and projected volumes and for `readOnly` mounts, and nothing is rewritten. Without them (the OS
refuses a mount namespace) the processes share the host's filesystem and the documented FALLBACK
is used: `container_env(container, env)` / `rewrite(text)` substitute the container's mountPaths
by those directories wherever they appear in its `args`, `command` and env values (a mountPath is
replaced where it is a whole path or a path's prefix: `/certs` in `--cert=/certs/tls.crt`, not
in `/certs2`).

In-cluster config (unless `automountServiceAccountToken: false`): `token` (a token the local API
server accepts), `ca.crt` (the CA of its HTTPS port) and `namespace` are written to
`<pod dir>/serviceaccount/`, standing for `/var/run/secrets/kubernetes.io/serviceaccount`, (in the
fallback rewritten the same way and named by `AGONES_SERVICE_ACCOUNT_DIR`, read by
`agones.client.config.in_cluster_config`); `KUBERNETES_SERVICE_HOST`/`_PORT` point at the API
server's HTTPS port as the pod reaches it. A volume that cannot be set up (a secret or configMap
that does not exist and is not `optional`, a missing key, a bad path) raises
`volumes.VolumeError`: the kubelet retries, the containers wait, as on a cluster.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...client.config import SERVICE_ACCOUNT_DIR, SERVICE_ACCOUNT_DIR_ENV
from .envvars import PodAddresses
from .mounts import Mount
from .volumes import AtomicWriter, volume_payload

Obj = dict[str, Any]


READ_ONLY_KINDS = ("secret", "configMap", "downwardAPI", "projected")


@dataclass(frozen=True)
class InCluster:
    """How a pod reaches the API server over HTTPS."""

    host: str
    port: int
    ca_pem: bytes
    token: str


@dataclass
class PodFiles:
    root: Path
    volumes: dict[str, Path] = field(default_factory=dict)
    in_cluster: InCluster | None = None
    service_account: Path | None = None
    in_mount_namespace: bool = False
    """Volumes are bind-mounted at their mountPath (no rewrite)."""
    read_only: set[str] = field(default_factory=set)
    """Volumes every mount of which is read-only (secret, configMap, downwardAPI, projected)."""

    @classmethod
    def prepare(
        cls,
        pod: Obj,
        base: Path,
        sources: dict[tuple[str, str], Obj | None],
        in_cluster: InCluster | None,
        addresses: PodAddresses | None = None,
        claims: dict[str, Path] | None = None,
    ) -> PodFiles:
        """`claims`: the directories of the pod's persistentVolumeClaim volumes, by volume name
        (`volumes_pvc.resolve_claims`), used as they are (their data outlives the pod)."""
        md = pod["metadata"]
        root = base / f"{md['namespace']}_{md['name']}_{md.get('uid', '')}"
        files = cls(root, volumes=dict(claims or {}))
        files.refresh(pod, sources, in_cluster, addresses)
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            name = str(volume.get("name") or "")
            if name in files.volumes and (volume.get("persistentVolumeClaim") or {}).get(
                "readOnly"
            ):
                files.read_only.add(name)
            if "emptyDir" in volume:
                files.volumes[name] = root / "volumes" / name
                files.volumes[name].mkdir(parents=True, exist_ok=True)
            elif isinstance(volume.get("hostPath"), dict) and volume["hostPath"].get("path"):
                files.volumes[name] = _host_path(volume["hostPath"])
        if (
            in_cluster is not None
            and (pod.get("spec") or {}).get("automountServiceAccountToken", True) is not False
        ):
            sa = root / "serviceaccount"
            sa.mkdir(parents=True, exist_ok=True)
            (sa / "token").write_text(in_cluster.token)
            (sa / "ca.crt").write_bytes(in_cluster.ca_pem)
            (sa / "namespace").write_text(md["namespace"])
            files.in_cluster, files.service_account = in_cluster, sa
        return files

    def refresh(
        self,
        pod: Obj,
        sources: dict[tuple[str, str], Obj | None],
        in_cluster: InCluster | None,
        addresses: PodAddresses | None = None,
    ) -> list[str]:
        """(Re)write the projected volumes from `sources`; the names of those that changed.
        `VolumeError` (nothing written for that volume) when one cannot be set up."""
        addresses = addresses or PodAddresses("", "")
        token = in_cluster.token if in_cluster is not None else None
        changed = []
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            payload = volume_payload(volume, pod, sources, addresses, token)
            if payload is None:
                continue
            name = str(volume.get("name") or "")
            where = self.root / "volumes" / name
            if AtomicWriter(where).write(payload):
                changed.append(name)
            self.volumes[name] = where
            if any(kind in volume for kind in READ_ONLY_KINDS):
                self.read_only.add(name)
        return changed

    def mounts(self, container: Obj) -> dict[str, Path]:
        """mountPath → local directory (or file, with subPath) for one container."""
        out: dict[str, Path] = {}
        for mount in container.get("volumeMounts") or []:
            local = self.volumes.get(str(mount.get("name", "")))
            if local is not None and mount.get("mountPath"):
                out[str(mount["mountPath"]).rstrip("/") or "/"] = local / str(
                    mount.get("subPath") or ""
                )
        if self.service_account is not None:
            out.setdefault(str(SERVICE_ACCOUNT_DIR), self.service_account)
        return out

    def container_mounts(self, container: Obj) -> list[Mount]:
        """The bind mounts of one container (mount namespaces): its volumes, then the service
        account unless the container mounts something at its path."""
        out: list[Mount] = []
        for mount in container.get("volumeMounts") or []:
            name = str(mount.get("name", ""))
            local = self.volumes.get(name)
            if local is None or not mount.get("mountPath"):
                continue
            source = local
            if mount.get("subPath"):
                # a subPath pins today's file (it never updates); a missing one is made a directory
                source = (local / str(mount["subPath"])).resolve()
                if not source.is_relative_to(local.resolve()):
                    continue
                if not source.exists():
                    source.mkdir(parents=True, exist_ok=True)
            read_only = bool(mount.get("readOnly")) or name in self.read_only
            out.append(Mount(str(source), str(mount["mountPath"]), read_only))
        targets = {m.target.rstrip("/") for m in out}
        if self.service_account is not None and str(SERVICE_ACCOUNT_DIR) not in targets:
            out.append(Mount(str(self.service_account), str(SERVICE_ACCOUNT_DIR), True))
        return out

    def rewrite(self, text: str, mounts: dict[str, Path]) -> str:
        for mount_path in sorted(mounts, key=len, reverse=True):
            pattern = re.escape(mount_path) + r"(?=/|$|[^\w.\-])"
            local = str(mounts[mount_path]).rstrip("/")
            text = re.sub(r"(?<![\w.\-/])" + pattern, local.replace("\\", "\\\\"), text)
        return text

    def container_argv(self, container: Obj, argv: list[str]) -> list[str]:
        if self.in_mount_namespace:
            return argv
        mounts = self.mounts(container)
        return [self.rewrite(a, mounts) for a in argv]

    def container_env(self, container: Obj, env: dict[str, str]) -> dict[str, str]:
        mounts = self.mounts(container)
        if self.in_mount_namespace:
            out = dict(env)
        else:
            out = {k: self.rewrite(v, mounts) for k, v in env.items()}
        if self.in_cluster is not None and self.service_account is not None:
            out.setdefault("KUBERNETES_SERVICE_HOST", self.in_cluster.host)
            out.setdefault("KUBERNETES_SERVICE_PORT", str(self.in_cluster.port))
            out.setdefault("KUBERNETES_SERVICE_PORT_HTTPS", str(self.in_cluster.port))
            if not self.in_mount_namespace:
                out[SERVICE_ACCOUNT_DIR_ENV] = str(self.service_account)
        return out

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _host_path(spec: Obj) -> Path:
    """A hostPath volume's directory (made for `DirectoryOrCreate`, a file for `FileOrCreate`)."""
    path = Path(str(spec["path"]))
    kind = spec.get("type") or ""
    if kind == "DirectoryOrCreate":
        path.mkdir(parents=True, exist_ok=True)
    elif kind == "FileOrCreate" and not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    return path
