"""The local provisioner's volume for a claim, and the kubelet's resolution of a claim to its
directory, by tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agones.localcluster.controllers.volumes import (
    claim_index,
    default_storage_class,
    volume_for_claim,
)
from agones.localcluster.nodes.volumes import VolumeError
from agones.localcluster.nodes.volumes_pvc import claim_directory, claim_names


def claim(phase: str = "Bound", volume: str = "pvc-u1") -> dict[str, Any]:
    return {
        "metadata": {"name": "data-web-0", "namespace": "ns", "uid": "u1"},
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "2Gi"}},
            "volumeName": volume,
        },
        "status": {"phase": phase},
    }


def test_the_provisioned_volume() -> None:
    pv = volume_for_claim(claim("Pending"), default_storage_class(), Path("/state/pv"))
    assert pv["metadata"]["name"] == "pvc-u1"
    spec = pv["spec"]
    assert spec["hostPath"]["path"] == "/state/pv/pvc-u1"
    assert (spec["capacity"], spec["accessModes"]) == ({"storage": "2Gi"}, ["ReadWriteOnce"])
    assert (spec["persistentVolumeReclaimPolicy"], spec["storageClassName"]) == (
        "Delete",
        "standard",
    )
    assert spec["claimRef"] == {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "namespace": "ns",
        "name": "data-web-0",
        "uid": "u1",
    }
    assert claim_index(pv) == ["ns/data-web-0"]
    assert claim_index({"spec": {}}) == []


@pytest.mark.parametrize(
    ("the_claim", "volume", "result"),
    [
        pytest.param(
            claim(),
            {"metadata": {"name": "pvc-u1"}, "spec": {"hostPath": {"path": "/v/1"}}},
            "/v/1",
            id="hostPath",
        ),
        pytest.param(
            claim(),
            {"metadata": {"name": "pvc-u1"}, "spec": {"local": {"path": "/v/2"}}},
            "/v/2",
            id="local",
        ),
        pytest.param(None, None, "not found", id="no-claim"),
        pytest.param(claim("Pending"), None, "is not bound", id="pending"),
        pytest.param(
            claim(),
            {"metadata": {"name": "pvc-u1"}, "spec": {"nfs": {"path": "/x"}}},
            "no local path",
            id="nfs",
        ),
    ],
)
def test_claim_directory(the_claim: Any, volume: Any, result: str) -> None:
    if result.startswith("/"):
        assert claim_directory(the_claim, volume, "data-web-0") == Path(result)
    else:
        with pytest.raises(VolumeError, match=result):
            claim_directory(the_claim, volume, "data-web-0")


def test_claim_names() -> None:
    pod = {
        "spec": {
            "volumes": [
                {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}},
                {"name": "tmp", "emptyDir": {}},
            ]
        }
    }
    assert claim_names(pod) == {"data": "data-web-0"}
