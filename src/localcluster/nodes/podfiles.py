"""Files a kubelet gives a pod's processes: volumes and the in-cluster service-account files.

A cluster mounts them at each container's `volumeMounts[].mountPath`; here the processes share the
host's filesystem (no mount namespace is made), so the documented FALLBACK is used throughout:
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

Obj = dict[str, Any]


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

    @classmethod
    def prepare(
        cls,
        pod: Obj,
        base: Path,
        sources: dict[tuple[str, str], Obj | None],
        in_cluster: InCluster | None,
    ) -> PodFiles:
        md = pod["metadata"]
        root = base / f"{md['namespace']}_{md['name']}_{md.get('uid', '')}"
        files = cls(root)
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

    def rewrite(self, text: str, mounts: dict[str, Path]) -> str:
        for mount_path in sorted(mounts, key=len, reverse=True):
            pattern = re.escape(mount_path) + r"(?=/|$|[^\w.\-])"
            local = str(mounts[mount_path]).rstrip("/")
            text = re.sub(r"(?<![\w.\-/])" + pattern, local.replace("\\", "\\\\"), text)
        return text

    def container_argv(self, container: Obj, argv: list[str]) -> list[str]:
        mounts = self.mounts(container)
        return [self.rewrite(a, mounts) for a in argv]

    def container_env(self, container: Obj, env: dict[str, str]) -> dict[str, str]:
        mounts = self.mounts(container)
        out = {k: self.rewrite(v, mounts) for k, v in env.items()}
        if self.in_cluster is not None and self.service_account is not None:
            out.setdefault("KUBERNETES_SERVICE_HOST", self.in_cluster.host)
            out.setdefault("KUBERNETES_SERVICE_PORT", str(self.in_cluster.port))
            out.setdefault("KUBERNETES_SERVICE_PORT_HTTPS", str(self.in_cluster.port))
            out[SERVICE_ACCOUNT_DIR_ENV] = str(self.service_account)
        return out

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
