"""Malformed Deployments and ReplicaSets (created, replaced, patched, scaled) get a 4xx from the
API server, and the local cluster's deployment, replicaset and endpoints controllers keep running:
a valid Deployment still rolls out afterwards (hypothesis, over the e2e stack)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.e2e.framework import Framework
from tests.e2e.test_local_deployments import kubectl

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
SPEC_FIELDS = st.sampled_from(
    [
        "replicas",
        "selector",
        "template",
        "strategy",
        "minReadySeconds",
        "revisionHistoryLimit",
        "progressDeadlineSeconds",
        "paused",
    ]
)
NESTED = st.sampled_from(
    [
        ("strategy", "type"),
        ("strategy", "rollingUpdate"),
        ("selector", "matchLabels"),
        ("selector", "matchExpressions"),
        ("template", "metadata"),
        ("template", "spec"),
    ]
)


def valid(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "example/game:1"}]},
            },
        },
    }


@st.composite
def malformed(draw: st.DrawFn) -> dict[str, Any]:
    body = valid("fuzz")
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            body["spec"][draw(SPEC_FIELDS)] = draw(JSON_VALUES)
        else:
            outer, inner = draw(NESTED)
            holder = body["spec"].setdefault(outer, {})
            if isinstance(holder, dict):
                holder[inner] = draw(JSON_VALUES)
    if draw(st.booleans()):
        body["spec"] = draw(JSON_VALUES)
    return body


@pytest.mark.timeout(600)
@given(body=malformed(), verb=st.sampled_from(["POST", "PUT", "PATCH", "SCALE"]))
def test_malformed_deployments_get_4xx(
    framework: Framework, body: dict[str, Any], verb: str
) -> None:
    fw = framework
    for kind in ("deployments", "replicasets"):
        base = f"/apis/apps/v1/namespaces/{fw.namespace}/{kind}"
        existing = valid("target")
        existing["kind"] = "ReplicaSet" if kind == "replicasets" else "Deployment"
        if fw.api.get(f"{base}/target").status == 404:
            assert fw.api.post(base, existing).status == 201
        sent = {**body, "kind": existing["kind"], "metadata": {"name": "target"}}
        if verb == "POST":
            resp = fw.api.post(base, {**sent, "metadata": {"generateName": "fuzz-"}})
        elif verb == "PUT":
            resp = fw.api.put(f"{base}/target", sent)
        elif verb == "PATCH":
            resp = fw.api.patch(f"{base}/target", {"spec": sent.get("spec")})
        else:
            spec = sent.get("spec")
            replicas = spec.get("replicas") if isinstance(spec, dict) else spec
            resp = fw.api.patch(f"{base}/target/scale", {"spec": {"replicas": replicas}})
        assert resp.status < 500, resp
        if resp.status in (200, 201):
            continue  # a body that happened to be valid: the controllers act on it
        assert resp.body.get("kind") == "Status", resp


@pytest.mark.timeout(120)
def test_controllers_survive_the_fuzzing(framework: Framework, local_stack: Any) -> None:
    stack = local_stack.stack
    for controller in (stack.deployments, stack.replica_sets, stack.endpoints):
        controller.workerqueue.healthy()
    kubectl(framework, "apply", "-f", "-", stdin=json.dumps(valid("after-fuzz")))
    out = kubectl(framework, "rollout", "status", "deploy/after-fuzz", "--timeout=60s")
    assert "successfully rolled out" in out
