"""Shared informers, reflector, stores and listers (client-go `tools/cache`)."""

from .factory import GenericInformer, SharedInformerFactory
from .index import NAMESPACE_INDEX, Indexers, meta_namespace_index_func
from .lister import GenericLister, GenericNamespaceLister
from .listwatch import (
    ListerWatcher,
    ListResult,
    ListWatch,
    ListWatchSource,
    RawDecoder,
    RESTListWatches,
    StructDecoder,
    WatchEvent,
)
from .mutation_cache import MutationCache
from .reflector import Reflector
from .shared_informer import ResourceEventHandler, ResourceEventHandlerFuncs, SharedIndexInformer
from .store import (
    DeletedFinalStateUnknown,
    ExplicitKey,
    meta_namespace_key,
    split_meta_namespace_key,
)
from .the_real_fifo import Delta, DeltaType, RealFIFO
from .thread_safe_store import Indexer

__all__ = [
    "NAMESPACE_INDEX",
    "DeletedFinalStateUnknown",
    "Delta",
    "DeltaType",
    "ExplicitKey",
    "GenericInformer",
    "GenericLister",
    "GenericNamespaceLister",
    "Indexer",
    "Indexers",
    "ListResult",
    "ListWatch",
    "ListWatchSource",
    "ListerWatcher",
    "MutationCache",
    "RESTListWatches",
    "RawDecoder",
    "RealFIFO",
    "Reflector",
    "ResourceEventHandler",
    "ResourceEventHandlerFuncs",
    "SharedIndexInformer",
    "SharedInformerFactory",
    "StructDecoder",
    "WatchEvent",
    "meta_namespace_index_func",
    "meta_namespace_key",
    "split_meta_namespace_key",
]
