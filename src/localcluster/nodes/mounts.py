"""Mount namespaces for process pods: each container sees its volumes at its `mountPath`.

On Kubernetes the containers of a pod share the pod sandbox's network, UTS and IPC namespaces,
but each has a mount namespace (and, unless `shareProcessNamespace`, a PID namespace) of its own,
where the runtime bind-mounts the container's volumes. The same split is kept here:

* the pod's holder process (`netns.PodNetwork`, the "pause container") is started in new
  network, UTS, IPC and mount namespaces; in its mount namespace it bind-mounts the pod's
  `/etc/hosts`, `/etc/resolv.conf` and `/etc/hostname` (`podsandbox`), and sets the hostname;
* each container is started by `nsenter` into the holder's namespaces, then by the container
  init `CONTAINER_INIT` (a few lines of Python run with `-S`, importing nothing of this project):
  it unshares a mount namespace (a private copy of the pod's) and a PID namespace, forks, and the
  child, pid 1 of the container, opens every `Mount`'s source first (so a volume mounted over a
  directory the sources live in, an emptyDir at `/tmp`, cannot hide the ones after it), mounts
  its own `/proc`, bind-mounts every `Mount` from those descriptors (sorted so a parent path
  comes before the paths under it; read-only ones remounted read-only), binds back the
  program's own directories a volume hid (`program_paths`: an emptyDir at `/tmp` over a checkout
  under `/tmp`), changes to the working directory and execs the program. The parent waits and leaves with the child's
  status (re-raising the signal that ended it), so the kubelet's exit code is the container's.
  `main_pid(proc)` is the host pid of the container's pid 1, which gets SIGTERM on a stop as a
  runtime sends it (a shell there that does not handle it ignores it, as on Kubernetes).

The processes share the host's filesystem, so a mount point has to exist there: a missing
`mountPath` is created (an empty directory, or an empty file for a file volume) by
`MountPoints.ensure` and removed by `MountPoints.release` once no pod of this process uses it
(only while it is still the empty placeholder this process made; another process's local cluster
mounting the same missing path at the same time is not tracked).

`mountns_supported()` says whether mount and PID namespaces can be made here; without them the
kubelet uses the documented path-rewrite fallback of `podfiles`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from .containers import REPO_ROOT

MS_RDONLY = 0x1
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000


@dataclass(frozen=True)
class Mount:
    """One bind mount of a container: the host `source` at `target` in the container."""

    source: str
    target: str
    read_only: bool = False


CONTAINER_INIT = r"""
import ctypes, json, os, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
def fail(what):
    err = ctypes.get_errno()
    sys.stderr.write("container init: %s: %s\n" % (what, os.strerror(err)))
    sys.stderr.flush()
    os._exit(128)
def mount(src, dst, fstype, flags):
    enc = lambda s: None if s is None else s.encode()
    return libc.mount(enc(src), enc(dst), enc(fstype), ctypes.c_ulong(flags), None) == 0
spec = json.loads(sys.argv[1])
argv = sys.argv[2:]
if libc.unshare(0x00020000 | (0x20000000 if spec["pid"] else 0)) != 0:
    fail("unshare")
if not mount("none", "/", None, 0x4000 | 0x40000):
    fail("make / private")
child = os.fork() if spec["pid"] else 0
if child:
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    status = os.waitpid(child, 0)[1]
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
libc.prctl(1, 9)
held = []
for src, dst, ro in spec["mounts"]:
    try:
        held.append(os.open(src, os.O_PATH | os.O_CLOEXEC))
    except OSError as err:
        sys.stderr.write("container init: open %s: %s\n" % (src, err))
        os._exit(128)
kept = []
for path in spec["keep"]:
    try:
        kept.append((os.open(path, os.O_PATH | os.O_CLOEXEC), path))
    except OSError:
        pass
if spec["pid"] and not mount("proc", "/proc", "proc", 0x2 | 0x4 | 0x8):
    fail("mount /proc")
for fd, (src, dst, ro) in zip(held, spec["mounts"]):
    if not mount("/proc/self/fd/%d" % fd, dst, None, 0x1000 | 0x4000):
        fail("bind %s at %s" % (src, dst))
    if ro and not mount("none", dst, None, 0x1000 | 0x20 | 0x1 | 0x4000):
        fail("remount %s read-only" % dst)
for fd, path in kept:
    if not os.path.exists(path):
        try:
            os.makedirs(path, exist_ok=True)
        except OSError:
            continue
        if not mount("/proc/self/fd/%d" % fd, path, None, 0x1000 | 0x4000):
            fail("bind %s back" % path)
try:
    os.chdir(spec["workdir"])
except OSError as err:
    sys.stderr.write("container init: chdir %s: %s\n" % (spec["workdir"], err))
    os._exit(128)
try:
    os.execvp(argv[0], argv)
except OSError as err:
    sys.stderr.write("container init: exec %s: %s\n" % (argv[0], err))
    os._exit(127 if isinstance(err, FileNotFoundError) else 126)
"""
"""The container init: argv[1] is a JSON `{"mounts": [[src, dst, ro], ...], "keep": [path, ...],
"workdir", "pid"}`, the rest the program. `keep` are the host paths the program itself lives in
(the repository, the interpreter's prefixes): one a volume hid (an emptyDir at `/tmp` over a
checkout under `/tmp`) is bound back at its path after the volumes, as an image's own files stay
visible in a container. Flags spelled as numbers: MS_REC|MS_PRIVATE, MS_NOSUID|MS_NODEV|MS_NOEXEC,
MS_BIND|MS_REC, MS_BIND|MS_REMOUNT|MS_RDONLY|MS_REC; CLONE_NEWNS, CLONE_NEWPID."""


def ordered(mounts: list[Mount]) -> list[Mount]:
    """Mounts in the order a runtime makes them: fewer path components first, so a volume at
    `/a` does not hide one at `/a/b`; among equals the spec's order (a later one wins)."""
    return sorted(mounts, key=lambda m: len(Path(m.target).parts))


def program_paths() -> list[str]:
    """The host directories the container's program is run from (the repository, the virtual
    environment and the interpreter's installation), each once: none under another."""
    found = [REPO_ROOT, Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix)]
    paths = sorted({p.resolve() for p in found if p.is_dir()}, key=lambda p: len(p.parts))
    out: list[Path] = []
    for p in paths:
        if not any(p == q or q in p.parents for q in out):
            out.append(p)
    return [str(p) for p in out]


def container_init_argv(
    mounts: list[Mount], argv: list[str], workdir: str, pid_namespace: bool = True
) -> list[str]:
    """The argv (after the `nsenter` prefix) that runs `argv` as a container with `mounts`."""
    spec = {
        "mounts": [[m.source, m.target, m.read_only] for m in ordered(mounts)],
        "keep": program_paths(),
        "workdir": workdir,
        "pid": pid_namespace,
    }
    return [sys.executable, "-S", "-c", CONTAINER_INIT, json.dumps(spec), *argv]


def main_pid(pid: int, pid_namespace: bool) -> int:
    """The host pid of the container's main process: the init's child in a PID namespace (the
    init itself until it has forked), else `pid` (the chain up to the program only execs)."""
    if not pid_namespace:
        return pid
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return pid
    return int(children[0]) if children else pid


async def forked_main_pid(pid: int, timeout: float = 5.0) -> int:
    """`main_pid` once the container init has forked its pid 1 (or `pid` after `timeout`, or
    when the init has already ended)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline and Path(f"/proc/{pid}").exists():
        child = main_pid(pid, True)
        if child != pid:
            return child
        await asyncio.sleep(0.01)
    return pid


def bind_mount(source: str, target: str, read_only: bool = False) -> None:
    """Bind `source` at `target` in the calling process's mount namespace (the pod holder)."""
    libc = ctypes.CDLL(None, use_errno=True)
    flags = MS_BIND | MS_REC
    if libc.mount(source.encode(), target.encode(), None, ctypes.c_ulong(flags), None) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"bind {source} at {target}: {os.strerror(err)}")
    if read_only:
        flags |= MS_REMOUNT | MS_RDONLY
        if libc.mount(b"none", target.encode(), None, ctypes.c_ulong(flags), None) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"remount {target} read-only: {os.strerror(err)}")


_support: bool | None = None


def mountns_supported() -> bool:
    """Whether this process may make mount, UTS, IPC and PID namespaces (root, `unshare`)."""
    global _support
    if _support is None:
        exe = shutil.which("unshare")
        if exe is None or shutil.which("nsenter") is None:
            _support = False
        else:
            flags = ["--mount", "--uts", "--ipc", "--pid", "--fork", "--mount-proc"]
            try:
                proc = subprocess.run([exe, *flags, "true"], capture_output=True, timeout=10)
                _support = proc.returncode == 0
            except (OSError, subprocess.TimeoutExpired):
                _support = False
    return _support


class MountPoints:
    """Mount points this process created on the host, counted by the pods using them."""

    def __init__(self) -> None:
        self._users: dict[Path, set[str]] = {}
        self._lock = threading.Lock()
        """Kubelets of several local clusters may run in threads of one process."""

    def ensure(self, target: str, is_file: bool, user: str) -> None:
        """Make `target` (and missing parents) exist as a directory, or an empty file; remember
        what was created for `user` (a pod uid)."""
        path = Path(target)
        with self._lock:
            missing = [p for p in [path, *path.parents] if not os.path.lexists(p)]
            for p in reversed(missing):
                if p == path and is_file:
                    p.touch()
                else:
                    p.mkdir()
                self._users[p] = set()
            for p in [path, *path.parents]:
                if p in self._users:
                    self._users[p].add(user)

    def release(self, user: str) -> None:
        """Forget `user`; remove each placeholder no pod uses any more, deepest first."""
        with self._lock:
            done = [p for p, users in self._users.items() if users == {user}]
            for users in self._users.values():
                users.discard(user)
            for p in sorted(done, key=lambda p: len(p.parts), reverse=True):
                del self._users[p]
                with contextlib.suppress(OSError):
                    if p.is_dir() and not p.is_symlink():
                        p.rmdir()
                    elif p.is_file() and p.stat().st_size == 0:
                        p.unlink()


MOUNT_POINTS = MountPoints()
"""Process-wide, as `POD_IPS`: the local clusters of one process share one filesystem."""
