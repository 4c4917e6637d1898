"""``kg suggest lineage`` and ``kg suggest reading`` answered from the DuckDB analytics tables.

:func:`kg.suggestions.lineage_report` and :func:`kg.readnext.reading_suggestions` weigh
facts: the techniques, the citations of their papers, the lineage edges, the reader's
seeds and the citation links around them. Read by SPARQL, those facts cost the store a
second or more on a large graph (100,000 papers, 500,000 citations); here they come from
the analytics file when it is fresh (see :func:`kg.analytics.answers.freshness`), in a
few queries that do the joins and the grouping in DuckDB: ``citation_evidence``,
``citation_contexts``, ``paper_recommendations``, ``paper_techniques`` and the staged
facts. The scoring, choosing and ordering is the same code on both paths, and each query
here gives the rows of its SPARQL twin in :mod:`kg.suggestions` / :mod:`kg.readnext` (the
tests check both paths against each other on the emulator's citation graph), so the two
answers are the same: suggestions, scores, evidence and order.
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

_READ = "https://w3id.org/techkg/id/status/read"
_EN = "d = '@en'"


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


_TECHNIQUES = f"""
SELECT s, list(o) FILTER (WHERE k = 'skos:notation') AS ids,
       list(o) FILTER (WHERE k = 'skos:prefLabel' AND {_EN}) AS names,
       list(o) FILTER (WHERE k = 'skos:altLabel') AS aliases, list(o) FILTER (WHERE k = 'dcterms:date') AS dates,
       list(o) FILTER (WHERE k = 'tkg:primaryPaper') AS papers
FROM staging.facts
WHERE k IN ('skos:notation', 'skos:prefLabel', 'skos:altLabel', 'dcterms:date', 'tkg:primaryPaper')
  AND s IN (SELECT s FROM staging.facts WHERE k = 'a:tkg:Technique') AND NOT starts_with(s, '_:')
GROUP BY s"""

#: The citations the techniques' primary papers make, each with its sentences in order.
_RECORDS = """
WITH papers AS (SELECT DISTINCT o AS paper FROM staging.facts WHERE k = 'tkg:primaryPaper'),
  links AS (SELECT * FROM citation_evidence WHERE citing IN (SELECT paper FROM papers)),
  sentences AS (SELECT c.citing, c.cited, list({'text': c.text, 'intents': c.intents} ORDER BY c.position) AS contexts
                FROM citation_contexts AS c SEMI JOIN links AS l ON l.citing = c.citing AND l.cited = c.cited
                WHERE c.position IS NOT NULL GROUP BY c.citing, c.cited)
SELECT l.citing, l.cited, l.methodology, l.background, l.result, l.influential, s.contexts
FROM links AS l LEFT JOIN sentences AS s USING (citing, cited)"""

#: The lineage-edges named query's pairs: qualified derivations between techniques with English names.
_EDGES = f"""
WITH named AS (SELECT DISTINCT s FROM staging.facts WHERE k = 'skos:prefLabel' AND {_EN}),
  d AS (SELECT s, k, o FROM staging.facts WHERE k IN ('prov:entity', 'tkg:relation', 'tkg:basis'))
SELECT DISTINCT q.s AS child, e.o AS parent,
       CASE WHEN contains(r.o, '#') THEN substr(r.o, strpos(r.o, '#') + 1) ELSE '' END AS relation,
       coalesce(nullif(b.o, ''), 'stated') AS basis
FROM staging.facts AS q JOIN d AS e ON e.s = q.o AND e.k = 'prov:entity'
JOIN d AS r ON r.s = q.o AND r.k = 'tkg:relation' LEFT JOIN d AS b ON b.s = q.o AND b.k = 'tkg:basis'
WHERE q.k = 'prov:qualifiedDerivation' AND q.s IN (SELECT s FROM named) AND e.o IN (SELECT s FROM named)"""


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

    def _rows(self, sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        return self.con.execute(sql, params or {}).fetchall()

    def technique_seeds(self, technique: str) -> tuple[str | None, list[tuple[str, str]]]:
        from kg.readnext import TECHNIQUE_SEEDS

        name = self._rows(f"SELECT min(o) FROM staging.facts WHERE k = 'skos:prefLabel' AND {_EN} AND s = $t",
                          {"t": technique})[0][0]
        if name is None:
            return None, []
        rows = self._rows(f"""SELECT DISTINCT paper, role FROM paper_techniques WHERE technique = $t
                              ORDER BY role, paper LIMIT {TECHNIQUE_SEEDS}""", {"t": technique})
        return name, [(paper, role) for paper, role in rows]

    def reads(self) -> list[tuple[str, str]]:
        return [(p, at) for p, at in self._rows(
            """SELECT r.s, c.o FROM staging.facts AS r
               JOIN staging.facts AS c ON c.s = r.s AND c.k = 'tkg:statusChangedAt' AND c.d IS NOT NULL
               WHERE r.k = 'tkg:readingStatus' AND r.o = $read AND NOT starts_with(r.s, '_:')""", {"read": _READ})]

    def first_reads(self, limit: int) -> list[str]:
        return [p for (p,) in self._rows(
            """SELECT DISTINCT s FROM staging.facts WHERE k = 'tkg:readingStatus' AND o = $read
               AND NOT starts_with(s, '_:') ORDER BY s LIMIT $n""", {"read": _READ, "n": limit})]

    def followed(self, uses: Sequence[str]) -> list[tuple[str, str]]:
        return [(p, name) for p, name in self._rows(
            f"""WITH names AS (SELECT s AS t, o AS name FROM staging.facts WHERE k = 'skos:prefLabel' AND {_EN}),
                  papers AS (SELECT s AS t, o AS p FROM staging.facts WHERE k = 'tkg:primaryPaper'),
                  named AS (SELECT * FROM papers JOIN names USING (t))
                SELECT p, name FROM named
                WHERE p IN (SELECT s FROM staging.facts WHERE k = 'tkg:readingStatus')
                UNION ALL
                SELECT p, name FROM named
                WHERE t IN (SELECT o FROM staging.facts WHERE k = 'tkg:usesTechnique'
                            AND s IN (SELECT unnest(CAST($uses AS VARCHAR[]))))""", {"uses": _iris(uses)})]

    def titles(self, papers: Sequence[str]) -> dict[str, str]:
        return dict(self._rows(
            """SELECT s, min(o) FROM staging.facts WHERE k = 'dcterms:title'
               AND s IN (SELECT unnest(CAST($papers AS VARCHAR[]))) GROUP BY s""", {"papers": _iris(papers)}))

    def evidence(self, seeds: Sequence[str]) -> list[dict[str, Any]]:
        rows = self._rows(
            """WITH seeds AS (SELECT unnest(CAST($seeds AS VARCHAR[])) AS seed),
                 into_seed AS (SELECT * FROM citation_evidence WHERE cited IN (SELECT seed FROM seeds)),
                 from_seed AS (SELECT * FROM citation_evidence WHERE citing IN (SELECT seed FROM seeds))
               SELECT citing, cited, 'cites-method', NULL FROM into_seed WHERE methodology
               UNION ALL SELECT citing, cited, 'cites-influential', NULL FROM into_seed WHERE influential
               UNION ALL SELECT cited, citing, 'method-of', NULL FROM from_seed WHERE methodology
               UNION ALL SELECT cited, citing, 'influence-of', NULL FROM from_seed WHERE influential
               UNION ALL SELECT paper, recommended_for, 'recommended', NULL FROM paper_recommendations
                         WHERE recommended_for IN (SELECT seed FROM seeds)
               UNION ALL SELECT b.cited, a.cited, 'co-cited', count(*) FROM into_seed AS a
                         JOIN citation_evidence AS b ON b.citing = a.citing AND b.cites AND b.cited <> a.cited
                         WHERE a.cites GROUP BY b.cited, a.cited""", {"seeds": _iris(seeds)})
        return [{"cand": cand, "seed": seed, "kind": kind, **({"n": n} if n is not None else {})}
                for cand, seed, kind, n in rows]

    def listed(self, papers: Sequence[str]) -> set[str]:
        return {p for (p,) in self._rows(
            """SELECT DISTINCT s FROM staging.facts WHERE k = 'tkg:readingStatus'
               AND s IN (SELECT unnest(CAST($papers AS VARCHAR[])))""", {"papers": _iris(papers)})}

    def about(self, papers: Sequence[str]) -> dict[str, dict[str, Any]]:
        rows = self._rows(
            """SELECT s, min(o) FILTER (WHERE k = 'dcterms:title'), min(o) FILTER (WHERE k = 'dcterms:issued'),
                      min(o) FILTER (WHERE k = 'tkg:venue'), min(o) FILTER (WHERE k = 'tkg:arxivId'),
                      min(o) FILTER (WHERE k = 'bibo:doi')
               FROM staging.facts WHERE k IN ('dcterms:title', 'dcterms:issued', 'tkg:venue', 'tkg:arxivId', 'bibo:doi')
                 AND s IN (SELECT unnest(CAST($papers AS VARCHAR[]))) GROUP BY s""", {"papers": _iris(papers)})
        return {p: {"title": title, "year": issued[:4] if issued else None, "venue": venue, "arxiv": arxiv,
                    "doi": doi} for p, title, issued, venue, arxiv, doi in rows}
