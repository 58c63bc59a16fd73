"""A process pod's sandbox on the local cluster: its own mount, UTS and PID namespaces, its volumes
at their mountPath (not rewritten: the program opens the real path), the kubelet's managed
/etc/hosts, /etc/resolv.conf per dnsPolicy, and the hostname Kubernetes gives it."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from agones.localcluster.nodes.mounts import mountns_supported
from tests.e2e.framework import Framework
from tests.e2e.podspec import create, pod, python, wait_log

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.timeout(120),
    pytest.mark.skipif(not mountns_supported(), reason="needs mount namespaces (root)"),
]

REPORT = """
import os, socket
print("pid", os.getpid())
print("hostname", socket.gethostname())
for path in ("/etc/hosts", "/etc/resolv.conf", "/etc/podspec-test/game.cfg", "/etc/podspec-secret/token"):
    print("==", path)
    print(open(path).read())
try:
    open("/etc/podspec-test/new", "w")
except OSError as err:
    print("write refused", err.errno)
print("done")
import time; time.sleep(600)
"""


def _config_and_secret(framework: Framework) -> tuple[str, str]:
    cm = create(
        framework,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "sandbox-cfg"},
            "data": {"game.cfg": "max_players=16\n"},
        },
    )
    secret = create(
        framework,
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "sandbox-secret"},
            "data": {"token": base64.b64encode(b"s3cr3t").decode()},
        },
    )
    return cm, secret


def test_volumes_hosts_resolv_and_hostname_inside_the_pod(
    framework: Framework, local_stack: Any
) -> None:
    cm, secret = _config_and_secret(framework)
    spec = {
        "hostname": "zone-1",
        "subdomain": "zones",
        "containers": [
            {
                "name": "main",
                "image": "local",
                "command": python(REPORT),
                "volumeMounts": [
                    {"name": "cfg", "mountPath": "/etc/podspec-test"},
                    {"name": "secret", "mountPath": "/etc/podspec-secret"},
                ],
            }
        ],
        "volumes": [
            {"name": "cfg", "configMap": {"name": cm}},
            {"name": "secret", "secret": {"secretName": secret}},
        ],
    }
    name = create(framework, pod(spec))
    out = wait_log(framework, name, "main", "done")
    ns = framework.namespace
    assert "pid 1\n" in out
    assert "hostname zone-1\n" in out
    assert "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n" in out
    assert f"\tzone-1.zones.{ns}.svc.cluster.local\tzone-1\n" in out
    assert "max_players=16\n" in out
    assert "s3cr3t" in out
    assert "write refused 30" in out  # EROFS: configMap volumes are read-only


def test_cluster_first_resolv_conf_names_the_cluster_dns_server(
    framework: Framework, local_stack: Any
) -> None:
    config = local_stack.stack.kubelet.config
    saved, config.dns_server = config.dns_server, "127.0.0.53"
    try:
        code = "print(open('/etc/resolv.conf').read()); print('done'); import time; time.sleep(600)"
        spec = {"containers": [{"name": "main", "image": "local", "command": python(code)}]}
        name = create(framework, pod(spec))
        out = wait_log(framework, name, "main", "done")
    finally:
        config.dns_server = saved
    ns = framework.namespace
    assert (
        f"search {ns}.svc.cluster.local svc.cluster.local cluster.local\n"
        "nameserver 127.0.0.53\noptions ndots:5\n"
    ) in out
