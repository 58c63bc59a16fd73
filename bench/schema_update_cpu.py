"""CPU of the schema passes (`customresource.decode` + `validate`) of one update of Agones'
example Fleet (spec.replicas changed) and GameServer (status.state changed), against the
repository's CRD schemas: the full pass, and the pass given the stored object (`old`), which
skips the subtrees the update left as they were. Timed with process_time(), 3,000 each.

    python bench/schema_update_cpu.py
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

from agones.apis.structural import crds, customresource

FIXTURES = Path(__file__).resolve().parents[1] / "tests/fixtures/agones-oracle/valid"
COUNT = 3000


def _stored(name: str) -> tuple[dict[str, Any], customresource.Version]:
    obj = json.loads((FIXTURES / name).read_text())["input"]
    version = crds.version_of(obj["apiVersion"], obj["kind"])
    assert version is not None
    customresource.decode(obj, version)
    if obj["kind"] == "GameServer":
        obj["status"] = {"state": "Scheduled", "address": "10.0.0.1", "ports": []}
    assert not customresource.validate(obj, version)
    return obj, version


def _change(obj: dict[str, Any]) -> None:
    if obj["kind"] == "Fleet":
        obj["spec"]["replicas"] = obj["spec"].get("replicas", 1) + 1
    else:
        obj["status"]["state"] = "Ready"


def main() -> None:
    for name in ("fleet-examples-fleet.json", "gameserver-examples-gameserver.json"):
        stored, version = _stored(name)
        figures = []
        for old in (None, stored):
            bodies = [copy.deepcopy(stored) for _ in range(COUNT)]
            for body in bodies:
                _change(body)
            start = time.process_time()
            for body in bodies:
                customresource.decode(body, version, old)
                customresource.validate(body, version, old)
            figures.append((time.process_time() - start) / COUNT * 1e6)
        kind = stored["kind"].lower()
        print(f"{kind}_full_us {figures[0]:.0f}")
        print(f"{kind}_with_stored_us {figures[1]:.0f}")


if __name__ == "__main__":
    main()
