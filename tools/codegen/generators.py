"""The registry of generators run by `python -m tools.codegen`.

A generator takes the repository root and returns `{relative path: content}`; it must be
deterministic, so that `--check` can compare its output with the files on disk. A generator may also
own a folder (`OWNED_DIRS`): files there that it no longer produces are reported stale.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tools.codegen import chart, crds, k8s_protobuf, typed_clients

Generator = Callable[[Path], dict[str, str]]


def _protos(root: Path) -> dict[str, str]:
    # Imported lazily: compiling protos needs grpc_tools, which the other generators do not.
    from tools.codegen import protos

    return protos.generate(root)


GENERATORS: dict[str, Generator] = {
    "crds": crds.generate,
    "crd-schemas": crds.generate_schemas,
    "chart-crds": chart.generate,
    "typed-clients": typed_clients.generate,
    "protos": _protos,
    "k8s-protobuf": k8s_protobuf.generate,
}

# Folders whose every file must come from a generator (stale leftovers fail --check).
OWNED_DIRS: dict[str, tuple[str, ...]] = {
    "crds": ("crds",),
    "chart-crds": (chart.OUT_DIR,),
    "typed-clients": typed_clients.OWNED,
    "protos": ("src/sdk/proto", "src/allocator/proto"),
}
