"""Index functions (client-go `tools/cache/index.go`).

An `IndexFunc` maps an object to the values it is indexed under (possibly several, possibly none).
`Indexers` names them; `NAMESPACE_INDEX` with `meta_namespace_index_func` is the namespace index
every informer carries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .meta import get_namespace

IndexFunc = Callable[[Any], list[str]]
Indexers = dict[str, IndexFunc]

NAMESPACE_INDEX = "namespace"


def meta_namespace_index_func(obj: Any) -> list[str]:
    return [get_namespace(obj)]


class IndexError_(ValueError):
    """Unknown index name, or an indexer added or redefined at the wrong time."""
