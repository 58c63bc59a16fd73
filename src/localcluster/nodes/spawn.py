"""Child processes of the local cluster, started without fork().

The kubelet, the pod network holders and the stack start their children from threads that run
event loops, in a process that has grpc's extension loaded (the SDK server and the tests' clients
live there too). A real `fork()` copies such a process with only the forking thread alive:
grpc's `pthread_atfork` handlers then run in the copy, against threads and locks that no longer
exist, and the copy dies before `exec` ("Fatal Python error: Segmentation fault", or `Aborted`).
CPython forks for real only when it must run Python code in the child: a `preexec_fn` (or a
uid/gid/groups change). Without one, `subprocess` starts the child with `vfork()` or
`posix_spawn()` (`CLONE_VM|CLONE_VFORK`), which run no atfork handler and no Python code between
the clone and the `exec`.

So `start_process` never passes a `preexec_fn`. What the kubelet used one for, the parent-death
signal (a killed `agones local up` leaves no orphan behind: Linux `PR_SET_PDEATHSIG`), is set by
the argv prefix `parent_death_prefix()` instead: util-linux `setpriv --pdeathsig KILL`, which sets
it and then execs the program (the setting survives `exec`), or, without `setpriv`, a tiny Python
shim that does the same and imports nothing of this project (nor grpc).
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from typing import Any

_SHIM = (
    "import ctypes, os, sys; ctypes.CDLL(None, use_errno=True).prctl(1, 9); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)
"""prctl(PR_SET_PDEATHSIG, SIGKILL), then exec the rest of argv."""


def parent_death_prefix() -> list[str]:
    """The argv prefix that makes the program SIGKILLed when its parent dies."""
    setpriv = shutil.which("setpriv")
    if setpriv is not None:
        return [setpriv, "--pdeathsig", "KILL", "--"]
    return [sys.executable, "-S", "-c", _SHIM]


async def start_process(argv: list[str], **kwargs: Any) -> asyncio.subprocess.Process:
    """`asyncio.create_subprocess_exec` with the parent-death prefix, in a new session, and no
    `preexec_fn` (so no fork: see the module docstring). Other keyword arguments pass through."""
    if "preexec_fn" in kwargs:
        raise ValueError("start_process never runs Python code in the child (no preexec_fn)")
    return await asyncio.create_subprocess_exec(
        *parent_death_prefix(), *argv, start_new_session=True, **kwargs
    )
