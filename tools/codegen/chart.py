"""Generate the Helm chart's CRD templates (`charts/agones/templates/crds/*.yaml`) from `crds/*.yaml`.

One source: each template is the generated CRD of `tools/codegen/crds.py`, byte for byte, inside
`{{- if .Values.agones.crds.install }}` (Agones ships its CRDs as templates gated by that value, not
in Helm's `crds/` folder, so that upgrades update them). A CRD text holding `{{` would be read as a
template action; that fails generation instead of rendering wrongly.
"""

from __future__ import annotations

from pathlib import Path

from tools.codegen import crds

OUT_DIR = "charts/agones/templates/crds"
GATE_OPEN = "{{- if .Values.agones.crds.install }}\n"
GATE_CLOSE = "{{- end }}\n"


def template_for(crd_text: str) -> str:
    """The chart template of one generated CRD."""
    if "{{" in crd_text or "}}" in crd_text:
        raise ValueError("a generated CRD holds '{{' or '}}': it cannot be a Helm template as is")
    return GATE_OPEN + crd_text + GATE_CLOSE


def generate(root: Path) -> dict[str, str]:
    out = {}
    for rel, text in crds.generate(root).items():
        out[f"{OUT_DIR}/{Path(rel).name}"] = template_for(text)
    return out
