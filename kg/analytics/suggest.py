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

import contextlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.analytics.files import current_view, store_dir
from kg.analytics.files import identity as _identity
from kg.citations import CitationRecord, Context, finished

if TYPE_CHECKING:
    import duckdb

    from kg.decisions import Decision
    from kg.store.base import GraphStore
    from kg.suggestions import LineageFacts

__all__ = ["DuckDBReadingFacts", "Source", "current_view", "from_memo", "from_store", "lineage_facts", "memo_path",
           "open_tables", "store_dir"]


def open_tables(store: GraphStore) -> tuple[duckdb.DuckDBPyConnection | None, str]:
    """A read-only connection to the analytics file of ``store`` when it is fresh, and a
    note saying so; else None and why not (then SPARQL answers)."""
    from kg.analytics.answers import freshness
    from kg.analytics.files import database_path

    path = database_path(store.location)
    if not path.exists():  # said before DuckDB is imported: a fifth of a second
        return None, "no analytics tables yet (kg analytics build makes them)"
    con, why = freshness(store, path)
    if con is None:
        return None, why
    return con, f"answered from the DuckDB analytics tables (fresh) in {path}"


# -- answering without opening the store ------------------------------------------------
#
# Deciding freshness reads the store's provenance graph, and kg suggest reads the small
# lineage-decisions graph and asks whether there are citations: opening the store costs a
# command a tenth of a second or more. What a reader of an embedded store sees is the
# newest published *view* (kg.store.folder): an immutable checkpoint, replaced by every
# write, with ``readers/STALE`` present from before a write commits until its view is
# published. So when a reader has found the tables fresh over view V, that verdict (and
# what it read of the store) holds for as long as V is still the current view, STALE is
# absent and the analytics file is the same file, unchanged. A memo beside the analytics
# file (``<file>.suggest.json``) keeps that: the store, its view, the file's identity, the
# schema version, and what kg suggest read of the store (citations or not, the decisions, the
# techniques named by the commands so far). The next kg suggest that finds all of them
# the same answers from the tables without opening the store; anything else (any write,
# a build, another version) sends it to the store, which checks and writes the memo again
# (as kg analytics build and kg suggest accept/reject do when they leave the tables fresh).


@dataclass
class Source:
    """Where a kg suggest answer comes from: ``con`` to fresh tables (None: SPARQL on
    ``store``), with what it needs of the store: ``store`` is None when the memo answered."""

    con: duckdb.DuckDBPyConnection | None
    note: str
    citations: bool
    decisions: dict[tuple[str, str], Decision]
    technique: str | None = None
    store: GraphStore | None = None
    #: The papers the reader rejected from kg suggest reading.
    rejected: frozenset[str] = frozenset()
    #: The techniques the reader chose to follow (kg follow); None: they have not chosen.
    follows: list[str] | None = None

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None


def memo_path(path: Path) -> Path:
    return path.with_name(path.name + ".suggest.json")


def _decisions(rows: list[dict[str, Any]]) -> dict[tuple[str, str], Decision]:
    from kg.decisions import Decision

    return {(r["child"], r["parent"]): Decision(**{**r, "evidence": tuple(r["evidence"])}) for r in rows}


def from_memo(spec: str | None, technique: str | None) -> Source | None:
    """Fresh tables and what kg suggest needs of the store, from the memo, when it still
    holds (see above); None otherwise (then :func:`from_store`)."""
    from kg.analytics.files import code_digest, connect, database_path

    folder = store_dir(spec)
    if folder is None:
        return None
    path = database_path(spec)
    try:
        memo = json.loads(memo_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    view = current_view(folder)
    if (not isinstance(memo, dict) or view is None or memo.get("view") != view or memo.get("store") != str(folder)
            or memo.get("code") != code_digest() or memo.get("analytics") != _identity(path)):
        return None
    if technique is not None and technique not in memo.get("resolved", {}):
        return None
    try:
        con = connect(path, read_only=True)
    except Exception:  # noqa: BLE001 - being built, or unreadable: the store decides
        return None
    if memo.get("analytics") != _identity(path) or current_view(folder) != view:  # changed as it opened
        con.close()
        return None
    return Source(con, f"answered from the DuckDB analytics tables (fresh) in {path}", memo["citations"],
                  _decisions(memo["decisions"]), memo["resolved"].get(technique) if technique else None,
                  rejected=frozenset(memo.get("rejected", [])), follows=memo.get("follows"))


def from_store(store: GraphStore, spec: str | None, technique: str | None,
               resolve: Callable[[GraphStore, str], Any] | None = None, *, view: str | None = None) -> Source:
    """What :func:`from_memo` gives, from the store (and fresh tables when they are): the
    memo is written for the next command when the tables are fresh and ``view`` (the
    current view before ``store`` was opened as a reader) is still current after."""
    from kg.citations import has_citations
    from kg.decisions import decisions
    from kg.follows import chosen
    from kg.rejections import rejected

    node = resolve(store, technique) if technique and resolve is not None else None
    con, note = open_tables(store)
    picked = chosen(store)
    source = Source(con, note, has_citations(store), decisions(store), node.value if node else None, store,
                    frozenset(rejected(store)), sorted(picked) if picked is not None else None)
    folder = store_dir(spec)
    if con is None or view is None or folder is None or store.location != str(folder):
        return source
    from kg.analytics.files import code_digest, database_path

    path = database_path(spec)
    try:
        memo = json.loads(memo_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        memo = {}
    same = isinstance(memo, dict) and (memo.get("store"), memo.get("view")) == (str(folder), view)
    resolved = memo.get("resolved", {}) if same else {}  # what the names meant in this view
    if technique and node is not None:
        resolved = {**resolved, technique: node.value}
    memo = {"store": str(folder), "view": view, "code": code_digest(), "analytics": _identity(path),
            "citations": source.citations, "decisions": [asdict(d) for d in source.decisions.values()],
            "resolved": resolved, "rejected": sorted(source.rejected), "follows": source.follows}
    if current_view(folder) != view or memo["analytics"] is None:
        return source
    tmp = memo_path(path).with_name(f"{memo_path(path).name}.{os.getpid()}.tmp")
    with contextlib.suppress(OSError):  # a memo that cannot be written costs the next command time, no more
        tmp.write_text(json.dumps(memo), encoding="utf-8")
        os.replace(tmp, memo_path(path))
    return source


_TECHNIQUES = "SELECT technique, ids, names, aliases, dates, papers FROM suggest_techniques WHERE is_technique"
_RECORDS = "SELECT citing, cited, methodology, background, result, influential, contexts FROM suggest_citations"
_EDGES = "SELECT DISTINCT child, parent, relation, basis FROM suggest_edges"
_CATEGORIES = "SELECT technique, min(category_id) FROM techniques GROUP BY technique"


def lineage_facts(con: duckdb.DuckDBPyConnection) -> LineageFacts:
    """The facts of :func:`kg.suggestions.lineage_report` from fresh tables (see
    :func:`open_tables`)."""
    from kg.citations import INTENTS
    from kg.suggestions import EdgeFact, LineageFacts, technique_info, with_categories

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
    found = {t: c for t, c in con.execute(_CATEGORIES).fetchall() if c is not None}
    return LineageFacts(with_categories(known, found), finished(records), edges)


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
        rows = self._rows(f"""SELECT DISTINCT paper, CASE WHEN role = 'primary' THEN 'primary' ELSE 'uses' END AS role
                              FROM paper_techniques WHERE technique = $t AND role <> 'mentions'
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

    def followed(self, uses: Sequence[str]) -> list[tuple[str, str, str]]:
        return [(p, name, technique) for p, name, technique in self._rows(
            """WITH papers AS (SELECT technique, unnest(papers) AS p FROM suggest_techniques),
                  names AS (SELECT technique, unnest(names) AS name FROM suggest_techniques),
                  named AS (SELECT technique, p, name FROM papers JOIN names USING (technique))
                SELECT p, name, technique FROM named
                WHERE p IN (SELECT paper FROM suggest_reading)
                UNION ALL
                SELECT p, name, technique FROM named
                WHERE technique IN (SELECT technique FROM paper_techniques
                                    WHERE role IN ('introduces', 'extends', 'uses')
                                    AND paper IN (SELECT unnest(CAST($uses AS VARCHAR[]))))""",
            {"uses": _iris(uses)})]

    def linked_to(self, techniques: Sequence[str]) -> list[tuple[str, str]]:
        return [(p, t) for p, t in self._rows(
            """SELECT DISTINCT paper, technique FROM paper_techniques
               WHERE role IN ('introduces', 'extends', 'uses')
                 AND technique IN (SELECT unnest(CAST($t AS VARCHAR[])))""", {"t": list(techniques)})]

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
                             WHERE a.cites GROUP BY b.cited, a.seed
                   UNION ALL SELECT b.citing, a.seed, 'coupled', count(*) FROM from_seed AS a
                             JOIN suggest_links AS b ON b.cited = a.cited AND b.cites AND b.citing <> a.citing
                             WHERE a.cites GROUP BY b.citing, a.seed)
               SELECT p.paper, f.seed, f.kind, f.n FROM found AS f JOIN suggest_paper_ids AS p ON p.id = f.cand
               UNION ALL
               SELECT paper, recommended_for, 'recommended', NULL FROM paper_recommendations
               WHERE recommended_for IN (SELECT unnest(CAST($seeds AS VARCHAR[])))""", {"seeds": _iris(seeds)})
        return [{"cand": cand, "seed": seed, "kind": kind, **({"n": n} if n is not None else {})}
                for cand, seed, kind, n in rows]

    def sentences(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], list[tuple[str, tuple[str, ...]]]]:
        if not pairs:
            return {}
        rows = self._rows(
            """SELECT c.citing, c.cited, list(c.text ORDER BY c.position), list(c.intents ORDER BY c.position)
               FROM citation_contexts AS c
               JOIN (SELECT DISTINCT unnest(CAST($a AS VARCHAR[])) AS citing, unnest(CAST($b AS VARCHAR[])) AS cited)
                 AS p ON p.citing = c.citing AND p.cited = c.cited
               WHERE c.position IS NOT NULL GROUP BY c.citing, c.cited""",
            {"a": [a for a, _b in pairs], "b": [b for _a, b in pairs]})
        return {(citing, cited): [(t, tuple(sorted(i or []))) for t, i in zip(texts, intents, strict=True)]
                for citing, cited, texts, intents in rows}

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
