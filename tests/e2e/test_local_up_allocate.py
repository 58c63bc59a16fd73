"""`agones local up --apply FILE --allocate`, the README's main job, as a user runs it: what was
applied becomes Ready, one GameServer is allocated through the allocator service with the client
certificate the stack generated, its address and port answer UDP, the printed REST command
allocates again, and SIGINT stops everything (allocator included) with exit 0."""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.framework import udp
from tests.e2e.test_local_up import alive, descendants

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(180)]
ROOT = Path(__file__).resolve().parents[2]
ALLOCATED = re.compile(r"allocated gameserver (\S+)/(\S+) at (\S+):(\d+)")


def run_local_up(tmp_path: Path, manifest: str) -> tuple[subprocess.Popen[str], list[str]]:
    low = random.randrange(20000, 25000, 1000)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agones",
            "local",
            "up",
            "--apply",
            str(ROOT / "examples" / manifest),
            "--allocate",
            "--state-dir",
            str(tmp_path),
            "--first-node-address",
            f"127.{random.randrange(1, 250)}.{random.randrange(1, 250)}.1",
            f"--min-port={low}",
            f"--max-port={low + 999}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    # Blocking reads (the test's timeout bounds them): select() on the pipe would miss lines
    # already in the reader's buffer.
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("  allocate another:"):
            return proc, lines
    proc.kill()
    proc.wait()
    raise AssertionError("".join(lines))


@pytest.mark.parametrize(
    ("manifest", "servers"),
    [("gameserver.yaml", 1), ("fleet.yaml", 2)],
    ids=["gameserver", "fleet"],
)
def test_local_up_allocates_through_the_allocator(
    tmp_path: Path, manifest: str, servers: int
) -> None:
    if os.environ.get("KUBECONFIG"):
        pytest.skip("runs its own local cluster")
    proc, lines = run_local_up(tmp_path, manifest)
    try:
        text = "".join(lines)
        found = ALLOCATED.search(text)
        assert found is not None, text
        address, port = found.group(3), int(found.group(4))
        assert f"talk to it: echo hello | nc -u {address} {port}" in text
        assert udp(address, port, "hello") == "ACK: hello\n"
        for name in ("tls.crt", "tls.key", "ca.crt"):
            assert (tmp_path / "allocator" / "client" / name).is_file()
        if shutil.which("curl"):
            command = lines[-1].split("allocate another:", 1)[1].strip()
            out = subprocess.run(
                [*shlex.split(command), "-s"], capture_output=True, text=True, timeout=30
            )
            answer = json.loads(out.stdout)
            if servers == 1:  # the only GameServer is taken: Agones' UnAllocated answer
                assert answer["code"] == 8, answer
            else:  # the Fleet's other GameServer
                assert answer["gameServerName"] not in ("", found.group(2)), answer
        started = descendants(proc.pid)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0
        for pid in started:
            assert not alive(pid), f"process {pid} outlived agones local up"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
