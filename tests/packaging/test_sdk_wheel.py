"""The agones-sdk wheel: built from src/sdk, installed alone in a fresh venv, runs the example game server.

The fresh venv gets the wheel and what pip resolves for it from the package index pip is configured
with (grpcio, protobuf, googleapis-common-protos) and nothing else; the example game server runs in it
against `agones sdkserver --local` (a process of the repository's own environment) and answers UDP.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sdkserver.harness import free_port
from tools import sdkwheel

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "simple-game-server"
ALLOWED = {
    "agones-sdk",
    "grpcio",
    "protobuf",
    "googleapis-common-protos",
    "pip",
    "setuptools",
    "typing-extensions",
}


@pytest.fixture(scope="module")
def sdk_venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    tmp = tmp_path_factory.mktemp("sdkwheel")
    wheel = sdkwheel.build(tmp / "dist")
    env_dir = tmp / "venv"
    venv.create(env_dir, with_pip=True, system_site_packages=False)
    python = env_dir / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
        check=True,
        timeout=300,
    )
    yield python


def test_wheel_version_follows_agones(sdk_venv: Path) -> None:
    assert sdkwheel.sdk_version() == "1.57.0"
    out = subprocess.run(
        [str(sdk_venv), "-m", "pip", "list", "--format=freeze", "--disable-pip-version-check"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    installed = {line.split("==")[0].lower().replace("_", "-") for line in out.split()}
    assert "agones-sdk" in installed
    assert installed <= ALLOWED, f"more than the SDK's dependencies: {installed - ALLOWED}"


def test_fresh_venv_has_the_sdk_and_not_the_controller_stack(sdk_venv: Path) -> None:
    code = (
        "import importlib.util as u, agones.sdk;"
        "print(agones.sdk.SDK.__name__, u.find_spec('agones.controllers'), u.find_spec('msgspec'))"
    )
    out = subprocess.run(
        [str(sdk_venv), "-c", code], check=True, capture_output=True, text=True, cwd="/"
    )
    assert out.stdout.split() == ["SDK", "None", "None"]


def udp(port: int, text: str) -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.settimeout(10)
        sock.sendto(text.encode(), ("127.0.0.1", port))
        return sock.recv(4096).decode()


def sidecar_state(http_port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/gameserver", timeout=10) as reply:
        state: str = json.load(reply)["status"]["state"]
    return state


def test_example_game_server_runs_on_the_wheel(sdk_venv: Path, tmp_path: Path) -> None:
    grpc_port, http_port, game_port = free_port(), free_port(), free_port()
    sidecar = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agones",
            "sdkserver",
            "--local",
            "--address",
            "127.0.0.1",
            "--grpc-port",
            str(grpc_port),
            "--http-port",
            str(http_port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    env = {
        "AGONES_SDK_GRPC_HOST": "127.0.0.1",
        "AGONES_SDK_GRPC_PORT": str(grpc_port),
        "PORT": str(game_port),
    }
    game = subprocess.Popen(
        [str(sdk_venv), str(EXAMPLE)], env=env, cwd=tmp_path, stdout=subprocess.DEVNULL
    )
    try:
        reply = ""
        for _ in range(100):  # until the game listens (each try waits up to 10 s for an answer)
            try:
                reply = udp(game_port, "GAMESERVER")
                break
            except (TimeoutError, ConnectionRefusedError):
                assert game.poll() is None, "the example game server exited"
        assert reply == "NAME: local\n"
        assert udp(game_port, "hello") == "ACK: hello\n"
        assert udp(game_port, "READY") == "ACK: READY\n"
        assert udp(game_port, "EXIT") == "ACK: EXIT\n"
        # EXIT calls SDK Shutdown; outside a cluster nothing deletes the pod, so read the state back
        for _ in range(200):
            if sidecar_state(http_port) == "Shutdown":
                break
            time.sleep(0.05)
        assert sidecar_state(http_port) == "Shutdown"
    finally:
        for proc in (game, sidecar):
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=15)
