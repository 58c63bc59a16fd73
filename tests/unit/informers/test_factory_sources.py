"""The informer factory lists and watches through its `ListWatchSource` (REST by default)."""

from __future__ import annotations

from typing import Any

from agones.client.versioned.resources import GAME_SERVERS, PODS
from agones.informers import (
    ListWatch,
    RawDecoder,
    RESTListWatches,
    SharedInformerFactory,
)
from agones.informers.listwatch import Decoder, ListerWatcher

from .fakeapi import FakeAPI


class Recording:
    """A source that hands out REST ListWatches and remembers what it was asked for."""

    def __init__(self, client: FakeAPI) -> None:
        self.rest = RESTListWatches(client)
        self.asked: list[tuple[Any, ...]] = []

    def list_watch(
        self,
        resource: Any,
        namespace: str | None,
        *,
        label_selector: str | None,
        field_selector: str | None,
        decoder: Decoder | None,
    ) -> ListerWatcher:
        self.asked.append((resource, namespace, label_selector, field_selector, decoder))
        return self.rest.list_watch(
            resource,
            namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            decoder=decoder,
        )


def test_default_source_is_rest_over_the_client() -> None:
    api = FakeAPI()
    factory = SharedInformerFactory(api, namespace="ns")
    lw = factory.for_resource(GAME_SERVERS, label_selector="a=b").informer().lister_watcher
    assert isinstance(lw, ListWatch)
    assert (lw.client, lw.resource, lw.namespace, lw.label_selector) == (
        api,
        GAME_SERVERS,
        "ns",
        "a=b",
    )


def test_a_given_source_makes_each_informer_once() -> None:
    source = Recording(FakeAPI())
    factory = SharedInformerFactory(FakeAPI(), namespace="ns", list_watches=source)
    decoder = RawDecoder()
    first = factory.for_resource(PODS, field_selector="spec.nodeName=n", decoder=decoder)
    again = factory.for_resource(PODS, field_selector="spec.nodeName=n", decoder=decoder)
    other = factory.for_resource(GAME_SERVERS)
    assert first is again and other is not first
    assert source.asked == [
        (PODS, "ns", None, "spec.nodeName=n", decoder),
        (GAME_SERVERS, "ns", None, None, None),
    ]
