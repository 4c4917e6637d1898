"""TechKG: a knowledge graph and literature tracker for ML training techniques.

The core (this package's vocabulary, store, catalog and reading state) knows nothing
of its sources or consumers: ingesters, kernels, exports, analytics and the server
depend on it, never the reverse.

What belongs in ``kg/``: at its top level and in ``kg/store/``, the core (a new module
there is core unless the import contracts in ``pyproject.toml`` place it higher); the
answer layer (:mod:`kg.answer`) and the views built on it (:mod:`kg.views`); and, each in
its own subpackage, the consumers that live here (``kg/analytics``, ``kg/server``) and the
CLI (``kg/cli``). What does not: a source (``ingest/``), an exporter (``exports/``), a
kernel (``kernels/``), a named query's text (``queries/``). docs/architecture.md draws it.

For notebooks, :func:`open_graph` gives the graph as an rdflib ``Dataset``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kg.version import __version__

if TYPE_CHECKING:
    from rdflib import Dataset

__all__ = ["__version__", "open_graph"]


def open_graph(store: str | os.PathLike[str] | None = None) -> Dataset:
    """The graph in ``store`` (a store directory; default ``KG_STORE`` or the per-user store)
    as a read-only rdflib ``Dataset`` whose default graph is the union of the named graphs,
    as ``kg sparql`` sees it, with the same prefixes bound (tkg:, skos:, prov:, ...).

    It reads the store's last committed state through oxrdflib (rdflib's API over Oxigraph,
    which also answers its SPARQL), so it never waits for a writer. Writes go through ``kg``
    or :meth:`kg.store.base.GraphStore.transaction`, which record their provenance, and are
    refused here. Close it with ``dataset.close()``."""
    import weakref

    from oxrdflib import OxigraphStore as RdflibOxigraph
    from rdflib import Dataset

    from kg.errors import KGError
    from kg.store import open_store
    from kg.store.embedded import OxigraphStore

    reader = open_store(store, mode="read", command="kg.open_graph")
    if not isinstance(reader, OxigraphStore):
        reader.close()
        raise KGError(f"kg.open_graph reads an embedded store, and {reader.location} is a SPARQL endpoint",
                      hint="For an endpoint, use rdflib's SPARQLStore, or run queries with kg sparql / kg query.")
    dataset = Dataset(store=RdflibOxigraph(store=reader._store), default_union=True)
    from kg.vocab import PREFIXES

    for prefix, namespace in PREFIXES.items():  # tkg:, skos:, prov:, ... as in kg sparql
        dataset.bind(prefix, namespace, override=True, replace=True)
    weakref.finalize(dataset, reader.close)  # the reader's view stays open as long as the dataset lives
    close = dataset.close

    def close_both(*args: object, **kwargs: object) -> None:
        close(*args, **kwargs)  # type: ignore[arg-type]
        reader.close()

    dataset.close = close_both  # type: ignore[method-assign]
    return dataset
