"""`agones local up --image` and `--images` on malformed input: exit 2 with one `error:` line,
before anything starts (property-based)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.cmd.main import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    with tempfile.TemporaryDirectory() as state:
        code = main(["local", "up", "--state-dir", state, *args])
    return code, capsys.readouterr().out


@settings(max_examples=60, deadline=None)
@given(flag=st.text(max_size=40).filter(lambda t: "=" not in t and not t.startswith("-")))
def test_an_image_flag_without_a_command_is_one_line(
    capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    code, out = run(capsys, "--image", flag)
    assert code == 2
    assert out.startswith("error: --image ") and out.count("\n") == 1, out


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=80))
def test_a_malformed_images_file_is_one_line(capsys: pytest.CaptureFixture[str], text: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "images.yaml"
        path.write_text(text)
        try:
            import yaml

            data = yaml.safe_load(text)
        except yaml.YAMLError:
            data = None
        if (
            isinstance(data, dict)
            and data
            and all(isinstance(v, str) and v.strip() for v in data.values())
        ):
            return  # a valid map would start the cluster
        code, out = run(capsys, "--images", str(path))
    assert code == 2
    assert out.startswith("error: ") and out.count("\n") == 1, out
