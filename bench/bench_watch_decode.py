"""What decoding one watch event costs an informer: one pass against envelope-then-object.

`StructDecoder.decode_event` decodes the event's envelope and its object in one pass; the way it
did before (and still does for ERROR and BOOKMARK events, `_decode_other_event`) first decodes
the envelope with the object left as raw bytes, then the object: the bytes are scanned twice.
Measured on a realistic allocated GameServer (`bench_apis_codec`) into the typed `GameServer`,
and a realistic GameServer pod (`bench_pod_cache`) into the `Pod` read model; microseconds per
event, best of seven runs.

    .venv/bin/python -m bench.bench_watch_decode [events]
"""

from __future__ import annotations

import json
import sys
import timeit
from typing import Any

import msgspec

from agones.apis.agones.v1.gameserver import GameServer
from agones.apis.core.v1 import Pod
from agones.informers.listwatch import StructDecoder
from bench.bench_apis_codec import realistic_game_server
from bench.bench_pod_cache import POD


def per_event_us(decode: Any, raw: bytes, events: int) -> float:
    return min(timeit.repeat(lambda: decode(raw), number=events, repeat=7)) / events * 1e6


def main() -> None:
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    cases = {"GameServer": (GameServer, realistic_game_server()), "Pod": (Pod, POD)}
    out: dict[str, Any] = {}
    for name, (kind, obj) in cases.items():
        raw = msgspec.json.encode({"type": "MODIFIED", "object": obj})
        decoder: StructDecoder[Any] = StructDecoder(kind)
        assert decoder.decode_event(raw) == decoder._decode_other_event(raw)
        two = per_event_us(decoder._decode_other_event, raw, events)
        one = per_event_us(decoder.decode_event, raw, events)
        out[name] = {
            "event_bytes": len(raw),
            "two_pass_us": round(two, 2),
            "one_pass_us": round(one, 2),
            "saved_percent": round(100 * (1 - one / two), 1),
        }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
