"""The files a kubelet makes for a pod's sandbox: its hostname, `/etc/hosts` and
`/etc/resolv.conf`, as pure functions of the pod (and the cluster DNS server), plus the writer
that puts them in the pod's directory for the holder to bind-mount (`mounts`).

* `pod_hostname(pod)`: `spec.hostname`, else the pod name cut to 63 characters (trailing `-`/`.`
  dropped); the domain `<subdomain>.<namespace>.svc.cluster.local` when `spec.subdomain` is set;
  the UTS hostname is the FQDN with `setHostnameAsFQDN: true`, else the short name (the
  kubelet's `GeneratePodHostNameAndDomain`).
* `managed_hosts(...)`: the "Kubernetes-managed hosts file": localhost lines, the pod IP with
  its names, then `hostAliases`.
* `resolv_conf(pod, dns_server, host_resolv)`: `dnsPolicy` ClusterFirst (the default) gives the
  cluster DNS server, the search list `<ns>.svc.cluster.local svc.cluster.local cluster.local`
  (then the host's) and `options ndots:5`; ClusterFirst without a cluster DNS server, or on
  `hostNetwork`, falls back to Default, as the kubelet does: the host's resolv.conf; `None`
  uses `dnsConfig` alone. `dnsConfig` nameservers and searches are appended, options merged by
  name (a later value wins).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLUSTER_DOMAIN = "cluster.local"
HOSTNAME_MAX = 63


@dataclass(frozen=True)
class PodHostname:
    hostname: str
    """The short name (`spec.hostname` or the pod name)."""
    domain: str
    """`<subdomain>.<namespace>.svc.cluster.local`, or "" without a subdomain."""
    uts: str
    """What `hostname` prints in the pod."""


def pod_hostname(pod: dict[str, Any], cluster_domain: str = CLUSTER_DOMAIN) -> PodHostname:
    md, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    name = str(spec.get("hostname") or "")
    if not name:
        name = str(md.get("name") or "")[:HOSTNAME_MAX].rstrip("-.")
    subdomain = str(spec.get("subdomain") or "")
    domain = f"{subdomain}.{md.get('namespace', '')}.svc.{cluster_domain}" if subdomain else ""
    uts = f"{name}.{domain}" if domain and spec.get("setHostnameAsFQDN") else name
    return PodHostname(name, domain, uts[:64])


def managed_hosts(pod_ip: str, names: PodHostname, host_aliases: list[Any]) -> str:
    lines = [
        "# Kubernetes-managed hosts file.",
        "127.0.0.1\tlocalhost",
        "::1\tlocalhost ip6-localhost ip6-loopback",
        "fe00::0\tip6-localnet",
        "fe00::0\tip6-mcastprefix",
        "fe00::1\tip6-allnodes",
        "fe00::2\tip6-allrouters",
    ]
    if names.domain:
        lines.append(f"{pod_ip}\t{names.hostname}.{names.domain}\t{names.hostname}")
    else:
        lines.append(f"{pod_ip}\t{names.hostname}")
    aliases = [a for a in host_aliases if isinstance(a, dict) and a.get("ip")]
    if aliases:
        lines += ["", "# Entries added by HostAliases."]
        for alias in aliases:
            hostnames = [str(h) for h in alias.get("hostnames") or []]
            lines.append("\t".join([str(alias["ip"]), *hostnames]))
    return "\n".join(lines) + "\n"


@dataclass
class ResolvConf:
    nameservers: list[str] = field(default_factory=list)
    searches: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)

    def render(self) -> str:
        lines = []
        if self.searches:
            lines.append("search " + " ".join(self.searches))
        lines += [f"nameserver {ns}" for ns in self.nameservers]
        if self.options:
            lines.append("options " + " ".join(self.options))
        return "\n".join(lines) + "\n"


def parse_resolv_conf(text: str) -> ResolvConf:
    out = ResolvConf()
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "nameserver" and len(words) > 1:
            out.nameservers.append(words[1])
        elif words[0] in ("search", "domain"):
            out.searches = words[1:]
        elif words[0] == "options":
            out.options += words[1:]
    return out


def _merge_options(options: list[str], extra: list[Any]) -> list[str]:
    merged: dict[str, str] = {}
    for opt in options:
        merged[opt.split(":", 1)[0]] = opt
    for opt in extra:
        if not isinstance(opt, dict) or not opt.get("name"):
            continue
        value = opt.get("value")
        name = str(opt["name"])
        merged[name] = f"{name}:{value}" if value not in (None, "") else name
    return list(merged.values())


def resolv_conf(
    pod: dict[str, Any],
    dns_server: str | None,
    host_resolv: str,
    cluster_domain: str = CLUSTER_DOMAIN,
) -> str:
    spec = pod.get("spec") or {}
    namespace = str((pod.get("metadata") or {}).get("namespace") or "default")
    policy = spec.get("dnsPolicy") or "ClusterFirst"
    host = parse_resolv_conf(host_resolv)
    cluster_first = policy == "ClusterFirstWithHostNet" or (
        policy == "ClusterFirst" and not spec.get("hostNetwork")
    )
    if policy == "None":
        conf = ResolvConf()
    elif cluster_first and dns_server:
        conf = ResolvConf(
            [dns_server],
            [
                f"{namespace}.svc.{cluster_domain}",
                f"svc.{cluster_domain}",
                cluster_domain,
                *host.searches,
            ],
            ["ndots:5"],
        )
    else:
        conf = host
    extra = spec.get("dnsConfig") or {}
    if isinstance(extra, dict):
        conf.nameservers += [str(n) for n in extra.get("nameservers") or []]
        conf.searches += [str(s) for s in extra.get("searches") or []]
        conf.options = _merge_options(conf.options, list(extra.get("options") or []))
    return conf.render()


@dataclass(frozen=True)
class SandboxFiles:
    """The pod's sandbox files on the host, and where the holder binds them."""

    hostname: str
    binds: list[tuple[str, str]]
    """(host file, path in the pod): hosts, resolv.conf, hostname."""


def write_sandbox_files(
    root: Path, pod: dict[str, Any], pod_ip: str, dns_server: str | None
) -> SandboxFiles:
    """Write `etc-hosts`, `resolv.conf` and `hostname` under `root` (the pod's directory)."""
    names = pod_hostname(pod)
    root.mkdir(parents=True, exist_ok=True)
    try:
        host_resolv = Path("/etc/resolv.conf").read_text()
    except OSError:
        host_resolv = ""
    contents = {
        "etc-hosts": (
            "/etc/hosts",
            managed_hosts(pod_ip, names, list((pod.get("spec") or {}).get("hostAliases") or [])),
        ),
        "resolv.conf": ("/etc/resolv.conf", resolv_conf(pod, dns_server, host_resolv)),
        "hostname": ("/etc/hostname", names.uts + "\n"),
    }
    binds = []
    for file, (target, text) in contents.items():
        (root / file).write_text(text)
        (root / file).chmod(0o644)
        binds.append((str(root / file), target))
    return SandboxFiles(names.uts, binds)
