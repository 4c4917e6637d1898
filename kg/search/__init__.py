"""Full-text search over the papers and techniques the graph holds (``kg search``, the
workbench's search box), with tantivy: BM25 ranking, phrases, prefixes, filters and facets.

- :mod:`kg.search.schema`: the index's fields;
- :mod:`kg.search.facts` and :mod:`kg.search.documents`: what the documents are made of,
  read out of the store, and the documents made from it;
- :mod:`kg.search.index`: where the index lives, making it (:func:`rebuild_index`), keeping
  it current after a write (:func:`update_index`) and telling whether it is (:func:`freshness`);
- :mod:`kg.search.query`: a search, its filters, snippets and facets.

The index is derived data, like the analytics file: losing it loses nothing.
"""

from __future__ import annotations

from kg.search.index import Freshness, IndexReport, freshness, index_root, rebuild_index, update_index

__all__ = ["Freshness", "IndexReport", "freshness", "index_root", "rebuild_index", "update_index"]
