"""kubectl against the cluster: apply, get with printer columns, patch, scale and delete a custom
resource; apply a built-in kind twice (client-side apply's strategic merge patch)."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest
import yaml

from tests.cluster import Cluster
from tests.conformance.conftest import CRD

pytestmark = pytest.mark.skipif(
    shutil.which("kubectl") is None,
    reason="kubectl is not installed (.ci/install-system-deps installs it)",
)


def _manifest(widgets: CRD, namespace: str, replicas: int) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": widgets.api_version,
            "kind": widgets.kind,
            "metadata": {"name": "kw", "namespace": namespace, "labels": {"via": "kubectl"}},
            "spec": {"replicas": replicas, "color": "green", "ports": [{"containerPort": 7654}]},
        }
    )


def test_kubectl_apply_get_patch_delete_custom_resource(
    cluster: Cluster, namespace: str, widgets: CRD, tmp_path: Path
) -> None:
    cache = str(tmp_path / "cache")
    _apply_and_get(cluster, widgets, namespace, cache)
    _reapply(cluster, widgets, namespace, cache)
    _patch_and_scale(cluster, widgets, namespace, cache)
    _refused_patch(cluster, widgets, namespace, cache)
    _list_by_category_and_delete(cluster, widgets, namespace, cache)


def _apply_and_get(cluster: Cluster, widgets: CRD, namespace: str, cache: str) -> None:
    """Apply the manifest, then read it back as a table (printer columns) and by short name."""
    out = cluster.kubectl(
        "apply", "-f", "-", stdin=_manifest(widgets, namespace, 2), cache_dir=cache
    )
    assert "created" in out.stdout

    table = cluster.kubectl(
        "get", widgets.plural, "-n", namespace, cache_dir=cache
    ).stdout.splitlines()
    assert table[0].split() == ["NAME", "REPLICAS", "COLOR", "STATE", "AGE"]
    assert table[1].split()[:3] == ["kw", "2", "green"]

    by_short = cluster.kubectl(
        "get", widgets.short, "kw", "-n", namespace, "-o", "json", cache_dir=cache
    ).stdout
    obj = json.loads(by_short)
    assert obj["spec"]["ports"] == [{"containerPort": 7654, "protocol": "UDP"}]
    assert "kubectl.kubernetes.io/last-applied-configuration" in obj["metadata"]["annotations"]


def _reapply(cluster: Cluster, widgets: CRD, namespace: str, cache: str) -> None:
    """Apply a changed manifest, then the same one again."""
    out = cluster.kubectl(
        "apply", "-f", "-", stdin=_manifest(widgets, namespace, 3), cache_dir=cache
    )
    assert "configured" in out.stdout
    # Re-applying the same manifest changes nothing (kubectl may still say "configured": the
    # defaulted list elements differ from the manifest's, so its merge patch is not empty).
    again = cluster.kubectl(
        "apply", "-f", "-", stdin=_manifest(widgets, namespace, 3), cache_dir=cache
    )
    assert "configured" in again.stdout or "unchanged" in again.stdout
    assert (
        json.loads(
            cluster.kubectl(
                "get", widgets.plural, "kw", "-n", namespace, "-o", "json", cache_dir=cache
            ).stdout
        )["spec"]["replicas"]
        == 3
    )


def _patch_and_scale(cluster: Cluster, widgets: CRD, namespace: str, cache: str) -> None:
    """A merge patch and a scale show in the printer columns."""
    cluster.kubectl(
        "patch",
        widgets.plural,
        "kw",
        "-n",
        namespace,
        "--type",
        "merge",
        "-p",
        '{"spec":{"color":"red"}}',
        cache_dir=cache,
    )
    cluster.kubectl(
        "scale", widgets.plural, "kw", "-n", namespace, "--replicas", "6", cache_dir=cache
    )
    row = cluster.kubectl(
        "get", widgets.plural, "kw", "-n", namespace, "--no-headers", cache_dir=cache
    ).stdout.split()
    assert row[:3] == ["kw", "6", "red"]


def _refused_patch(cluster: Cluster, widgets: CRD, namespace: str, cache: str) -> None:
    """A patch the schema refuses fails with its message."""
    bad = cluster.kubectl(
        "patch",
        widgets.plural,
        "kw",
        "-n",
        namespace,
        "--type",
        "merge",
        "-p",
        '{"spec":{"color":"pink"}}',
        check=False,
        cache_dir=cache,
    )
    assert bad.returncode != 0
    assert 'Unsupported value: "pink"' in bad.stderr


def _list_by_category_and_delete(
    cluster: Cluster, widgets: CRD, namespace: str, cache: str
) -> None:
    """The category lists the object; delete removes it."""
    listed = cluster.kubectl(
        "get", widgets.category, "-n", namespace, "-o", "name", cache_dir=cache
    ).stdout
    assert f"{widgets.kind.lower()}.{widgets.group}/kw" in listed

    out = cluster.kubectl(
        "delete", widgets.plural, "kw", "-n", namespace, "--wait=true", cache_dir=cache
    )
    assert "deleted" in out.stdout
    gone = cluster.kubectl(
        "get", widgets.plural, "kw", "-n", namespace, check=False, cache_dir=cache
    )
    assert gone.returncode != 0
    assert "NotFound" in gone.stderr


def test_kubectl_apply_builtin_twice(cluster: Cluster, namespace: str, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")

    def manifest(value: str) -> str:
        return yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "kcm", "namespace": namespace},
                "data": {"key": value},
            }
        )

    assert (
        "created"
        in cluster.kubectl("apply", "-f", "-", stdin=manifest("one"), cache_dir=cache).stdout
    )
    assert (
        "configured"
        in cluster.kubectl("apply", "-f", "-", stdin=manifest("two"), cache_dir=cache).stdout
    )
    got = json.loads(
        cluster.kubectl(
            "get", "configmap", "kcm", "-n", namespace, "-o", "json", cache_dir=cache
        ).stdout
    )
    assert got["data"] == {"key": "two"}
    cluster.kubectl("delete", "configmap", "kcm", "-n", namespace, cache_dir=cache)


def test_kubectl_imperative_create_of_builtins(cluster: Cluster, tmp_path: Path) -> None:
    # kubectl's generators post protobuf bodies for these kinds.
    cache = str(tmp_path / "cache")
    ns = f"kc-{uuid.uuid4().hex[:8]}"
    cluster.kubectl("create", "namespace", ns, cache_dir=cache)
    try:
        cluster.kubectl(
            "create", "configmap", "cm1", "-n", ns, "--from-literal=a=b", cache_dir=cache
        )
        cluster.kubectl(
            "create",
            "secret",
            "generic",
            "s1",
            "-n",
            ns,
            "--from-literal=pw=hunter2",
            cache_dir=cache,
        )
        cluster.kubectl("create", "serviceaccount", "bot", "-n", ns, cache_dir=cache)
        cluster.kubectl(
            "create", "service", "clusterip", "web", "-n", ns, "--tcp=80:8080", cache_dir=cache
        )
        cm = cluster.api.get(f"/api/v1/namespaces/{ns}/configmaps/cm1").body
        assert cm["data"] == {"a": "b"}
        secret = cluster.api.get(f"/api/v1/namespaces/{ns}/secrets/s1").body
        assert secret["data"] == {"pw": "aHVudGVyMg=="}
        assert cluster.api.get(f"/api/v1/namespaces/{ns}/serviceaccounts/bot").status == 200
        svc = cluster.api.get(f"/api/v1/namespaces/{ns}/services/web").body
        assert svc["spec"]["ports"][0]["port"] == 80
        assert svc["spec"]["ports"][0]["targetPort"] == 8080
        assert svc["spec"]["selector"] == {"app": "web"}
    finally:
        cluster.kubectl("delete", "namespace", ns, "--wait=false", cache_dir=cache)


def test_kubectl_server_side_apply(
    cluster: Cluster, namespace: str, widgets: CRD, tmp_path: Path
) -> None:
    cache = str(tmp_path / "cache")
    for replicas in (2, 5):
        out = cluster.kubectl(
            "apply",
            "--server-side",
            "-f",
            "-",
            stdin=_manifest(widgets, namespace, replicas).replace("name: kw", "name: ssa"),
            cache_dir=cache,
        )
        assert "serverside-applied" in out.stdout
        got = json.loads(
            cluster.kubectl(
                "get", widgets.plural, "ssa", "-n", namespace, "-o", "json", cache_dir=cache
            ).stdout
        )
        assert got["spec"]["replicas"] == replicas
        assert got["spec"]["ports"] == [{"containerPort": 7654, "protocol": "UDP"}]
    cluster.kubectl("delete", widgets.plural, "ssa", "-n", namespace, cache_dir=cache)


def test_kubectl_applies_a_chart_like_manifest(
    cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    cache = str(tmp_path / "cache")
    suffix = uuid.uuid4().hex[:8]
    docs = [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "ctl", "namespace": namespace},
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": f"conf-{suffix}"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": f"conf-{suffix}"},
            "subjects": [{"kind": "ServiceAccount", "name": "ctl", "namespace": namespace}],
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": f"conf-{suffix}",
            },
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "r", "namespace": namespace},
            "rules": [],
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "ctl", "namespace": namespace},
            "spec": {
                "replicas": 0,
                "selector": {"matchLabels": {"app": "ctl"}},
                "template": {
                    "metadata": {"labels": {"app": "ctl"}},
                    "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]},
                },
            },
        },
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "ctl", "namespace": namespace},
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "ctl"}}},
        },
        {
            "apiVersion": "scheduling.k8s.io/v1",
            "kind": "PriorityClass",
            "metadata": {"name": f"conf-{suffix}"},
            "value": 1000,
            "globalDefault": False,
        },
    ]
    manifest = yaml.safe_dump_all(docs)
    out = cluster.kubectl("apply", "-f", "-", stdin=manifest, cache_dir=cache)
    assert out.stdout.count("created") == len(docs), out.stdout
    got = json.loads(
        cluster.kubectl(
            "get", "deployment", "ctl", "-n", namespace, "-o", "json", cache_dir=cache
        ).stdout
    )
    assert got["spec"]["replicas"] == 0
    out = cluster.kubectl("delete", "-f", "-", stdin=manifest, cache_dir=cache)
    assert out.stdout.count("deleted") == len(docs), out.stdout
