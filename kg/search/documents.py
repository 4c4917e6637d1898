"""The search index's documents, made from facts (:mod:`kg.search.facts`) by DuckDB.

One document per paper (a ``bibo:Document``) and per technique (a ``tkg:Technique``), as
the JSON the index takes (:mod:`kg.search.schema`), absent values left out:

- a paper: its title (alternative titles too), abstract, TLDR, the reader's notes and the
  reading list's "why it matters", authors (the first author first), year, venue, arXiv id
  and DOI, reading status, the techniques it is linked to (by their ids), its categories
  (those of its techniques, its reading-list categories and its arXiv primary category),
  its citation count, and whether it is the reader's own (on the reading list, with a note,
  or written by the reader into a graph of their own);
- a technique: its English name, aliases, Chinese name and id, its description, category,
  date (the reader's description and date where they gave their own: kg technique edit),
  and whether it is the reader's own (followed, or from a graph of the reader's own).

Every document also lists the graphs its facts came from, so that a graph that changed
can be followed to the documents that may have changed with it.

The joins are DuckDB's: at 700k papers the facts run to millions of rows, too many to
gather in Python one by one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from kg.graphs import OVERRIDING, READING
from kg.search.facts import DOCUMENT, LINKS, PREDICATES, TECHNIQUE, Row, schema

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

__all__ = ["LOT_ROWS", "MEMORY", "PART_BYTES", "documents", "load", "load_rows"]

#: The most memory DuckDB takes to make the documents of a whole index (:func:`load`).
MEMORY = "600MB"
#: Facts copied into DuckDB at a time (the Arrow batches held meanwhile).
LOT_ROWS = 500_000
#: A whole index's documents are made a part of the papers and techniques at a time, each
#: part's facts holding about this much text (subjects and values): at 700k papers (390 MB
#: of text), 13 parts, each made in :data:`MEMORY`, where all at once took 2.5 GB.
PART_BYTES = 32_000_000

_LINK_KEYS = ", ".join(f"'tkg:{name}'" for name in LINKS)
#: The graphs whose value of a single-valued fact wins (the reader's date or summary of a
#: catalog technique replaces the catalog's, as in every view: :data:`kg.graphs.OVERRIDING`).
_OVERRIDING = ", ".join(f"'{g.value}'" for g in OVERRIDING)


#: The graph whose reading status of a paper is its status (kg.graphs.own_first).
_READING = f"'{READING.value}'"


def _one(where: str, first: str = _OVERRIDING) -> str:
    """The value of a single-valued fact: the ``first`` graphs' (the reader's), else the least."""
    return f"coalesce(min(f.o) FILTER (WHERE {where} AND f.g IN ({first})), min(f.o) FILTER (WHERE {where}))"


def _facts_table(folder: Path | None) -> duckdb.DuckDBPyConnection:
    """A DuckDB with the empty table ``f(g, s, k, o)``: in memory, or in a file in ``folder``
    in at most :data:`MEMORY` (spilled there beyond it)."""
    import duckdb

    con = duckdb.connect(str(folder / "facts.duckdb") if folder is not None else ":memory:")
    con.execute("SET enable_progress_bar = false")
    if folder is not None:
        spill = str(folder / "spill").replace("'", "''")
        con.execute(f"SET memory_limit = '{MEMORY}'; SET temp_directory = '{spill}'; "
                    "SET preserve_insertion_order = false")
    # The keys as an ENUM: the documents' twenty filtered aggregates compare integers, not
    # strings, over millions of rows.
    keys = ", ".join(f"'{k}'" for k in (*PREDICATES, "skos:prefLabel@zh", "note"))
    con.execute(f"CREATE TYPE fact_key AS ENUM ({keys})")
    con.execute("CREATE TABLE f (g VARCHAR, s VARCHAR, k fact_key, o VARCHAR)")
    return con


def load(batches: Iterable[pa.RecordBatch], folder: Path | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB holding the facts (the whole store's, :func:`kg.search.facts.all_facts`) as
    the table ``f(g, s, k, o)``: in memory, or (a whole index) in a file in ``folder``. The
    batches are copied in a lot of :data:`LOT_ROWS` rows at a time."""
    import pyarrow as pa

    con = _facts_table(folder)
    lot: list[pa.RecordBatch] = []
    rows = 0

    def copy() -> None:
        # A lot gathered, then copied at once: DuckDB pulling a Python generator of batches
        # copies several times slower (it waits on the generator with the GIL held).
        incoming = pa.Table.from_batches(lot, schema=schema())
        con.register("incoming", incoming)
        con.execute("INSERT INTO f SELECT CAST(g AS VARCHAR), s, CAST(k AS fact_key), o FROM incoming")
        con.unregister("incoming")
        lot.clear()

    for batch in batches:
        if batch.num_rows:
            lot.append(batch)
            rows += batch.num_rows
            if rows >= LOT_ROWS:
                copy()
                rows = 0
    copy()
    pa.default_memory_pool().release_unused()  # (Arrow keeps what it freed for its next batches)
    return con


def load_rows(chunks: Iterable[Sequence[Row]]) -> duckdb.DuckDBPyConnection:
    """A DuckDB in memory holding a few documents' facts (:func:`kg.search.facts.facts_of`)
    as the table ``f(g, s, k, o)``, each chunk copied as four lists: without Arrow, whose
    import (with numpy's) took 0.1 s of a status change's patch."""
    con = _facts_table(None)
    for rows in chunks:
        if rows:
            g, s, k, o = (list(column) for column in zip(*rows, strict=True))
            con.execute("INSERT INTO f SELECT unnest($g), unnest($s), CAST(unnest($k) AS fact_key), unnest($o)",
                        {"g": g, "s": s, "k": k, "o": o})
    return con


def _prepare(con: duckdb.DuckDBPyConnection, targets: Sequence[str] | None, user_graphs: Sequence[str]) -> None:
    """The tables the documents are joined from."""
    con.execute("CREATE OR REPLACE TEMP TABLE user_graphs AS SELECT unnest(CAST($g AS VARCHAR[])) AS g",
                {"g": list(user_graphs)})
    con.execute(f"""CREATE OR REPLACE TEMP TABLE kinds AS SELECT s, bool_or(o = '{TECHNIQUE}') AS technique
                    FROM f WHERE k = 'rdf:type' AND o IN ('{DOCUMENT}', '{TECHNIQUE}') GROUP BY s""")
    if targets is None:
        con.execute("CREATE OR REPLACE TEMP TABLE targets AS SELECT s FROM kinds")
    else:
        con.execute("CREATE OR REPLACE TEMP TABLE targets AS SELECT DISTINCT unnest(CAST($t AS VARCHAR[])) AS s",
                    {"t": list(targets)})
    con.execute("""
        CREATE OR REPLACE TEMP TABLE labels AS
          SELECT s, min(o) FILTER (WHERE k = 'skos:prefLabel') AS label, min(o) FILTER (WHERE k = 'skos:notation') AS id
          FROM f WHERE k IN ('skos:prefLabel', 'skos:notation') GROUP BY s;
        CREATE OR REPLACE TEMP TABLE tech AS
          SELECT l.s, l.id FROM labels AS l JOIN kinds AS t ON t.s = l.s AND t.technique WHERE l.id IS NOT NULL;
        CREATE OR REPLACE TEMP TABLE techcat AS
          SELECT DISTINCT b.s AS t, coalesce(l.label, l.id) AS category FROM f AS b JOIN labels AS l ON l.s = b.o
          WHERE b.k = 'skos:broader' AND coalesce(l.label, l.id) IS NOT NULL;
        CREATE OR REPLACE TEMP TABLE followed AS SELECT DISTINCT o AS t FROM f WHERE k = 'tkg:follows';
        CREATE OR REPLACE TEMP TABLE names AS SELECT s, min(o) AS name FROM f WHERE k = 'foaf:name' GROUP BY s;""")
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE links AS
          SELECT f.s AS p, f.o AS t FROM f JOIN targets USING (s) WHERE f.k IN ({_LINK_KEYS})
          UNION SELECT f.o AS p, f.s AS t FROM f JOIN targets ON targets.s = f.o WHERE f.k = 'tkg:primaryPaper';
        CREATE OR REPLACE TEMP TABLE paper_tech AS
          SELECT l.p, list_sort(list_distinct(list(tech.id))) AS ids,
                 list_sort(list_distinct(list(c.category) FILTER (WHERE c.category IS NOT NULL))) AS cats
          FROM links AS l JOIN tech ON tech.s = l.t LEFT JOIN techcat AS c ON c.t = l.t GROUP BY l.p;
        CREATE OR REPLACE TEMP TABLE authors AS
          SELECT c.s AS p, list_sort(list_distinct(list(n.name))) AS names
          FROM f AS c JOIN targets USING (s) JOIN names AS n ON n.s = c.o WHERE c.k = 'dcterms:creator' GROUP BY c.s;
        CREATE OR REPLACE TEMP TABLE rcats AS
          SELECT r.s AS p, list_sort(list_distinct(list(coalesce(l.label, l.id)))) AS cats
          FROM f AS r JOIN targets USING (s) JOIN labels AS l ON l.s = r.o
          WHERE r.k = 'tkg:readingCategory' AND coalesce(l.label, l.id) IS NOT NULL GROUP BY r.s""")


#: The columns of a document, each as ``"name":value`` when it has one (concat_ws leaves out
#: the NULLs: the index takes no null, and an empty list is made NULL above).
_COLUMNS = ("iri", "kind", "title", "alt", "abstract", "tldr", "notes", "authors", "year", "date", "venue", "arxiv",
            "doi", "status", "technique", "category", "citations", "graphs", "mine", "ids", "keys")
_FIELDS = ", ".join(f"""CASE WHEN {c} IS NOT NULL THEN '"{c}":' || to_json({c}) END""" for c in _COLUMNS)
_DOCS = f"""
WITH own AS (
  SELECT t.s,
    bool_or(f.k = 'rdf:type' AND f.o = '{TECHNIQUE}') AS is_technique,
    bool_or(f.k = 'rdf:type' AND f.o = '{DOCUMENT}') AS is_paper,
    min(f.o) FILTER (WHERE f.k = 'dcterms:title') AS title,
    min(f.o) FILTER (WHERE f.k = 'skos:prefLabel') AS label,
    list(f.o) FILTER (WHERE f.k IN ('dcterms:alternative', 'skos:altLabel',
                                                          'skos:prefLabel@zh')) AS alt,
    min(f.o) FILTER (WHERE f.k = 'skos:notation') AS notation,
    min(f.o) FILTER (WHERE f.k = 'dcterms:abstract') AS abstract,
    {_one("f.k = 'skos:definition'")} AS definition,
    min(f.o) FILTER (WHERE f.k = 'tkg:tldr') AS tldr,
    list(f.o) FILTER (WHERE f.k IN ('note', 'tkg:whyItMatters')) AS notes,
    {_one("f.k IN ('dcterms:issued', 'dcterms:date')")} AS issued,
    min(f.o) FILTER (WHERE f.k = 'tkg:venue') AS venue,
    min(f.o) FILTER (WHERE f.k = 'tkg:arxivId') AS arxiv,
    min(f.o) FILTER (WHERE f.k = 'bibo:doi') AS doi,
    regexp_extract({_one("f.k = 'tkg:readingStatus'", _READING)}, '/status/([^/]+)$', 1) AS status,
    list(f.o) FILTER (WHERE f.k = 'tkg:arxivPrimaryCategory') AS arxiv_cats,
    max(TRY_CAST(f.o AS BIGINT)) FILTER (WHERE f.k = 'tkg:citationCount') AS citations,
    min(f.o) FILTER (WHERE f.k = 'dcterms:creator') AS any_creator,
    list(f.g) AS graphs,
    bool_or(u.g IS NOT NULL) AS user_owned
  FROM targets AS t JOIN f ON f.s = t.s LEFT JOIN user_graphs AS u ON u.g = f.g GROUP BY t.s
), docs AS (
  SELECT own.s AS iri,
    CASE WHEN is_technique THEN 'technique' ELSE 'paper' END AS kind,
    CASE WHEN is_technique THEN coalesce(label, notation, s) ELSE coalesce(title, alt[1], arxiv, s) END AS title,
    nullif(list_sort(list_distinct(list_concat(alt, CASE WHEN is_technique THEN [notation] ELSE [] END))), []) AS alt,
    CASE WHEN is_technique THEN definition ELSE abstract END AS abstract,
    tldr, nullif(list_sort(list_distinct(notes)), []) AS notes, nullif(a.names, []) AS authors,
    TRY_CAST(substr(issued, 1, 4) AS INTEGER) AS year, issued AS date, venue, arxiv, doi,
    CASE WHEN is_technique THEN NULL ELSE status END AS status,
    CASE WHEN is_technique THEN CASE WHEN notation IS NOT NULL THEN [notation] END ELSE pt.ids END AS technique,
    nullif(list_sort(list_distinct(list_concat(
      CASE WHEN is_technique THEN tc.cats ELSE pt.cats END,
      rc.cats, arxiv_cats))), []) AS category,
    citations, list_sort(list_distinct(graphs)) AS graphs,
    CASE WHEN is_technique THEN user_owned OR own.s IN (SELECT t FROM followed)
         ELSE user_owned OR status IS NOT NULL OR len(coalesce(notes, [])) > 0 END AS mine,
    nullif(list_filter([arxiv, doi, CASE WHEN is_technique THEN notation END], lambda x: x IS NOT NULL), []) AS ids,
    CASE WHEN is_technique THEN list_distinct(list_transform(
      list_filter(list_concat([notation, label], alt), lambda x: x IS NOT NULL),
      lambda x: regexp_replace(lower(x), '[\\s_.\\-]+', '', 'g'))) END AS keys
  FROM own LEFT JOIN paper_tech AS pt ON pt.p = own.s LEFT JOIN authors AS a ON a.p = own.s
       LEFT JOIN rcats AS rc ON rc.p = own.s
       LEFT JOIN (SELECT t, list(category) AS cats FROM techcat GROUP BY t) AS tc ON tc.t = own.s
  WHERE is_technique OR is_paper
)
SELECT iri, '{{' || concat_ws(',', {_FIELDS}) || '}}' FROM docs"""


def documents(con: duckdb.DuckDBPyConnection, *, targets: Sequence[str] | None = None,
              user_graphs: Sequence[str] = (), batch: int = 20_000) -> Iterator[tuple[str, str]]:
    """``(iri, JSON)`` of the documents of ``targets`` (all papers and techniques in the
    facts when None, a part of them at a time: :data:`PART_BYTES`); a target that is no
    paper or technique any more gives none."""
    _prepare(con, targets, user_graphs)
    parts = 1
    if targets is None:
        found = con.execute("SELECT sum(strlen(s) + strlen(o)) FROM f").fetchall()[0][0] or 0
        parts = max(1, -(-int(found) // PART_BYTES))
    if parts > 1:
        con.execute("ALTER TABLE targets RENAME TO all_targets")
    for part in range(parts):
        if parts > 1:
            con.execute(f"CREATE OR REPLACE TEMP TABLE targets AS SELECT s FROM all_targets "
                        f"WHERE hash(s) % {parts} = {part}")
        cursor = con.execute(_DOCS)
        while rows := cursor.fetchmany(batch):
            yield from rows
