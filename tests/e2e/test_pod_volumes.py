"""Process pods read their volumes and env as on Kubernetes: a ConfigMap file, a `binaryData`
archive the container unpacks, a Secret and downward-API values at their mount paths; a ConfigMap
update reaches the mounted file (not a subPath mount); env from ConfigMaps, Secrets and the
downward API; a missing reference waits with CreateContainerConfigError and starts once it
exists."""

from __future__ import annotations

import base64
import io
import tarfile
from typing import Any

import pytest

from agones.localcluster.nodes.mounts import mountns_supported
from tests.e2e.framework import Framework
from tests.e2e.podspec import create, pod, python, statuses, wait_log

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.timeout(120),
    pytest.mark.skipif(not mountns_supported(), reason="needs mount namespaces (root)"),
]


def _archive() -> str:
    """A tar.gz of a config directory, base64 as binaryData holds it."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in (("zone/world.ini", "seed=42\n"), ("zone/rates.ini", "xp=2\n")):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return base64.b64encode(buf.getvalue()).decode()


READER = """
import os, tarfile, time
print("motd:", open("/etc/zone/motd").read().strip())
print("pinned:", open("/etc/motd-pinned").read().strip())
print("mode:", oct(os.stat("/etc/zone/motd").st_mode & 0o777))
os.makedirs("/tmp/unpacked", exist_ok=True)
with tarfile.open("/etc/zone-archive/config.tar.gz") as tar:
    tar.extractall("/tmp/unpacked", filter="data")
print("seed:", open("/tmp/unpacked/zone/world.ini").read().strip())
print("token:", open("/var/run/zone-secret/token").read())
print("labels:", open("/etc/podinfo/labels").read())
print("name:", open("/etc/podinfo/name").read())
print("cpu:", open("/etc/podinfo/cpu").read())
print("projected:", sorted(n for n in os.listdir("/etc/projected") if not n.startswith("..")))
print("env:", os.environ["ZONE_MOTD"], os.environ["ZONE_TOKEN"], os.environ["POD_NAME"],
      os.environ["MEM_MI"], os.environ["CFG_motd"], os.environ["GREETING"])
print("ready", flush=True)
seen = ""
while True:
    now = open("/etc/zone/motd").read().strip()
    if now != seen:
        seen = now
        print("now:", now, "pinned:", open("/etc/motd-pinned").read().strip(), flush=True)
    time.sleep(0.2)
"""


def _sources(framework: Framework) -> None:
    create(
        framework,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "zone-config"},
            "data": {"motd": "welcome"},
            "binaryData": {"config.tar.gz": _archive()},
        },
    )
    create(
        framework,
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "zone-secret"},
            "data": {"token": base64.b64encode(b"hunter2").decode()},
        },
    )


def _spec() -> dict[str, Any]:
    """The reader's pod spec: one container with env from every source, mounting `_volumes()`."""
    return {
        "containers": [
            {
                "name": "zone",
                "image": "local",
                "command": python(READER),
                "resources": {"limits": {"memory": "64Mi", "cpu": "250m"}},
                "env": _env(),
                "envFrom": [{"prefix": "CFG_", "configMapRef": {"name": "zone-config"}}],
                "volumeMounts": [
                    {"name": "config", "mountPath": "/etc/zone"},
                    {"name": "config", "mountPath": "/etc/motd-pinned", "subPath": "motd"},
                    {"name": "archive", "mountPath": "/etc/zone-archive"},
                    {"name": "secret", "mountPath": "/var/run/zone-secret"},
                    {"name": "podinfo", "mountPath": "/etc/podinfo"},
                    {"name": "projected", "mountPath": "/etc/projected"},
                ],
            }
        ],
        "volumes": _volumes(),
    }


def _env() -> list[dict[str, Any]]:
    """Env from a ConfigMap key, a Secret key, an optional absent Secret, the downward API (a
    field, a resource) and a value referring to another variable."""
    return [
        {
            "name": "ZONE_MOTD",
            "valueFrom": {"configMapKeyRef": {"name": "zone-config", "key": "motd"}},
        },
        {
            "name": "ZONE_TOKEN",
            "valueFrom": {"secretKeyRef": {"name": "zone-secret", "key": "token"}},
        },
        {
            "name": "ABSENT",
            "valueFrom": {"secretKeyRef": {"name": "nope", "key": "x", "optional": True}},
        },
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {
            "name": "MEM_MI",
            "valueFrom": {"resourceFieldRef": {"resource": "limits.memory", "divisor": "1Mi"}},
        },
        {"name": "GREETING", "value": "hello $(POD_NAME)"},
    ]


def _volumes() -> list[dict[str, Any]]:
    """A ConfigMap (whole, and one item), a Secret, downward-API files and a projected volume."""
    return [
        {"name": "config", "configMap": {"name": "zone-config", "defaultMode": 0o440}},
        {
            "name": "archive",
            "configMap": {
                "name": "zone-config",
                "items": [{"key": "config.tar.gz", "path": "config.tar.gz"}],
            },
        },
        {"name": "secret", "secret": {"secretName": "zone-secret"}},
        {
            "name": "podinfo",
            "downwardAPI": {
                "items": [
                    {"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}},
                    {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}},
                    {
                        "path": "cpu",
                        "resourceFieldRef": {
                            "containerName": "zone",
                            "resource": "limits.cpu",
                            "divisor": "1m",
                        },
                    },
                ]
            },
        },
        {
            "name": "projected",
            "projected": {
                "sources": [
                    {
                        "configMap": {
                            "name": "zone-config",
                            "items": [{"key": "motd", "path": "m"}],
                        }
                    },
                    {"secret": {"name": "zone-secret"}},
                    {
                        "downwardAPI": {
                            "items": [
                                {"path": "ns", "fieldRef": {"fieldPath": "metadata.namespace"}}
                            ]
                        }
                    },
                    {"serviceAccountToken": {"path": "sa-token"}},
                ]
            },
        },
    ]


def test_process_pod_reads_its_volumes_and_env_and_sees_a_config_map_update(
    framework: Framework, local_stack: Any
) -> None:
    _sources(framework)
    obj = pod(_spec(), "zone")
    obj["metadata"]["labels"] = {"app": "zone", "tier": "game"}
    name = create(framework, obj)
    out = wait_log(framework, name, "zone", "ready")
    assert "motd: welcome\n" in out
    assert "pinned: welcome\n" in out
    assert "mode: 0o440\n" in out
    assert "seed: seed=42\n" in out
    assert "token: hunter2\n" in out
    assert 'labels: app="zone"\ntier="game"\n' in out
    assert f"name: {name}\n" in out
    assert "cpu: 250\n" in out
    assert "projected: ['m', 'ns', 'sa-token', 'token']\n" in out
    assert f"env: welcome hunter2 {name} 64 welcome hello {name}\n" in out

    resp = framework.api.patch(
        f"/api/v1/namespaces/{framework.namespace}/configmaps/zone-config",
        {"data": {"motd": "maintenance at noon"}},
    )
    assert resp.status == 200, resp
    # the directory mount follows the update; the subPath mount keeps the file it resolved to
    out = wait_log(framework, name, "zone", "now: maintenance at noon", timeout=60)
    assert "now: maintenance at noon pinned: welcome\n" in out


def test_missing_config_map_key_waits_with_create_container_config_error(
    framework: Framework, local_stack: Any
) -> None:
    spec = {
        "containers": [
            {
                "name": "main",
                "image": "local",
                "command": python(
                    "import os; print('level', os.environ['LEVEL']); import time; time.sleep(600)"
                ),
                "env": [
                    {
                        "name": "LEVEL",
                        "valueFrom": {"configMapKeyRef": {"name": "late-config", "key": "level"}},
                    }
                ],
            }
        ]
    }
    name = create(framework, pod(spec, "late"))
    waiting = framework.wait(
        "CreateContainerConfigError",
        lambda: next(
            (
                w
                for s in statuses(framework, name)
                if (w := (s.get("state") or {}).get("waiting"))
                and w.get("reason") == "CreateContainerConfigError"
            ),
            None,
        ),
        30,
    )
    assert waiting["message"] == 'configmap "late-config" not found'
    create(
        framework,
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "late-config"},
            "data": {"other": "x"},
        },
    )
    ns = framework.namespace
    framework.wait(
        "missing key message",
        lambda: any(
            ((s.get("state") or {}).get("waiting") or {}).get("message")
            == f"couldn't find key level in ConfigMap {ns}/late-config"
            for s in statuses(framework, name)
        ),
        30,
    )
    resp = framework.api.patch(
        f"/api/v1/namespaces/{ns}/configmaps/late-config", {"data": {"level": "7"}}
    )
    assert resp.status == 200, resp
    wait_log(framework, name, "main", "level 7", timeout=60)


def test_label_change_reaches_a_downward_api_volume(framework: Framework, local_stack: Any) -> None:
    code = (
        "import time\nseen = None\nwhile True:\n"
        "    now = open('/etc/podinfo/labels').read()\n"
        "    if now != seen:\n        seen = now\n        print('labels:', repr(now), flush=True)\n"
        "    time.sleep(0.2)"
    )
    spec = {
        "containers": [
            {
                "name": "main",
                "image": "local",
                "command": python(code),
                "volumeMounts": [{"name": "podinfo", "mountPath": "/etc/podinfo"}],
            }
        ],
        "volumes": [
            {
                "name": "podinfo",
                "downwardAPI": {
                    "items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]
                },
            }
        ],
    }
    obj = pod(spec, "labels")
    obj["metadata"]["labels"] = {"zone": "1"}
    name = create(framework, obj)
    wait_log(framework, name, "main", "labels: 'zone=\"1\"'")
    resp = framework.api.patch(
        f"/api/v1/namespaces/{framework.namespace}/pods/{name}",
        {"metadata": {"labels": {"zone": "2"}}},
    )
    assert resp.status == 200, resp
    wait_log(framework, name, "main", "labels: 'zone=\"2\"'", timeout=60)
