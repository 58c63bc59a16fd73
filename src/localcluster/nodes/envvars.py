"""A container's environment as the kubelet makes it (`make_environment`), pure over the pod, the
ConfigMaps and Secrets it names (`EnvSources`) and the pod's addresses.

* `envFrom` first, in order (`configMapRef`/`secretRef`, with `prefix`; keys that are not valid
  variable names are skipped, as the kubelet skips them with an event), then `env`, which wins;
* `value` with `$(VAR)` expanded from the variables defined before it (`$$` is a literal `$`, an
  unknown reference stays as written: Kubernetes' `expansion.Expand`); the same expansion is
  applied to `command` and `args` by the caller (`expand`);
* `valueFrom`: `fieldRef` (`metadata.name|namespace|uid`, `metadata.labels['k']`,
  `metadata.annotations['k']`, `spec.nodeName`, `spec.serviceAccountName`, `status.hostIP(s)`,
  `status.podIP(s)`), `resourceFieldRef` (`limits.*`/`requests.*` of cpu, memory and
  ephemeral-storage, rounded up to a multiple of `divisor`; an unset limit is the node's
  allocatable), `configMapKeyRef`, `secretKeyRef` (`optional` skips a missing object or key).

A reference that cannot be resolved raises `ContainerConfigError` with the kubelet's message
(`configmap "x" not found`, `couldn't find key k in ConfigMap ns/x`, ...): the container then
waits with reason `CreateContainerConfigError`, and the kubelet retries.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ...apis.meta.quantity import Quantity, QuantityError
from .scheduler import NODE_CAPACITY

Obj = dict[str, Any]
_ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
_MAP_FIELD = re.compile(r"metadata\.(labels|annotations)\['(.+)'\]")


class ContainerConfigError(Exception):
    """A container's configuration cannot be made (waiting reason CreateContainerConfigError)."""

    reason = "CreateContainerConfigError"


@dataclass
class EnvSources:
    """The ConfigMaps and Secrets of the pod's namespace by name (None: it does not exist)."""

    config_maps: dict[str, Obj | None] = field(default_factory=dict)
    secrets: dict[str, Obj | None] = field(default_factory=dict)

    @classmethod
    def from_pairs(cls, pairs: dict[tuple[str, str], Obj | None]) -> EnvSources:
        """From `{("configMap"|"secret", name): object}`, the kubelet's fetch result."""
        out = cls()
        for (kind, name), obj in pairs.items():
            (out.config_maps if kind == "configMap" else out.secrets)[name] = obj
        return out


@dataclass(frozen=True)
class PodAddresses:
    pod_ip: str
    host_ip: str


def expand(text: str, env: dict[str, str]) -> str:
    """Kubernetes' `$(VAR)` expansion: defined names replaced, `$$` → `$`, others kept."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] != "$" or i + 1 >= len(text):
            out.append(text[i])
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt == "(":
            end = text.find(")", i + 2)
            if end < 0:
                out.append(text[i:])
                break
            name = text[i + 2 : end]
            out.append(env[name] if name in env else text[i : end + 1])
            i = end + 1
        else:
            out.append("$" + nxt)
            i += 2
    return "".join(out)


def field_value(pod: Obj, path: str, addresses: PodAddresses) -> str:
    """The value of a downward-API `fieldPath` (ContainerConfigError for an unsupported one)."""
    md, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    simple = {
        "metadata.name": md.get("name", ""),
        "metadata.namespace": md.get("namespace", ""),
        "metadata.uid": md.get("uid", ""),
        "spec.nodeName": spec.get("nodeName", ""),
        "spec.serviceAccountName": spec.get("serviceAccountName", ""),
        "status.hostIP": addresses.host_ip,
        "status.hostIPs": addresses.host_ip,
        "status.podIP": addresses.pod_ip,
        "status.podIPs": addresses.pod_ip,
    }
    if path in simple:
        return str(simple[path])
    m = _MAP_FIELD.fullmatch(path)
    if m:
        return str((md.get(m.group(1)) or {}).get(m.group(2), ""))
    if path in ("metadata.labels", "metadata.annotations"):
        values = md.get(path.split(".")[1]) or {}
        return "\n".join(f"{k}={_go_quote(str(values[k]))}" for k in sorted(values))
    raise ContainerConfigError(f"unsupported fieldPath: {path}")


def _go_quote(text: str) -> str:
    """Go's %q for the label and annotation files of a downward-API volume."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    for char, code in (("\n", "\\n"), ("\t", "\\t"), ("\r", "\\r")):
        escaped = escaped.replace(char, code)
    return f'"{escaped}"'


def resource_value(pod: Obj, container_name: str, ref: Obj) -> str:
    """A `resourceFieldRef`'s value: the container's request or limit over `divisor`, rounded
    up (cpu in cores by default, memory and ephemeral-storage in bytes)."""
    containers = [
        *((pod.get("spec") or {}).get("initContainers") or []),
        *((pod.get("spec") or {}).get("containers") or []),
    ]
    container = next((c for c in containers if c.get("name") == container_name), None)
    if container is None:
        raise ContainerConfigError(f"container {container_name} not found")
    resource = str(ref.get("resource") or "")
    kind, _, name = resource.partition(".")
    if kind not in ("limits", "requests") or name not in ("cpu", "memory", "ephemeral-storage"):
        raise ContainerConfigError(f"unsupported container resource : {resource}")
    values = (container.get("resources") or {}).get(kind) or {}
    raw = values.get(name)
    if raw is None and kind == "limits":
        raw = NODE_CAPACITY[name]
    try:
        value = Quantity.parse(raw).value if raw is not None else Fraction(0)
        divisor = Quantity.parse(ref.get("divisor") or "1").value
    except QuantityError as err:
        raise ContainerConfigError(f"invalid quantity in resourceFieldRef: {err}") from err
    if divisor <= 0:
        raise ContainerConfigError("invalid divisor in resourceFieldRef: must be positive")
    return str(math.ceil(value / divisor))


def _decoded(secret: Obj) -> dict[str, str]:
    out = {}
    for key, value in (secret.get("data") or {}).items():
        try:
            out[str(key)] = base64.b64decode(str(value), validate=True).decode(errors="replace")
        except (binascii.Error, ValueError):
            continue
    return out


def _source(kind: str, name: str, sources: EnvSources, optional: bool) -> dict[str, str] | None:
    """The key → value map of a ConfigMap or Secret, None when it is missing and optional."""
    table = sources.config_maps if kind == "ConfigMap" else sources.secrets
    obj = table.get(name)
    if obj is None:
        if optional:
            return None
        raise ContainerConfigError(f'{kind.lower()} "{name}" not found')
    if kind == "Secret":
        return _decoded(obj)
    return {str(k): str(v) for k, v in (obj.get("data") or {}).items()}


def _env_from(container: Obj, sources: EnvSources) -> dict[str, str]:
    env: dict[str, str] = {}
    for item in container.get("envFrom") or []:
        if not isinstance(item, dict):
            continue
        for key, kind in (("configMapRef", "ConfigMap"), ("secretRef", "Secret")):
            ref = item.get(key)
            if not isinstance(ref, dict):
                continue
            values = _source(kind, str(ref.get("name") or ""), sources, bool(ref.get("optional")))
            prefix = str(item.get("prefix") or "")
            for k, v in (values or {}).items():
                if _ENV_NAME.fullmatch(prefix + k):
                    env[prefix + k] = v
    return env


def _value_from(
    container: Obj, pod: Obj, value_from: Obj, sources: EnvSources, addresses: PodAddresses
) -> str | None:
    """One `valueFrom`, or None when an optional reference is missing (the variable is unset)."""
    namespace = (pod.get("metadata") or {}).get("namespace", "")
    if isinstance(value_from.get("fieldRef"), dict):
        return field_value(pod, str(value_from["fieldRef"].get("fieldPath") or ""), addresses)
    if isinstance(value_from.get("resourceFieldRef"), dict):
        ref = value_from["resourceFieldRef"]
        return resource_value(pod, str(ref.get("containerName") or container["name"]), ref)
    for key, kind in (("configMapKeyRef", "ConfigMap"), ("secretKeyRef", "Secret")):
        ref = value_from.get(key)
        if not isinstance(ref, dict):
            continue
        name, wanted = str(ref.get("name") or ""), str(ref.get("key") or "")
        optional = bool(ref.get("optional"))
        values = _source(kind, name, sources, optional)
        if values is None:
            return None
        if wanted not in values:
            if optional:
                return None
            raise ContainerConfigError(f"couldn't find key {wanted} in {kind} {namespace}/{name}")
        return values[wanted]
    raise ContainerConfigError("valueFrom names no source")


def make_environment(
    container: Obj, pod: Obj, sources: EnvSources, addresses: PodAddresses
) -> dict[str, str]:
    """The container's environment (see the module docstring)."""
    env = _env_from(container, sources)
    for item in container.get("env") or []:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        name = item["name"]
        if isinstance(item.get("valueFrom"), dict):
            value = _value_from(container, pod, item["valueFrom"], sources, addresses)
            if value is not None:
                env[name] = value
        else:
            env[name] = expand(str(item.get("value") if item.get("value") is not None else ""), env)
    return env


def referenced_sources(pod: Obj) -> set[tuple[str, str]]:
    """(kind, name) of every ConfigMap ("configMap") and Secret ("secret") the containers' env
    and envFrom name."""
    spec = pod.get("spec") or {}
    out: set[tuple[str, str]] = set()
    for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        if not isinstance(c, dict):
            continue
        for item in c.get("envFrom") or []:
            for key, kind in (("configMapRef", "configMap"), ("secretRef", "secret")):
                ref = item.get(key) if isinstance(item, dict) else None
                if isinstance(ref, dict):
                    out.add((kind, str(ref.get("name") or "")))
        for item in c.get("env") or []:
            value_from = item.get("valueFrom") if isinstance(item, dict) else None
            if not isinstance(value_from, dict):
                continue
            for key, kind in (("configMapKeyRef", "configMap"), ("secretKeyRef", "secret")):
                ref = value_from.get(key)
                if isinstance(ref, dict):
                    out.add((kind, str(ref.get("name") or "")))
    return out
