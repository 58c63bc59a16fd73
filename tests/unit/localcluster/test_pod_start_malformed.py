"""Malformed volume and env specs thrown at the kubelet's pod start path (property-based): the pod
either runs or its containers wait with a clear reason (CreateContainerConfigError with the
kubelet's message, ContainerCreating while a volume cannot be set up), and the start never fails
with an unexpected error. The processes run in the host namespace (the fallback), so no mount
point is made on the host for the generated paths."""

from __future__ import annotations

import asyncio
import base64
import sys
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agones.client.errors import ApiError
from agones.localcluster.nodes.podrunner import KubeletConfig, PodRunner

NAMES = st.sampled_from(["cfg", "sec", "missing", "", "cfg/x", "../x"])
KEYS = st.sampled_from(["k", "bin", "nope", "", "../k", "a/b", "bad key"])
PATHS = st.sampled_from(["p", "a/b", "../up", "/abs", "", "..x", "p"])
MODES = st.one_of(st.none(), st.integers(-5, 0o2000), st.sampled_from(["0644", "x"]))
OPTIONAL = st.one_of(st.none(), st.booleans())
ITEMS = st.lists(
    st.fixed_dictionaries({"key": KEYS, "path": PATHS}, optional={"mode": MODES}), max_size=3
)
FIELD_PATHS = st.sampled_from(
    ["metadata.name", "metadata.labels['a']", "metadata.labels", "spec.bogus", "status.podIP", ""]
)
RESOURCE_REF = st.fixed_dictionaries(
    {"resource": st.sampled_from(["limits.cpu", "requests.memory", "limits.gpu", ""])},
    optional={
        "divisor": st.sampled_from(["1m", "0", "1Mi", "abc", "-1"]),
        "containerName": st.sampled_from(["c", "other", ""]),
    },
)
KEYED = st.fixed_dictionaries(
    {"name": NAMES}, optional={"items": ITEMS, "optional": OPTIONAL, "defaultMode": MODES}
)
DOWNWARD_ITEM = st.fixed_dictionaries(
    {"path": PATHS},
    optional={
        "fieldRef": st.fixed_dictionaries({"fieldPath": FIELD_PATHS}),
        "resourceFieldRef": RESOURCE_REF,
        "mode": MODES,
    },
)
PROJECTED_SOURCE = st.one_of(
    st.fixed_dictionaries({"configMap": KEYED}),
    st.fixed_dictionaries({"secret": KEYED}),
    st.fixed_dictionaries(
        {"downwardAPI": st.fixed_dictionaries({"items": st.lists(DOWNWARD_ITEM, max_size=2)})}
    ),
    st.fixed_dictionaries({"serviceAccountToken": st.fixed_dictionaries({"path": PATHS})}),
    st.just({}),
)
VOLUME_KIND = st.one_of(
    st.fixed_dictionaries({"configMap": KEYED}),
    st.fixed_dictionaries(
        {
            "secret": st.fixed_dictionaries(
                {"secretName": NAMES}, optional={"items": ITEMS, "optional": OPTIONAL}
            )
        }
    ),
    st.fixed_dictionaries(
        {"downwardAPI": st.fixed_dictionaries({"items": st.lists(DOWNWARD_ITEM, max_size=3)})}
    ),
    st.fixed_dictionaries(
        {
            "projected": st.fixed_dictionaries(
                {"sources": st.lists(PROJECTED_SOURCE, max_size=3)}, optional={"defaultMode": MODES}
            )
        }
    ),
    st.just({"emptyDir": {}}),
)
KEY_REF = st.fixed_dictionaries({"name": NAMES, "key": KEYS}, optional={"optional": OPTIONAL})
VALUE_FROM = st.one_of(
    st.fixed_dictionaries({"configMapKeyRef": KEY_REF}),
    st.fixed_dictionaries({"secretKeyRef": KEY_REF}),
    st.fixed_dictionaries({"fieldRef": st.fixed_dictionaries({"fieldPath": FIELD_PATHS})}),
    st.fixed_dictionaries({"resourceFieldRef": RESOURCE_REF}),
    st.just({}),
)
ENV = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {"name": st.sampled_from(["A", "B", "$(A)"]), "value": st.text(max_size=8)}
        ),
        st.fixed_dictionaries({"name": st.sampled_from(["A", "C"]), "valueFrom": VALUE_FROM}),
    ),
    max_size=3,
)
ENV_FROM = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "prefix": st.sampled_from(["", "X_", "1"]),
            "configMapRef": st.fixed_dictionaries({"name": NAMES}, optional={"optional": OPTIONAL}),
            "secretRef": st.fixed_dictionaries({"name": NAMES}, optional={"optional": OPTIONAL}),
        },
    ),
    max_size=2,
)

SOURCES = {
    ("configmaps", "cfg"): {
        "data": {"k": "v"},
        "binaryData": {"bin": base64.b64encode(b"\x00").decode()},
    },
    ("secrets", "sec"): {"data": {"k": base64.b64encode(b"s").decode()}},
}
CLEAR = {
    "ContainerCreating",
    "CreateContainerConfigError",
    "CreateContainerError",
    "PodInitializing",
}


class _Client:
    def __init__(self) -> None:
        self.patches: list[dict[str, Any]] = []

    async def patch(self, _res: Any, _name: str, body: dict[str, Any], **_kw: Any) -> None:
        self.patches.append(body)

    async def get(self, res: Any, name: str, **_kw: Any) -> dict[str, Any]:
        obj = SOURCES.get((res.plural, name))
        if obj is None:
            raise ApiError(
                404, {"reason": "NotFound", "message": f"{res.plural} {name!r} not found"}
            )
        return obj


async def _start(pod: dict[str, Any], tmp: str) -> list[dict[str, Any]]:
    kubelet = SimpleNamespace(
        config=KubeletConfig(kubeconfig="", api_port=0, use_netns=False, state_dir=tmp),
        client=_Client(),
        processes=set(),
    )
    runner = PodRunner(kubelet, pod, "127.0.0.1")  # type: ignore[arg-type]
    runner.start_task = asyncio.create_task(runner.start())

    def settled() -> bool:
        if runner.start_task is not None and runner.start_task.done():
            return True
        last = kubelet.client.patches[-1]["status"] if kubelet.client.patches else {}
        return any("waiting" in s["state"] for s in last.get("containerStatuses") or [])

    for _ in range(400):
        if settled():
            break
        await asyncio.sleep(0.025)
    await asyncio.wait_for(runner.terminate(1), 20)
    assert runner.start_task.done() and runner.start_task.exception() is None
    return [p["status"] for p in kubelet.client.patches]


@settings(max_examples=40)
@given(volumes=st.lists(VOLUME_KIND, max_size=3), env=ENV, env_from=ENV_FROM)
def test_malformed_volumes_and_env_give_a_clear_waiting_reason(
    tmp_path_factory: Any, volumes: list[dict[str, Any]], env: list[Any], env_from: list[Any]
) -> None:
    named = [{"name": f"v{i}", **v} for i, v in enumerate(volumes)]
    container = {
        "name": "c",
        "command": [sys.executable, "-c", "pass"],
        "env": env,
        "envFrom": env_from,
        "volumeMounts": [
            {"name": v["name"], "mountPath": f"/etc/v{i}"} for i, v in enumerate(named)
        ],
    }
    pod = {
        "metadata": {"name": "p", "namespace": "ns", "uid": "u-hyp", "labels": {"a": "1"}},
        "spec": {"restartPolicy": "Never", "volumes": named, "containers": [container]},
    }
    written = asyncio.run(_start(pod, str(tmp_path_factory.mktemp("pods"))))
    for status in written:
        for s in status.get("containerStatuses") or []:
            waiting = s["state"].get("waiting")
            terminated = s["state"].get("terminated")
            if waiting is not None:
                assert waiting["reason"] in CLEAR, waiting
                if waiting["reason"].startswith("Create"):
                    assert waiting["message"]
            if terminated is not None:
                assert terminated["reason"] != "StartError", terminated
