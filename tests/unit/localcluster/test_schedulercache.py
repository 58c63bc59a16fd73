"""`schedulercache`: the usage kept by pod events equals the usage recomputed over all pods."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.localcluster.nodes.schedulercache import NodeUsage, SchedulerCache

NODES = ["n1", "n2"]
PORTS = [("UDP", 7000), ("TCP", 7000), ("UDP", 7001)]
SELECTORS: list[dict[str, Any]] = [
    {"matchLabels": {"role": "gs"}},
    {"matchExpressions": [{"key": "role", "operator": "Exists"}]},
    {},
]


def make_pod(
    uid: str,
    node: str = "",
    phase: str = "Running",
    ports: tuple[tuple[str, int], ...] = (),
    role: str | None = "gs",
    deleting: bool = False,
    scheduler: str | None = None,
) -> dict[str, Any]:
    md: dict[str, Any] = {"name": uid, "namespace": "default", "uid": uid}
    md["labels"] = {} if role is None else {"role": role}
    if deleting:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec: dict[str, Any] = {
        "containers": [{"name": "c", "ports": [{"hostPort": p, "protocol": pr} for pr, p in ports]}]
    }
    if node:
        spec["nodeName"] = node
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    return {"metadata": md, "spec": spec, "status": {"phase": phase}}


pods = st.builds(
    make_pod,
    uid=st.sampled_from(["u0", "u1", "u2", "u3"]),
    node=st.sampled_from(["", *NODES]),
    phase=st.sampled_from(["Pending", "Running", "Succeeded", "Failed"]),
    ports=st.lists(st.sampled_from(PORTS), max_size=2, unique=True).map(tuple),
    role=st.sampled_from([None, "gs", "other"]),
    deleting=st.booleans(),
    scheduler=st.sampled_from([None, "default-scheduler", "", "other"]),
)
keys = st.sampled_from(["u0", "u1", "u2", "u3"])
ops = st.lists(
    st.one_of(
        st.tuples(st.just("add"), pods),
        st.tuples(st.just("delete"), keys),
        st.tuples(st.just("assume"), keys, st.sampled_from(NODES)),
        st.tuples(st.just("forget"), keys),
        st.tuples(st.just("ask"), st.sampled_from(NODES), st.sampled_from(range(len(SELECTORS)))),
    ),
    max_size=40,
)


class Model:
    """The pods the informer holds and the nodes assumed for them, recomputed from scratch."""

    def __init__(self) -> None:
        self.store: dict[str, dict[str, Any]] = {}
        self.assumed: dict[str, str] = {}

    def view(self) -> list[dict[str, Any]]:
        """Every pod, on its nodeName or else on the node assumed for it."""
        out = []
        for key, pod in self.store.items():
            node = pod["spec"].get("nodeName") or self.assumed.get(key)
            out.append({**pod, "spec": {**pod["spec"], "nodeName": node or ""}})
        return out

    def on(self, node: str) -> list[dict[str, Any]]:
        return [
            p
            for p in self.view()
            if p["spec"]["nodeName"] == node and p["status"]["phase"] not in ("Succeeded", "Failed")
        ]

    def matching(self, node: str, selector: dict[str, Any]) -> int:
        labels = [p["metadata"]["labels"] for p in self.on(node)]
        if "matchLabels" in selector:
            return sum(1 for lab in labels if lab.get("role") == "gs")
        if "matchExpressions" in selector:
            return sum(1 for lab in labels if "role" in lab)
        return len(labels)

    def pending(self) -> set[str]:
        return {
            key
            for key, pod in self.store.items()
            if not pod["spec"].get("nodeName")
            and key not in self.assumed
            and "deletionTimestamp" not in pod["metadata"]
            and pod["spec"].get("schedulerName", "default-scheduler") in ("default-scheduler", "")
        }


def assert_usage_is(usage: NodeUsage, model: Model) -> None:
    for node in NODES:
        on_node = model.on(node)
        assert usage.running(node) == len(on_node)
        for port in PORTS:
            claimed = any(
                (c["protocol"], c["hostPort"]) == port
                for p in on_node
                for c in p["spec"]["containers"][0]["ports"]
            )
            assert usage.ports_taken(node, {port}) == claimed
        for selector in SELECTORS:
            assert usage.matching(node, selector) == model.matching(node, selector)


@settings(max_examples=300, deadline=None)
@given(ops)
def test_the_cache_equals_the_recomputation_after_any_sequence_of_pod_events(
    sequence: list[tuple[Any, ...]],
) -> None:
    cache, model = SchedulerCache(), Model()
    for op, *args in sequence:
        if op == "add":
            pod = args[0]
            model.store[pod["metadata"]["uid"]] = pod
            if pod["spec"].get("nodeName"):
                model.assumed.pop(pod["metadata"]["uid"], None)
            cache.add_pod(pod)
        elif op == "delete" and args[0] in model.store:
            cache.remove_pod(model.store.pop(args[0]))
            model.assumed.pop(args[0], None)
        elif op == "assume" and args[0] in cache.pending:  # as the scheduler does
            model.assumed[args[0]] = args[1]
            cache.assume_pod(cache.pending[args[0]], args[1])
        elif op == "forget":
            model.assumed.pop(args[0], None)
            cache.forget_pod(args[0])
        elif op == "ask":  # asking caches the count, which later events must keep current
            node, selector = args[0], SELECTORS[args[1]]
            assert cache.usage.matching(node, selector) == model.matching(node, selector)
        assert set(cache.pending) == model.pending()
        assert all(cache.pending[k] is model.store[k] for k in cache.pending)
    assert_usage_is(cache.usage, model)
    assert_usage_is(NodeUsage(model.view()), model)


@pytest.mark.parametrize(
    ("events", "pending"),
    [
        pytest.param([make_pod("a"), make_pod("b")], ["a", "b"], id="first-seen-first"),
        pytest.param([make_pod("a"), make_pod("b"), make_pod("a")], ["a", "b"], id="update-keeps"),
        pytest.param([make_pod("a", node="n1")], [], id="bound"),
        pytest.param([make_pod("a", deleting=True)], [], id="being-deleted"),
        pytest.param([make_pod("a", scheduler="other")], [], id="other-scheduler"),
        pytest.param([make_pod("a", phase="Failed")], ["a"], id="finished-but-unbound-waits"),
    ],
)
def test_pending(events: list[dict[str, Any]], pending: list[str]) -> None:
    cache = SchedulerCache()
    for pod in events:
        cache.add_pod(pod)
    assert list(cache.pending) == pending


def test_an_assumed_pod_counts_on_its_node_until_it_is_seen_bound_or_forgotten() -> None:
    cache = SchedulerCache()
    cache.add_pod(make_pod("a", ports=(("UDP", 7000),)))
    cache.assume_pod(make_pod("a"), "n1")
    assert cache.usage.ports_taken("n1", {("UDP", 7000)}) and not cache.pending
    cache.add_pod(make_pod("a", node="n1", ports=(("UDP", 7000),)))
    assert cache.assumed == {} and cache.usage.running("n1") == 1
    cache.add_pod(make_pod("b"))
    cache.assume_pod(make_pod("b"), "n2")
    cache.forget_pod("b")
    assert cache.usage.running("n2") == 0 and list(cache.pending) == ["b"]
