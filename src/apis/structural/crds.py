"""The structural schemas of the repository's CRDs, by group, version and kind.

`crdschemas.json` is generated beside `crds/*.yaml` by `python -m tools.codegen crds` (with the
default feature gates, as the CRDs are), so the schema here is the one the local API server
serves. `version_of(api_version, kind)` is `None` for kinds that are not CRDs (e.g.
GameServerAllocation, served by an aggregated API).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from .customresource import Version

SCHEMAS = Path(__file__).with_name("crdschemas.json")


@functools.cache
def _versions() -> dict[str, Version]:
    raw = json.loads(SCHEMAS.read_text())
    return {
        key: Version(entry["openAPIV3Schema"], entry["scale"], entry["status"])
        for key, entry in raw.items()
    }


def version_of(api_version: str, kind: str) -> Version | None:
    """The CRD version serving `kind` in `api_version` (`group/version`), if any."""
    return _versions().get(f"{api_version}/{kind}")
