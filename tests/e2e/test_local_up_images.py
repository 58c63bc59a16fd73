"""`agones local up --image IMAGE=COMMAND --images FILE`: the image map is printed with the user's
entries first, a pod whose image the user mapped runs as that program (its output in `kubectl
logs`), and a pod whose image maps to nothing is reported as simulated, with the reason."""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.waiting import wait_for

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(150)]
ROOT = Path(__file__).resolve().parents[2]

PODS = [
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "mapped", "namespace": "default"},
        "spec": {"containers": [{"name": "app", "image": "example.com/echoer:1", "args": ["hi"]}]},
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "unmapped", "namespace": "default"},
        "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]},
    },
]


def read_until(proc: subprocess.Popen[str], lines: list[str], wanted: str, timeout: float) -> None:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while not any(wanted in line for line in lines) and time.monotonic() < deadline:
        if select.select([proc.stdout], [], [], 1)[0]:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line)
    assert any(wanted in line for line in lines), "".join(lines)


def test_local_up_prints_the_image_map_and_the_simulated_pods(tmp_path: Path) -> None:
    if os.environ.get("KUBECONFIG"):
        pytest.skip("runs its own local cluster")
    manifests = tmp_path / "pods.yaml"
    manifests.write_text(yaml.safe_dump_all(PODS))
    images = tmp_path / "images.yaml"
    echo = f"{sys.executable} -u -c 'import sys, time; print(\"echo\", *sys.argv[1:]); time.sleep(600)'"
    images.write_text(yaml.safe_dump({"example.com/echoer": echo}))
    low = random.randrange(15000, 20000, 1000)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agones",
            "local",
            "up",
            "--image",
            "redis=redis-server --port 6379",
            "--images",
            str(images),
            "--apply",
            str(manifests),
            "--state-dir",
            str(tmp_path / "state"),
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
    lines: list[str] = []
    try:
        read_until(proc, lines, "pod default/unmapped: simulated:", 100)
        out = "".join(lines)
        assert "redis -> redis-server --port 6379 (--image)" in out
        assert "example.com/echoer -> " in out and "simple-game-server" in out
        simulated = next(line for line in lines if "pod default/unmapped: simulated:" in line)
        assert "images: nginx:1.25" in simulated
        assert "pod default/mapped" not in out
        kubeconfig = str(tmp_path / "state" / "kubeconfig")

        def logs() -> str:
            cmd = ["kubectl", "--kubeconfig", kubeconfig, "logs", "mapped"]
            return subprocess.run(cmd, capture_output=True, text=True, timeout=30).stdout

        wait_for(lambda: "echo hi" in logs(), 30, 0.2, "the mapped pod's output")
        assert logs() == "echo hi\n"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
