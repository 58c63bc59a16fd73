"""The import graph of src/ has no cycles and no layer breaches (`python -m tools.importgraph`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import importgraph


def test_src_has_no_import_cycle_and_no_layer_breach() -> None:
    assert importgraph.problems() == []


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


@pytest.mark.parametrize(
    ("files", "want"),
    [
        pytest.param(
            {"a.py": "from .b import x\n", "b.py": "from .a import y\n"},
            ["import cycle: a <-> b"],
            id="direct",
        ),
        pytest.param(
            {
                "a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import x\n",
                "b.py": "from .a import y\n",
            },
            ["import cycle: a <-> b"],
            id="type-checking-import-counts",
        ),
        pytest.param(
            {"a.py": "def f():\n    from .b import x\n", "b.py": "from .a import y\n"},
            ["import cycle: a <-> b"],
            id="late-import-counts",
        ),
        pytest.param(
            {
                "p/__init__.py": "from .m import x\n",
                "p/m.py": "from ..q import y\n",
                "q.py": "from .p.n import z\n",
                "p/n.py": "",
            },
            ["import cycle: p <-> p.m <-> q"],
            id="through-a-package-init",
        ),
        pytest.param(
            {"a.py": "from .b import x\n", "b.py": "from .c import y\n", "c.py": ""},
            [],
            id="acyclic",
        ),
        pytest.param(
            {"extensions/w.py": "from ..sdkserver.x import y\n", "sdkserver/x.py": ""},
            ["extensions.w imports sdkserver.x: the webhooks do not reach into the SDK sidecar"],
            id="layer-breach",
        ),
    ],
)
def test_problems_found(tmp_path: Path, files: dict[str, str], want: list[str]) -> None:
    src = write(tmp_path / "src", {"__init__.py": "", **files})
    found = importgraph.problems(src)
    assert found == want
