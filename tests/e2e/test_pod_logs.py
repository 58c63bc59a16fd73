"""The local cluster as a developer uses it day to day, through kubectl and the official Python
client: `kubectl logs` in each form on a process pod (follow, tail, since, timestamps, previous
after a crash, all containers), `describe pod` events in order, READY 2/2 for a pod with a native
sidecar, probes that run, a simulated pod that says so, and `exec` over websockets (the official
client, kubectl 1.30+) with the SPDY kubectl told why not."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.e2e.framework import Framework

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.timeout(180),
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]

TIMESTAMPED = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z (.*)$")


def kubectl(fw: Framework, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    cmd = ["kubectl", "--kubeconfig", fw.kubeconfig, "-n", fw.namespace, *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if check and proc.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)}: {proc.stderr}")
    return proc


def container(name: str, code: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "image": "local", "command": [sys.executable, "-u", "-c", code], **extra}


def create_pod(fw: Framework, *containers: dict[str, Any], **spec: Any) -> str:
    name = f"logs-{uuid.uuid4().hex[:6]}"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": list(containers), "terminationGracePeriodSeconds": 1, **spec},
    }
    resp = fw.api.post(f"/api/v1/namespaces/{fw.namespace}/pods", pod)
    assert resp.status == 201, resp
    return name


def logs(fw: Framework, *args: str) -> str:
    return kubectl(fw, "logs", *args).stdout


@pytest.fixture
def core(framework: Framework) -> kubernetes.client.CoreV1Api:
    return kubernetes.client.CoreV1Api(
        kubernetes.config.new_client_from_config(config_file=framework.kubeconfig)
    )


PRINTER = "import sys, time\nfor i in range(5): print('line', i)\nprint('oops', file=sys.stderr)\ntime.sleep(600)"


@pytest.fixture
def printer(framework: Framework, local_stack: Any) -> Iterator[str]:
    """A running pod whose one container printed 5 lines to stdout and one to stderr."""
    name = create_pod(framework, container("main", PRINTER))
    framework.wait(
        "all lines logged",
        lambda: kubectl(framework, "logs", name, check=False).stdout.count("\n") == 6,
        60,
    )
    yield name
    framework.delete_pod(name)


def test_logs_in_each_form(framework: Framework, printer: str) -> None:
    out = logs(framework, printer)
    assert sorted(out.splitlines()) == sorted([*(f"line {i}" for i in range(5)), "oops"])
    assert logs(framework, printer, "-c", "main") == out
    assert logs(framework, printer, "--tail=2").count("\n") == 2
    assert logs(framework, printer, "--tail=0") == ""
    assert logs(framework, printer, "--since=1h") == out
    assert logs(framework, printer, "--since-time=2999-01-01T00:00:00Z") == ""
    assert logs(framework, printer, "--limit-bytes=4") == out[:4]
    stamped = logs(framework, printer, "--timestamps").splitlines()
    assert [TIMESTAMPED.match(line).group(1) for line in stamped] == out.splitlines()  # type: ignore[union-attr]


def test_log_errors_are_worded_as_kube_apiserver_words_them(
    framework: Framework, printer: str, core: kubernetes.client.CoreV1Api
) -> None:
    previous = kubectl(framework, "logs", printer, "--previous", check=False)
    assert previous.returncode == 1
    assert (
        f'Error from server (BadRequest): previous terminated container "main" in pod '
        f'"{printer}" not found' in previous.stderr
    )
    with pytest.raises(kubernetes.client.ApiException) as err:
        core.read_namespaced_pod_log(printer, framework.namespace, container="nope")
    assert err.value.status == 400
    assert f"container nope is not valid for pod {printer}" in err.value.body
    with pytest.raises(kubernetes.client.ApiException) as err:
        core.read_namespaced_pod_log("no-such-pod", framework.namespace)
    assert err.value.status == 404
    text = core.read_namespaced_pod_log(printer, framework.namespace, tail_lines=1)
    assert text.count("\n") <= 1 and text


def test_follow_sees_new_lines(framework: Framework, local_stack: Any) -> None:
    ticker = "import time\ni = 0\nwhile True:\n    print('tick', i); i += 1; time.sleep(0.2)"
    name = create_pod(framework, container("main", ticker))
    framework.wait(
        "ticking", lambda: "tick 1" in kubectl(framework, "logs", name, check=False).stdout, 60
    )
    cmd = ["kubectl", "--kubeconfig", framework.kubeconfig, "-n", framework.namespace]
    follow = subprocess.Popen(
        [*cmd, "logs", "-f", "--tail=1", name], stdout=subprocess.PIPE, text=True
    )
    try:
        assert follow.stdout is not None
        follow.stdout.readline()  # the follow is being served
        snapshot = logs(framework, name).splitlines()  # taken after the follow started
        last = int(snapshot[-1].split()[1])
        seen = [int(follow.stdout.readline().split()[1])]
        while seen[-1] <= last:
            seen.append(int(follow.stdout.readline().split()[1]))
        assert seen[-1] == last + 1  # not in the file yet once the follow was being served
        assert seen == list(range(seen[0], last + 2))  # every line once, in order
    finally:
        follow.kill()
        follow.wait()
    framework.delete_pod(name)


def test_previous_after_a_crash(framework: Framework, local_stack: Any, tmp_path: Path) -> None:
    marker = tmp_path / "crashed-once"
    crasher = (
        "import os, sys, time\n"
        f"marker = {str(marker)!r}\n"
        "if not os.path.exists(marker):\n"
        "    open(marker, 'w').close(); print('first run'); sys.exit(2)\n"
        "print('second run'); time.sleep(600)"
    )
    name = create_pod(framework, container("main", crasher))

    def second_run() -> bool:
        return "second run" in kubectl(framework, "logs", name, check=False).stdout

    framework.wait("the second run", second_run, 60)
    assert logs(framework, name, "--previous") == "first run\n"
    assert logs(framework, name) == "second run\n"
    status = (framework.pod(name) or {})["status"]["containerStatuses"][0]
    last = status["lastState"]["terminated"]
    assert (status["restartCount"], last["exitCode"], last["reason"]) == (1, 2, "Error")
    assert last["containerID"].startswith("containerd://")
    assert last["containerID"] != status["containerID"]
    table = kubectl(framework, "get", "pod", name).stdout
    assert re.search(rf"{name}\s+1/1\s+Running\s+1 \(\S+ ago\)", table), table
    describe = kubectl(framework, "describe", "pod", name).stdout
    assert (
        f"Back-off restarting failed container main in pod {name}_{framework.namespace}" in describe
    )
    framework.delete_pod(name)


def test_crash_loop_back_off_is_shown(framework: Framework, local_stack: Any) -> None:
    name = create_pod(framework, container("main", "import sys\nsys.exit(1)"))

    def backing_off() -> bool:
        table = kubectl(framework, "get", "pod", name, check=False).stdout
        return bool(re.search(rf"{name}\s+0/1\s+CrashLoopBackOff", table))

    framework.wait("CrashLoopBackOff", backing_off, 60)
    framework.delete_pod(name)


def test_native_sidecar_is_ready_2_of_2_and_all_containers_log(
    framework: Framework, local_stack: Any
) -> None:
    sidecar = container(
        "proxy", "import time\nprint('proxy up')\ntime.sleep(600)", restartPolicy="Always"
    )
    app = container("app", "import time\nprint('app up')\ntime.sleep(600)")
    name = create_pod(framework, app, initContainers=[sidecar])
    framework.wait(
        "2/2",
        lambda: re.search(
            rf"{name}\s+2/2\s+Running", kubectl(framework, "get", "pod", name).stdout
        ),
        60,
    )
    framework.wait(
        "both logged",
        lambda: (
            "proxy up" in kubectl(framework, "logs", name, "--all-containers", check=False).stdout
            and "app up" in kubectl(framework, "logs", name, "--all-containers", check=False).stdout
        ),
        30,
    )
    out = logs(framework, name, "--all-containers", "--prefix")
    assert f"[pod/{name}/proxy] proxy up" in out and f"[pod/{name}/app] app up" in out
    statuses = (framework.pod(name) or {})["status"]
    assert statuses["initContainerStatuses"][0]["started"] is True
    assert statuses["containerStatuses"][0]["imageID"].startswith("local@sha256:")
    framework.delete_pod(name)


EVENT_LINE = re.compile(
    r"^\s+(Normal|Warning)\s+(\w+)\s+.*?\s{2,}(default-scheduler|kubelet)\s+(.*)$"
)


def events_of(fw: Framework, name: str) -> list[tuple[str, str, str]]:
    out = kubectl(fw, "describe", "pod", name).stdout
    section = out.split("Events:", 1)[-1]
    return [m.group(2, 3, 4) for line in section.splitlines() if (m := EVENT_LINE.match(line))]


def test_describe_shows_events_in_order_and_defaults(framework: Framework, printer: str) -> None:
    framework.wait(
        "Started recorded",
        lambda: any(e[0] == "Started" for e in events_of(framework, printer)),
        30,
    )
    events = events_of(framework, printer)
    reasons = [e[0] for e in events]
    assert reasons[:4] == ["Scheduled", "Pulled", "Created", "Started"], events
    assert events[0][1] == "default-scheduler" and events[0][2].startswith(
        f"Successfully assigned {framework.namespace}/{printer} to "
    )
    assert events[1][1:] == ("kubelet", 'Container image "local" already present on machine')
    assert events[2][2] == "Created container main" and events[3][2] == "Started container main"
    pod = framework.pod(printer) or {}
    c = pod["spec"]["containers"][0]
    assert (c["terminationMessagePath"], c["terminationMessagePolicy"], c["imagePullPolicy"]) == (
        "/dev/termination-log",
        "File",
        "Always",
    )
    assert pod["status"]["containerStatuses"][0]["containerID"].startswith("containerd://")


def test_probes_run_against_process_pods(framework: Framework, local_stack: Any) -> None:
    never_ready = {"tcpSocket": {"port": 1}, "periodSeconds": 1, "failureThreshold": 1}
    dies = {"exec": {"command": ["false"]}, "periodSeconds": 1, "failureThreshold": 2}
    probed = container(
        "main", "import time\ntime.sleep(600)", readinessProbe=never_ready, livenessProbe=dies
    )
    name = create_pod(framework, probed)

    def restarted() -> bool:
        statuses = ((framework.pod(name) or {}).get("status") or {}).get("containerStatuses") or []
        return bool(statuses) and statuses[0].get("restartCount", 0) >= 1

    framework.wait("liveness restart", restarted, 60)
    pod = framework.pod(name) or {}
    assert pod["spec"]["containers"][0]["livenessProbe"]["timeoutSeconds"] == 1
    assert pod["status"]["containerStatuses"][0]["ready"] is False
    framework.wait(
        "Killing recorded", lambda: any(e[0] == "Killing" for e in events_of(framework, name)), 30
    )
    messages = [e[2] for e in events_of(framework, name)]
    assert any(m.startswith("Readiness probe failed: dial tcp ") for m in messages), messages
    assert any(m.startswith("Liveness probe failed") for m in messages), messages
    assert "Container main failed liveness probe, will be restarted" in messages
    framework.delete_pod(name)


def test_simulated_pod_says_so(framework: Framework, local_stack: Any) -> None:
    name = create_pod(framework, {"name": "web", "image": "nginx:1.25"})

    def annotated() -> str:
        pod = framework.pod(name) or {}
        return str(
            ((pod.get("metadata") or {}).get("annotations") or {}).get(
                "local.agones-py.dev/simulated", ""
            )
        )

    reason = framework.wait("annotation", annotated, 60)
    assert "images: nginx:1.25" in reason and "--image IMAGE=COMMAND" in reason
    framework.wait(
        "event", lambda: any(e[0] == "Simulated" for e in events_of(framework, name)), 30
    )
    out = kubectl(framework, "logs", name, check=False)
    assert out.returncode == 1 and "is simulated by the local cluster" in out.stderr
    framework.delete_pod(name)


def test_exec_over_spdy_says_why_it_is_not_offered(framework: Framework, printer: str) -> None:
    out = kubectl(framework, "exec", printer, "--", "true", check=False)  # the 1.28 kubectl: SPDY
    assert out.returncode != 0
    assert "exec on the local cluster speaks the websocket streaming protocol" in out.stderr


def test_exec_through_the_official_client(
    framework: Framework, printer: str, core: kubernetes.client.CoreV1Api
) -> None:
    from kubernetes.stream import stream

    exec_ = core.connect_get_namespaced_pod_exec
    script = 'echo out; echo err >&2; test -n "$PYTHONUNBUFFERED" && echo env'
    out = stream(
        exec_,
        printer,
        framework.namespace,
        command=["sh", "-c", script],
        stderr=True,
        stdin=False,
        stdout=True,
        tty=False,
    )
    assert sorted(out.split()) == ["env", "err", "out"]
    resp = stream(
        exec_,
        printer,
        framework.namespace,
        command=["sh", "-c", "exit 3"],
        stderr=True,
        stdin=False,
        stdout=True,
        tty=False,
        _preload_content=False,
    )
    resp.run_forever(timeout=30)
    assert resp.returncode == 3
    tty = stream(
        exec_,
        printer,
        framework.namespace,
        command=["tty"],
        stderr=True,
        stdin=False,
        stdout=True,
        tty=True,
    )
    assert tty.strip().startswith("/dev/pts/")
    resp = stream(
        exec_,
        printer,
        framework.namespace,
        command=["cat"],
        stderr=True,
        stdin=True,
        stdout=True,
        tty=False,
        _preload_content=False,
    )
    resp.write_stdin("piped\n")
    framework.wait("echoed", lambda: (resp.update(timeout=1), "piped" in resp.peek_stdout())[1], 30)
    assert resp.read_stdout().strip() == "piped"
    resp.close()


def _websocket_kubectl() -> str | None:
    """A kubectl of 1.30 or later (websocket exec), beside the dispatcher's."""
    exe = shutil.which("kubectl")
    if exe is None:
        return None
    for minor in (33, 32, 31, 30):
        candidate = Path(exe).resolve().parent / f"kubectl.1.{minor}"
        if candidate.exists():
            return str(candidate)
    return None


@pytest.mark.skipif(_websocket_kubectl() is None, reason="no kubectl 1.30+ installed")
def test_exec_with_kubectl_speaking_websockets(framework: Framework, printer: str) -> None:
    exe = _websocket_kubectl()
    assert exe is not None
    base = [exe, "--kubeconfig", framework.kubeconfig, "-n", framework.namespace, "exec"]
    run = subprocess.run(
        [*base, printer, "--", "sh", "-c", "echo hi; exit 4"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (run.returncode, run.stdout) == (4, "hi\n"), run.stderr
    piped = subprocess.run(
        [*base, "-i", printer, "--", "cat"],
        input="through stdin\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (piped.returncode, piped.stdout) == (0, "through stdin\n"), piped.stderr
    wrong = subprocess.run(
        [*base, printer, "-c", "nope", "--", "true"], capture_output=True, text=True, timeout=60
    )
    assert wrong.returncode != 0 and "container nope is not valid for pod" in wrong.stderr


EXEC_QUERY = st.lists(
    st.tuples(
        st.sampled_from(["command", "container", "stdin", "stdout", "tty", "stderr"]),
        st.text(max_size=10),
    ),
    max_size=5,
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=EXEC_QUERY)
def test_exec_endpoint_answers_malformed_requests_with_4xx(
    framework: Framework, printer: str, query: list[tuple[str, str]]
) -> None:
    resp = framework.api.request(
        "POST", f"/api/v1/namespaces/{framework.namespace}/pods/{printer}/exec", query=query
    )
    assert resp.status in (400, 404), (query, resp)
    assert resp.body["kind"] == "Status" and resp.body["message"], resp


QUERY = st.dictionaries(
    st.sampled_from(
        ["tailLines", "sinceSeconds", "sinceTime", "limitBytes", "container", "timestamps"]
    ),
    st.one_of(st.integers(-5, 5).map(str), st.text(max_size=12), st.just("2026-01-01T00:00:00Z")),
    max_size=4,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=QUERY)
def test_log_endpoint_answers_malformed_queries_with_4xx(
    framework: Framework, printer: str, query: dict[str, str]
) -> None:
    resp = framework.api.request(
        "GET", f"/api/v1/namespaces/{framework.namespace}/pods/{printer}/log", query=query
    )
    assert resp.status in (200, 400, 422), (query, resp)
    if resp.status != 200:
        assert resp.body["kind"] == "Status" and resp.body["message"], resp


def test_nodes_report_the_server_version_and_their_kubelet_port(
    framework: Framework, local_stack: Any
) -> None:
    version = framework.api.get("/version").body["gitVersion"]
    nodes = framework.api.get("/api/v1/nodes").body["items"]
    assert nodes
    for node in nodes:
        assert node["status"]["nodeInfo"]["kubeletVersion"] == version
        assert node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] > 0


def test_an_exec_whose_client_goes_away_is_killed(
    framework: Framework, printer: str, core: kubernetes.client.CoreV1Api
) -> None:
    from kubernetes.stream import stream

    marker = f"abandoned-{uuid.uuid4().hex[:8]}"
    resp = stream(
        core.connect_get_namespaced_pod_exec,
        printer,
        framework.namespace,
        command=["sh", "-c", f"sleep 600; echo {marker}"],
        stderr=True,
        stdin=True,
        stdout=True,
        tty=False,
        _preload_content=False,
    )
    framework.wait("the exec running", lambda: _processes_with(marker), 30)
    resp.close()
    framework.wait("the exec killed", lambda: not _processes_with(marker), 30)


def _processes_with(text: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if text.encode() in cmdline:
                found.append(int(entry.name))
    return found
