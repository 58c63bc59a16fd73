"""`python -m tools.sizes`: hand-written modules over 600 lines and functions over 80 are listed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools import sizes


def body(lines: int) -> str:
    return "".join(f"    x{i} = {i}\n" for i in range(lines - 1))


@pytest.mark.parametrize(
    ("files", "want"),
    [
        pytest.param({"src/a.py": "def f():\n" + body(80)}, [], id="function-of-80-is-fine"),
        pytest.param(
            {"src/a.py": "def f():\n" + body(81)},
            ["src/a.py:1 f(): 81 lines (limit 80)"],
            id="function-of-81",
        ),
        pytest.param(
            {
                "src/a.py": "class C:\n    async def m(self):\n"
                + "    "
                + body(81).replace("\n    ", "\n        ")
            },
            ["src/a.py:2 C.m(): 81 lines (limit 80)"],
            id="method-named-with-its-class",
        ),
        pytest.param(
            {"tools/b.py": "x = 1\n" * 601},
            ["tools/b.py: 601 lines (limit 600)"],
            id="module-of-601",
        ),
        pytest.param(
            {"src/g.py": sizes.GENERATED + "\n" + "x = 1\n" * 700},
            [],
            id="generated-code-is-skipped",
        ),
    ],
)
def test_findings(tmp_path: Path, files: dict[str, str], want: list[str]) -> None:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert [str(f) for f in sizes.findings(tmp_path)] == want


def test_the_listed_data_tables_exist() -> None:
    for entry in sizes.DATA_TABLES:
        rel, _, function = entry.partition("::")
        assert (sizes.ROOT / rel).is_file(), rel
        assert function.split(".")[-1] in (sizes.ROOT / rel).read_text(), entry


def test_the_tool_runs_over_the_repository(capsys: pytest.CaptureFixture[str]) -> None:
    assert sizes.main(["--under", "src/workqueue"]) == 0
    assert "0 module(s) over 600 lines, 0 function(s) over 80 lines" in capsys.readouterr().out


def test_the_repository_keeps_its_limits() -> None:
    """Every hand-written module under 600 lines and every function under 80, generated code and
    the listed data tables aside: a new breach fails CI here."""
    assert [str(f) for f in sizes.findings()] == []
