"""Init containers and termination of process pods, as on Kubernetes: init containers run in order,
each to completion, and block the app until they succeed; a failing one is retried (or fails the
pod with restartPolicy Never); postStart runs after the start; on deletion preStop (exec, httpGet)
runs before SIGTERM, a process that ignores SIGTERM is killed at the grace period, and a command
run through `sh -c` gets the signal at the shell (`exec` hands it to the program)."""

from __future__ import annotations

import shlex
import uuid
from pathlib import Path
from typing import Any

import pytest

from agones.localcluster.nodes.mounts import mountns_supported
from tests.e2e.framework import Framework
from tests.e2e.podspec import (
    create,
    kubectl_status,
    log_of,
    phase,
    pod,
    python,
    statuses,
    wait_log,
)

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.timeout(180),
    pytest.mark.skipif(not mountns_supported(), reason="needs mount and PID namespaces (root)"),
]

APPEND = "import sys; open('/work-dir/order', 'a').write(sys.argv[1] + '\\n')"
FLAKY = """
import os, sys
if not os.path.exists('/work-dir/tried'):
    open('/work-dir/tried', 'w').close()
    print('first attempt fails', flush=True)
    sys.exit(1)
open('/work-dir/order', 'a').write('flaky\\n')
"""
WAIT_FOR = "import os, sys, time\nwhile not os.path.exists(sys.argv[1]): time.sleep(0.1)"
APP = "print('order:', open('/work-dir/order').read().split()); import time; time.sleep(600)"
MOUNT = [{"name": "work", "mountPath": "/work-dir"}]


def _init(name: str, code: str, *args: str) -> dict[str, Any]:
    return {
        "name": name,
        "image": "local",
        "command": [*python(code), *args],
        "volumeMounts": MOUNT,
    }


def _runner(framework: Framework, local_stack: Any, name: str) -> Any:
    uid = (framework.pod(name) or {})["metadata"]["uid"]
    return local_stack.stack.kubelet.runners[uid]


def test_init_containers_run_in_order_block_the_app_and_a_failing_one_is_retried(
    framework: Framework, local_stack: Any, tmp_path: Path
) -> None:
    gate = tmp_path / f"gate-{uuid.uuid4().hex[:6]}"
    spec = {
        "initContainers": [
            _init("first", APPEND, "first"),
            _init("flaky", FLAKY),
            _init("wait", WAIT_FOR, str(gate)),
        ],
        "containers": [
            {"name": "app", "image": "local", "command": python(APP), "volumeMounts": MOUNT}
        ],
        "volumes": [{"name": "work", "emptyDir": {}}],
    }
    name = create(framework, pod(spec, "init"))

    def blocked() -> Any:
        inits = statuses(framework, name, "initContainerStatuses")
        running = len(inits) == 3 and "running" in (inits[2].get("state") or {})
        return running and inits

    inits = framework.wait("the third init container running", blocked, 60)
    assert [s["state"].get("terminated", {}).get("exitCode") for s in inits[:2]] == [0, 0]
    assert inits[1]["restartCount"] == 1
    assert inits[1]["lastState"]["terminated"]["exitCode"] == 1
    app = statuses(framework, name)[0]
    assert app["state"] == {"waiting": {"reason": "PodInitializing"}}
    pod_status = (framework.pod(name) or {})["status"]
    assert pod_status["phase"] == "Pending"
    conditions = {c["type"]: c["status"] for c in pod_status["conditions"]}
    assert conditions["Initialized"] == "False"
    assert kubectl_status(framework, name) == "Init:2/3"

    gate.touch()
    out = wait_log(framework, name, "app", "order:")
    assert "order: ['first', 'flaky']" in out
    framework.wait("Running", lambda: phase(framework, name) == "Running", 30)
    conditions = {
        c["type"]: c["status"] for c in (framework.pod(name) or {})["status"]["conditions"]
    }
    assert conditions["Initialized"] == "True"


def test_init_container_that_keeps_failing_is_in_crash_loop_back_off(
    framework: Framework, local_stack: Any
) -> None:
    spec = {
        "initContainers": [{"name": "broken", "image": "local", "command": python("exit(1)")}],
        "containers": [{"name": "app", "image": "local", "command": python("print('ran')")}],
    }
    name = create(framework, pod(spec, "initloop"))
    framework.wait(
        "Init:CrashLoopBackOff",
        lambda: kubectl_status(framework, name) == "Init:CrashLoopBackOff",
        60,
    )
    init = statuses(framework, name, "initContainerStatuses")[0]
    assert init["state"]["waiting"]["message"].startswith("back-off ")
    assert init["lastState"]["terminated"]["exitCode"] == 1
    assert phase(framework, name) == "Pending"
    assert log_of(framework, name, "app") == ""


def test_failing_init_container_fails_a_pod_that_never_restarts(
    framework: Framework, local_stack: Any
) -> None:
    spec = {
        "restartPolicy": "Never",
        "initContainers": [{"name": "broken", "image": "local", "command": python("exit(3)")}],
        "containers": [{"name": "app", "image": "local", "command": python("print('ran')")}],
    }
    name = create(framework, pod(spec, "initfail"))
    framework.wait("Failed", lambda: phase(framework, name) == "Failed", 60)
    init = statuses(framework, name, "initContainerStatuses")[0]
    assert init["state"]["terminated"]["exitCode"] == 3
    assert init["state"]["terminated"]["reason"] == "Error"
    assert statuses(framework, name)[0]["state"] == {"waiting": {"reason": "PodInitializing"}}
    assert log_of(framework, name, "app") == ""


SERVE = """
import http.server, signal, sys, threading
def term(*_):
    print('sigterm', flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, term)
class Hook(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        print('prestop-http', self.path, flush=True)
        self.send_response(200)
        self.end_headers()
    def log_message(self, *_):
        pass
server = http.server.HTTPServer(('127.0.0.1', 8089), Hook)
threading.Thread(target=server.serve_forever, daemon=True).start()
print('serving', flush=True)
signal.pause()
"""


@pytest.mark.parametrize(
    ("hook", "seen"),
    [
        pytest.param(
            {"exec": {"command": ["sh", "-c", "echo prestop-exec >> /proc/1/fd/1"]}},
            "prestop-exec\n",
            id="exec",
        ),
        pytest.param(
            {"httpGet": {"path": "/drain", "port": 8089}}, "prestop-http /drain\n", id="httpGet"
        ),
    ],
)
def test_pre_stop_runs_before_sigterm(
    framework: Framework, local_stack: Any, hook: dict[str, Any], seen: str
) -> None:
    spec = {
        "terminationGracePeriodSeconds": 20,
        "containers": [
            {
                "name": "main",
                "image": "local",
                "command": python(SERVE),
                "lifecycle": {
                    "postStart": {
                        "exec": {"command": ["sh", "-c", "echo poststart >> /proc/1/fd/1"]}
                    },
                    "preStop": hook,
                },
            }
        ],
    }
    name = create(framework, pod(spec, "prestop"))
    wait_log(framework, name, "main", "poststart")
    wait_log(framework, name, "main", "serving")
    framework.delete_pod(name)
    out = wait_log(framework, name, "main", "sigterm")
    assert seen in out
    assert out.index(seen) < out.index("sigterm\n")


TRAP = """
import signal, sys, time
def term(*_):
    print('sigterm reached the program', flush=True)
    sys.exit(0)
signal.signal(signal.SIGTERM, term)
print('started', flush=True)
time.sleep(600)
"""
IGNORE = (
    "import signal, time; signal.signal(signal.SIGTERM, lambda *_: print('ignored', flush=True))\n"
    "print('started', flush=True); time.sleep(600)"
)


def _prog(code: str) -> str:
    return shlex.join(python(code))


@pytest.mark.parametrize(
    ("command", "gets_sigterm"),
    [
        pytest.param(lambda: ["sh", "-c", "exec " + _prog(TRAP)], True, id="sh-c-exec"),
        pytest.param(lambda: ["sh", "-c", _prog(TRAP) + "; echo after"], False, id="sh-c"),
        pytest.param(lambda: python(IGNORE), False, id="ignores-sigterm"),
    ],
)
def test_sigterm_goes_to_the_main_process_then_sigkill_at_the_grace_period(
    framework: Framework, local_stack: Any, command: Any, gets_sigterm: bool
) -> None:
    spec = {
        "terminationGracePeriodSeconds": 2,
        "containers": [{"name": "main", "image": "local", "command": command()}],
    }
    name = create(framework, pod(spec, "sigterm"))
    wait_log(framework, name, "main", "started")
    runner = _runner(framework, local_stack, name)
    framework.delete_pod(name)
    framework.wait("pod gone", lambda: framework.pod(name) is None, 60)
    terminated = runner.containers[0].terminated
    out = log_of(framework, name, "main")
    if gets_sigterm:
        assert "sigterm reached the program\n" in out
        assert terminated["exitCode"] == 0
    else:
        # the shell as pid 1 drops SIGTERM (no handler), or the program ignores it: SIGKILL at
        # the end of the grace period, reported as 128 + 9
        assert "sigterm reached the program" not in out
        assert terminated["exitCode"] == 137
        assert "after" not in out
