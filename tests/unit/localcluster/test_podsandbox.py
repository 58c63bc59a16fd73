"""The pod sandbox files by tables: hostname and domain, the managed hosts file, resolv.conf per
dnsPolicy and dnsConfig; and the order of a container's bind mounts."""

from __future__ import annotations

from typing import Any

import pytest

from agones.localcluster.nodes.mounts import Mount, MountPoints, ordered
from agones.localcluster.nodes.podsandbox import (
    managed_hosts,
    parse_resolv_conf,
    pod_hostname,
    resolv_conf,
)

HOST = "nameserver 10.0.0.2\nsearch corp.example\noptions timeout:2\n"


def _pod(spec: dict[str, Any], name: str = "web-0", ns: str = "games") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": ns}, "spec": spec}


@pytest.mark.parametrize(
    ("spec", "name", "expected"),
    [
        pytest.param({}, "web-0", ("web-0", "", "web-0"), id="pod-name"),
        pytest.param({"hostname": "db"}, "web-0", ("db", "", "db"), id="spec-hostname"),
        pytest.param(
            {"hostname": "db", "subdomain": "dbs"},
            "web-0",
            ("db", "dbs.games.svc.cluster.local", "db"),
            id="subdomain",
        ),
        pytest.param(
            {"subdomain": "dbs", "setHostnameAsFQDN": True},
            "web-0",
            ("web-0", "dbs.games.svc.cluster.local", "web-0.dbs.games.svc.cluster.local"),
            id="fqdn",
        ),
        pytest.param({}, "a" * 62 + "-b", ("a" * 62, "", "a" * 62), id="cut-at-63"),
    ],
)
def test_pod_hostname(spec: dict[str, Any], name: str, expected: tuple[str, str, str]) -> None:
    got = pod_hostname(_pod(spec, name))
    assert (got.hostname, got.domain, got.uts) == expected


def test_managed_hosts_file_with_aliases() -> None:
    names = pod_hostname(_pod({"hostname": "db", "subdomain": "dbs"}))
    text = managed_hosts("127.254.0.9", names, [{"ip": "10.1.2.3", "hostnames": ["a", "b"]}])
    assert text.splitlines() == [
        "# Kubernetes-managed hosts file.",
        "127.0.0.1\tlocalhost",
        "::1\tlocalhost ip6-localhost ip6-loopback",
        "fe00::0\tip6-localnet",
        "fe00::0\tip6-mcastprefix",
        "fe00::1\tip6-allnodes",
        "fe00::2\tip6-allrouters",
        "127.254.0.9\tdb.dbs.games.svc.cluster.local\tdb",
        "",
        "# Entries added by HostAliases.",
        "10.1.2.3\ta\tb",
    ]


CLUSTER = "search games.svc.cluster.local svc.cluster.local cluster.local corp.example\n"


@pytest.mark.parametrize(
    ("spec", "dns", "expected"),
    [
        pytest.param(
            {}, "127.0.0.53", CLUSTER + "nameserver 127.0.0.53\noptions ndots:5\n", id="default"
        ),
        pytest.param(
            {},
            None,
            "search corp.example\nnameserver 10.0.0.2\noptions timeout:2\n",
            id="no-cluster-dns",
        ),
        pytest.param(
            {"dnsPolicy": "Default"},
            "127.0.0.53",
            "search corp.example\nnameserver 10.0.0.2\noptions timeout:2\n",
            id="Default",
        ),
        pytest.param(
            {"dnsPolicy": "ClusterFirst", "hostNetwork": True},
            "127.0.0.53",
            "search corp.example\nnameserver 10.0.0.2\noptions timeout:2\n",
            id="host-network",
        ),
        pytest.param(
            {"dnsPolicy": "ClusterFirstWithHostNet", "hostNetwork": True},
            "127.0.0.53",
            CLUSTER + "nameserver 127.0.0.53\noptions ndots:5\n",
            id="with-host-net",
        ),
        pytest.param(
            {
                "dnsPolicy": "None",
                "dnsConfig": {
                    "nameservers": ["1.1.1.1"],
                    "searches": ["x.y"],
                    "options": [{"name": "ndots", "value": "2"}, {"name": "edns0"}],
                },
            },
            "127.0.0.53",
            "search x.y\nnameserver 1.1.1.1\noptions ndots:2 edns0\n",
            id="None",
        ),
        pytest.param(
            {"dnsConfig": {"options": [{"name": "ndots", "value": "1"}]}},
            "127.0.0.53",
            CLUSTER + "nameserver 127.0.0.53\noptions ndots:1\n",
            id="dnsConfig-overrides-option",
        ),
    ],
)
def test_resolv_conf(spec: dict[str, Any], dns: str | None, expected: str) -> None:
    assert resolv_conf(_pod(spec), dns, HOST) == expected


def test_parse_resolv_conf_ignores_comments() -> None:
    conf = parse_resolv_conf("# x\nnameserver 1.2.3.4 # y\ndomain a\n")
    assert (conf.nameservers, conf.searches) == (["1.2.3.4"], ["a"])


def test_mounts_parent_first() -> None:
    mounts = [Mount("s1", "/a/b/c"), Mount("s2", "/a"), Mount("s3", "/a/b")]
    assert [m.target for m in ordered(mounts)] == ["/a", "/a/b", "/a/b/c"]


def test_mount_points_are_created_and_removed_with_their_last_user(tmp_path: Any) -> None:
    points = MountPoints()
    target = tmp_path / "x" / "y"
    points.ensure(str(target), False, "pod-1")
    points.ensure(str(target), False, "pod-2")
    assert target.is_dir()
    points.release("pod-1")
    assert target.is_dir()
    points.release("pod-2")
    assert not (tmp_path / "x").exists()
    existing = tmp_path / "kept"
    existing.mkdir()
    points.ensure(str(existing / "f"), True, "pod-3")
    assert (existing / "f").is_file()
    points.release("pod-3")
    assert existing.is_dir() and not (existing / "f").exists()
