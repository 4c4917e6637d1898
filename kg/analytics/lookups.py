"""Lookups that listings make beside a named query, answered from fresh analytics tables.

``kg reading list`` shows each paper's techniques beside the rows of the named query
``reading-list``: asked of the store, that is a join of every listed paper with its
links, seconds at arXiv scale; from the staged facts, a fraction of a second. ``kg stats``
counts the reading list's papers by status the same way. Each lookup gives what its SPARQL
counterpart gives, or None when the tables are not fresh (the caller asks the store).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kg.analytics.twins import paper_links

if TYPE_CHECKING:
    from kg.counts import ReadingCounts
    from kg.store.base import GraphStore

__all__ = ["reading_counts", "techniques_of"]


def techniques_of(store: GraphStore, papers: Sequence[str]) -> dict[str, list[dict[str, str]]] | None:
    """:func:`kg.linking.listing.techniques_of` from fresh tables: paper IRI → the
    techniques it introduces, extends, uses or evaluates (a technique's primary paper
    introduces it), strongest first, each with its least English name; None when the
    tables are not fresh."""
    from kg.analytics.answers import freshness
    from kg.analytics.files import database_path, temp_table
    from kg.linking.listing import by_paper
    from kg.linking.model import PRIORITY, RELATIONS

    if not papers:
        return {}
    con, _why = freshness(store, database_path(store.location))
    if con is None:
        return None
    ranks = " ".join(f"WHEN '{relation}' THEN {PRIORITY[relation]}" for relation in RELATIONS)
    try:
        # the papers as a table: a list given as a parameter is unnested at each of its uses
        # (61k papers of a reading list: 0.14 s, against 0.08 s with the table made)
        temp_table(con, "listed_papers", {"paper": ("VARCHAR", list(papers))})
        links = paper_links(lambda column: f"{column} IN (SELECT paper FROM listed_papers)")
        rows = con.execute(f"""WITH {links},
              names AS (SELECT s, min(o) AS name FROM staging.facts WHERE k = 'skos:prefLabel' AND d = '@en'
                        GROUP BY s)
            SELECT links.paper, links.technique, min(CASE links.role {ranks} END) AS best, names.name
            FROM links JOIN names ON names.s = links.technique
            GROUP BY links.paper, links.technique, names.name""").fetchall()
    finally:
        con.close()
    return by_paper((paper, technique, int(best), name) for paper, technique, best, name in rows)


def reading_counts(store: GraphStore) -> ReadingCounts | None:
    """The reading list's papers, their statuses, notes and the papers in none of its
    categories (:class:`kg.counts.ReadingCounts`, without the list's own counts: see
    :func:`kg.counts.reading_counts`) from fresh tables; None when they are not fresh. A
    paper counts under its current status, the one every view shows."""
    from kg.analytics.answers import freshness
    from kg.analytics.files import database_path
    from kg.counts import ReadingCounts

    con, _why = freshness(store, database_path(store.location))
    if con is None:
        return None
    try:
        statuses = {str(status): int(n) for status, n in con.execute(
            "SELECT status, count(*) FROM main.reading_state GROUP BY status ORDER BY status").fetchall()}
        papers, noted, loose = con.execute(
            """SELECT count(*), count(*) FILTER (WHERE has_note),
                      count(*) FILTER (WHERE paper NOT IN (SELECT paper FROM main.paper_reading_categories))
               FROM main.reading_state""").fetchall()[0]
    finally:
        con.close()
    return ReadingCounts(papers=int(papers), statuses=statuses, with_note=int(noted), uncategorised=int(loose))
