"""The zone-servers example installed with real Helm (helm-python-sdk) on the local cluster, run
as real processes: every zone Ready in ordinal order (OrderedReady, each after the db it waits
for), the gate reaching every zone by its stable name, a deleted zone pod back under its name with
its save file (saved by the preStop hook), the zone count scaled up and down with `helm upgrade`,
and `helm uninstall` leaving only the claims (their retention policy is Retain)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import kubernetes
import pytest

from tests.e2e.framework import Framework
from tests.e2e.test_local_statefulsets import PodEvents, kubectl, replaced_and_ready

helm = pytest.importorskip("helm_python")

CHART = Path(__file__).resolve().parents[2] / "examples" / "zone-servers" / "chart"
RELEASE = "zs"


@pytest.fixture
def core(framework: Framework) -> kubernetes.client.CoreV1Api:
    return kubernetes.client.CoreV1Api(
        kubernetes.config.new_client_from_config(config_file=framework.kubeconfig)
    )


@pytest.fixture
def apps(framework: Framework) -> kubernetes.client.AppsV1Api:
    return kubernetes.client.AppsV1Api(
        kubernetes.config.new_client_from_config(config_file=framework.kubeconfig)
    )


def save_file(core: kubernetes.client.CoreV1Api, fw: Framework, zone: int) -> dict[str, Any]:
    pvc = core.read_namespaced_persistent_volume_claim(f"save-zs-zone-{zone}", fw.namespace)
    pv = core.read_persistent_volume(pvc.spec.volume_name)
    saved: dict[str, Any] = json.loads((Path(pv.spec.host_path.path) / "save.json").read_text())
    return saved


def gate_zones(core: kubernetes.client.CoreV1Api, fw: Framework) -> list[dict[str, Any]]:
    ip = core.read_namespaced_pod("zs-gate-0", fw.namespace).status.pod_ip
    with urllib.request.urlopen(f"http://{ip}:8000/zones", timeout=30) as resp:
        zones: list[dict[str, Any]] = json.loads(resp.read())
    return zones


def ready_zones(apps: kubernetes.client.AppsV1Api, fw: Framework) -> int:
    return int(
        apps.read_namespaced_stateful_set("zs-zone", fw.namespace).status.ready_replicas or 0
    )


def zone_pods(core: kubernetes.client.CoreV1Api, fw: Framework) -> list[str]:
    pods = core.list_namespaced_pod(fw.namespace, label_selector="app=zs-zone").items
    return sorted(p.metadata.name for p in pods)


@pytest.mark.timeout(420)
def test_zone_servers_install_restart_scale_uninstall(
    framework: Framework,
    local_stack: Any,
    core: kubernetes.client.CoreV1Api,
    apps: kubernetes.client.AppsV1Api,
) -> None:
    fw = framework
    _install_zones_in_order(fw, core)
    _gate_reaches_every_zone(fw, core)
    _deleted_zone_back_with_its_save(fw, core)
    _scale_with_helm_upgrade(fw, core, apps)
    _uninstall_leaves_the_claims(fw, core, apps)


def _install_zones_in_order(fw: Framework, core: kubernetes.client.CoreV1Api) -> None:
    """`helm install`: the zones are created and Ready in ordinal order."""
    events = PodEvents(core, fw.namespace, "zs-zone")
    try:
        with helm.Config(namespace=fw.namespace, kubeconfig_path=fw.kubeconfig) as cfg:
            release = cfg.install(str(CHART), RELEASE, {}, namespace=fw.namespace, timeout=120)
        assert release["status"] == "deployed"
        kubectl(fw, "rollout", "status", "sts/zs-zone", "--timeout=180s")
        ready = [name for kind, name in events.seen() if kind == "READY"]
        assert ready[:3] == ["zs-zone-0", "zs-zone-1", "zs-zone-2"]
        added = [name for kind, name in events.seen() if kind == "ADDED"]
        assert added[:3] == ["zs-zone-0", "zs-zone-1", "zs-zone-2"]
    finally:
        events.stop()


def _gate_reaches_every_zone(fw: Framework, core: kubernetes.client.CoreV1Api) -> None:
    """The gate reaches every zone by its stable name."""
    kubectl(fw, "rollout", "status", "sts/zs-gate", "--timeout=120s")
    zones = gate_zones(core, fw)
    assert [(z["zone"], z["pod"], z["name"]) for z in zones] == [
        (0, "zs-zone-0", "Azure"),
        (1, "zs-zone-1", "Crimson"),
        (2, "zs-zone-2", "Emerald"),
    ]
    assert zones[0]["motd"] == "Welcome to the zone servers example"


def _deleted_zone_back_with_its_save(fw: Framework, core: kubernetes.client.CoreV1Api) -> None:
    """A zone pod deleted: the preStop hook saves, the pod comes back under its name, loads it."""
    before = core.read_namespaced_pod("zs-zone-1", fw.namespace).metadata.uid
    kubectl(fw, "delete", "pod", "zs-zone-1")
    fw.wait(
        "zs-zone-1 back and Ready",
        lambda: replaced_and_ready(core, fw.namespace, "zs-zone-1", before),
        timeout=120,
    )
    saved = save_file(core, fw, 1)
    assert (saved["boots"], saved["saves"]) == (2, ["boot", "preStop", "boot"])


def _scale_with_helm_upgrade(
    fw: Framework, core: kubernetes.client.CoreV1Api, apps: kubernetes.client.AppsV1Api
) -> None:
    """Scale the zone count with the chart's values: up one, then down to two."""
    with helm.Config(namespace=fw.namespace, kubeconfig_path=fw.kubeconfig) as cfg:
        cfg.upgrade(
            str(CHART), RELEASE, {"zones": {"count": 4}}, namespace=fw.namespace, timeout=120
        )
    fw.wait("four zones Ready", lambda: ready_zones(apps, fw) == 4, timeout=120)
    assert core.read_namespaced_service("zs-zone-3", fw.namespace).spec.selector == {
        "statefulset.kubernetes.io/pod-name": "zs-zone-3"
    }
    kubectl(fw, "rollout", "status", "sts/zs-gate", "--timeout=120s")
    fw.wait("the gate sees four zones", lambda: len(gate_zones(core, fw)) == 4, timeout=60)
    assert gate_zones(core, fw)[3]["name"] == "Golden"
    with helm.Config(namespace=fw.namespace, kubeconfig_path=fw.kubeconfig) as cfg:
        cfg.upgrade(
            str(CHART), RELEASE, {"zones": {"count": 2}}, namespace=fw.namespace, timeout=120
        )
    fw.wait(
        "two zones left", lambda: zone_pods(core, fw) == ["zs-zone-0", "zs-zone-1"], timeout=120
    )
    assert save_file(core, fw, 3)["saves"][-1] == "preStop"  # the scaled-down zone saved


def _uninstall_leaves_the_claims(
    fw: Framework, core: kubernetes.client.CoreV1Api, apps: kubernetes.client.AppsV1Api
) -> None:
    """`helm uninstall` removes the release's objects but not the claims (Retain)."""
    with helm.Config(namespace=fw.namespace, kubeconfig_path=fw.kubeconfig) as cfg:
        cfg.uninstall(RELEASE)
    fw.wait(
        "the release's objects gone",
        lambda: (
            not core.list_namespaced_pod(
                fw.namespace, label_selector="app.kubernetes.io/instance=zs"
            ).items
            and not zone_pods(core, fw)
            and not apps.list_namespaced_stateful_set(
                fw.namespace, label_selector="app.kubernetes.io/instance=zs"
            ).items
        ),
        timeout=120,
    )
    claims = {
        c.metadata.name for c in core.list_namespaced_persistent_volume_claim(fw.namespace).items
    }
    assert {f"save-zs-zone-{i}" for i in range(4)} <= claims
