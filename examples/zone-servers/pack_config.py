"""Pack `config/` into `chart/files/config.tar.gz`, the archive the chart's ConfigMap carries in
`binaryData` (studios ship a whole configuration directory this way). Deterministic: sorted
entries, zero times, no owner names, so the archive only changes when the files do.

    python examples/zone-servers/pack_config.py          # write the archive
    python examples/zone-servers/pack_config.py --check  # exit 1 when it is stale
"""

from __future__ import annotations

import gzip
import io
import sys
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "config"
ARCHIVE = HERE / "chart" / "files" / "config.tar.gz"


def pack(source: Path = SOURCE) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in sorted(source.rglob("*")):
            info = tar.gettarinfo(str(path), arcname=str(path.relative_to(source)))
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            info.mode = 0o755 if path.is_dir() else 0o644
            if path.is_file():
                with path.open("rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    return gzip.compress(raw.getvalue(), mtime=0)


def main(argv: list[str]) -> int:
    fresh = pack()
    if "--check" in argv:
        if not ARCHIVE.exists() or ARCHIVE.read_bytes() != fresh:
            print(f"{ARCHIVE} is stale: run python {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    ARCHIVE.parent.mkdir(parents=True, exist_ok=True)
    ARCHIVE.write_bytes(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
