"""Quantities of built-in objects stored canonically, and read back by one parser."""

from __future__ import annotations

import pytest

from agones.localcluster.apiserver.quantities import FORMAT_WRONG, allocatable_pods, canonicalize
from agones.localcluster.nodes.scheduler import choose_node, node_object


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        pytest.param("1000", "1k", id="thousand"),
        pytest.param("2000m", "2", id="milli-whole"),
        pytest.param("0.5", "500m", id="fraction"),
        pytest.param("1024Mi", "1Gi", id="binary"),
        pytest.param(3, "3", id="json-number"),
        pytest.param(0.25, "250m", id="json-float"),
        pytest.param("1.5Gi", "1536Mi", id="binary-fraction"),
        pytest.param("1e3", "1e3", id="exponent"),
    ],
)
def test_pod_quantities_are_canonical(given: object, stored: str) -> None:
    pod = {"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": given}}}]}}
    assert canonicalize("Pod", pod) == ""
    assert pod["spec"]["containers"][0]["resources"]["limits"]["cpu"] == stored


@pytest.mark.parametrize(
    "given",
    [pytest.param("lots", id="word"), pytest.param(True, id="bool"), pytest.param([], id="list")],
)
def test_what_is_not_a_quantity_fails_decoding(given: object) -> None:
    node = {"status": {"allocatable": {"pods": given}}}
    assert canonicalize("Node", node) == FORMAT_WRONG


def test_every_quantity_of_a_pod_is_rewritten() -> None:
    pod = {
        "spec": {
            "initContainers": [{"resources": {"requests": {"memory": "1024Ki"}}}],
            "overhead": {"cpu": "1000m"},
            "volumes": [{"name": "v", "emptyDir": {"sizeLimit": "2048Mi"}}],
        }
    }
    assert canonicalize("Pod", pod) == ""
    assert pod["spec"]["initContainers"][0]["resources"]["requests"] == {"memory": "1Mi"}
    assert pod["spec"]["overhead"] == {"cpu": "1"}
    assert pod["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] == "2Gi"


def test_scheduler_reads_canonical_pod_capacity() -> None:
    # A node of 1000 pods is stored as "1k" (the scheduler once crashed on int("1k")).
    node = node_object("n1", "10.0.0.1", max_pods=1000)
    assert canonicalize("Node", node) == ""
    assert node["status"]["allocatable"]["pods"] == "1k"
    assert allocatable_pods(node) == 1000
    assert allocatable_pods({"status": {"allocatable": {"pods": "1.5k"}}}) == 1500
    assert choose_node({"spec": {"containers": []}}, [node], []) == "n1"
