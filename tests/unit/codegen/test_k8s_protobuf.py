"""The generated protobuf tables: their JSON names agree with an independent source (the official
Kubernetes Python client's models), the Go overlay names only fields the wire facts have, and the
generator refuses an overlay that names anything else."""

from __future__ import annotations

import copy
import json

import kubernetes.client.models as models
import pytest

from agones.localcluster.apiserver.protobuf_messages import INLINE, KEEP_ZERO, MESSAGES, RAW
from tools.codegen import k8s_protobuf

# Fields the installed (newer) client models no longer carry under their v1.28 names.
NEWER_CLIENT = {("k8s.io.api.core.v1.PodResourceClaim", "source")}


def _model(message: str) -> type | None:
    name = message.rpartition(".")[2]
    version = message.rsplit(".", 2)[1]
    found: type | None = getattr(models, f"{version.capitalize()}{name}", None)
    return found


def test_json_names_agree_with_the_kubernetes_client_models() -> None:
    checked, wrong = 0, []
    for message, fields in MESSAGES.items():
        model = _model(message)
        if model is None:
            continue
        names = set(model.attribute_map.values())
        for _, name, _, flags in fields:
            if flags & (INLINE | RAW) or (message, name) in NEWER_CLIENT:
                continue
            checked += 1
            if name not in names:
                wrong.append((message, name))
    assert wrong == []
    assert checked > 1000


@pytest.mark.parametrize(
    ("message", "field"),
    [
        pytest.param("k8s.io.api.core.v1.PodSpec", "terminationGracePeriodSeconds", id="pointer"),
        pytest.param("k8s.io.api.apps.v1.DeploymentSpec", "replicas", id="replicas"),
        pytest.param("k8s.io.api.rbac.v1.RoleRef", "apiGroup", id="no-omitempty"),
    ],
)
def test_go_kept_zeros_are_flagged(message: str, field: str) -> None:
    flags = {name: fl for _, name, _, fl in MESSAGES[message]}
    assert flags[field] & KEEP_ZERO


def test_the_job_spec_erratum_is_applied() -> None:
    names = {num: name for num, name, _, _ in MESSAGES["k8s.io.api.batch.v1.JobSpec"]}
    assert names[9] == "completionMode"


@pytest.mark.parametrize(
    "overlay",
    [
        pytest.param({"k8s.io.api.core.v1.Pod": ["nope"]}, id="unknown-field"),
        pytest.param({"k8s.io.api.core.v1.Nope": []}, id="unknown-message"),
    ],
)
def test_the_generator_refuses_an_overlay_naming_nothing(overlay: dict) -> None:
    packages = json.loads(k8s_protobuf.WIRE_FILE.read_text())["packages"]
    go = json.loads(k8s_protobuf.GO_FILE.read_text())
    go = copy.deepcopy(go)
    go["keep_zero"].update(overlay)
    with pytest.raises(SystemExit):
        k8s_protobuf.render(packages, go)
