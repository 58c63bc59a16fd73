"""The container init (`mounts.CONTAINER_INIT`) run for real: a volume mounted over the directory
the other volumes' sources live in (an emptyDir at `/tmp` while the pods' files are under
`/tmp/agones-local-pods`, as the Helm chart's components mount it) does not hide them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agones.localcluster.nodes.mounts import (
    Mount,
    container_init_argv,
    mountns_supported,
    program_paths,
)

pytestmark = pytest.mark.skipif(not mountns_supported(), reason="needs mount namespaces")


@pytest.mark.parametrize("pid_namespace", [True, False], ids=["pid-namespace", "host-pids"])
def test_a_mount_over_the_sources_directory_hides_no_later_source(
    tmp_path: Path, pid_namespace: bool
) -> None:
    state = tmp_path / "state"
    (state / "pod" / "secret").mkdir(parents=True)
    (state / "pod" / "secret" / "token").write_text("s3cret")
    (state / "pod" / "empty").mkdir()
    out = tmp_path / "out"
    out.mkdir()
    mounts = [
        Mount(str(state / "pod" / "empty"), str(state)),  # hides state/ from here on
        Mount(str(state / "pod" / "secret"), str(out), read_only=True),
    ]
    argv = ["sh", "-c", f"cat {out}/token; ls -A {state}"]
    proc = subprocess.run(
        container_init_argv(mounts, argv, "/", pid_namespace),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "s3cret", "")


def test_a_volume_over_the_programs_directory_does_not_hide_the_program(tmp_path: Path) -> None:
    """An emptyDir at a parent of the checkout (the chart mounts one at `/tmp`; CI may clone
    under `/tmp`) hides the repository and the interpreter; the init binds them back, so the
    program starts from the working directory it was given, and the volume is still there."""
    checkout = Path(program_paths()[0])
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "mark").write_text("volume")
    parent = checkout.parent
    argv = [sys.executable, "-c", f"print(open('{parent}/mark').read(), end='')"]
    proc = subprocess.run(
        container_init_argv([Mount(str(empty), str(parent))], argv, str(checkout)),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "volume", "")


def test_program_paths_are_the_checkout_and_the_interpreter_each_once() -> None:
    paths = [Path(p) for p in program_paths()]
    prefix = Path(sys.prefix).resolve()
    assert any(p == prefix or p in prefix.parents for p in paths)
    assert not any(a != b and a in b.parents for a in paths for b in paths)
