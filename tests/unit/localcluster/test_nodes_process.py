"""The simulated nodes as a child process: its config (tables, malformed input) and a stack that
runs them there, bringing a simulated GameServer to Ready."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.client.versioned.resources import GAME_SERVERS
from agones.localcluster.nodes.process import ConfigError, NodesConfig, main
from agones.localcluster.stack import LocalStack, StackOptions

GOOD = NodesConfig(
    kubeconfig="/tmp/kubeconfig",
    api_port=6443,
    ready_file="/tmp/ready",
    node_addresses={"agones-local-node-1": "127.0.0.2"},
    gates="SidecarContainers=true",
    simulate_all=True,
    in_cluster_host="127.0.0.1",
    in_cluster_port=6444,
    in_cluster_ca_pem="-----BEGIN CERTIFICATE-----\n",
    in_cluster_token="token",
)


def test_the_config_round_trips() -> None:
    again = NodesConfig.from_json(GOOD.to_json())
    assert again == GOOD
    kubelet = again.kubelet_config()
    assert kubelet.in_cluster is not None and kubelet.in_cluster.port == 6444
    assert kubelet.node_addresses == {"agones-local-node-1": "127.0.0.2"}


def _with(**changes: Any) -> str:
    raw = json.loads(GOOD.to_json())
    raw.update(changes)
    return json.dumps(raw)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "not JSON"),
        ("[]", "must be a JSON object"),
        ("{}", "missing"),
        (_with(extra=1), "unknown field 'extra'"),
        (_with(api_port="6443"), "api_port has the wrong type"),
        (_with(api_port=True), "api_port has the wrong type"),
        (_with(simulate_all=1), "simulate_all has the wrong type"),
        (_with(use_netns="yes"), "use_netns has the wrong type"),
        (_with(node_addresses=["127.0.0.2"]), "node_addresses must map"),
        (_with(node_addresses={"n": 2}), "node_addresses must map"),
        (_with(gates="NoSuchGate=true"), "gates:"),
    ],
    ids=[
        "not-json",
        "not-object",
        "missing-fields",
        "unknown-field",
        "port-string",
        "port-bool",
        "simulate-int",
        "netns-string",
        "addresses-list",
        "address-int",
        "unknown-gate",
    ],
)
def test_a_bad_config_is_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        NodesConfig.from_json(text)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.text(max_size=64),
        JSON.map(json.dumps),
        st.dictionaries(st.sampled_from(list(json.loads(GOOD.to_json()))), JSON).map(
            lambda changes: _with(**changes)
        ),
    )
)
def test_malformed_configs_never_raise_anything_else(text: str) -> None:
    with contextlib.suppress(ConfigError):
        NodesConfig.from_json(text)


def test_main_says_one_line_and_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "config.json"
    bad.write_text(_with(api_port="x"))
    assert main([str(bad)]) == 2
    assert main([str(tmp_path / "missing.json")]) == 2
    assert main([]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 3
    assert lines[0] == "error: nodes config: api_port has the wrong type"


@pytest.mark.timeout(120)
async def test_a_stack_with_its_nodes_in_a_child_process_brings_a_game_server_to_ready() -> None:
    options = StackOptions(
        nodes_process=True, simulate_all=True, allocator_service=False, min_port=7400, max_port=7499
    )
    async with LocalStack(options) as stack:
        assert stack.kubelet is None and stack.scheduler is None
        assert stack.nodes_proc is not None and stack.nodes_proc.returncode is None
        client = stack.client
        assert client is not None
        body = {
            "apiVersion": "agones.dev/v1",
            "kind": "GameServer",
            "metadata": {"name": "in-child"},
            "spec": {
                "ports": [{"name": "default", "containerPort": 7654}],
                "template": {"spec": {"containers": [{"name": "g", "image": "game:1"}]}},
            },
        }
        await client.create(GAME_SERVERS, body, namespace="default")
        for _ in range(600):
            gs = await client.get(GAME_SERVERS, "in-child", "default")
            if (gs.get("status") or {}).get("state") == "Ready":
                break
            await asyncio.sleep(0.1)
        assert gs["status"]["state"] == "Ready"
        by_client = {who for who, _, _ in stack.writes.counts}
        # the scheduler's binding, the kubelet's pod status and the sidecar's Ready came from
        # the child, under the User-Agents the in-process nodes use
        assert {"agones-local-scheduler", "agones-local-kubelet", "agones-local-sdkserver"} <= (
            by_client
        )
        proc = stack.nodes_proc
    assert stack.nodes_proc is None
    assert proc.returncode == 0
