"""``kg suggest lineage`` and ``kg suggest reading`` answered from the DuckDB analytics tables.

:func:`kg.suggestions.lineage_report` and :func:`kg.readnext.reading_suggestions` weigh
facts: the techniques, the citations of their papers, the lineage edges, the reader's
seeds and the citation links around them. Read by SPARQL, those facts cost the store a
second or more on a large graph (100,000 papers, 500,000 citations); here they come from
the analytics file when it is fresh (see :func:`kg.analytics.answers.freshness`), in a
few queries over small tables the build makes for them (``suggest_techniques``,
``suggest_citations`` and ``suggest_edges`` hold the whole of what lineage weighs;
``suggest_links`` is the citations graph by paper number, so that reading's joins are
integer joins; ``suggest_papers``, ``suggest_reading``, ``paper_recommendations`` and
``paper_techniques`` the rest). The scoring, choosing and ordering is the same code on
both paths, and each query here gives the rows of its SPARQL twin in
:mod:`kg.suggestions` / :mod:`kg.readnext` (the tests check both paths against each other
on the emulator's citation graph), so the two answers are the same: suggestions, scores,
evidence and order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kg.citations import CitationRecord, Context, finished

if TYPE_CHECKING:
    import duckdb

    from kg.store.base import GraphStore
    from kg.suggestions import LineageFacts

__all__ = ["DuckDBReadingFacts", "lineage_facts", "open_tables"]


def open_tables(store: GraphStore) -> tuple[duckdb.DuckDBPyConnection | None, str]:
    """A read-only connection to the analytics file of ``store`` when it is fresh, and a
    note saying so; else None and why not (then SPARQL answers)."""
    from kg.analytics.answers import freshness
    from kg.analytics.materialize import database_path

    path = database_path(store.location)
    if not path.exists():  # said before DuckDB is imported: a fifth of a second
        return None, "no analytics tables yet (kg analytics build makes them)"
    con, why = freshness(store, path)
    if con is None:
        return None, why
    return con, f"answered from the DuckDB analytics tables (fresh) in {path}"


_TECHNIQUES = "SELECT technique, ids, names, aliases, dates, papers FROM suggest_techniques WHERE is_technique"
_RECORDS = "SELECT citing, cited, methodology, background, result, influential, contexts FROM suggest_citations"
_EDGES = "SELECT DISTINCT child, parent, relation, basis FROM suggest_edges"


def lineage_facts(con: duckdb.DuckDBPyConnection) -> LineageFacts:
    """The facts of :func:`kg.suggestions.lineage_report` from fresh tables (see
    :func:`open_tables`)."""
    from kg.citations import INTENTS
    from kg.suggestions import EdgeFact, LineageFacts, technique_info

    known = {}
    for iri, ids, names, aliases, dates, papers in con.execute(_TECHNIQUES).fetchall():
        if ids and names:
            known[iri] = technique_info(iri, ids, names, aliases or [], dates or [], papers or [])
    records = []
    if any(info.papers for info in known.values()):
        for citing, cited, *flags, influential, contexts in con.execute(_RECORDS).fetchall():
            records.append(CitationRecord(
                citing, cited, {intent for intent, on in zip(INTENTS, flags, strict=True) if on}, bool(influential),
                [Context(c["text"], tuple(c["intents"])) for c in contexts or []]))
    edges = [EdgeFact(*row) for row in con.execute(_EDGES).fetchall()]
    return LineageFacts(known, finished(records), edges)


def _iris(papers: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(papers))


class DuckDBReadingFacts:
    """:class:`kg.readnext.ReadingFacts` from fresh analytics tables (see :func:`open_tables`)."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        con.execute("SET TimeZone = 'UTC'")  # a time without a zone is UTC, as kg.readnext reads it

    def _rows(self, sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        return self.con.execute(sql, params or {}).fetchall()

    def technique_seeds(self, technique: str) -> tuple[str | None, list[tuple[str, str]]]:
        from kg.readnext import TECHNIQUE_SEEDS

        found = self._rows("SELECT list_min(names) FROM suggest_techniques WHERE technique = $t", {"t": technique})
        name = found[0][0] if found else None
        rows = self._rows(f"""SELECT DISTINCT paper, role FROM paper_techniques WHERE technique = $t
                              ORDER BY role, paper LIMIT {TECHNIQUE_SEEDS}""", {"t": technique})
        return name, [(paper, role) for paper, role in rows]

    def reads(self, limit: int) -> list[tuple[str, str]]:
        # The newest reads by DuckDB's reading of the times, with room to spare, and every
        # time it cannot read: kg.readnext sorts these by its own reading.
        return [(p, at) for p, at in self._rows(
            """WITH dated AS (SELECT paper, unnest(changed_at) AS changed FROM suggest_reading WHERE read),
                 timed AS (SELECT *, TRY_CAST(changed AS TIMESTAMPTZ) AS instant FROM dated),
                 newest AS (SELECT paper FROM timed WHERE instant IS NOT NULL GROUP BY paper
                            ORDER BY max(instant) DESC, paper LIMIT $n)
               SELECT paper, changed FROM timed WHERE instant IS NULL OR paper IN (SELECT paper FROM newest)""",
            {"n": 2 * limit + 10})]

    def first_reads(self, limit: int) -> list[str]:
        return [p for (p,) in self._rows("SELECT paper FROM suggest_reading WHERE read ORDER BY paper LIMIT $n",
                                         {"n": limit})]

    def followed(self, uses: Sequence[str]) -> list[tuple[str, str]]:
        return [(p, name) for p, name in self._rows(
            """WITH papers AS (SELECT technique, unnest(papers) AS p FROM suggest_techniques),
                  names AS (SELECT technique, unnest(names) AS name FROM suggest_techniques),
                  named AS (SELECT technique, p, name FROM papers JOIN names USING (technique))
                SELECT p, name FROM named
                WHERE p IN (SELECT paper FROM suggest_reading)
                UNION ALL
                SELECT p, name FROM named
                WHERE technique IN (SELECT technique FROM paper_techniques WHERE role = 'uses'
                                    AND paper IN (SELECT unnest(CAST($uses AS VARCHAR[]))))""",
            {"uses": _iris(uses)})]

    def titles(self, papers: Sequence[str]) -> dict[str, str]:
        return dict(self._rows(
            """SELECT paper, title FROM suggest_papers WHERE title IS NOT NULL
               AND paper IN (SELECT unnest(CAST($papers AS VARCHAR[])))""", {"papers": _iris(papers)}))

    def evidence(self, seeds: Sequence[str]) -> list[dict[str, Any]]:
        # By paper number: integer joins over the citations, the IRIs looked up once each way.
        rows = self._rows(
            """WITH seeds AS (SELECT id, paper AS seed FROM suggest_paper_ids
                             WHERE paper IN (SELECT unnest(CAST($seeds AS VARCHAR[])))),
                 into_seed AS (SELECT l.*, s.seed FROM suggest_links AS l JOIN seeds AS s ON s.id = l.cited),
                 from_seed AS (SELECT l.*, s.seed FROM suggest_links AS l JOIN seeds AS s ON s.id = l.citing),
                 found AS (
                   SELECT citing AS cand, seed, 'cites-method' AS kind, NULL AS n FROM into_seed WHERE methodology
                   UNION ALL SELECT citing, seed, 'cites-influential', NULL FROM into_seed WHERE influential
                   UNION ALL SELECT cited, seed, 'method-of', NULL FROM from_seed WHERE methodology
                   UNION ALL SELECT cited, seed, 'influence-of', NULL FROM from_seed WHERE influential
                   UNION ALL SELECT b.cited, a.seed, 'co-cited', count(*) FROM into_seed AS a
                             JOIN suggest_links AS b ON b.citing = a.citing AND b.cites AND b.cited <> a.cited
                             WHERE a.cites GROUP BY b.cited, a.seed)
               SELECT p.paper, f.seed, f.kind, f.n FROM found AS f JOIN suggest_paper_ids AS p ON p.id = f.cand
               UNION ALL
               SELECT paper, recommended_for, 'recommended', NULL FROM paper_recommendations
               WHERE recommended_for IN (SELECT unnest(CAST($seeds AS VARCHAR[])))""", {"seeds": _iris(seeds)})
        return [{"cand": cand, "seed": seed, "kind": kind, **({"n": n} if n is not None else {})}
                for cand, seed, kind, n in rows]

    def listed(self, papers: Sequence[str]) -> set[str]:
        return {p for (p,) in self._rows(
            "SELECT paper FROM suggest_reading WHERE paper IN (SELECT unnest(CAST($papers AS VARCHAR[])))",
            {"papers": _iris(papers)})}

    def about(self, papers: Sequence[str]) -> dict[str, dict[str, Any]]:
        rows = self._rows(
            """SELECT paper, title, issued, venue, arxiv_id, doi FROM suggest_papers
               WHERE paper IN (SELECT unnest(CAST($papers AS VARCHAR[])))""", {"papers": _iris(papers)})
        return {p: {"title": title, "year": issued[:4] if issued else None, "venue": venue, "arxiv": arxiv,
                    "doi": doi} for p, title, issued, venue, arxiv, doi in rows}
