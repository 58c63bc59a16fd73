"""The image → local program map (`nodes/imagemap.py`): matching, the `--image` flag and the
`--images` file, what a container runs, and why a pod is simulated."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agones.localcluster.nodes.imagemap import (
    ImageProgram,
    describe_map,
    load_image_file,
    local_program,
    parse_image_flag,
    simulation_reason,
)


@pytest.mark.parametrize(
    ("pattern", "image", "matches"),
    [
        pytest.param("nginx", "nginx", True, id="bare"),
        pytest.param("nginx", "nginx:1.25", True, id="any-tag"),
        pytest.param("nginx", "nginx@sha256:ab", True, id="any-digest"),
        pytest.param("nginx", "docker.io/library/nginx:1.25", True, id="docker-hub-prefix"),
        pytest.param("nginx", "nginxx", False, id="other-name"),
        pytest.param("nginx:1.25", "nginx:1.26", False, id="pinned-tag"),
        pytest.param("nginx:1.25", "nginx:1.25", True, id="pinned-tag-same"),
        pytest.param("ghcr.io/me/*", "ghcr.io/me/zone:v1", True, id="glob"),
        pytest.param("ghcr.io/me/*", "ghcr.io/you/zone:v1", False, id="glob-other"),
        pytest.param("localhost:5000/game", "localhost:5000/game:v2", True, id="registry-port"),
    ],
)
def test_image_matching(pattern: str, image: str, matches: bool) -> None:
    assert ImageProgram(pattern, ("x",)).matches(image) is matches


@pytest.mark.parametrize(
    ("flag", "expected"),
    [
        pytest.param(
            "redis=redis-server --port 6379",
            ("redis", ("redis-server", "--port", "6379")),
            id="split",
        ),
        pytest.param(
            "a:1=sh -c 'echo hi; sleep 9'", ("a:1", ("sh", "-c", "echo hi; sleep 9")), id="quoted"
        ),
        pytest.param("x = y", ("x", ("y",)), id="spaces"),
        pytest.param("noequals", "expected IMAGE=COMMAND", id="no-equals"),
        pytest.param("=cmd", "expected IMAGE=COMMAND", id="no-image"),
        pytest.param("img=", "COMMAND is empty", id="no-command"),
        pytest.param("img=sh 'x", "No closing quotation", id="bad-quote"),
    ],
)
def test_parse_image_flag(flag: str, expected: Any) -> None:
    if isinstance(expected, tuple):
        entry = parse_image_flag(flag)
        assert (entry.image, entry.command) == expected
    else:
        with pytest.raises(ValueError, match=expected):
            parse_image_flag(flag)


@given(st.text(max_size=60))
def test_any_image_flag_parses_or_says_why(flag: str) -> None:
    try:
        entry = parse_image_flag(flag)
    except ValueError as err:
        assert str(err).startswith("--image ") and "\n" not in str(err).strip()
        return
    assert entry.image and entry.command


def test_image_file(tmp_path: Path) -> None:
    path = tmp_path / "images.yaml"
    path.write_text("nginx: python3 -m http.server 80\nredis: [redis-server, --save, '']\n")
    entries = load_image_file(str(path))
    assert [(e.image, e.command) for e in entries] == [
        ("nginx", ("python3", "-m", "http.server", "80")),
        ("redis", ("redis-server", "--save", "")),
    ]
    for bad, message in (("- a\n", "expected a mapping"), ("a: {b: 1}\n", "must be a string")):
        path.write_text(bad)
        with pytest.raises(ValueError, match=message):
            load_image_file(str(path))
    with pytest.raises(ValueError, match="No such file"):
        load_image_file(str(tmp_path / "missing.yaml"))


USER = [ImageProgram("nginx", ("python3", "-m", "http.server"))]


@pytest.mark.parametrize(
    ("container", "argv"),
    [
        pytest.param({"image": "nginx:1"}, ["python3", "-m", "http.server"], id="user-entry"),
        pytest.param(
            {"image": "nginx", "args": ["8080"]},
            ["python3", "-m", "http.server", "8080"],
            id="args-follow",
        ),
        pytest.param(
            {"image": "nginx", "command": ["sleep"], "args": ["1"]},
            ["sleep", "1"],
            id="command-wins",
        ),
        pytest.param({"image": "unknown"}, None, id="nothing"),
        pytest.param(
            {"image": "us-docker.pkg.dev/agones-images/examples/simple-game-server:0.35"},
            [sys.executable, "examples/simple-game-server"],
            id="built-in",
        ),
    ],
)
def test_local_program(container: dict[str, Any], argv: list[str] | None) -> None:
    got = local_program(container, USER)
    if argv is not None and argv[-1] == "examples/simple-game-server":
        assert got is not None and got[0] == argv[0] and got[1].endswith(argv[1])
    else:
        assert got == argv


@pytest.mark.parametrize(
    ("annotations", "runs", "simulate_all", "says"),
    [
        pytest.param({}, [True, False], False, "", id="runs"),
        pytest.param({}, [False], False, "images: nginx:1", id="no-program"),
        pytest.param({}, [True], True, "--simulate-all", id="simulate-all"),
        pytest.param(
            {"local.agones-py.dev/simulate": "true"}, [True], False, "annotated", id="annotated"
        ),
    ],
)
def test_simulation_reason(
    annotations: dict[str, str], runs: list[bool], simulate_all: bool, says: str
) -> None:
    pod = {
        "metadata": {"name": "p", "annotations": annotations},
        "spec": {"containers": [{"name": "c", "image": "nginx:1"}]},
    }
    reason = simulation_reason(pod, runs, simulate_all)
    assert (says in reason) if says else reason == ""


def test_describe_map_lists_user_entries_first() -> None:
    lines = describe_map(USER)
    assert lines[0] == "nginx -> python3 -m http.server (--image)"
    assert any("simple-game-server" in line for line in lines[1:])
