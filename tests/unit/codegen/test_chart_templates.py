"""tools/codegen/chart.py (the chart's generated files) and tools.helmchart.normalise, by tables."""

from __future__ import annotations

import pytest
import yaml

from agones.featuregates import FEATURES
from tools.codegen import chart
from tools.helmchart import GENERATED, normalise


@pytest.mark.parametrize(
    "text",
    ["description: use {{ .x }}\n", "pattern: '^a}}$'\n"],
    ids=["open-action", "close-action"],
)
def test_crd_text_with_template_delimiters_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="cannot be a Helm template"):
        chart.template_for(text)


def test_crd_template_is_the_crd_inside_the_install_gate() -> None:
    body = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
    assert chart.template_for(body) == chart.GATE_OPEN + body + chart.GATE_CLOSE


def test_default_feature_gates_list_every_gate_with_its_default() -> None:
    gates = yaml.safe_load(chart.default_feature_gates())
    assert gates == {f.value: spec.default for f, spec in FEATURES.items()}


@pytest.mark.parametrize(
    "line,expected",
    [
        ("  caBundle: LS0tLS1CRUdJTg==", f"  caBundle: {GENERATED}"),
        ("  tls.crt: LS0t", f"  tls.crt: {GENERATED}"),
        (
            "        agones.dev/cert-checksum: 0123abcd",
            f"        agones.dev/cert-checksum: {GENERATED}",
        ),
        ("  client-ca.crt: LS0t", f"  client-ca.crt: {GENERATED}"),
        ("                      caBundle:", "                      caBundle:"),
        ("  name: tls.crt", "  name: tls.crt"),
        ("  serverCa: LS0t", "  serverCa: LS0t"),
    ],
    ids=[
        "ca-bundle",
        "tls-crt",
        "checksum",
        "client-ca",
        "schema-key",
        "value-not-key",
        "other-key",
    ],
)
def test_normalise_masks_only_generated_values(line: str, expected: str) -> None:
    assert normalise(line) == expected
