"""Named queries answered from the DuckDB analytics tables when they are fresh.

An analytic question over the whole corpus (a bibliography of 250,000 papers, the whole
reading queue) is a scan and a sort: seconds of lookups for the store, a fraction of a
second for DuckDB. A named query with a *twin* here is answered from the staged facts of
the analytics file (``staging.facts``, each term with its datatype or language) when
that file is fresh: built by this version, and every graph's provenance signature the
same as the store's now. Otherwise it is answered by SPARQL, and the answer says why.

A twin returns the very rows of its SPARQL query (the tests check it on a corpus):
the same variables in the same order, terms of the same kinds, a SAMPLE taken from the
best graph (kg.graphs.SOURCES order), a GROUP_CONCAT in a fixed order. Pages follow
the query's page key with the ordering kg.paging gives SPARQL (NULL as unbound: first,
or last when descending), so a cursor from one path continues on the other.

Answer tables: ``kg analytics build`` also keeps each twin's whole answer with its
parameters at their defaults (those of ``kg query NAME`` with no ``-p``), stored in the
order of the query's page key, as ``answers."NAME"`` (:func:`materialise`). Such a
query reads that table instead of working its answer out: a first page is the table's
first rows, the next page those after the cursor (``WHERE key > ...``, in the table's
order), and the whole answer a scan, with no sort. A twin without a default answer
(a required parameter, rows from the store) and a query with other parameters run the
twin's SQL; such a twin may keep the costly part of it, without parameters, as its
answer table all the same (:attr:`Twin.stored`: new-since's dated rows with their
labels, filtered by the day given; reading-queue-lineage's queued papers with the
techniques they use, narrowed to the lineage given). An incremental build remakes only
the answer tables whose SQL names a kind of fact that changed: that the changed graphs
held or hold, or, where these graphs are small (the reading graph), that differs between
their old and new facts. After reading-status changes alone, an answer whose rows each
show one paper's status (:attr:`Twin.by_paper`) is patched instead: the rows of the
papers whose status changed are made again by its SQL narrowed to them, written over
their old rows in place where they keep their place in the stored order (:func:`_patch`).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import pyoxigraph as ox

from kg.analytics.encoding import term as _term
from kg.graphs import PROVENANCE
from kg.vocab import XSD

if TYPE_CHECKING:
    import duckdb

    from kg.paging import Page, SortKey
    from kg.results import Term
    from kg.store.base import GraphStore
    from queries import Answer, Bound, NamedQuery

__all__ = ["ANSWERS_VERSION", "TWINS", "ReadingOverview", "Twin", "duckdb_answer", "freshness", "materialise",
           "reading_overview", "reading_patched", "tables_answer", "tables_made", "technique_paper_counts"]

#: Column kinds: how a value becomes a term. "term" reads the datatype or language from
#: the column ``<name>__d`` (as staged: NULL for an IRI, "" for xsd:string, "@en", or the
#: datatype's IRI).
Kind = str


@dataclass(frozen=True)
class Twin:
    """The SQL twin of a named query: one column per variable (plus ``__d`` columns)."""

    sql: str
    kinds: Mapping[str, Kind]
    #: The query's parameters the SQL reads (as $name), with how to pass them.
    params: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    #: Rows the tables cannot hold (the provenance graph is not staged), asked of the
    #: store and given to the SQL as the table ``extra``.
    extra: Callable[[GraphStore, Mapping[str, Any]], Any] | None = None
    #: For a page: SQL that gives the page key's columns of every row cheaply, and the
    #: column of those rows the main SQL narrows to (``$page``, a list, NULL for all). The
    #: page's keys are chosen from it first, so that only the rows of one page are made
    #: in full (a bibliography's first page without aggregating every paper's authors).
    keys: str | None = None
    keys_narrow: str = "paper"
    #: SQL of a table without parameters that :attr:`sql` reads where it says
    #: :data:`_STORED`: kept as an answer table by the build, or run as a subquery.
    stored: str | None = None
    #: The column of the paper each row is about, where the SQL (and :attr:`stored`) narrows
    #: to the rows of the papers in ``$page`` (NULL for all) and a paper's rows read the
    #: reading state (:data:`STATUS_KEYS`) of that paper alone: after a few status changes,
    #: a build makes only these papers' rows again (:func:`materialise`).
    by_paper: str | None = None


#: Where a twin's SQL reads its :attr:`Twin.stored` table.
_STORED = "__stored__"
_STATUS = "https://w3id.org/techkg/id/status/"
_NOT_QUEUED = (f"'{_STATUS}read'", f"'{_STATUS}skipped'")


def _pick(key: str, name: str) -> str:
    """One value of ``key`` per subject (the best graph's; of its values, the least, so that
    every build picks the same) with its datatype marker."""
    return (f"arg_min({{'o': o, 'd': d}}, (priority, o, d)) FILTER (WHERE k = '{key}') AS {name}")


def _same_language(where: str, column: str = "d") -> str:
    """The marker of a GROUP_CONCAT's result: the language its parts share, if they all
    share one (as Oxigraph keeps it), else a plain string."""
    return (f"CASE WHEN count(DISTINCT {column}) FILTER (WHERE {where}) = 1 "
            f"AND starts_with(any_value({column}) FILTER (WHERE {where}), '@') "
            f"THEN any_value({column}) FILTER (WHERE {where}) ELSE '' END")


def _iris(values: Any) -> list[str]:
    return [v.value for v in (values if isinstance(values, list) else [values])]


def _page(column: str) -> str:
    """The narrowing of a twin to the rows of the papers in ``$page`` (NULL for all): those
    of one page (:attr:`Twin.keys`), or those a build makes again (:attr:`Twin.by_paper`)."""
    return f"(CAST($page AS VARCHAR[]) IS NULL OR {column} IN (SELECT unnest(CAST($page AS VARCHAR[]))))"


_PAGE = _page("paper")
#: The relations a paper is one of a technique's papers by (tkg:primaryPaper counts as introduces).
_PAPER_OF = (("tkg:introducesTechnique", "introduces"), ("tkg:extendsTechnique", "extends"),
             ("tkg:usesTechnique", "uses"), ("tkg:evaluatesTechnique", "evaluates"))
_LINKS = f"""
  links AS (SELECT DISTINCT s AS technique, o AS paper, 'introduces' AS role FROM staging.facts
            WHERE k = 'tkg:primaryPaper' AND {_page("o")}
            UNION
            SELECT DISTINCT o, s, CASE k {" ".join(f"WHEN '{k}' THEN '{r}'" for k, r in _PAPER_OF)} END
            FROM staging.facts WHERE k IN ({", ".join(f"'{k}'" for k, _r in _PAPER_OF)}) AND {_page("s")})"""

TWINS: dict[str, Twin] = {
    "lineage-paper-links": Twin(
        f"""WITH {_LINKS},
  statuses AS (SELECT DISTINCT s AS paper, o AS status FROM staging.facts
               WHERE k = 'tkg:readingStatus' AND {_page("s")})
SELECT technique, paper, role, status FROM links LEFT JOIN statuses USING (paper)
WHERE CAST($technique AS VARCHAR[]) IS NULL OR technique IN (SELECT unnest(CAST($technique AS VARCHAR[])))""",
        {"technique": "iri", "paper": "iri", "role": "string", "status": "iri"},
        {"technique": _iris},
        by_paper="paper",
    ),
    "lineage-papers": Twin(
        f"""WITH {_LINKS},
  chosen AS (SELECT * FROM links
            WHERE (CAST($technique AS VARCHAR[]) IS NULL
                   OR technique IN (SELECT unnest(CAST($technique AS VARCHAR[]))))
              AND (CAST($paper AS VARCHAR[]) IS NULL OR paper IN (SELECT unnest(CAST($paper AS VARCHAR[]))))),
  facts AS (SELECT s, {_pick('dcterms:title', 't')}, {_pick('tkg:arxivId', 'a')}, {_pick('bibo:doi', 'doi')},
                   {_pick('foaf:page', 'u')}, {_pick('dcterms:issued', 'i')}, {_pick('tkg:venue', 'v')},
                   {_pick('tkg:readingStatus', 'st')}
            FROM staging.ranked WHERE s IN (SELECT paper FROM chosen)
              AND k IN ('dcterms:title', 'tkg:arxivId', 'bibo:doi', 'foaf:page', 'dcterms:issued', 'tkg:venue',
                        'tkg:readingStatus')
            GROUP BY s)
SELECT technique, paper, role, t.o AS title, t.d AS title__d, a.o AS arxivId, a.d AS arxivId__d,
       doi.o AS doi, doi.d AS doi__d, u.o AS url, u.d AS url__d, i.o AS issued, i.d AS issued__d,
       v.o AS venue, v.d AS venue__d, regexp_replace(st.o, '^.*/status/', '') AS status
FROM chosen LEFT JOIN facts ON facts.s = chosen.paper""",
        {"technique": "iri", "paper": "iri", "role": "string", "title": "term", "arxivId": "term", "doi": "term",
         "url": "term", "issued": "term", "venue": "term", "status": "string"},
        {"technique": _iris, "paper": _iris},
        by_paper="paper",
        keys=f"""WITH {_LINKS}
SELECT technique, paper, role FROM links
WHERE (CAST($technique AS VARCHAR[]) IS NULL OR technique IN (SELECT unnest(CAST($technique AS VARCHAR[]))))
  AND (CAST($paper AS VARCHAR[]) IS NULL OR paper IN (SELECT unnest(CAST($paper AS VARCHAR[]))))""",
    ),
    "bibliography": Twin(
        f"""WITH papers AS (SELECT DISTINCT s AS paper FROM staging.facts WHERE k = 'tkg:readingCategory'
                  AND {_page("s")}),
  facts AS (SELECT s, {_pick('dcterms:title', 't')}, {_pick('tkg:arxivId', 'a')}, {_pick('bibo:doi', 'doi')},
                   {_pick('foaf:page', 'u')}, {_pick('dcterms:issued', 'i')}, {_pick('tkg:venue', 'v')},
                   {_pick('tkg:arxivPrimaryCategory', 'pc')}, {_pick('tkg:citationKey', 'ck')},
                   {_pick('tkg:readingStatus', 'st')},
                   string_agg(DISTINCT o, ' ' ORDER BY o) FILTER (WHERE k = 'types') AS types,
                   string_agg(DISTINCT o, chr(10) ORDER BY o) FILTER (WHERE k = 'tkg:venue') AS venues,
                   min(TRY_CAST(o AS BIGINT)) FILTER (WHERE k = 'tkg:position') AS position
            FROM staging.ranked WHERE s IN (SELECT paper FROM papers)
              AND k IN ('dcterms:title', 'tkg:arxivId', 'bibo:doi', 'foaf:page', 'dcterms:issued', 'tkg:venue',
                        'tkg:arxivPrimaryCategory', 'tkg:citationKey', 'tkg:readingStatus', 'types', 'tkg:position')
            GROUP BY s),
  lists AS (SELECT s AS paper, o AS list FROM staging.facts
            WHERE k = 'bibo:authorList' AND s IN (SELECT paper FROM papers)),
  members AS (SELECT s AS list, n, o FROM staging.facts WHERE k = 'rdf:_n' AND s IN (SELECT list FROM lists)),
  agents AS (SELECT f.s AS paper, f.o AS agent FROM staging.facts AS f
             WHERE f.k = 'tkg:firstAuthor' AND f.s IN (SELECT paper FROM papers)),
  names AS (SELECT s, o, d FROM staging.facts WHERE k = 'foaf:name'
            AND (s IN (SELECT o FROM members) OR s IN (SELECT agent FROM agents))),
  authors AS (SELECT l.paper,
                     string_agg(DISTINCT CAST(m.n AS VARCHAR) || chr(9) || nm.o, chr(10)
                                ORDER BY CAST(m.n AS VARCHAR) || chr(9) || nm.o) AS authors
              FROM lists AS l JOIN members AS m ON m.list = l.list JOIN names AS nm ON nm.s = m.o
              GROUP BY l.paper),
  firsts AS (SELECT a.paper,
                    any_value({{'o': nm.o, 'd': nm.d}}) FILTER (WHERE c.k = 'a:foaf:Person') AS fa,
                    any_value({{'o': nm.o, 'd': nm.d}}) FILTER (WHERE c.k = 'a:foaf:Group') AS tm
             FROM agents AS a JOIN staging.facts AS c ON c.s = a.agent AND c.k IN ('a:foaf:Person', 'a:foaf:Group')
             JOIN names AS nm ON nm.s = a.agent
             GROUP BY a.paper)
SELECT p.paper, t.o AS title, t.d AS title__d, a.o AS arxivId, a.d AS arxivId__d, doi.o AS doi, doi.d AS doi__d,
       u.o AS url, u.d AS url__d, i.o AS issued, i.d AS issued__d, v.o AS venue, v.d AS venue__d, venues,
       types, authors, fa.o AS firstAuthor, fa.d AS firstAuthor__d,
       tm.o AS team, tm.d AS team__d, pc.o AS primaryClass, pc.d AS primaryClass__d, position,
       ck.o AS key, ck.d AS key__d, regexp_replace(st.o, '^.*/status/', '') AS status
FROM papers AS p LEFT JOIN facts ON facts.s = p.paper LEFT JOIN authors USING (paper) LEFT JOIN firsts USING (paper)""",
        {"paper": "iri", "title": "term", "arxivId": "term", "doi": "term", "url": "term", "issued": "term",
         "venue": "term", "venues": "string", "types": "string", "authors": "string", "firstAuthor": "term",
         "team": "term",
         "primaryClass": "term", "position": "integer", "key": "term", "status": "string"},
        by_paper="paper",
        keys=f"""WITH papers AS (SELECT DISTINCT s AS paper FROM staging.facts WHERE k = 'tkg:readingCategory'),
  facts AS (SELECT s, {_pick('dcterms:title', 't')},
                   min(TRY_CAST(o AS BIGINT)) FILTER (WHERE k = 'tkg:position') AS position
            FROM staging.ranked WHERE s IN (SELECT paper FROM papers) AND k IN ('dcterms:title', 'tkg:position')
            GROUP BY s)
SELECT p.paper, t.o AS title, t.d AS title__d, position FROM papers AS p LEFT JOIN facts ON facts.s = p.paper""",
    ),
    "reading-queue": Twin(
        f"""WITH labels AS (SELECT s, o, d FROM staging.facts WHERE k IN ('skos:prefLabel', 'skos:prefLabel@zh')),
  cats AS (SELECT DISTINCT c.s AS cat, l.o AS category, l.d AS category__d FROM staging.facts AS c
           JOIN labels AS l ON l.s = c.s
           WHERE c.k = 'a:tkg:ReadingListCategory'
             AND (CAST($section AS VARCHAR) IS NULL OR contains(lower(l.o), lower(CAST($section AS VARCHAR))))),
  positioned AS (SELECT cat, category, category__d, p.o AS categoryPosition FROM cats
                 LEFT JOIN (SELECT DISTINCT s, o FROM staging.facts WHERE k = 'tkg:position') AS p ON p.s = cats.cat),
  queued AS (SELECT DISTINCT r.s AS paper, r.o AS cat, st.o AS status FROM staging.facts AS r
             JOIN staging.facts AS st ON st.s = r.s AND st.k = 'tkg:readingStatus'
             WHERE r.k = 'tkg:readingCategory' AND {_page("r.s")} AND st.o NOT IN ({", ".join(_NOT_QUEUED)})),
  facts AS (SELECT s, min(TRY_CAST(o AS BIGINT)) FILTER (WHERE k = 'tkg:position') AS position,
                   min(o) FILTER (WHERE k = 'dcterms:title') AS title,
                   min(o) FILTER (WHERE k = 'tkg:venue') AS venue,
                   max(o) FILTER (WHERE k = 'tkg:statusChangedAt') AS changed
            FROM staging.facts WHERE s IN (SELECT paper FROM queued)
              AND k IN ('tkg:position', 'dcterms:title', 'tkg:venue', 'tkg:statusChangedAt') GROUP BY s)
SELECT CAST($section AS VARCHAR) AS section, TRY_CAST(categoryPosition AS BIGINT) AS categoryPosition,
       category, category__d,
       q.paper, any_value(f.position) AS position, any_value(f.title) AS title,
       min(regexp_replace(q.status, '^.*/status/', '')) AS status, any_value(f.venue) AS venue,
       any_value(f.changed) AS changed
FROM queued AS q JOIN positioned USING (cat) LEFT JOIN facts AS f ON f.s = q.paper
GROUP BY categoryPosition, category, category__d, q.paper""",
        {"section": "string", "categoryPosition": "integer", "category": "term", "paper": "iri",
         "position": "integer", "title": "string", "status": "string", "venue": "string", "changed": "dateTime"},
        {"section": lambda v: v.value},
        by_paper="paper",
    ),
    "read-without-note": Twin(
        f"""WITH done AS (SELECT DISTINCT s AS paper FROM staging.facts
                  WHERE k = 'tkg:readingStatus' AND o = '{_STATUS}read' AND {_page("s")}
                  EXCEPT SELECT s FROM staging.facts WHERE k = 'tkg:hasNote' AND o = 'true'
                  EXCEPT SELECT o FROM staging.facts WHERE k = 'tkg:noteOf'),
  titles AS (SELECT DISTINCT s, o, d FROM staging.facts WHERE k = 'dcterms:title' AND {_page("s")}),
  times AS (SELECT DISTINCT s, o, d FROM staging.facts WHERE k = 'tkg:statusChangedAt' AND {_page("s")}),
  cats AS (SELECT r.s AS paper, string_agg(DISTINCT l.o, ' | ' ORDER BY l.o) AS categories,
                  {_same_language("TRUE", "l.d")} AS categories__d
           FROM staging.facts AS r
           JOIN staging.facts AS l ON l.s = r.o AND l.k IN ('skos:prefLabel', 'skos:prefLabel@zh')
           WHERE r.k = 'tkg:readingCategory' AND r.s IN (SELECT paper FROM done) GROUP BY r.s)
SELECT done.paper, t.o AS title, t.d AS title__d, cats.categories, cats.categories__d,
       tm.o AS readAt, tm.d AS readAt__d
FROM done JOIN titles AS t ON t.s = done.paper JOIN times AS tm ON tm.s = done.paper
LEFT JOIN cats USING (paper)""",
        {"paper": "iri", "title": "term", "categories": "term", "readAt": "term"},
        by_paper="paper",
    ),
}


#: reading-queue-lineage's rows for every technique at once: each queued paper with each
#: technique it uses or introduced, its title and that technique's English names; kept as
#: an answer table, narrowed at query time to the lineage of the technique given.
_QUEUED_LINKS = f"""WITH links AS (SELECT DISTINCT s AS paper, o AS lineage FROM staging.facts
                 WHERE k IN ({", ".join(f"'{k}'" for k, _r in _PAPER_OF)}) AND {_page("s")}
                 UNION SELECT DISTINCT o, s FROM staging.facts WHERE k = 'tkg:primaryPaper' AND {_page("o")}),
  queued AS (SELECT links.paper, links.lineage, st.o AS status FROM links
             JOIN staging.facts AS st ON st.s = links.paper AND st.k = 'tkg:readingStatus'
             WHERE st.o NOT IN ({", ".join(_NOT_QUEUED)})),
  names AS (SELECT s, o FROM staging.facts WHERE k = 'skos:prefLabel' AND d = '@en'),
  titles AS (SELECT s, {_pick('dcterms:title', 't')} FROM staging.ranked
             WHERE k = 'dcterms:title' AND s IN (SELECT paper FROM queued) GROUP BY s)
SELECT q.paper, q.lineage, q.status, titles.t.o AS title, titles.t.d AS title__d, names.o AS name
FROM queued AS q LEFT JOIN titles ON titles.s = q.paper LEFT JOIN names ON names.s = q.lineage"""
TWINS["reading-queue-lineage"] = Twin(
    f"""WITH RECURSIVE derived AS (SELECT DISTINCT s AS child, o AS parent FROM staging.facts
                            WHERE k = 'prov:wasDerivedFrom'),
  down(lineage) AS (SELECT CAST($technique AS VARCHAR) UNION SELECT d.child FROM derived AS d JOIN down
                    ON d.parent = down.lineage),
  up(lineage) AS (SELECT d.parent FROM derived AS d WHERE d.child = CAST($technique AS VARCHAR)
                  UNION SELECT d.parent FROM derived AS d JOIN up ON d.child = up.lineage),
  lineage AS (SELECT lineage FROM down UNION SELECT lineage FROM up)
SELECT CAST($technique AS VARCHAR) AS technique, q.paper, any_value(q.title) AS title,
       any_value(q.title__d) AS title__d, min(regexp_replace(q.status, '^.*/status/', '')) AS status,
       min(q.lineage) AS via, arg_min(q.name, (q.lineage, q.name)) AS viaName
FROM {_STORED} AS q SEMI JOIN lineage AS l ON l.lineage = q.lineage
GROUP BY q.paper""",
    {"technique": "iri", "paper": "iri", "title": "term", "status": "string", "via": "iri", "viaName": "langEn"},
    {"technique": lambda v: v.value},
    stored=_QUEUED_LINKS,
    by_paper="paper",
)


TWINS["lineage-nodes"] = Twin(
    f"""WITH techs AS (SELECT DISTINCT s FROM staging.facts WHERE k = 'a:tkg:Technique'),
  f AS (SELECT * FROM staging.ranked WHERE s IN (SELECT s FROM techs)),
  one AS (SELECT s, {_pick('skos:notation', 'i')}, {_pick('skos:prefLabel@zh', 'zh')},
                 {_pick('skos:definition', 'def')}, {_pick('dcterms:date', 'dt')},
                 {_pick('tkg:headlineResult', 'h')}, {_pick('tkg:headlineConditional', 'c')},
                 {_pick('tkg:primaryPaper', 'p')}, {_pick('tkg:repository', 'repo')},
                 {_pick('tkg:onComparisonPage', 'on')},
                 arg_min({{'o': o, 'd': d}}, (priority, o, d)) FILTER (WHERE k = 'skos:prefLabel' AND d = '@en') AS n,
                 string_agg(DISTINCT o, ', ' ORDER BY o) FILTER (WHERE k = 'skos:altLabel') AS aliases,
                 {_same_language("k = 'skos:altLabel'")} AS aliases__d
          FROM f WHERE k IN ('skos:notation', 'skos:prefLabel@zh', 'skos:definition', 'dcterms:date',
                             'tkg:headlineResult', 'tkg:headlineConditional', 'tkg:primaryPaper', 'tkg:repository',
                             'tkg:onComparisonPage', 'skos:prefLabel', 'skos:altLabel')
          GROUP BY s),
  broader AS (SELECT DISTINCT s, o AS category FROM f WHERE k = 'skos:broader'),
  cats AS (SELECT s, {_pick('skos:notation', 'cid')}, {_pick('tkg:position', 'cpos')},
                  arg_min({{'o': o, 'd': d}}, (priority, o, d)) FILTER (WHERE k = 'skos:prefLabel' AND d = '@en')
                    AS clabel
           FROM staging.ranked WHERE s IN (SELECT category FROM broader)
             AND k IN ('skos:notation', 'tkg:position', 'skos:prefLabel') GROUP BY s),
  names AS (SELECT s, o, d FROM staging.facts WHERE k = 'foaf:name'),
  people AS (SELECT a.s, min(nm.o) AS who FROM f AS a JOIN names AS nm ON nm.s = a.o
             WHERE a.k IN ('tkg:firstAuthor', 'tkg:responsibleTeam') GROUP BY a.s),
  orgs AS (SELECT a.s, string_agg(DISTINCT nm.o, ', ' ORDER BY nm.o) AS organisations,
                  {_same_language("TRUE", "nm.d")} AS organisations__d FROM f AS a
           JOIN names AS nm ON nm.s = a.o WHERE a.k = 'tkg:organization' GROUP BY a.s),
  -- MAX over the rows: unbound as soon as one repository has no star count (SPARQL's error rule)
  stars AS (SELECT r.s, CASE WHEN bool_and(st.o IS NOT NULL) THEN max(TRY_CAST(st.o AS BIGINT)) END AS stars
            FROM f AS r LEFT JOIN staging.facts AS st ON st.s = r.o AND st.k = 'tkg:stars'
            WHERE r.k = 'tkg:repository' GROUP BY r.s)
SELECT one.s AS technique, one.i.o AS id, one.i.d AS id__d, one.n.o AS name, one.n.d AS name__d,
       one.zh.o AS nameZh, one.zh.d AS nameZh__d, one.aliases, one.aliases__d, b.category, cats.cid.o AS categoryId,
       cats.cid.d AS categoryId__d, cats.clabel.o AS categoryLabel, cats.clabel.d AS categoryLabel__d,
       cats.cpos.o AS categoryPosition, cats.cpos.d AS categoryPosition__d, one.on.o AS onPage,
       one.on.d AS onPage__d, one.def.o AS summary, one.def.d AS summary__d, one.dt.o AS date, one.dt.d AS date__d,
       people.who AS people, orgs.organisations, orgs.organisations__d, one.h.o AS headline, one.h.d AS headline__d,
       one.c.o AS conditional, one.c.d AS conditional__d, one.p.o AS paper, one.repo.o AS repository, stars.stars
FROM one JOIN broader AS b ON b.s = one.s JOIN cats ON cats.s = b.category
LEFT JOIN people ON people.s = one.s LEFT JOIN orgs ON orgs.s = one.s LEFT JOIN stars ON stars.s = one.s
WHERE one.i IS NOT NULL AND one.n IS NOT NULL AND one.on IS NOT NULL
  AND cats.cid IS NOT NULL AND cats.clabel IS NOT NULL AND cats.cpos IS NOT NULL""",
    {"technique": "iri", "id": "term", "name": "term", "nameZh": "term", "aliases": "term", "category": "iri",
     "categoryId": "term", "categoryLabel": "term", "categoryPosition": "term", "onPage": "term",
     "summary": "term", "date": "term", "people": "string", "organisations": "term", "headline": "term",
     "conditional": "term", "paper": "iri", "repository": "iri", "stars": "integer"},
)


def _rewritten(store: GraphStore, params: Mapping[str, Any]) -> Any:
    """new-since's "graph rewritten" rows: the provenance graph's record of each graph."""
    import pyarrow as pa

    rows = store.select(f"""SELECT ?item ?when ?activity WHERE {{ GRAPH {PROVENANCE} {{
        ?item a prov:Bundle ; dcterms:modified ?at . BIND(STR(?at) AS ?when)
        OPTIONAL {{ ?item prov:wasGeneratedBy ?act . ?act rdfs:label ?activity }} }} }}""")
    since = params["since"]
    out: dict[str, list[Any]] = {"when": [], "item": [], "detail": [], "detail__d": []}
    for row in rows:
        if since is not None and str(row["when"].value) < since:  # type: ignore[union-attr]
            continue
        activity = row["activity"]
        out["when"].append(row["when"].value)  # type: ignore[union-attr]
        out["item"].append(row["item"].value)  # type: ignore[union-attr]
        out["detail"].append(activity.value if activity is not None else None)  # type: ignore[union-attr]
        out["detail__d"].append(_marker(activity))
    return pa.table({k: pa.array(v, pa.string()) for k, v in out.items()})


def _marker(term: Term | None) -> str | None:
    if not isinstance(term, ox.Literal):
        return None
    if term.language:
        return "@" + term.language
    return "" if term.datatype.value == _XSD_STRING else term.datatype.value


_SINCE = "CAST($since AS VARCHAR)"
#: new-since's dated rows, every one (``cutoff``: the date the day given is compared with,
#: a year or a month padded to a day): kept as an answer table, read with the day given.
_DATED = f"""WITH dated AS (
    SELECT DISTINCT s AS item, o AS "when", o AS cutoff, 'paper added to the reading state' AS kind
    FROM staging.facts WHERE k = 'tkg:addedAt' AND {_page("s")}
    UNION ALL SELECT DISTINCT s, o, o, 'reading status changed' FROM staging.facts
    WHERE k = 'tkg:statusChangedAt' AND {_page("s")}
    UNION ALL SELECT DISTINCT s, o, o || substr('0000-01-01', length(o) + 1), 'paper published' FROM staging.facts
    WHERE k = 'dcterms:issued' AND {_page("s")}
    UNION ALL SELECT DISTINCT d.s, d.o, d.o || substr('0000-01-01', length(d.o) + 1), 'technique dated'
    FROM staging.facts AS d SEMI JOIN (SELECT s FROM staging.facts WHERE k = 'a:tkg:Technique') AS t ON t.s = d.s
    WHERE d.k = 'dcterms:date' AND {_page("d.s")}
    UNION ALL SELECT DISTINCT s, o, o, 'repository pushed' FROM staging.facts
    WHERE k = 'tkg:pushedAt' AND {_page("s")}),
  items AS (SELECT DISTINCT item FROM dated),
  titles AS (SELECT DISTINCT s, o, d FROM staging.facts WHERE k = 'dcterms:title' AND s IN (SELECT item FROM items)),
  names AS (SELECT DISTINCT s, o, d FROM staging.facts
            WHERE k = 'skos:prefLabel' AND d = '@en' AND s IN (SELECT item FROM items)),
  repos AS (SELECT DISTINCT s, o, d FROM staging.facts WHERE k = 'schema:name' AND s IN (SELECT item FROM items)),
  statuses AS (SELECT DISTINCT s, o FROM staging.facts WHERE k = 'tkg:readingStatus' AND s IN (SELECT item FROM items)),
  venues AS (SELECT DISTINCT s, o, d FROM staging.facts WHERE k = 'tkg:venue' AND s IN (SELECT item FROM items))
SELECT x."when", x.kind, x.item,
       coalesce(t.o, n.o, r.o, x.item) AS label,
       CASE WHEN t.o IS NOT NULL THEN t.d WHEN n.o IS NOT NULL THEN n.d WHEN r.o IS NOT NULL THEN r.d
            ELSE '' END AS label__d,
       coalesce(regexp_replace(st.o, '^.*/status/', ''), v.o) AS detail,
       CASE WHEN st.o IS NOT NULL THEN '' ELSE v.d END AS detail__d, x.cutoff
FROM dated AS x
LEFT JOIN titles AS t ON t.s = x.item LEFT JOIN names AS n ON n.s = x.item LEFT JOIN repos AS r ON r.s = x.item
LEFT JOIN statuses AS st ON st.s = x.item AND x.kind = 'reading status changed'
LEFT JOIN venues AS v ON v.s = x.item AND x.kind = 'paper published'"""
TWINS["new-since"] = Twin(
    f"""WITH rows AS (
    SELECT "when", kind, item, label, label__d, detail, detail__d FROM {_STORED} AS stored
    WHERE cutoff >= {_SINCE}
    UNION ALL
    SELECT "when", 'graph rewritten', item, item, '', detail, detail__d FROM extra)
SELECT {_SINCE} AS since, "when", kind, item, label, label__d, detail, detail__d FROM rows""",
    {"since": "date", "when": "string", "kind": "string", "item": "iri", "label": "term", "detail": "term"},
    {"since": lambda v: v.value},
    extra=_rewritten,
    stored=_DATED,
    by_paper="item",
)

TWINS["repositories"] = Twin(
    f"""WITH repos AS (SELECT DISTINCT s AS repository FROM staging.facts WHERE k = 'a:schema:SoftwareSourceCode'),
  f AS (SELECT * FROM staging.facts WHERE s IN (SELECT repository FROM repos)),
  licensed AS (SELECT r.repository, l.o AS lic FROM repos AS r
               LEFT JOIN (SELECT DISTINCT s, o FROM f WHERE k = 'schema:license') AS l ON l.s = r.repository
               WHERE CAST($licenseContains AS VARCHAR) IS NULL
                  OR contains(lower(coalesce(l.o, '')), lower(CAST($licenseContains AS VARCHAR)))),
  one AS (SELECT s, min(o) FILTER (WHERE k = 'schema:name') AS name,
                 max(TRY_CAST(o AS BIGINT)) FILTER (WHERE k = 'tkg:stars') AS stars,
                 max(o) FILTER (WHERE k = 'tkg:pushedAt') AS pushed,
                 min(o) FILTER (WHERE k = 'tkg:archived') AS archived
          FROM f WHERE k IN ('schema:name', 'tkg:stars', 'tkg:pushedAt', 'tkg:archived') GROUP BY s),
  snaps AS (SELECT sn.s AS repository, max(tm.o || ' ' || st.o) AS latest, min(tm.o || ' ' || st.o) AS first
            FROM f AS sn JOIN staging.facts AS tm ON tm.s = sn.o AND tm.k = 'prov:generatedAtTime'
            JOIN staging.facts AS st ON st.s = sn.o AND st.k = 'tkg:stars'
            WHERE sn.k = 'tkg:snapshot' GROUP BY sn.s),
  names AS (SELECT DISTINCT r.o AS repository, l.o AS name, l.d FROM staging.facts AS r
            JOIN staging.facts AS l ON l.s = r.s AND l.k = 'skos:prefLabel' AND l.d = '@en'
            WHERE r.k = 'tkg:repository'),
  techniques AS (SELECT repository, string_agg(DISTINCT name, ', ' ORDER BY name) AS techniques,
                        {_same_language("TRUE")} AS techniques__d FROM names GROUP BY repository)
SELECT CAST($licenseContains AS VARCHAR) AS licenseContains, CAST($minStars AS BIGINT) AS minStars,
       l.repository, one.name, one.stars,
       TRY_CAST(split_part(snaps.latest, ' ', 2) AS BIGINT) - TRY_CAST(split_part(snaps.first, ' ', 2) AS BIGINT)
         AS starsGained,
       one.pushed, min(l.lic) AS license, one.archived, techniques.techniques, techniques.techniques__d
FROM licensed AS l LEFT JOIN one ON one.s = l.repository LEFT JOIN snaps USING (repository)
LEFT JOIN techniques USING (repository)
GROUP BY ALL
HAVING coalesce(one.stars, 0) >= CAST($minStars AS BIGINT)""",
    {"licenseContains": "string", "minStars": "integer", "repository": "iri", "name": "string", "stars": "integer",
     "starsGained": "integer", "pushed": "dateTime", "license": "string", "archived": "boolean",
     "techniques": "term"},
    {"licenseContains": lambda v: v.value, "minStars": lambda v: int(v.value)},
)


# -- answer tables -----------------------------------------------------------------------


def _answers_version() -> str:
    """A digest of every twin's SQL: answer tables made by other SQL are not read."""
    import hashlib

    digest = hashlib.sha256()
    for name, twin in sorted(TWINS.items()):
        digest.update(f"{name}\0{twin.sql}\0{twin.stored}\0{sorted(twin.kinds.items())}".encode())
    return digest.hexdigest()[:16]


ANSWERS_VERSION = _answers_version()


def _order(named: NamedQuery) -> str:
    return ", ".join(f'"{k.variable}" {"DESC NULLS LAST" if k.descending else "ASC NULLS FIRST"}'
                     for k in named.page)


def _twin_params(twin: Twin, bound: Mapping[str, Bound]) -> dict[str, Any]:
    """The SQL's parameters for the query's ``bound`` ones (every row: ``$page`` NULL)."""
    return {**{name: convert(bound[name]) if name in bound else None for name, convert in dict(twin.params).items()},
            "page": None}


def _used(sql: str, params: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in params.items() if re.search(rf"\${k}\b", sql)}


def _defaults(name: str) -> dict[str, Any] | None:
    """The twin's SQL parameters when the query is run with none given; None when it
    has no such answer (a required parameter, or rows asked of the store)."""
    import queries
    from kg.errors import KGError

    twin = TWINS[name]
    if twin.extra is not None:
        return None
    try:
        bound = queries.bind(queries.get(name), {})
    except KGError:
        return None
    return _twin_params(twin, bound)


def reads(twin: Twin) -> set[str]:
    """The staging keys (kinds of fact) a twin's SQL names, each as a quoted string."""
    from kg.analytics.staging import KEYS

    text = re.sub(r"--[^\n]*", "", f"{twin.sql}\n{twin.stored or ''}")  # comments (an apostrophe) out
    return set(re.findall(r"'((?:[^']|'')*)'", text)) & set(KEYS)


#: The facts a status change writes about a paper (:func:`kg.reading.status_change`): its
#: status, when that changed, and when the paper first got one.
STATUS_KEYS = frozenset({"tkg:readingStatus", "tkg:statusChangedAt", "tkg:addedAt"})
#: A build patches the answer tables for at most this many papers whose reading state
#: changed; for more, it makes them again whole.
PATCH_PAPERS = 5000


def materialise(con: duckdb.DuckDBPyConnection, progress: Callable[[str, int, int], None] | None = None, *,
                changed_keys: set[str] | None = None,
                papers: Sequence[str] | None = None) -> tuple[dict[str, int], dict[str, int]]:
    """(Re)make the answer tables from the staged facts (in the build's transaction): all
    of them, or (``changed_keys``, the kinds of fact that changed) those that read any of
    them, and any that this version did not make. With ``papers``, the papers whose
    reading-state facts (:data:`STATUS_KEYS`) changed, an answer that reads no other kind
    of fact that changed and says which paper each row is about (:attr:`Twin.by_paper`)
    is patched instead: only these papers' rows are made again (:func:`_patch`).
    Returns the answers made whole and those patched, each with its rows (made again)."""
    if not answers_current(con):
        changed_keys = None
    existing = {r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'answers'").fetchall()}
    con.execute("CREATE SCHEMA IF NOT EXISTS answers")
    # The build lets DuckDB write tables in any order; these keep the ORDER BY's.
    con.execute("SET preserve_insertion_order = true")
    # (not reset when it fails: the build rolls back and closes the connection; a statement
    # in an aborted transaction would only hide DuckDB's error behind its own)
    made, patched = _materialise(con, progress, changed_keys, papers, existing)
    con.execute("SET preserve_insertion_order = false")
    con.execute("INSERT OR REPLACE INTO staging.meta VALUES ('answers_version', ?)", [ANSWERS_VERSION])
    if progress:
        progress("answers", len(TWINS), len(TWINS))
    return made, patched


def _materialise(con: duckdb.DuckDBPyConnection, progress: Callable[[str, int, int], None] | None,
                 changed_keys: set[str] | None, papers: Sequence[str] | None,
                 existing: set[str]) -> tuple[dict[str, int], dict[str, int]]:
    import queries

    made: dict[str, int] = {}
    patched: dict[str, int] = {}
    for i, (name, twin) in enumerate(TWINS.items()):
        if progress:
            progress("answers", i, len(TWINS))
        if changed_keys is not None and name in existing:
            read = reads(twin) & changed_keys
            if not read:
                continue
            if (papers is not None and len(papers) <= PATCH_PAPERS and twin.by_paper is not None
                    and read <= STATUS_KEYS):
                patched[name] = _patch(con, name, twin, papers)
                continue
        params = _defaults(name)
        if twin.stored is not None:
            con.execute(f'CREATE OR REPLACE TABLE answers."{name}" AS {twin.stored}',
                        _used(twin.stored, {"page": None}))
            made[name] = int(con.execute(f'SELECT count(*) FROM answers."{name}"').fetchall()[0][0])
        if params is None:
            if twin.stored is None:
                con.execute(f'DROP TABLE IF EXISTS answers."{name}"')
            continue
        order = _order(queries.get(name))
        sql = f"SELECT * FROM ({twin.sql}) AS answer" + (f" ORDER BY {order}" if order else "")
        con.execute(f'CREATE OR REPLACE TABLE answers."{name}" AS {sql}', _used(sql, params))
        made[name] = int(con.execute(f'SELECT count(*) FROM answers."{name}"').fetchall()[0][0])
    return made, patched


def _patch(con: duckdb.DuckDBPyConnection, name: str, twin: Twin, papers: Sequence[str]) -> int:
    """Make the rows of ``papers`` in the answer table of ``name`` again, from the twin's
    SQL narrowed to them (``$page``); the other rows stay as they are. Returns how many
    rows these papers have now.

    A table without an order (:attr:`Twin.stored`) loses their old rows and gets the new
    ones. A table in the order of the page key keeps it, row for row as a build that makes
    it whole would store it: each new row is written over one of the papers' old rows, in
    place (a status changed: the row stays where it was), the old rows left over are
    deleted (deleting keeps the order), and the table is sorted again only when a new row
    does not fit between its neighbours or the papers have more rows than before."""
    import queries

    table = f'answers."{name}"'
    params = _defaults(name)  # the table holds the answer without parameters, else the stored rows
    sql = twin.sql if params is not None else twin.stored
    assert sql is not None and twin.by_paper is not None
    order = _order(queries.get(name)) if params is not None else ""
    con.execute(f"""CREATE OR REPLACE TEMP TABLE answer_patch AS
                    SELECT row_number() OVER ({f"ORDER BY {order}" if order else ""}) AS __row, *
                    FROM ({sql}) AS answer""", _used(sql, {**(params or {}), "page": list(papers)}))
    count = int(con.execute("SELECT count(*) FROM answer_patch").fetchall()[0][0])
    mine = f'"{twin.by_paper}" IN (SELECT unnest(CAST($papers AS VARCHAR[])))'
    if not order:
        con.execute(f"DELETE FROM {table} WHERE {mine}", {"papers": list(papers)})
        con.execute(f"INSERT INTO {table} SELECT * EXCLUDE (__row) FROM answer_patch")
    else:
        _patch_in_order(con, name, order, mine, papers, count)
    con.execute("DROP TABLE answer_patch")  # (a failed build's rollback takes it away)
    return count


def _patch_in_order(con: duckdb.DuckDBPyConnection, name: str, order: str, mine: str, papers: Sequence[str],
                    count: int) -> None:
    """The ``count`` rows of ``answer_patch`` (numbered in ``order``) in the place of the
    rows ``mine`` (those of ``papers``) in the answer table of ``name``, which stays in
    ``order`` (see :func:`_patch`)."""
    table = f'answers."{name}"'
    old = [r[0] for r in con.execute(f"SELECT rowid FROM {table} WHERE {mine} ORDER BY rowid",
                                     {"papers": list(papers)}).fetchall()]
    if count > len(old):  # rows to insert: the table is written again, in order
        con.execute(f"""CREATE OR REPLACE TABLE {table} AS
                        SELECT * FROM (SELECT * FROM {table} WHERE rowid NOT IN (SELECT unnest(CAST($old AS BIGINT[])))
                                       UNION ALL SELECT * EXCLUDE (__row) FROM answer_patch) AS answer
                        ORDER BY {order}""", {"old": old})
        return
    written, gone = old[:count], old[count:]
    if written:
        columns = [r[0] for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'answers' AND table_name = ? "
            "ORDER BY column_index", [name]).fetchall()]
        assignments = ", ".join(f'"{c}" = new."{c}"' for c in columns)
        con.execute(f"""UPDATE {table} AS answer SET {assignments}
                        FROM (SELECT *, CAST($written AS BIGINT[])[__row] AS __at FROM answer_patch) AS new
                        WHERE answer.rowid = new.__at""", {"written": written})
    if gone:
        con.execute(f"DELETE FROM {table} WHERE rowid IN (SELECT unnest(CAST($gone AS BIGINT[])))", {"gone": gone})
    if written and not _in_order(con, table, order, written):
        con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM {table} ORDER BY {order}")


def _in_order(con: duckdb.DuckDBPyConnection, table: str, order: str, written: Sequence[int]) -> bool:
    """Whether ``table``, in ``order`` but perhaps for the rows at the rowids ``written``,
    is in order: each of these rows comes after the row stored before it and before the
    row stored after it (at the nearest rowids: deleted rows leave gaps)."""
    near = [r[0] for r in con.execute(f"""
        WITH written AS (SELECT unnest(CAST($written AS BIGINT[])) AS id),
          ids AS (SELECT rowid AS id FROM {table})
        SELECT id FROM written
        UNION SELECT ids.id FROM written ASOF JOIN ids ON written.id > ids.id
        UNION SELECT ids.id FROM written ASOF JOIN ids ON written.id < ids.id""",
                                      {"written": list(written)}).fetchall()]
    misplaced = con.execute(f"""
        SELECT count(*) FROM (
          SELECT row_number() OVER (ORDER BY __at) AS stored, row_number() OVER (ORDER BY {order}, __at) AS sorted
          FROM (SELECT rowid AS __at, * FROM {table} WHERE rowid IN (SELECT unnest(CAST($near AS BIGINT[])))))
        WHERE stored <> sorted""", {"near": near}).fetchall()[0][0]
    return int(misplaced) == 0


def answers_current(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the file's answer tables were made by this version's twins."""
    from kg.analytics.files import engine

    try:
        rows = con.execute("SELECT value FROM staging.meta WHERE key = 'answers_version'").fetchall()
    except engine().Error:
        return False
    return rows == [(ANSWERS_VERSION,)]


def _stored(con: duckdb.DuckDBPyConnection, name: str) -> str | None:
    """The answer table of ``name`` when this version made it."""
    if not answers_current(con):
        return None
    found = con.execute("SELECT 1 FROM duckdb_tables() WHERE schema_name = 'answers' AND table_name = ?",
                        [name]).fetchall()
    return f'answers."{name}"' if found else None


def _answer_table(con: duckdb.DuckDBPyConnection, name: str, params: Mapping[str, Any]) -> str | None:
    """The answer table that holds this very answer, if there is one."""
    if TWINS[name].stored is not None or params != _defaults(name):
        return None
    return _stored(con, name)


# -- the reading page -------------------------------------------------------------------


@dataclass
class ReadingOverview:
    """What the reading page needs, from the tables: each category's counts per status,
    every paper's status counted once, and the papers each category shows first."""

    #: category label → (its position, {status: papers}); a paper counts in each of its categories.
    categories: dict[str, tuple[int | None, dict[str, int]]]
    statuses: dict[str, int]
    #: category label → its first papers, each as its place on the list (no position,
    #: position, title, IRI: the IRI last), and how many more match.
    shown: dict[str, tuple[list[tuple[bool, int, str, str]], int]]


def _statuses_now(con: duckdb.DuckDBPyConnection, now: Mapping[str, Sequence[str]] | None, *,
                  any_read: bool = False) -> None:
    """The temporary table ``web_status`` (paper, status, and with ``any_read``, read): each
    paper's reading status as the tables hold it (:data:`reading_state`), and whether any of
    its statuses is read; with ``now`` (papers whose statuses changed since the tables were
    made → the statuses they have now, the one that counts first), these papers' as they are now."""
    changed = {paper: list(statuses) for paper, statuses in (now or {}).items()}
    read = (f"paper IN (SELECT s FROM staging.facts WHERE k = 'tkg:readingStatus' AND o = '{_STATUS}read')"
            if any_read else "NULL")
    con.execute(f"""CREATE TEMP TABLE web_status AS
        SELECT paper, status, {read} AS read FROM reading_state
        WHERE status IS NOT NULL AND paper NOT IN (SELECT unnest(CAST($changed AS VARCHAR[])))
        UNION ALL
        SELECT paper, statuses[1], list_contains(statuses, 'read')
        FROM (SELECT unnest(CAST($changed AS VARCHAR[])) AS paper, unnest(CAST($statuses AS VARCHAR[][])) AS statuses)
        WHERE len(statuses) > 0""",
                {"changed": list(changed), "statuses": list(changed.values())})


#: The first papers of each category, past the page's, that :func:`reading_patched` keeps
#: in reserve for papers that leave a category's list.
RESERVE = 50
_PAPER_POSITIONS = ("SELECT s AS paper, min(TRY_CAST(o AS BIGINT)) AS position FROM staging.facts "
                    "WHERE k = 'tkg:position'")


def tables_made(con: duckdb.DuckDBPyConnection) -> str:
    """A name for the build the tables ``con`` hold (it changes with every kg analytics build)."""
    rows = con.execute("SELECT graph, signature FROM staging.graphs ORDER BY graph").fetchall()
    return "\n".join(f"{g} {s}" for g, s in rows)


def reading_overview(con: duckdb.DuckDBPyConnection, *, status: str, wanted: str, limit: int,
                     now: Mapping[str, Sequence[str]] | None = None) -> ReadingOverview:
    """The reading page's numbers and first papers (``limit`` per category, with the key each
    sorts by: position, title, IRI); ``status`` ("" for all) and ``wanted`` (case- and
    accent-blind text of category names, "" for all) narrow the papers shown, not the counts;
    ``now``: papers whose statuses changed since the tables were made, with their statuses now
    (see :func:`_statuses_now`). Leaves ``con`` open."""
    _statuses_now(con, now)
    con.execute("""CREATE OR REPLACE TEMP TABLE web_listed AS
        SELECT DISTINCT prc.paper, rc.label FROM paper_reading_categories AS prc
        JOIN reading_categories AS rc USING (category)""")
    counts = con.execute("""
        SELECT l.label, c.position, s.status, count(*) FROM web_listed AS l
        JOIN (SELECT label, any_value(position) AS position FROM reading_categories GROUP BY label) AS c
          USING (label)
        JOIN web_status AS s USING (paper) GROUP BY l.label, c.position, s.status""").fetchall()
    statuses = dict(con.execute("SELECT status, count(*) FROM web_status GROUP BY status").fetchall())
    # the first `limit` of each category by a bounded arg_min, not a sort of the whole list
    rows = con.execute(f"""
        WITH pos AS ({_PAPER_POSITIONS} GROUP BY s),
        entries AS (SELECT s.paper, coalesce(l.label, 'Not in a category') AS label, p.position,
                           CASE WHEN p.position IS NULL THEN t.title END AS title
                    FROM web_status AS s LEFT JOIN web_listed AS l USING (paper) LEFT JOIN pos AS p USING (paper)
                    LEFT JOIN papers AS t USING (paper)
                    WHERE ($status = '' OR s.status = $status)
                      AND ($wanted = ''
                           OR contains(strip_accents(lower(coalesce(l.label, 'Not in a category'))), $wanted)))
        SELECT label, count(*), arg_min((position IS NULL, coalesce(position, 0), coalesce(title, ''), paper),
                                        (position IS NULL, position, coalesce(title, ''), paper), $limit)
        FROM entries GROUP BY label""", {"status": status, "wanted": wanted, "limit": limit}).fetchall()
    con.execute("DROP TABLE web_status")
    categories: dict[str, tuple[int | None, dict[str, int]]] = {}
    for label, position, slug, n in counts:
        categories.setdefault(label, (position, {}))[1][slug] = n
    shown = {label: ([_key(k) for k in keys], total - len(keys)) for label, total, keys in sorted(rows)}
    return ReadingOverview(categories, statuses, shown)


def _key(value: Any) -> tuple[bool, int, str, str]:
    """A paper's place on the list (a DuckDB struct or tuple): (no position, position, title, IRI)."""
    items = tuple(value.values()) if isinstance(value, dict) else tuple(value)
    return (bool(items[0]), int(items[1]), str(items[2]), str(items[3]))


def reading_patched(con: duckdb.DuckDBPyConnection, base: ReadingOverview, now: Mapping[str, Sequence[str]], *,
                    status: str, wanted: str, limit: int) -> ReadingOverview | None:
    """``base`` (:func:`reading_overview` of the tables alone, ``limit`` + :data:`RESERVE`
    papers a category) with the statuses changed since, ``now``: each changed paper's status
    and categories read from the tables, its counts moved and its place on the lists taken or
    given up; the tables are not read again. None when a category loses more papers than it
    kept in reserve. Leaves ``con`` open."""
    changed = list(now)
    facts = con.execute(f"""
        WITH pos AS ({_PAPER_POSITIONS} AND s IN (SELECT unnest(CAST($papers AS VARCHAR[]))) GROUP BY s)
        SELECT w.paper, r.status, list(DISTINCT rc.label) FILTER (WHERE rc.label IS NOT NULL),
               any_value(p.position), any_value(t.title)
        FROM (SELECT unnest(CAST($papers AS VARCHAR[])) AS paper) AS w
        LEFT JOIN reading_state AS r USING (paper)
        LEFT JOIN paper_reading_categories AS prc USING (paper) LEFT JOIN reading_categories AS rc USING (category)
        LEFT JOIN pos AS p USING (paper) LEFT JOIN papers AS t USING (paper)
        GROUP BY w.paper, r.status""", {"papers": changed}).fetchall()
    positions = dict(con.execute("SELECT label, any_value(position) FROM reading_categories GROUP BY label").fetchall())
    categories = {label: (position, dict(counts)) for label, (position, counts) in base.categories.items()}
    statuses = dict(base.statuses)
    lists = {label: (list(keys), more) for label, (keys, more) in base.shown.items()}

    def move(counts: dict[str, int], old: str | None, new: str | None) -> None:
        if old is not None:
            counts[old] -= 1
            if not counts[old]:
                del counts[old]
        if new is not None:
            counts[new] = counts.get(new, 0) + 1

    import unicodedata

    def fold(text: str) -> str:  # as strip_accents(lower(...)) in reading_overview
        return "".join(c for c in unicodedata.normalize("NFD", text.lower()) if not unicodedata.combining(c))

    for paper, old, labels, position, title in facts:
        new: str | None = now[paper][0] if now[paper] else None
        if old == new:
            continue
        move(statuses, old, new)
        for label in labels or []:
            move(categories.setdefault(label, (positions.get(label), {}))[1], old, new)
        key = (position is None, position or 0, "" if position is not None else str(title or ""), paper)
        was = old is not None and (not status or old == status)
        is_now = new is not None and (not status or new == status)
        for label in labels or ["Not in a category"]:
            if was == is_now or (wanted and wanted not in fold(label)):
                continue
            keys, more = lists.get(label, ([], 0))
            if was and key in keys:
                keys.remove(key)
                if more and len(keys) < limit:
                    return None  # the reserve ran out: the caller reads the tables again
            elif was:  # one of those past the list
                more -= 1
            elif more and keys and key > keys[-1]:  # past the list too: counted there
                more += 1
            else:
                keys.append(key)
                keys.sort()
            lists[label] = (keys, more)
    categories = {label: value for label, value in categories.items() if value[1]}
    shown = {label: (keys[:limit], more + len(keys[limit:])) for label, (keys, more) in lists.items() if keys}
    return ReadingOverview(categories, {k: v for k, v in statuses.items() if v}, shown)


def technique_paper_counts(con: duckdb.DuckDBPyConnection, techniques: Sequence[str],
                           now: Mapping[str, Sequence[str]] | None = None) -> dict[str, tuple[int, int, int]]:
    """For each of ``techniques`` (IRIs) that has papers: the papers that introduce, extend,
    use or evaluate it, how many of them have a reading status, and how many are read (any graph's status,
    as the Techniques page's SPARQL counts them); ``now`` as for :func:`reading_overview`.
    Closes ``con``."""
    try:
        _statuses_now(con, now, any_read=True)
        rows = con.execute("""
            WITH links AS (SELECT DISTINCT technique, paper FROM paper_techniques WHERE role <> 'mentions'
                           AND technique IN (SELECT unnest(CAST($techniques AS VARCHAR[]))))
            SELECT technique, count(*), count(web_status.paper), count(*) FILTER (WHERE web_status.read)
            FROM links LEFT JOIN web_status USING (paper) GROUP BY technique""",
                           {"techniques": list(techniques)}).fetchall()
    finally:
        con.close()
    return {technique: (papers, listed, read) for technique, papers, listed, read in rows}


# -- freshness -------------------------------------------------------------------------


def freshness(store: GraphStore, path: Path, *, stale: bool = False) -> tuple[duckdb.DuckDBPyConnection | None, str]:
    """A read-only connection to the analytics file when it is fresh, else None and why;
    with ``stale``, also a connection to tables some graphs changed since (and why they
    are stale), for a page that says so."""
    from kg.analytics.files import connect, engine, graph_states, schema_current

    if not path.exists():
        return None, "no analytics tables yet (kg analytics build makes them)"
    try:
        con = connect(path, read_only=True)
    except Exception:  # noqa: BLE001 - held by a writer, or unreadable: SPARQL answers instead
        return None, "the analytics file is being built or cannot be read"
    try:
        meta = dict(con.execute("SELECT key, value FROM staging.meta").fetchall())
        if not schema_current(meta):
            con.close()
            return None, "the analytics tables were made by another version (kg analytics build --full)"
        built = dict(con.execute("SELECT graph, signature FROM staging.graphs").fetchall())
    except engine().Error:
        con.close()
        return None, "the analytics file is incomplete (kg analytics build --full)"
    now = {g: s.signature for g, s in graph_states(store).items()}
    if built != now:
        changed = sorted(set(built.items()) ^ set(now.items()))
        from kg.graphs import graph_name

        names = ", ".join(sorted({graph_name(ox.NamedNode(g)) for g, _ in changed}))
        why = f"the analytics tables are stale ({names} changed since the last kg analytics build)"
        if stale:
            return con, why
        con.close()
        return None, why
    return con, ""


# -- answering -------------------------------------------------------------------------

_XSD_STRING = XSD.string.value
_MISSING: Any = object()


_NUMBERS = {XSD.integer.value: int, XSD.decimal.value: float, XSD.double.value: float, XSD.float.value: float}


def _plain(kind: Kind, value: Any, marker: Any = None) -> Any:
    """The plain value (kg.results.python_value) of what :func:`_term` would make."""
    if value is None:
        return None
    if kind == "integer":
        return int(value)
    if kind == "boolean":
        return str(value) in ("true", "1")
    if kind == "term" and marker:
        if marker in _NUMBERS:
            try:
                return _NUMBERS[marker](value)
            except ValueError:
                return value
        if marker == XSD.boolean.value:
            return value in ("true", "1")
    return str(value)


def _sql_value(term: Term | None) -> Any:
    """A cursor value as the twin's SQL holds it."""
    if term is None:
        return None
    if isinstance(term, ox.Literal) and term.datatype.value in (XSD.integer.value, XSD.decimal.value):
        return Decimal(term.value)
    return term.value  # type: ignore[union-attr]


def _after(key: Sequence[SortKey], values: Sequence[Term | None], params: dict[str, Any]) -> str:
    """SQL for "comes after ``values``" in the page key order (NULL as unbound: first)."""
    condition = "FALSE"
    for i, (part, value) in reversed(list(enumerate(zip(key, values, strict=True)))):
        column = f'"{part.variable}"'
        if value is None:
            gt, eq = ("FALSE", f"{column} IS NULL") if part.descending else (f"{column} IS NOT NULL",
                                                                              f"{column} IS NULL")
        else:
            params[f"after{i}"] = _sql_value(value)
            gt = f"({column} IS NULL OR {column} < $after{i})" if part.descending else f"{column} > $after{i}"
            eq = f"{column} = $after{i}"
        condition = gt if condition == "FALSE" else f"({gt} OR ({eq} AND {condition}))"
    return condition


def duckdb_answer(
    store: GraphStore, named: NamedQuery, bound: Mapping[str, Bound], *, limit: int | None,
    after: Sequence[Term | None] | None, plain: bool = False,
) -> Answer | str | None:
    """The rows of ``named`` from fresh analytics tables; else why they cannot answer,
    or None when the query has no twin. With ``plain``, rows hold plain values
    (kg.results.python_value) instead of terms: no term is made only to be taken apart."""
    from kg.analytics.files import database_path

    twin = TWINS.get(named.name)
    if twin is None:
        return None
    unread = sorted(set(bound) - set(twin.params))
    if unread:  # the SQL would answer as if it were not given
        return f"the analytics tables do not narrow by {unread[0]!r}"
    path = database_path(store.location)
    con, why = freshness(store, path)
    if con is None:
        return why
    return tables_answer(con, path, named, bound, limit=limit, after=after, plain=plain, store=store)


def tables_answer(
    con: duckdb.DuckDBPyConnection, path: Path, named: NamedQuery, bound: Mapping[str, Bound], *,
    limit: int | None, after: Sequence[Term | None] | None, plain: bool = False, store: GraphStore | None,
) -> Answer | None:
    """The rows of ``named`` (a query with a twin that narrows by each of ``bound``) from
    ``con``, tables found fresh; None (``con`` closed) when the twin needs rows of the
    store and there is none (``store`` None: answering without it, kg.analytics.memo)."""
    twin = TWINS[named.name]
    if twin.extra is not None and store is None:
        con.close()
        return None
    params = _twin_params(twin, bound)
    table = _answer_table(con, named.name, params)
    order = _order(named)
    paged = limit is not None or after is not None
    where = f" WHERE {_after(named.page, after, params)}" if after is not None else ""
    note = f"answered from the DuckDB analytics tables (fresh) in {path}"
    if table is not None:  # stored in the page key's order: no sort, and a page stops at its last row
        sql = f"SELECT * FROM {table} AS answer{where}" + (f" LIMIT {limit + 1}" if limit is not None else "")
        return _answer(con, sql, _used(sql, params), twin.kinds, named.page if paged else (), limit, note, plain)
    # a page in its key's order; the whole answer in the query's order, if it has one
    ordered = paged or re.search(r"\bORDER\s+BY\b", named.text, re.IGNORECASE) is not None
    order_limit = (f" ORDER BY {order}" if named.page and ordered else "") + (
        f" LIMIT {limit + 1}" if limit is not None else "")
    if twin.keys is not None and limit is not None:  # choose the page's rows by their keys first, then make only those
        text = f"SELECT {twin.keys_narrow} FROM ({twin.keys}) AS answer{where}{order_limit}"
        keys = con.execute(text, {k: v for k, v in params.items() if re.search(rf"\${k}\b", text)}).fetchall()
        params["page"] = sorted({row[0] for row in keys})
    text = twin.sql
    if twin.stored is not None:
        text = text.replace(_STORED, _stored(con, named.name) or f"({twin.stored})")
    sql = f"SELECT * FROM ({text}) AS answer{where}{order_limit}"
    if twin.extra is not None:
        import duckdb  # noqa: F401 - its Arrow sources: what registering an Arrow table reads through

        assert store is not None
        con.register("extra", twin.extra(store, params))
    return _answer(con, sql, _used(sql, params), twin.kinds, named.page if paged else (), limit, note, plain)


def _answer(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any], kinds: Mapping[str, Kind],
            key: Sequence[SortKey], limit: int | None, note: str, plain: bool) -> Answer:
    """The rows of ``sql`` as a page of terms (or plain values), or written whole in a
    results format without a term per cell (:attr:`queries.Answer.write`): one or the other."""
    from kg.paging import page_rows
    from queries import Answer

    page = page_rows(list(kinds), _rows(con, sql, params, kinds, _plain if plain else _term), key, limit)

    def write(fmt: str, out: IO[bytes]) -> int:
        return _write(con, sql, params, kinds, page, key, limit, fmt, out)

    return Answer(page, source="duckdb", note=note, write=write)


@contextmanager
def _session(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """A query's memory bound and spill folder; the connection is closed after it."""
    spill = tempfile.mkdtemp(prefix="kg-answer-")
    try:
        con.execute(f"SET memory_limit = '1GB'; SET temp_directory = '{spill}'")
        yield
    finally:
        con.close()
        import shutil

        shutil.rmtree(spill, ignore_errors=True)


def _plan(names: Sequence[str], kinds: Mapping[str, Kind]) -> list[tuple[Kind, int, int | None]]:
    """For each variable: its kind, its column and its marker's column (kind "term")."""
    return [(kind, names.index(v), names.index(v + "__d") if kind == "term" else None) for v, kind in kinds.items()]


#: Rows read from DuckDB at a time (bounded memory, few calls).
_BATCH = 5000


def _write(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any], kinds: Mapping[str, Kind], page: Page,
           key: Sequence[SortKey], limit: int | None, fmt: str, out: IO[bytes]) -> int:
    """Write the rows in ``fmt`` from DuckDB's batches, column by column (see
    kg.analytics.encoding); set ``page.next`` as the page of terms would. The row count."""
    from kg.analytics.encoding import Column, write_columns
    from kg.paging import encode_cursor

    variables = list(kinds)
    keyed = [variables.index(k.variable) for k in key]

    def batches(result: duckdb.DuckDBPyConnection, plan: list[tuple[Kind, int, int | None]]) -> Iterator[list[Column]]:
        written, last = 0, None
        # Rows, not Arrow batches: importing pyarrow (and numpy) would cost more than it saves.
        while rows := result.fetchmany(_BATCH):
            raw = list(zip(*rows, strict=True))
            size = len(rows)
            more = limit is not None and written + size > limit
            if more:
                size = limit - written  # type: ignore[operator]
            columns: list[Column] = [(kind, raw[i][:size], raw[d][:size] if d is not None else None)
                                     for kind, i, d in plan]
            if size:
                last = [(kind, values[-1], markers[-1] if markers else None)
                        for kind, values, markers in (columns[p] for p in keyed)]
                written += size
                yield columns
            if more:
                if last is not None and keyed:
                    page.next = encode_cursor([_term(*cell) for cell in last])
                return

    with _session(con):
        result = con.execute(sql, params)
        plan = _plan([d[0] for d in result.description], kinds)
        return write_columns(variables, batches(result, plan), fmt, out)


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any], kinds: Mapping[str, Kind],
          make: Callable[[Kind, Any, Any], Any]) -> Iterator[tuple[Any, ...]]:
    with _session(con):
        result = con.execute(sql, params)
        plan = _plan([d[0] for d in result.description], kinds)
        # Techniques, statuses, roles, venues repeat from row to row: each column keeps
        # the terms it made lately.
        caches: list[dict[tuple[Any, Any], Any]] = [{} for _ in plan]
        while batch := result.fetchmany(_BATCH):
            for row in batch:
                out = []
                for (kind, i, d), cache in zip(plan, caches, strict=True):
                    value = (row[i], row[d] if d is not None else None)
                    term = cache.get(value, _MISSING)
                    if term is _MISSING:
                        if len(cache) > 20_000:
                            cache.clear()
                        term = cache[value] = make(kind, *value)
                    out.append(term)
                yield tuple(out)
