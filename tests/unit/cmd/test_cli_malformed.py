"""The CLI and its processes on bad input and rude endings: `agones validate` on malformed files
(property-based) and deep nesting answers one line, a reader that stops early (`| head`) ends the
command without a BrokenPipeError, the example controller without a kubeconfig is one line, and a
pod network holder whose parent goes away (Ctrl-C on `agones local up`) ends quietly."""

from __future__ import annotations

import copy
import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.apis.field import ErrorType
from agones.apis.scheme import load
from agones.cmd.main import main
from agones.localcluster.nodes.netns import netns_supported
from tests.fuzzing import REQUIRED_PER_SURFACE, count, examples, mutated

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures" / "agones"
MANIFESTS = sorted(FIXTURES.glob("*.yaml"))
BATCH = 2
EXAMPLES = settings.default.max_examples * 2
"""ci: 200 examples of 2 files each (one `agones validate` costs ~40 ms: parser, schema, YAML)."""


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a: " + "[" * 3000 + "]" * 3000, id="yaml-flow"),
        pytest.param("a:\n" + "".join("  " * i + "- \n" for i in range(1500)), id="yaml-block"),
        pytest.param(
            '{"apiVersion": "agones.dev/v1", "kind": "GameServer", "spec": '
            + '{"a": ' * 1500
            + "1"
            + "}" * 1501,
            id="json-in-spec",
        ),
    ],
)
def test_deeply_nested_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(text)
    assert main(["validate", "-f", str(path)]) == 1
    err = capsys.readouterr().err
    assert err == f"error: {path}: exceeded max depth\n"


def _mutate(doc: Any, path: list[int], junk: Any) -> Any:
    """`doc` with the value at a pseudo-random path (indices into its keys/items) replaced."""
    if not path or not isinstance(doc, dict | list) or not doc:
        return junk
    keys = list(doc) if isinstance(doc, dict) else list(range(len(doc)))
    key = keys[path[0] % len(keys)]
    copy: Any = dict(doc) if isinstance(doc, dict) else list(doc)
    copy[key] = _mutate(doc[key], path[1:], junk)
    return copy


_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8)
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


FILE_KINDS = st.sampled_from(["bytes", "yaml-junk", "mutated", "cut", "deep"])
MANIFEST_TEXTS = [p.read_text() for p in MANIFESTS]


@st.composite
def malformed_files(draw: st.DrawFn) -> bytes:
    kind = draw(FILE_KINDS)
    if kind == "bytes":
        return draw(st.binary(max_size=64))
    if kind == "yaml-junk":
        return yaml.safe_dump(draw(_values)).encode()
    manifest = MANIFEST_TEXTS[draw(st.integers(0, len(MANIFESTS) - 1))]
    if kind == "cut":
        return manifest.encode()[: draw(st.integers(0, len(manifest)))]
    if kind == "deep":
        depth = draw(st.integers(1, 1200))
        return ("spec: " + "[" * depth + "]" * depth).encode()
    doc = yaml.safe_load(manifest)
    path = draw(st.lists(st.integers(0, 50), min_size=1, max_size=6))
    mutated = _mutate(doc, path, draw(_values))
    return (json.dumps(mutated) if draw(st.booleans()) else yaml.safe_dump(mutated)).encode()


def test_validate_malformed_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Any file: exit 0 or 1, no traceback; unreadable ones are exactly one `error:` line."""
    path = tmp_path / "m.yaml"
    ran: list[int] = []

    @settings(max_examples=EXAMPLES)
    @given(st.lists(malformed_files(), min_size=BATCH, max_size=BATCH))
    def run(files: list[bytes]) -> None:
        for raw in files:
            path.write_bytes(raw)
            capsys.readouterr()
            code = main(["validate", "-f", str(path)])
            err = capsys.readouterr().err
            ran.append(code)
            count(VALIDATE)
            assert code in (0, 1), (raw[:80], code, err)
            assert "Traceback" not in err
            if code == 1:
                assert err.strip(), raw[:80]
                if err.startswith(f"error: {path}:"):
                    assert err.count("\n") == 1, err

    run()
    assert len(ran) >= EXAMPLES * BATCH
    assert 1 in ran


def test_reader_that_stops_early_gets_no_broken_pipe(tmp_path: Path) -> None:
    many = tmp_path / "many.yaml"
    many.write_text("---\n".join([(FIXTURES / "gameserver-static.yaml").read_text()] * 300))
    proc = subprocess.Popen(
        [sys.executable, "-m", "agones", "validate", "-f", str(many)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline() == b"---\n"
    proc.stdout.close()  # `| head -1` exits
    err = proc.stderr.read().decode()
    assert proc.wait(60) == 141
    assert "BrokenPipeError" not in err and "Traceback" not in err, err


def test_example_controller_without_kubeconfig_is_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    out = subprocess.run(
        [sys.executable, str(REPO / "examples" / "configmap_counter.py"), "--kubeconfig", missing],
        capture_output=True,
        timeout=60,
        cwd=REPO,
    )
    assert out.returncode == 1
    err = out.stderr.decode()
    assert err.startswith(f"error: cannot load kubeconfig {missing}:"), err
    assert err.count("\n") == 1, err


@pytest.mark.skipif(not netns_supported(), reason="network namespaces are not permitted here")
@pytest.mark.parametrize("when", ["before-ready", "after-a-request"])
def test_netns_holder_ends_quietly_when_its_parent_goes(when: str) -> None:
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    code = (
        "import sys; from agones.localcluster.nodes.netns import helper_main; "
        f"sys.exit(helper_main({child.fileno()}))"
    )
    if when == "before-ready":
        parent.close()  # gone before the holder says ready
    proc = subprocess.Popen(
        ["unshare", "--net", sys.executable, "-c", code],
        pass_fds=[child.fileno()],
        stderr=subprocess.PIPE,
        cwd=REPO,
    )
    child.close()
    if when == "after-a-request":
        assert parent.recv(16) == b"ready"
        parent.send(b"tcp")
        parent.close()  # Ctrl-C: the reply has nowhere to go
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    assert proc.wait(60) == 0
    assert err == ""


VALIDATE = "agones validate"
DOCS_PER_EXAMPLE = 5
"""ci: 2,000 examples of 5 documents, 10,000 inputs to the function behind `agones validate`."""
ORACLE = REPO / "tests" / "fixtures" / "agones-oracle" / "valid"
VALID_DOCS = [yaml.safe_load(p.read_text()) for p in MANIFESTS] + [
    json.loads(p.read_text())["input"] for p in sorted(ORACLE.glob("*.json"))
]


def test_admit_answers_every_malformed_document() -> None:
    """`Scheme.admit` (what `agones validate` runs per document) on mutated manifests: it never
    raises nor reports an internal error, leaves its input alone, and what it accepts is accepted
    again as it stored it (defaults are a fixed point) and prints as YAML."""
    scheme = load()
    sent = 0

    @settings(max_examples=examples(2000))
    @given(
        st.lists(
            st.integers(0, len(VALID_DOCS) - 1).flatmap(lambda i: mutated(VALID_DOCS[i])),
            min_size=DOCS_PER_EXAMPLE,
            max_size=DOCS_PER_EXAMPLE,
        )
    )
    def run(docs: list[Any]) -> None:
        nonlocal sent
        for doc in docs:
            before = copy.deepcopy(doc)
            admission = scheme.admit(doc)
            sent += 1
            count(VALIDATE)
            assert doc == before, "admit changed its input"
            internal = [e for e in admission.errors if e.type is ErrorType.INTERNAL]
            assert internal == [], (doc, internal)
            if admission.allowed:
                stored = scheme.encode(admission.obj)
                yaml.safe_dump(stored)
                again = scheme.admit(stored)
                assert again.errors == [], (doc, again.errors)

    run()
    assert sent >= examples(REQUIRED_PER_SURFACE)
