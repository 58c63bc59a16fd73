"""The official Node.js SDK (npm @google-cloud/agones-sdk) runs Agones' conformance client
sequence against `agones sdkserver` in test mode, as Agones' `run-sdk-conformance-no-build` does:
client started first, server with TEST=<default + counts-and-lists>, DELAY, TIMEOUT. The server
must exit 0 for the full sequence and 1 when the client leaves one call out.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.sdkserver.harness import COUNTS_AND_LISTS, DEFAULT_CONFORMANCE, free_port

NODE_DIR = Path(__file__).parent / "node"
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(NODE is None, reason="node is not installed"),
]


async def conformance_run(skip: str = "") -> tuple[int, str, int, str]:
    """(server exit code, server output, client exit code, client output)."""
    assert (NODE_DIR / "node_modules" / "@google-cloud" / "agones-sdk").is_dir(), (
        "the Node SDK is missing: run .ci/install-system-deps"
    )
    grpc_port, http_port = free_port(), free_port()
    client_env = dict(
        os.environ,
        AGONES_SDK_GRPC_PORT=str(grpc_port),
        AGONES_SDK_HTTP_PORT=str(http_port),
        FEATURE_GATES="",
        PAUSE_MS="100",
        SKIP=skip,
    )
    assert NODE is not None
    client = await asyncio.create_subprocess_exec(
        NODE,
        "conformanceClient.js",
        cwd=NODE_DIR,
        env=client_env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    server_env = dict(
        os.environ,
        ADDRESS="127.0.0.1",
        TEST=f"{DEFAULT_CONFORMANCE},{COUNTS_AND_LISTS}",
        SDK_NAME="node",
        TIMEOUT="6",
        DELAY="1",
        FEATURE_GATES="",
    )
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agones",
        "sdkserver",
        "--grpc-port",
        str(grpc_port),
        "--http-port",
        str(http_port),
        env=server_env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    server_out, _ = await asyncio.wait_for(server.communicate(), 60)
    client_out, _ = await asyncio.wait_for(client.communicate(), 30)
    assert server.returncode is not None and client.returncode is not None
    return server.returncode, server_out.decode(), client.returncode, client_out.decode()


async def test_node_sdk_conformance_passes_and_a_skipped_call_fails() -> None:
    (
        (ok_code, ok_out, ok_client, ok_client_out),
        (bad_code, bad_out, bad_client, _),
    ) = await asyncio.gather(conformance_run(), conformance_run(skip="reserve"))
    assert ok_client == 0, ok_client_out
    assert "getListValues after setListCapacity" in ok_client_out
    assert ok_code == 0, ok_out
    assert "Received requests match expected list. Test run was successful" in ok_out
    assert bad_client == 0
    assert bad_code == 1, bad_out
    assert "Could not find a request which was expected" in bad_out
    assert "reserve" in bad_out
