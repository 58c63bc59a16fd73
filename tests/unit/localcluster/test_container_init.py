"""The container init (`mounts.CONTAINER_INIT`) run for real: a volume mounted over the directory
the other volumes' sources live in (an emptyDir at `/tmp` while the pods' files are under
`/tmp/agones-local-pods`, as the Helm chart's components mount it) does not hide them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agones.localcluster.nodes.mounts import Mount, container_init_argv, mountns_supported

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
