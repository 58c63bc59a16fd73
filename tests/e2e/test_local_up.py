"""`agones local up --apply examples/gameserver.yaml`, the README's first command, as a user runs it:
the GameServer reaches Ready, answers UDP on its host port on 127.0.0.1, and SIGINT stops
everything with exit 0, leaving no process behind."""

from __future__ import annotations

import os
import random
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.e2e.framework import udp

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(120)]
ROOT = Path(__file__).resolve().parents[2]


def descendants(pid: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.add(child)
            todo.append(child)
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_local_up_applies_the_example_and_stops_cleanly(tmp_path: Path) -> None:
    if os.environ.get("KUBECONFIG"):
        pytest.skip("runs its own local cluster")
    low = random.randrange(15000, 20000, 1000)  # below the ephemeral range
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agones",
            "local",
            "up",
            "--apply",
            str(ROOT / "examples" / "gameserver.yaml"),
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
    ready = None
    try:
        deadline = time.monotonic() + 90
        while ready is None and time.monotonic() < deadline:
            if not select.select([proc.stdout], [], [], 1)[0]:
                continue
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
            ready = re.search(r"simple-game-server: Ready (\S+) default=(\d+)", line)
        assert ready is not None, "".join(lines)
        assert "kubeconfig" in "".join(lines)
        assert (tmp_path / "kubeconfig").is_file()
        assert udp("127.0.0.1", int(ready.group(2)), "hello") == "ACK: hello\n"
        assert udp(ready.group(1), int(ready.group(2)), "hello") == "ACK: hello\n"
        started = descendants(proc.pid)
        assert len(started) >= 3  # controller, namespace holder, sidecar, game
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0
        for pid in started:
            assert not alive(pid), f"process {pid} outlived agones local up"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
