"""A container's environment by tables, as the kubelet makes it: values with $(VAR) expansion,
valueFrom (fieldRef, resourceFieldRef with divisor, configMapKeyRef, secretKeyRef with optional),
envFrom with prefix, and the kubelet's messages for references that cannot be resolved."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from agones.localcluster.nodes.containers import resolve_env
from agones.localcluster.nodes.envvars import (
    ContainerConfigError,
    EnvSources,
    PodAddresses,
    expand,
    make_environment,
    referenced_sources,
)

ADDRESSES = PodAddresses("127.254.0.7", "127.1.0.1")
SOURCES = EnvSources(
    config_maps={"cfg": {"data": {"LEVEL": "3", "bad key": "x", "motd": "hi"}}, "gone": None},
    secrets={"sec": {"data": {"password": base64.b64encode(b"pw").decode()}}},
)


def _pod(container: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "web-0",
            "namespace": "games",
            "uid": "u-1",
            "labels": {"app": "web"},
            "annotations": {"note": "n"},
        },
        "spec": {"nodeName": "node-1", "serviceAccountName": "sa", "containers": [container]},
    }


def _env(
    *items: dict[str, Any], env_from: list[Any] | None = None, **container: Any
) -> dict[str, str]:
    c = {"name": "main", "env": list(items), "envFrom": env_from or [], **container}
    return make_environment(c, _pod(c), SOURCES, ADDRESSES)


def _ref(kind: str, **ref: Any) -> dict[str, Any]:
    return {"name": "V", "valueFrom": {kind: ref}}


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        pytest.param([{"name": "A", "value": "1"}], {"A": "1"}, id="value"),
        pytest.param([{"name": "A"}], {"A": ""}, id="no-value"),
        pytest.param(
            [{"name": "A", "value": "x"}, {"name": "B", "value": "$(A)-$(C)-$$(A)"}],
            {"A": "x", "B": "x-$(C)-$(A)"},
            id="expansion",
        ),
        pytest.param([_ref("fieldRef", fieldPath="metadata.name")], {"V": "web-0"}, id="name"),
        pytest.param(
            [_ref("fieldRef", fieldPath="metadata.labels['app']")], {"V": "web"}, id="label"
        ),
        pytest.param(
            [_ref("fieldRef", fieldPath="metadata.annotations['note']")],
            {"V": "n"},
            id="annotation",
        ),
        pytest.param(
            [_ref("fieldRef", fieldPath="status.podIP")], {"V": "127.254.0.7"}, id="podIP"
        ),
        pytest.param(
            [_ref("fieldRef", fieldPath="status.hostIP")], {"V": "127.1.0.1"}, id="hostIP"
        ),
        pytest.param([_ref("fieldRef", fieldPath="spec.nodeName")], {"V": "node-1"}, id="node"),
        pytest.param(
            [_ref("configMapKeyRef", name="cfg", key="LEVEL")], {"V": "3"}, id="configMapKeyRef"
        ),
        pytest.param([_ref("secretKeyRef", name="sec", key="password")], {"V": "pw"}, id="secret"),
        pytest.param(
            [_ref("secretKeyRef", name="nope", key="k", optional=True)], {}, id="optional-secret"
        ),
        pytest.param(
            [_ref("configMapKeyRef", name="cfg", key="nope", optional=True)],
            {},
            id="optional-key",
        ),
    ],
)
def test_env(items: list[dict[str, Any]], expected: dict[str, str]) -> None:
    assert _env(*items) == expected


@pytest.mark.parametrize(
    ("resources", "ref", "expected"),
    [
        pytest.param({"limits": {"cpu": "250m"}}, {"resource": "limits.cpu"}, "1", id="cpu-ceil"),
        pytest.param(
            {"limits": {"cpu": "250m"}},
            {"resource": "limits.cpu", "divisor": "1m"},
            "250",
            id="mcpu",
        ),
        pytest.param(
            {"requests": {"memory": "64Mi"}},
            {"resource": "requests.memory", "divisor": "1Mi"},
            "64",
            id="memory",
        ),
        pytest.param({}, {"resource": "limits.cpu"}, "2", id="limit-defaults-to-node"),
        pytest.param({}, {"resource": "requests.memory"}, "0", id="no-request"),
        pytest.param(
            {"limits": {"memory": "1G"}},
            {"resource": "limits.memory", "divisor": "1Mi"},
            "954",
            id="round-up",
        ),
    ],
)
def test_resource_field_ref(resources: dict[str, Any], ref: dict[str, Any], expected: str) -> None:
    assert _env(_ref("resourceFieldRef", **ref), resources=resources) == {"V": expected}


def test_env_from_with_prefix_and_env_wins() -> None:
    got = _env(
        {"name": "CFG_LEVEL", "value": "override"},
        env_from=[
            {"prefix": "CFG_", "configMapRef": {"name": "cfg"}},
            {"secretRef": {"name": "sec"}},
            {"configMapRef": {"name": "gone", "optional": True}},
        ],
    )
    # "bad key" is not a valid variable name: skipped, as the kubelet skips it
    assert got == {"CFG_LEVEL": "override", "CFG_motd": "hi", "password": "pw"}


@pytest.mark.parametrize(
    ("item", "env_from", "message"),
    [
        pytest.param(
            _ref("configMapKeyRef", name="gone", key="k"),
            None,
            'configmap "gone" not found',
            id="cm",
        ),
        pytest.param(
            _ref("configMapKeyRef", name="cfg", key="k"),
            None,
            "couldn't find key k in ConfigMap games/cfg",
            id="cm-key",
        ),
        pytest.param(
            _ref("secretKeyRef", name="nope", key="k"), None, 'secret "nope" not found', id="secret"
        ),
        pytest.param(
            _ref("secretKeyRef", name="sec", key="k"),
            None,
            "couldn't find key k in Secret games/sec",
            id="secret-key",
        ),
        pytest.param(
            None, [{"secretRef": {"name": "nope"}}], 'secret "nope" not found', id="envFrom"
        ),
        pytest.param(
            _ref("fieldRef", fieldPath="spec.bogus"),
            None,
            "unsupported fieldPath: spec.bogus",
            id="fieldPath",
        ),
        pytest.param(
            _ref("resourceFieldRef", resource="limits.gpu"),
            None,
            "unsupported container resource : limits.gpu",
            id="resource",
        ),
        pytest.param(
            _ref("resourceFieldRef", resource="limits.cpu", divisor="0"),
            None,
            "invalid divisor in resourceFieldRef: must be positive",
            id="divisor",
        ),
    ],
)
def test_unresolvable_reference(item: Any, env_from: Any, message: str) -> None:
    with pytest.raises(ContainerConfigError) as err:
        _env(*([item] if item else []), env_from=env_from)
    assert str(err.value) == message
    assert err.value.reason == "CreateContainerConfigError"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("$(A)", "1", id="ref"),
        pytest.param("$$(A)", "$(A)", id="escaped"),
        pytest.param("$(", "$(", id="unclosed"),
        pytest.param("a$", "a$", id="trailing"),
        pytest.param("$x", "$x", id="not-a-ref"),
        pytest.param("$(B)", "$(B)", id="unknown"),
    ],
)
def test_expand(text: str, expected: str) -> None:
    assert expand(text, {"A": "1"}) == expected


def test_referenced_sources_and_simulated_env() -> None:
    container = {
        "name": "c",
        "env": [
            _ref("configMapKeyRef", name="a", key="k"),
            {"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        ],
        "envFrom": [{"secretRef": {"name": "b"}}],
    }
    assert referenced_sources(_pod(container)) == {("configMap", "a"), ("secret", "b")}
    assert resolve_env(container, _pod(container), "127.1.0.1") == {"N": "games"}
