"""Which image runs as which local program, and what is simulated instead.

The local nodes pull no image: a container runs as a local process when it has a `command`, or
when its image maps to a local program. The map is the user's entries (`agones local up --image
IMAGE=COMMAND`, repeatable, and `--images FILE`: a YAML mapping `IMAGE: COMMAND`, a COMMAND a
string split as a shell would or a list), first match first, then the built-in entries
(`containers.IMAGE_PROGRAMS`). A user entry's COMMAND is the image's ENTRYPOINT (its CMD is
empty), so a container's `args` follow it and its `command` replaces it, as with a real image.

IMAGE matches as a reference does: `nginx` matches `nginx`, `nginx:1.25`, `nginx@sha256:...`,
`docker.io/library/nginx:1.25`; `nginx:1.25` only that tag; `*` and `?` are wildcards
(`ghcr.io/me/*`).

A pod none of whose containers runs locally is SIMULATED (Ready, its ports allocated, nothing
behind them); so is one annotated `local.agones-py.dev/simulate: "true"`, and every pod with
`simulate_all`. In a pod that runs processes, a container whose image maps to nothing runs an idle
placeholder process. Either way the kubelet says so, unless the user asked for the simulation
(the annotation, `simulate_all`): the annotation `SIMULATED_ANNOTATION` with the reason, and a
`Simulated` event (`simulation_reason`, `placeholder_message`).
"""

from __future__ import annotations

import fnmatch
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .containers import IMAGE_PROGRAMS, SIDECAR_NAME, program_for

SIMULATE_ANNOTATION = "local.agones-py.dev/simulate"
"""Set to "true" by the user: simulate this pod whatever its images."""
SIMULATED_ANNOTATION = "local.agones-py.dev/simulated"
"""Set by the kubelet: why the pod, or which of its containers, runs no program."""


def normalize_image(image: str) -> str:
    """The reference without Docker Hub's implicit `docker.io/` and `library/` prefixes."""
    for prefix in ("docker.io/", "index.docker.io/", "registry-1.docker.io/"):
        if image.startswith(prefix):
            image = image[len(prefix) :]
            break
    return image.removeprefix("library/")


def _repository(image: str) -> str:
    """The reference without its tag and digest."""
    name = image.split("@", 1)[0]
    head, _, last = name.rpartition("/")
    last = last.split(":", 1)[0]
    return f"{head}/{last}" if head else last


@dataclass(frozen=True)
class ImageProgram:
    """One user entry of the map."""

    image: str
    command: tuple[str, ...]

    def matches(self, image: str) -> bool:
        pattern, ref = normalize_image(self.image), normalize_image(image)
        if fnmatch.fnmatchcase(ref, pattern):
            return True
        has_version = ":" in pattern.rsplit("/", 1)[-1] or "@" in pattern
        return not has_version and fnmatch.fnmatchcase(_repository(ref), pattern)


def parse_image_flag(text: str) -> ImageProgram:
    """`IMAGE=COMMAND` (ValueError with a one-line reason when malformed)."""
    image, sep, command = text.partition("=")
    if not sep or not image.strip():
        raise ValueError(f"--image {text!r}: expected IMAGE=COMMAND")
    return _entry(image.strip(), command, f"--image {text!r}")


def _entry(image: str, command: Any, where: str) -> ImageProgram:
    if isinstance(command, list) and command and all(isinstance(c, str | int) for c in command):
        argv = [str(c) for c in command]
    elif isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from err
    else:
        raise ValueError(f"{where}: COMMAND must be a string or a list of strings")
    if not argv:
        raise ValueError(f"{where}: COMMAND is empty")
    return ImageProgram(image, tuple(argv))


def load_image_file(path: str) -> list[ImageProgram]:
    """The entries of a YAML file mapping IMAGE to COMMAND (ValueError when malformed)."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as err:
        raise ValueError(f"{path}: {' '.join(str(err).split())}") from err
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of IMAGE: COMMAND")
    return [
        _entry(str(image), command, f"{path}: {str(image)!r}") for image, command in data.items()
    ]


def user_program(container: dict[str, Any], images: list[ImageProgram]) -> list[str] | None:
    """The argv of the first user entry matching the container's image, with its `args`."""
    image = str(container.get("image") or "")
    for entry in images:
        if entry.matches(image):
            return [*entry.command, *(str(a) for a in container.get("args") or [])]
    return None


def local_program(container: dict[str, Any], images: list[ImageProgram]) -> list[str] | None:
    """What the container runs: its `command` (+ `args`), else the user's entry for its image,
    else the built-in one; None: no local program."""
    if container.get("command"):
        return program_for(container)
    return user_program(container, images) or program_for(container)


def describe_map(images: list[ImageProgram]) -> list[str]:
    """The map as `agones local up` prints it, user entries first."""
    lines = [f"{e.image} -> {shlex.join(e.command)} (--image)" for e in images]
    for pattern, entrypoint, cmd in IMAGE_PROGRAMS:
        lines.append(f"/{pattern.pattern}/ -> {shlex.join([*entrypoint, *cmd])}")
    return lines


def simulation_reason(pod: dict[str, Any], runs_locally: list[bool], simulate_all: bool) -> str:
    """Why the pod is simulated ("" when it runs processes); `runs_locally[i]` tells whether
    container i (init containers first, the SDK sidecar left out) has a local program."""
    if simulate_all:
        return "the local cluster simulates every pod (--simulate-all)"
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    if annotations.get(SIMULATE_ANNOTATION) == "true":
        return f'annotated {SIMULATE_ANNOTATION}: "true"'
    if any(runs_locally):
        return ""
    images = sorted({str(c.get("image") or "") for c in _user_containers(pod)})
    return (
        f"no container has a command or an image with a local program (images: "
        f"{', '.join(images) or 'none'}; map one with agones local up --image IMAGE=COMMAND)"
    )


def _user_containers(pod: dict[str, Any]) -> list[dict[str, Any]]:
    spec = pod.get("spec") or {}
    every = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    return [c for c in every if c.get("name") != SIDECAR_NAME]


def placeholder_message(container: dict[str, Any]) -> str:
    return (
        f'Container {container.get("name", "")} (image "{container.get("image", "")}") has no '
        "local program: it runs an idle placeholder process (map the image with agones local up "
        "--image IMAGE=COMMAND)"
    )
