"""The search index kept current by the write that changes the graph (a keeper of
:mod:`kg.derived`).

A write names the papers and techniques whose documents it changed, and the graphs whose
every change they are (:attr:`kg.derived.Changes.documents` and ``described``); after it,
:meth:`IndexKeeper.after` makes those documents again, and follows any other graph that
changed from its signature (:func:`kg.search.index.update_index`). A command that says
nothing of its documents (a reading-list import, ``kg undo``) leaves the index to the next
``kg search``, which follows what changed. With no index yet there is nothing to keep:
``kg search`` and ``kg build`` make it.

A write that changed many documents (:data:`KEEP_DOCUMENTS`: an import of a corpus, ``kg
link`` of every paper) is not held up by them: at 700k papers, making the whole index again
took 30 s after a 60 s import. The keeper says that the index is stale; the next ``kg
search`` brings it up to date, with a progress bar. An index stale before a write is left
to that search too, without a word: the write neither catches it up nor says it again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kg.derived import Changes
    from kg.store.base import GraphStore

__all__ = ["KEEP_DOCUMENTS", "IndexKeeper"]

#: The most documents the keeper makes again in the write's command (about 2,000 a second);
#: past it, or where the whole index would be made again, it leaves them to the next
#: ``kg search`` (``$KG_KEEP_DOCUMENTS`` sets another).
KEEP_DOCUMENTS = 5_000


class IndexKeeper:
    """Keeps the search index current (see the module doc)."""

    name = "search index"
    imports: tuple[str, ...] = ("tantivy", "duckdb", "kg.search.documents", "kg.search.facts")

    def before(self, store: GraphStore) -> bool | None:
        from kg.search.index import exists, freshness, index_root

        if not exists(index_root(store.location)):
            return None
        # stale already (left to the next kg search): nothing for a write to keep, or to say again
        return True if freshness(store).state == "fresh" else None

    def after(self, store: GraphStore, changes: Changes, token: Any) -> str | None:
        from kg.errors import KGError
        from kg.search.index import update_index
        from kg.settings import count_setting

        if not changes.documents and changes.described is not None and not changes.described:
            return None  # the command said nothing of its documents: the next kg search catches up
        most = count_setting("KG_KEEP_DOCUMENTS", KEEP_DOCUMENTS)
        try:
            report = update_index(store, papers=changes.documents, graphs=changes.described, most=most)
        except KGError as error:
            return f"the search index was not brought up to date ({error.message}); the next kg search does it"
        if report.mode == "stale":
            return f"the search index is stale now ({report.note}); the next kg search brings it up to date"
        return None
