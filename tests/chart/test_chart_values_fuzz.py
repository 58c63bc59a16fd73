"""Malformed values thrown at charts/agones: Helm refuses them with a clear error, or every object it
renders is still valid against Kubernetes' schemas. Never a template crash, never a broken object.
"""

from __future__ import annotations

from typing import Any

import kubernetes_validate
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tools import helmchart

helm = pytest.importorskip("helm_python")

# Paths into values.yaml (the ones templates compute with) and junk to put there.
PATHS = [
    ("agones", "controller", "replicas"),
    ("agones", "controller", "http", "port"),
    ("agones", "controller", "healthCheck"),
    ("agones", "extensions", "webhooks", "port"),
    ("agones", "allocator", "service", "http", "port"),
    ("agones", "allocator", "service", "grpc", "targetPort"),
    ("agones", "allocator", "clientCAs"),
    ("agones", "allocator", "disableTLS"),
    ("agones", "ping", "udp", "rateLimit"),
    ("agones", "featureGates"),
    ("agones", "image", "tag"),
    ("agones", "metrics", "serviceMonitor"),
    ("gameservers", "namespaces"),
    ("gameservers", "additionalPortRanges"),
    ("gameservers", "minPort"),
    ("agones", "image", "registry"),
    ("agones", "serviceaccount", "sdk", "name"),
    ("agones", "allocator", "service", "name"),
    ("agones", "allocator", "service", "loadBalancerIP"),
    ("agones", "ping", "http", "response"),
    ("agones", "priorityClassName"),
    ("agones", "controller", "annotations"),
]
JUNK = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=6,
)


def nest(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    out: Any = value
    for key in reversed(path):
        out = {key: out}
    return dict(out)


def merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for key, value in b.items():
        out[key] = (
            merge(out[key], value)
            if isinstance(out.get(key), dict) and isinstance(value, dict)
            else value
        )
    return out


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(PATHS), JUNK), min_size=1, max_size=3))
def test_bad_values_fail_cleanly_or_render_valid_objects(
    overrides: list[tuple[tuple[str, ...], Any]],
) -> None:
    values: dict[str, Any] = {}
    for path, junk in overrides:
        values = merge(values, nest(path, junk))
    try:
        objs = helmchart.objects(values)
    except (helm.HelmValuesError, helm.HelmRenderError) as err:
        assert str(err).strip(), "an error without a message"
        return
    for obj in objs:
        if obj["kind"] not in {"ServiceMonitor"}:
            kubernetes_validate.validate(obj, "1.28.0", strict=True)
