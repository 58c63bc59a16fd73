"""The allocation API on the local cluster, as a kubectl user meets it: `kubectl create -f` of each
of Agones' allocation examples gives what Agones gave (run-specific values excepted), invalid
requests give Agones' 422 messages, other verbs 405, YAML both ways, and no malformed body gets a
5xx. GameServers are written Ready directly (no controller runs), carrying the oracle fleet's
counter `rooms {0/10}` and list `players {100, [alice]}`.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agones.localcluster.stack import StackOptions, ThreadedStack
from tests.cluster import Api
from tests.integration.gameserverallocations.harness import ready_game_server
from tests.waiting import wait_for

FIXTURES = sorted(
    (Path(__file__).parents[1] / "fixtures" / "agones-oracle" / "valid").glob(
        "gameserverallocation-*.json"
    )
)
GROUP_PATH = "/apis/allocation.agones.dev/v1"
RUN_SPECIFIC_LABELS = {"agones.dev/gameserverset"}
RUN_SPECIFIC_ANNOTATIONS = {"agones.dev/last-allocated", "agones.dev/sdk-version"}


class Env:
    def __init__(self, threaded: ThreadedStack, namespace: str) -> None:
        self.threaded = threaded
        self.stack = threaded.stack
        self.api = Api(self.stack.kubeconfig)
        self.namespace = namespace
        self.count = 0

    def gs_path(self, name: str = "") -> str:
        base = f"/apis/agones.dev/v1/namespaces/{self.namespace}/gameservers"
        return f"{base}/{name}" if name else base

    def create_ready(self, labels: dict[str, str]) -> str:
        """A GameServer through the webhooks, then written Ready with an address and a port."""
        self.count += 1
        name = f"green-fleet-abcde-{self.count:05d}"
        wanted = ready_game_server(name, self.namespace, labels=labels, node="agones-local-node-1")
        created = self.api.request("POST", self.gs_path(), wanted)
        assert created.status == 201, created
        body = created.body
        body["status"] = wanted["status"]
        updated = self.api.request("PUT", self.gs_path(name), body)
        assert updated.status == 200, updated
        allocator = self.stack.allocator
        assert allocator is not None
        key = f"{self.namespace}/{name}"
        wait_for(
            lambda: (gs := allocator.allocation_cache.cache.get(key)) and gs.state() == "Ready",
            what=f"{name} Ready in the allocation cache",
        )
        return name

    def kubectl(self, *args: str, stdin: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["kubectl", "--kubeconfig", self.stack.kubeconfig, "-n", self.namespace, *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )


@pytest.fixture(scope="module")
def env() -> Iterator[Env]:
    threaded = ThreadedStack(StackOptions(nodes=1, controller=False, simulate_all=True))
    threaded.start()
    namespace = f"alloc-{uuid.uuid4().hex[:6]}"
    try:
        api = Api(threaded.stack.kubeconfig)
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
        assert api.request("POST", "/api/v1/namespaces", ns).status == 201
        yield Env(threaded, namespace)
    finally:
        threaded.stop()


GREEN = {"agones.dev/fleet": "green-fleet", "agones.dev/gameserverset": "green-fleet-abcde"}


def strip(labels: dict[str, str], ignored: set[str]) -> dict[str, str]:
    return {k: v for k, v in labels.items() if k not in ignored}


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.stem for f in FIXTURES])
def test_kubectl_create_gives_what_agones_gave(env: Env, fixture: Path) -> None:
    data = json.loads(fixture.read_text())
    name = env.create_ready(GREEN)
    proc = env.kubectl("create", "-f", "-", "-o", "json", stdin=yaml.safe_dump(data["input"]))
    assert proc.returncode == 0, proc.stderr
    got, want = json.loads(proc.stdout), data["output"]
    assert got["kind"] == want["kind"] and got["apiVersion"] == want["apiVersion"]
    assert got["metadata"] == {"name": name, "namespace": env.namespace}
    assert got["spec"] == want["spec"]
    status, want_status = got["status"], want["status"]
    for key in ("state", "source", "counters", "lists"):
        assert status[key] == want_status[key], key
    assert status["gameServerName"] == name
    assert [p["name"] for p in status["ports"]] == [p["name"] for p in want_status["ports"]]
    assert [a["type"] for a in status["addresses"]] == [a["type"] for a in want_status["addresses"]]
    assert status["nodeName"] == "agones-local-node-1" and status["address"]
    meta, want_meta = status["metadata"], want_status["metadata"]
    assert strip(meta["labels"], RUN_SPECIFIC_LABELS) == strip(
        want_meta["labels"], RUN_SPECIFIC_LABELS
    )
    assert strip(meta["annotations"], RUN_SPECIFIC_ANNOTATIONS) == strip(
        want_meta["annotations"], RUN_SPECIFIC_ANNOTATIONS
    )
    assert set(meta["annotations"]) >= RUN_SPECIFIC_ANNOTATIONS
    stored = env.api.request("GET", env.gs_path(name)).body
    want_gs = data["allocated_gameserver"]
    assert stored["status"]["state"] == want_gs["status"]["state"]
    assert stored["status"]["counters"] == want_gs["status"]["counters"]
    assert stored["status"]["lists"] == want_gs["status"]["lists"]
    assert strip(stored["metadata"]["labels"], RUN_SPECIFIC_LABELS) == strip(
        want_gs["metadata"]["labels"], RUN_SPECIFIC_LABELS
    )


def test_unallocated_is_201_with_an_empty_status(env: Env) -> None:
    body = {
        "apiVersion": "allocation.agones.dev/v1",
        "kind": "GameServerAllocation",
        "spec": {"selectors": [{"matchLabels": {"agones.dev/fleet": "no-such-fleet"}}]},
    }
    resp = env.api.request(
        "POST", f"{GROUP_PATH}/namespaces/{env.namespace}/gameserverallocations", body
    )
    assert resp.status == 201
    assert resp.body["status"] == {"state": "UnAllocated", "gameServerName": "", "source": ""}
    assert "name" not in resp.body["metadata"]


PREFIX = 'GameServerAllocation.allocation.agones.dev "" is invalid: '


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param(
            {"selectors": [{"gameServerState": "Shutdown"}]},
            'spec.selectors[0].gameServerState: Invalid value: "Shutdown": GameServerState must be either Allocated or Ready',
            id="state",
        ),
        pytest.param(
            {"priorities": [{"type": "Gauge", "key": "rooms"}]},
            'spec.priorities[0]: Invalid value: "Gauge": type must be "Counter" or "List"',
            id="priority-type",
        ),
        pytest.param(
            {"priorities": [{"type": "Counter"}]},
            'spec.priorities[0]: Invalid value: "Counter": key must not be nil',
            id="priority-key",
        ),
        pytest.param(
            {"counters": {"rooms": {"action": "Increment"}}},
            'spec.counters[rooms]: Invalid value: "null": amount must not be nil if action is not nil',
            id="counter-amount",
        ),
    ],
)
def test_invalid_requests_give_agones_messages(
    env: Env, spec: dict[str, Any], message: str
) -> None:
    body = {"apiVersion": "allocation.agones.dev/v1", "kind": "GameServerAllocation", "spec": spec}
    resp = env.api.request(
        "POST", f"{GROUP_PATH}/namespaces/{env.namespace}/gameserverallocations", body
    )
    assert resp.status == 422
    assert resp.body["reason"] == "Invalid" and resp.body["code"] == 422
    assert resp.body["message"] == PREFIX + message
    assert resp.body["details"]["group"] == "allocation.agones.dev"
    assert resp.body["details"]["kind"] == "GameServerAllocation"
    assert "name" not in resp.body["details"]
    proc = env.kubectl("create", "-f", "-", stdin=json.dumps(body))
    assert proc.returncode != 0 and message in proc.stderr


def test_bad_label_operator_is_reported_with_the_go_value(env: Env) -> None:
    spec = {
        "selectors": [{"matchExpressions": [{"key": "a", "operator": "Like", "values": ["b"]}]}]
    }
    body = {"apiVersion": "allocation.agones.dev/v1", "kind": "GameServerAllocation", "spec": spec}
    resp = env.api.request(
        "POST", f"{GROUP_PATH}/namespaces/{env.namespace}/gameserverallocations", body
    )
    assert resp.status == 422
    message = resp.body["message"]
    assert message.startswith(
        PREFIX
        + "spec.selectors[0].labelSelector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil)"
    )
    assert message.endswith(
        'Error converting label selector: "Like" is not a valid label selector operator'
    )


def test_other_verbs_are_405_and_discovery_names_the_kind(env: Env) -> None:
    path = f"{GROUP_PATH}/namespaces/{env.namespace}/gameserverallocations"
    for method in ("GET", "PUT", "DELETE", "PATCH"):
        assert (
            env.api.request(method, path, {} if method in ("PUT", "PATCH") else None).status == 405
        )
    disc = env.api.request("GET", GROUP_PATH).body
    assert disc["groupVersion"] == "allocation.agones.dev/v1"
    assert [(r["name"], r["kind"], r["verbs"]) for r in disc["resources"]] == [
        ("gameserverallocations", "GameServerAllocation", ["create"])
    ]
    groups = {g["name"] for g in env.api.request("GET", "/apis").body["groups"]}
    assert "allocation.agones.dev" in groups
    proc = env.kubectl("api-resources", "--api-group=allocation.agones.dev", stdin="")
    assert proc.returncode == 0 and "gameserverallocations" in proc.stdout and "gsa" in proc.stdout


def test_yaml_in_and_out(env: Env) -> None:
    env.create_ready(GREEN)
    body = yaml.safe_dump(
        {
            "apiVersion": "allocation.agones.dev/v1",
            "kind": "GameServerAllocation",
            "spec": {"selectors": [{"matchLabels": {"agones.dev/fleet": "green-fleet"}}]},
        }
    )
    path = f"{GROUP_PATH}/namespaces/{env.namespace}/gameserverallocations"
    resp = env.api.raw("POST", path, body.encode(), "application/yaml")
    assert resp.status == 201, resp
    resp = env.api.request(
        "POST", path, json.loads(json.dumps(yaml.safe_load(body))), accept="application/yaml"
    )
    assert resp.status == 201
    assert yaml.safe_load(resp.body)["kind"] == "GameServerAllocation"


json_st = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
field_st = st.sampled_from(
    [
        "selectors",
        "required",
        "preferred",
        "scheduling",
        "priorities",
        "metadata",
        "counters",
        "lists",
        "multiClusterSetting",
    ]
)
gsa_st = st.dictionaries(field_st, json_st, max_size=4).map(
    lambda spec: {
        "apiVersion": "allocation.agones.dev/v1",
        "kind": "GameServerAllocation",
        "spec": spec,
    }
)
body_st = st.one_of(
    gsa_st.map(lambda b: (json.dumps(b).encode(), "application/json")),
    json_st.map(lambda b: (json.dumps(b).encode(), "application/json")),
    st.binary(max_size=64).map(lambda b: (b, "application/json")),
    st.text(max_size=64).map(lambda t: (t.encode(), "application/yaml")),
    st.binary(max_size=16).map(lambda b: (b, "application/vnd.kubernetes.protobuf")),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body_st)
def test_malformed_bodies_never_give_a_5xx(env: Env, case: tuple[bytes, str]) -> None:
    data, content_type = case
    path = f"{GROUP_PATH}/namespaces/{env.namespace}/gameserverallocations"
    resp = env.api.raw("POST", path, data, content_type)
    assert resp.status < 500, (data, resp)
    assert resp.status in (201, 400, 415, 422), resp
    if resp.status != 201:
        assert resp.body["kind"] == "Status" and resp.body["code"] == resp.status


def served(allocator: object) -> float:
    total = 0.0
    for family in allocator.latency.collect():  # type: ignore[attr-defined]
        total += sum(s.value for s in family.samples if s.name.endswith("_count"))
    return total


def test_two_extensions_replicas_behind_one_service_share_the_work() -> None:
    threaded = ThreadedStack(
        StackOptions(nodes=1, controller=False, simulate_all=True, extensions_replicas=2)
    )
    threaded.start()
    try:
        env = Env(threaded, "default")
        names = {env.create_ready(GREEN) for _ in range(20)}
        for allocator in env.stack.allocators:
            wait_for(lambda a=allocator: len(a.allocation_cache) >= 20, what="both caches full")
        body = {
            "apiVersion": "allocation.agones.dev/v1",
            "kind": "GameServerAllocation",
            "spec": {"selectors": [{"matchLabels": {"agones.dev/fleet": "green-fleet"}}]},
        }
        path = f"{GROUP_PATH}/namespaces/default/gameserverallocations"
        got = [env.api.request("POST", path, body).body["status"] for _ in range(20)]
        assert [s["state"] for s in got] == ["Allocated"] * 20
        assert {s["gameServerName"] for s in got} == names
        assert all(served(a) > 0 for a in env.stack.allocators)
    finally:
        threaded.stop()
