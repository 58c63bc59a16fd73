"""The chart deployed: real Helm (helm-python-sdk) installs `charts/agones` on a bare local cluster
(`StackOptions(agones=False)`: no controller, webhooks or allocator of the stack's own), and what
Helm installed does all the work, as on a cluster.

One install is shared by the steps, in order: every component runs as pods (controller 2, one of
them leading by the Lease `agones-controller-lock`; extensions 2; ping 2; allocator 3) → Agones'
example Fleet comes Ready → `kubectl delete pod` of the leading controller (graceful, then
forced): another controller takes the Lease within client-go's bounds, and a scale issued during
each failover lands exactly →
`helm upgrade` with a changed value rolls the ping Deployment (a new ReplicaSet, the old pods gone),
and ping answers HTTP and UDP through its Services' addresses with the new value → an allocation
through the allocator Service with the chart's client certificate → `helm uninstall` removes every
object it made. The local cluster runs agones-py's images as `agones` sub-commands, so this needs
the local cluster (not `KUBECONFIG`'s).
"""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import grpc
import pytest

from agones.allocator.proto import allocation_pb2 as pb
from agones.allocator.proto import allocation_pb2_grpc
from agones.localcluster.stack import LocalStack, StackOptions, ThreadedStack
from tests.chart.helmobjects import manifest_objects, path_of
from tests.cluster import Cluster
from tests.e2e.framework import udp
from tests.waiting import wait_for
from tools import helmchart

helm = pytest.importorskip("helm_python")

pytestmark = [pytest.mark.slow, pytest.mark.cluster, pytest.mark.timeout(600)]

NS = helmchart.NAMESPACE
ORACLE = Path(__file__).resolve().parents[1] / "fixtures" / "agones-oracle" / "valid"
FLEET = json.loads((ORACLE / "fleet-examples-simple-game-server-fleet.json").read_text())["input"]
"""Agones' examples/simple-game-server/fleet.yaml."""
LEASE = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases/agones-controller-lock"
FLEETS = "/apis/agones.dev/v1/namespaces/default/fleets"
COMPONENTS = {"controller": 2, "extensions": 2, "ping": 2, "allocator": 3}
ROLES = {c: f"agones.dev/role={c}" for c in COMPONENTS}
ROLES["allocator"] = "multicluster.agones.dev/role=allocator"  # Agones' label for it
LEASE_DURATION, RETRY_PERIOD, JITTER = 15.0, 2.0, 1.2
"""client-go's defaults (the chart's too): a candidate retries every RETRY_PERIOD * up to JITTER,
so a Lease left behind is taken within LEASE_DURATION + that; a released one within a retry."""
RESULTS: dict[str, Any] = {}
"""What one step made, for the later steps."""


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    if os.environ.get("KUBECONFIG"):
        pytest.skip("runs agones-py's images as local processes: needs the local cluster")
    threaded = ThreadedStack(
        StackOptions(
            agones=False,
            nodes=2,
            first_node_address=f"127.{random.randrange(1, 250)}.{random.randrange(1, 250)}.1",
            log_dir=str(tmp_path_factory.mktemp("helm-deploy-logs")),
        )
    )
    stack = threaded.start()
    try:
        yield stack
    finally:
        threaded.stop()


@pytest.fixture(scope="module")
def local(stack: LocalStack) -> Cluster:
    return Cluster(stack.kubeconfig, local=True, url=stack.api.url, ca_file=stack.api.ca_file)


def values() -> dict[str, Any]:
    low = random.randrange(30000, 40000, 1000)  # apart from the e2e suite's 20000-30000
    return {"gameservers": {"minPort": low, "maxPort": low + 999}}


@pytest.fixture(scope="module")
def release(local: Cluster) -> dict[str, Any]:
    chosen = values()
    with helm.Config(namespace=NS, kubeconfig_path=local.kubeconfig) as cfg:
        installed = cfg.install(
            str(helmchart.CHART_DIR), "agones", chosen, namespace=NS, create_namespace=True
        )
    installed["chosen"] = chosen
    return dict(installed)


def kubectl(local: Cluster, *args: str) -> str:
    out = subprocess.run(
        ["kubectl", "--kubeconfig", local.kubeconfig, *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def pods(local: Cluster, role: str) -> list[dict[str, Any]]:
    listed = local.api.get(f"/api/v1/namespaces/{NS}/pods", labelSelector=ROLES[role])
    return [p for p in listed.body["items"] if not p["metadata"].get("deletionTimestamp")]


def rolled_out(local: Cluster, name: str) -> bool:
    """`kubectl rollout status`'s test: the new ReplicaSet has every replica, all available,
    and no old pod is left."""
    dep = local.api.get(f"/apis/apps/v1/namespaces/{NS}/deployments/{name}").body
    status, want = dep.get("status") or {}, dep["spec"]["replicas"]
    return bool(
        status.get("observedGeneration", 0) >= dep["metadata"]["generation"]
        and status.get("updatedReplicas") == want
        and status.get("availableReplicas") == want
        and status.get("replicas") == want
    )


def all_rolled_out(local: Cluster) -> bool:
    return all(rolled_out(local, f"agones-{c}") for c in COMPONENTS)


def holder(local: Cluster) -> tuple[str, dict[str, Any]]:
    """The pod holding the controller's Lease (its identity is `<pod>_<uuid>`), and the Lease."""
    resp = local.api.get(LEASE)
    if resp.status != 200:
        return "", {}
    identity = resp.body["spec"].get("holderIdentity") or ""
    return identity.rpartition("_")[0], resp.body


def micro_time(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def fleet_game_servers(local: Cluster) -> list[dict[str, Any]]:
    listed = local.api.get(
        "/apis/agones.dev/v1/namespaces/default/gameservers",
        labelSelector=f"agones.dev/fleet={FLEET['metadata']['name']}",
    )
    return list(listed.body["items"])


def fleet_ready(local: Cluster, replicas: int) -> bool:
    fleet = local.api.get(f"{FLEETS}/{FLEET['metadata']['name']}").body
    servers = fleet_game_servers(local)
    return (fleet.get("status") or {}).get("readyReplicas") == replicas and len(servers) == replicas


def test_install_runs_every_component_as_pods_with_one_leader(
    local: Cluster, release: dict[str, Any]
) -> None:
    assert (release["revision"], release["status"]) == (1, "deployed")
    wait_for(lambda: all_rolled_out(local), timeout=240, what="every component rolled out")
    for role, replicas in COMPONENTS.items():
        running = pods(local, role)
        assert len(running) == replicas, role
        assert all(p["status"]["phase"] == "Running" for p in running), role
    leader = wait_for(lambda: holder(local)[0], timeout=60, what="a controller to lead")
    assert leader in {p["metadata"]["name"] for p in pods(local, "controller")}


def test_example_fleet_comes_ready_through_the_installed_components(
    local: Cluster, release: dict[str, Any]
) -> None:
    created = local.api.post(FLEETS, FLEET)
    assert created.status == 201, created
    # Defaulted by the chart's mutating webhook (served by the extensions pods)
    assert created.body["spec"]["scheduling"] == "Packed"
    wait_for(lambda: fleet_ready(local, 2), timeout=180, what="the Fleet to be Ready")
    server = fleet_game_servers(local)[0]
    pod = local.api.get(f"/api/v1/namespaces/default/pods/{server['metadata']['name']}").body
    containers = [
        c["name"] for c in pod["spec"].get("initContainers", []) + pod["spec"]["containers"]
    ]
    assert "agones-gameserver-sidecar" in containers  # the pod the installed controller made
    port = server["status"]["ports"][0]["port"]
    low = release["chosen"]["gameservers"]["minPort"]
    assert low <= port <= low + 999  # allocated from the range the chart's values set


def fail_over(local: Cluster, delete: list[str], replicas: int, what: str) -> float:
    """Delete the leading controller's pod (`kubectl delete pod LEADER *delete`) and scale the
    Fleet to `replicas` at once; return how long after the delete another pod took the Lease,
    once the scale has landed exactly."""
    leader, before = holder(local)
    others = {p["metadata"]["name"] for p in pods(local, "controller")} - {leader}
    deleted_at = time.time()
    kubectl(local, "-n", NS, "delete", "pod", leader, "--wait=false", *delete)
    name = FLEET["metadata"]["name"]
    kubectl(local, "-n", "default", "scale", "fleet", name, f"--replicas={replicas}")

    def taken_over() -> tuple[str, dict[str, Any]] | None:
        pod, lease = holder(local)
        return (pod, lease) if pod and pod != leader else None

    new, lease = wait_for(taken_over, timeout=60, what="another controller to take the Lease")
    takeover = micro_time(lease["spec"]["acquireTime"]) - deleted_at
    who = "the standing replica" if new in others else "the ReplicaSet's replacement"
    print(f"controller failover ({what}): {who} took the Lease {takeover:.2f} s after the delete")
    # Either may win the race for the Lease, as on a cluster; never the deleted pod
    assert new in {p["metadata"]["name"] for p in pods(local, "controller")}
    assert lease["spec"]["leaseTransitions"] == before["spec"].get("leaseTransitions", 0) + 1
    wait_for(lambda: fleet_ready(local, replicas), timeout=180, what="the scale to land")
    names = [gs["metadata"]["name"] for gs in fleet_game_servers(local)]
    assert len(set(names)) == len(names) == replicas
    sets = local.api.get("/apis/agones.dev/v1/namespaces/default/gameserversets").body["items"]
    assert len(sets) == 1
    wait_for(lambda: rolled_out(local, "agones-controller"), timeout=120, what="2 controllers")
    return takeover


def test_deleting_the_leader_hands_the_lease_over_and_loses_no_scale(local: Cluster) -> None:
    """A graceful delete: the leader drains and releases the Lease; a candidate takes it at its
    next retry."""
    takeover = fail_over(local, [], 4, "graceful delete")
    assert takeover <= LEASE_DURATION + RETRY_PERIOD * JITTER


def test_force_deleting_the_leader_hands_the_lease_over_within_its_duration(
    local: Cluster,
) -> None:
    """`--grace-period=0 --force`: the leader is killed, maybe before it can release the Lease,
    which then lapses: a candidate takes it within the lease duration and a retry."""
    takeover = fail_over(local, ["--grace-period=0", "--force"], 3, "forced delete")
    assert takeover <= LEASE_DURATION + RETRY_PERIOD * JITTER


def http_body(url: str) -> bytes | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return bytes(resp.read())
    except OSError:
        return None


def ping_replica_sets(local: Cluster) -> set[str]:
    listed = local.api.get(
        f"/apis/apps/v1/namespaces/{NS}/replicasets", labelSelector="agones.dev/role=ping"
    )
    return {rs["metadata"]["name"] for rs in listed.body["items"] if rs["spec"]["replicas"]}


def test_upgrade_rolls_the_deployment_and_ping_answers_through_its_services(
    local: Cluster, release: dict[str, Any]
) -> None:
    old_sets, old_pods = (
        ping_replica_sets(local),
        {p["metadata"]["name"] for p in pods(local, "ping")},
    )
    changed = {**release["chosen"], "agones": {"ping": {"http": {"response": "pong"}}}}
    with helm.Config(namespace=NS, kubeconfig_path=local.kubeconfig) as cfg:
        upgraded = cfg.upgrade(str(helmchart.CHART_DIR), "agones", changed, namespace=NS)
    assert (upgraded["revision"], upgraded["status"]) == (2, "deployed")
    RESULTS["release"] = upgraded

    def rolled() -> bool:
        now = {p["metadata"]["name"] for p in pods(local, "ping")}
        return rolled_out(local, "agones-ping") and not now & old_pods

    wait_for(rolled, timeout=180, what="the ping Deployment to roll")
    new_sets = ping_replica_sets(local)
    assert len(new_sets) == 1 and not new_sets & old_sets
    http = local.api.get(f"/api/v1/namespaces/{NS}/services/agones-ping-http-service").body
    url = f"http://{http['spec']['clusterIP']}:80/"
    # Until the Endpoints controller has seen the new pods, the proxy may pick a stopped one
    assert wait_for(lambda: http_body(url) == b"pong", timeout=30, what=f"pong from {url}")
    udp_svc = local.api.get(f"/api/v1/namespaces/{NS}/services/agones-ping-udp-service").body
    assert udp(udp_svc["spec"]["clusterIP"], 50000, "hello") == "hello"
    wait_for(lambda: all_rolled_out(local), timeout=240, what="every component rolled out")


def test_allocation_through_the_allocator_service_with_the_chart_client_certificate(
    local: Cluster, tmp_path: Path
) -> None:
    secret = local.api.get(f"/api/v1/namespaces/{NS}/secrets/allocator-client.default").body
    pem = {k: base64.b64decode(v) for k, v in secret["data"].items()}
    service = local.api.get(f"/api/v1/namespaces/{NS}/services/agones-allocator").body
    credentials = grpc.ssl_channel_credentials(pem["ca.crt"], pem["tls.key"], pem["tls.crt"])
    target = f"{service['spec']['clusterIP']}:{service['spec']['ports'][0]['port']}"
    name = FLEET["metadata"]["name"]
    request = pb.AllocationRequest(
        namespace="default",
        gameServerSelectors=[pb.GameServerSelector(matchLabels={"agones.dev/fleet": name})],
    )
    options = [("grpc.ssl_target_name_override", f"agones-allocator.{NS}.svc")]
    with grpc.secure_channel(target, credentials, options=options) as channel:
        response = allocation_pb2_grpc.AllocationServiceStub(channel).Allocate(request, timeout=30)
    path = f"/apis/agones.dev/v1/namespaces/default/gameservers/{response.gameServerName}"
    allocated = local.api.get(path).body
    assert allocated["status"]["state"] == "Allocated"
    assert allocated["metadata"]["labels"]["agones.dev/fleet"] == name
    assert response.ports[0].port == allocated["status"]["ports"][0]["port"]


def test_uninstall_removes_everything_it_made(local: Cluster, release: dict[str, Any]) -> None:
    # GameServers carry the controller's finalizer: remove them while the controller still runs
    assert local.api.delete(f"{FLEETS}/{FLEET['metadata']['name']}").status == 200
    wait_for(lambda: not fleet_game_servers(local), timeout=120, what="the GameServers to go")
    objs = manifest_objects(RESULTS.get("release", release))
    with helm.Config(namespace=NS, kubeconfig_path=local.kubeconfig) as cfg:
        cfg.uninstall("agones")
        assert [r["name"] for r in cfg.list()] == []
    kinds = {obj["kind"] for obj in objs}
    assert {"Deployment", "Service", "Secret", "CustomResourceDefinition", "APIService"} <= kinds
    for obj in objs:
        path = path_of(obj)
        wait_for(lambda p=path: local.api.get(p).status == 404, timeout=60, what=f"{path} deleted")
    wait_for(lambda: not local.api.get(f"/api/v1/namespaces/{NS}/pods").body["items"], timeout=90)
    releases = local.api.get(f"/api/v1/namespaces/{NS}/secrets", labelSelector="owner=helm").body
    assert releases["items"] == []
