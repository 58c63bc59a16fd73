"""Lists and their pages (a step of the registry's list verb), as the etcd3 store serves them.

`list_entries`: the objects of one resource matching label and field selectors, a page at a time.
A continue token (`encode_continue`/`decode_continue`: base64 JSON of the snapshot's
resourceVersion and the key to start after) resumes the snapshot its first page saw; an exact
resourceVersion lists the state at that revision. Either, once compacted, is a 410 Gone with the
etcd store's message. An unfiltered page counts the items left (`remainingItemCount`).
"""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Iterator

from ...apis.meta.labelselector import EVERYTHING
from . import errors
from .registryops import ListResult
from .resources import ResourceInfo
from .selectors import FieldSelector, LabelSelector, fields_match, labels_match
from .store import Entry, Store


def list_entries(
    store: Store,
    info: ResourceInfo,
    ns: str,
    labels: LabelSelector = EVERYTHING,
    fields: FieldSelector = (),
    limit: int = 0,
    continue_token: str = "",
    exact_rv: int | None = None,
) -> ListResult:
    """A (page of a) list. A continue token resumes the snapshot its first page saw, as etcd
    does; `exact_rv` lists the state at that resourceVersion (resourceVersionMatch=Exact)."""
    start: tuple[str, str] | None = None
    rv = store.rv
    snapshot: list[Entry] | None = None
    if continue_token:
        start, rv = decode_continue(continue_token)
        try:
            snapshot = store.list_at(info.key, ns, rv, start)
        except errors.StatusError:
            raise errors.gone(_CONTINUE_EXPIRED) from None
    elif exact_rv is not None:
        rv = exact_rv
        try:
            snapshot = store.list_at(info.key, ns, rv)
        except errors.StatusError:
            raise errors.gone(_EXACT_EXPIRED) from None
    source = iter(snapshot) if snapshot is not None else store.list(info.key, ns, start)
    out, more = _page(info, source, labels, fields, limit)
    token = ""
    remaining = None
    if more:
        token = encode_continue(rv, out[-1])
        if labels.empty() and not fields:
            # The entry that stopped the page and everything after it.
            remaining = 1 + sum(1 for _ in source)
    return ListResult(out, rv, token, remaining)


def _page(
    info: ResourceInfo,
    source: Iterator[Entry],
    labels: LabelSelector,
    fields: FieldSelector,
    limit: int,
) -> tuple[list[Entry], bool]:
    """The matching entries of `source` up to `limit` (0: all), and whether more matched; the
    one that stopped the page is consumed from `source`."""
    if labels.empty() and not fields:
        # Nothing to match: the page is the next `limit` entries, and one more tells if more.
        if not limit:
            return list(source), False
        page = list(itertools.islice(source, limit))
        return page, next(source, None) is not None
    out: list[Entry] = []
    getters = info.fields
    for entry in source:
        obj = entry.obj
        if not labels_match(labels, obj["metadata"].get("labels")):
            continue
        if fields and not fields_match(fields, getters, obj):
            continue
        if limit and len(out) >= limit:
            return out, True
        out.append(entry)
    return out, False


def encode_continue(rv: int, last: Entry) -> str:
    """The continue token of a page whose last entry is `last`, in the snapshot at `rv`."""
    md = last.obj["metadata"]
    start_key = [md.get("namespace", ""), md["name"]]
    return base64.b64encode(
        json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start_key}).encode()
    ).decode()


def decode_continue(token: str) -> tuple[tuple[str, str], int]:
    """The start key and resourceVersion of a continue token; a 400 when it is not one."""
    try:
        decoded = json.loads(base64.b64decode(token))
        start = (str(decoded["start"][0]), str(decoded["start"][1]))
        return start, int(decoded["rv"])
    except (ValueError, KeyError, TypeError, IndexError):
        raise errors.bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
        ) from None


# The etcd store's message when an exact list's revision has been compacted.
_EXACT_EXPIRED = "The resourceVersion for the provided list is too old."
_CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can start "
    "a new list without the continue parameter, or use the continue token in this response to "
    "retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the first "
    "chunk was returned and now may show up in the list."
)
