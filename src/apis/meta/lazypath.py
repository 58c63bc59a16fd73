"""`LazyPath`: a `field.Path` for passes that make one for every value they visit (the schema
checks of every admission review) and read almost none: its text is joined only when read, as an
error names it. It builds children as `Path` does (`child(name)`, `index(i)`), lazily too.
"""

from __future__ import annotations

from typing import Any

from ..field import Path


class LazyPath(Path):
    """A `Path` whose text is joined only when read. `_index` says whether `_part` is a list index
    or map key (`[i]`) rather than a field name (`.name`)."""

    __slots__ = ("_index", "_parent", "_part")

    def __init__(self, parent: Path, part: Any, index: bool = False) -> None:
        self._parent = parent
        self._part = part
        self._index = index

    @property
    def _text(self) -> str:  # type: ignore[override]
        base = str(self._parent)
        if self._index:
            return f"{base}[{self._part}]"
        return f"{base}.{self._part}" if base else str(self._part)

    def child(self, *names: str) -> Path:
        if len(names) == 1:
            return LazyPath(self, names[0])
        return Path._raw(self._text).child(*names)

    def index(self, i: int) -> Path:
        return LazyPath(self, i, True)
