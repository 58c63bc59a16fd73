"""Files a kubelet gives a pod's processes: volumes and the in-cluster service-account files.

`PodFiles.prepare(pod, ...)` writes them under the pod's directory. With mount namespaces
(`in_mount_namespace`, see `mounts`) `container_mounts(container)` lists the bind mounts that put
them at each container's `volumeMounts[].mountPath` (and the service account at
`/var/run/secrets/kubernetes.io/serviceaccount`), read-only for secret, configMap, downwardAPI and
projected volumes and for `readOnly` mounts, and nothing is rewritten. Without them (the OS refuses
a mount namespace) the processes share the host's filesystem and the documented FALLBACK is used:
`PodFiles.prepare(pod, ...)` writes each volume into a directory of the pod's own,
`<root>/<namespace>_<pod>_<uid>/volumes/<volume>/` (secret and configMap volumes: one file per key,
or per `items[]` path, mode `defaultMode`/`items[].mode`, 0644 by default; emptyDir: empty), and
`container_env(container, env)` / `rewrite(text)` then substitute the container's mountPaths by
those directories wherever they appear in its `args`, `command` and env values (a mountPath is
replaced where it is a whole path or a path's prefix: `/certs` in `--cert=/certs/tls.crt`, not
in `/certs2`).

In-cluster config (unless `automountServiceAccountToken: false`): `token` (a token the local API
server accepts), `ca.crt` (the CA of its HTTPS port) and `namespace` are written to
`<pod dir>/serviceaccount/`, standing for `/var/run/secrets/kubernetes.io/serviceaccount`, which
is rewritten the same way and named by `AGONES_SERVICE_ACCOUNT_DIR` (read by
`agones.client.config.in_cluster_config`); `KUBERNETES_SERVICE_HOST`/`_PORT` point at the API
server's HTTPS port as the pod reaches it. A secret or configMap that does not exist (and is not
`optional`) raises `MissingVolumeSource`: the kubelet retries, the containers wait, as on a cluster.
"""

from __future__ import annotations

import base64
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...client.config import SERVICE_ACCOUNT_DIR, SERVICE_ACCOUNT_DIR_ENV
from .mounts import Mount

Obj = dict[str, Any]


READ_ONLY_KINDS = ("secret", "configMap", "downwardAPI", "projected")


class MissingVolumeSource(Exception):
    """A volume's Secret or ConfigMap does not exist (yet)."""


@dataclass(frozen=True)
class InCluster:
    """How a pod reaches the API server over HTTPS."""

    host: str
    port: int
    ca_pem: bytes
    token: str


def volume_contents(
    volume: Obj, sources: dict[tuple[str, str], Obj | None]
) -> dict[str, tuple[bytes, int]] | None:
    """Relative path → (bytes, mode) of a secret/configMap volume, {} for emptyDir, None for kinds
    not materialised. `sources` holds the Secrets and ConfigMaps by (kind, name)."""
    if "emptyDir" in volume:
        return {}
    for kind, name_key in (("secret", "secretName"), ("configMap", "name")):
        spec = volume.get(kind)
        if not isinstance(spec, dict):
            continue
        source = sources.get((kind, str(spec.get(name_key, ""))))
        if source is None:
            if spec.get("optional"):
                return {}
            raise MissingVolumeSource(f'{kind} "{spec.get(name_key, "")}" not found')
        data = (
            {k: base64.b64decode(v) for k, v in (source.get("data") or {}).items()}
            if kind == "secret"
            else {
                **{k: str(v).encode() for k, v in (source.get("data") or {}).items()},
                **{k: base64.b64decode(v) for k, v in (source.get("binaryData") or {}).items()},
            }
        )
        mode = int(spec.get("defaultMode", 0o644))
        items = spec.get("items")
        if not items:
            return {k: (v, mode) for k, v in data.items()}
        return {
            str(item["path"]): (data[item["key"]], int(item.get("mode", mode)))
            for item in items
            if item.get("key") in data
        }
    return None


def volume_sources(pod: Obj) -> list[tuple[str, str]]:
    """(kind, name) of the Secrets and ConfigMaps a pod's volumes name."""
    out = []
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        if isinstance((volume.get("secret")), dict):
            out.append(("secret", str(volume["secret"].get("secretName", ""))))
        if isinstance(volume.get("configMap"), dict):
            out.append(("configMap", str(volume["configMap"].get("name", ""))))
    return out


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
        claims: dict[str, Path] | None = None,
    ) -> PodFiles:
        """`claims`: the directories of the pod's persistentVolumeClaim volumes, by volume name
        (`volumes_pvc.resolve_claims`), used as they are (their data outlives the pod)."""
        md = pod["metadata"]
        root = base / f"{md['namespace']}_{md['name']}_{md.get('uid', '')}"
        files = cls(root, volumes=dict(claims or {}))
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            contents = volume_contents(volume, sources)
            if contents is None:
                continue
            where = root / "volumes" / str(volume["name"])
            for rel, (data, mode) in contents.items():
                path = where / rel
                if not path.resolve().is_relative_to(where.resolve()):
                    continue  # a path escaping the volume is refused, as the kubelet does
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
                path.chmod(mode & 0o777)
            where.mkdir(parents=True, exist_ok=True)
            files.volumes[str(volume["name"])] = where
            if any(kind in volume for kind in READ_ONLY_KINDS):
                files.read_only.add(str(volume["name"]))
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
