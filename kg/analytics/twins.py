"""The DuckDB twins of named queries: for each, SQL over the staged facts of the analytics
file (``staging.facts``, each term with its datatype or language) that returns the very
rows of its SPARQL query (the tests check it on a corpus): the same variables in the same
order, terms of the same kinds, a SAMPLE taken from the best graph (kg.graphs.SOURCES
order), a GROUP_CONCAT in a fixed order.

A twin may keep the costly part of its SQL, without parameters, as an answer table
(:attr:`Twin.stored`, :mod:`~kg.analytics.stored`), and says which paper each row is
about (:attr:`Twin.by_paper`) where a build can patch its rows after status changes.
Answering from them is :mod:`~kg.analytics.answers`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyoxigraph as ox

from kg.analytics.aggregates import joined, pick, same_language
from kg.graphs import MY_TECHNIQUES, PROVENANCE, READING, READING_LIST, graph_name
from kg.vocab import XSD

if TYPE_CHECKING:

    from kg.results import Term
    from kg.store.base import GraphStore

__all__ = ["PAPER_LINKS", "STATUS_BASE", "STATUS_OF", "STORED", "TWINS", "Kind", "Twin", "paper_links"]


#: Column kinds: how a value becomes a term. "term" reads the datatype or language from
#: the column ``<name>__d`` (as staged: NULL for an IRI, "" for xsd:string, "@en", or the
#: datatype's IRI).
Kind = str
_XSD_STRING = XSD.string.value


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
    #: :data:`STORED`: kept as an answer table by the build, or run as a subquery.
    stored: str | None = None
    #: The column of the paper each row is about, where the SQL (and :attr:`stored`) narrows
    #: to the rows of the papers in ``$page`` (NULL for all) and a paper's rows read the
    #: reading state (:data:`STATUS_KEYS`) of that paper alone: after a few status changes,
    #: a build makes only these papers' rows again (:func:`materialise`).
    by_paper: str | None = None
    #: Whether a build keeps the answer without parameters as an answer table: not for a
    #: twin whose SQL answers at once and whose order (no page key) a patch would not keep.
    kept: bool = True
    #: The column that shows the paper's reading status as :data:`STATUS_OF` picks it, where
    #: that is the only reading-state fact the SQL reads, no page key holds it, and a paper
    #: that has a status has rows whatever it is: a status change of a paper with rows and a
    #: status is that column's new value (kg.analytics.stored), not its rows made again.
    status: str | None = None
    #: Whether its rows are only for papers that a technique's links name (``PAPER_LINKS``): a
    #: status change of a paper without links leaves it as it is (a ``kg reading set`` of such
    #: a paper at 700k papers: 0.08 s less, for the three lineage answers).
    linked_only: bool = False
    #: Whether the build keeps the :attr:`stored` table in the page key's order and
    #: :attr:`sql` only filters its rows (a WHERE on its columns): a page is then the first
    #: rows that pass after the cursor, and the whole answer a scan, with no sort.
    in_order: bool = False


#: Each of the papers in ``$papers`` that has a reading status, with it as the twins show it
#: (the best graph's: ``_pick``), for :attr:`Twin.status`.
STATUS_OF = """SELECT s AS paper, regexp_replace(arg_min(o, (priority, o, d)), '^.*/status/', '') AS status
FROM staging.ranked WHERE k = 'tkg:readingStatus' AND s IN (SELECT unnest(CAST($papers AS VARCHAR[]))) GROUP BY s"""
#: Where a twin's SQL reads its :attr:`Twin.stored` table.
STORED = "__stored__"
STATUS_BASE = "https://w3id.org/techkg/id/status/"
_NOT_QUEUED = (f"'{STATUS_BASE}read'", f"'{STATUS_BASE}skipped'")


def _pick(key: str, name: str) -> str:
    """One value of ``key`` per subject (the best graph's; of its values, the least, so that
    every build picks the same) with its datatype marker: the struct ``name`` (``o``, ``d``)."""
    return pick(name, f"k = '{key}'")


def _iris(values: Any) -> list[str]:
    return [v.value for v in (values if isinstance(values, list) else [values])]


def _page(column: str) -> str:
    """The narrowing of a twin to the rows of the papers in ``$page`` (NULL for all): those
    of one page (:attr:`Twin.keys`), or those a build makes again (:attr:`Twin.by_paper`)."""
    return f"(CAST($page AS VARCHAR[]) IS NULL OR {column} IN (SELECT unnest(CAST($page AS VARCHAR[]))))"


_PAGE = _page("paper")
_OWN = f"(SELECT id FROM staging.graphs WHERE graph = '{READING.value}')"


def own_first(key: str, where: str = "TRUE") -> str:
    """The facts of ``key`` (a reading-state key: the status, when it changed) that pass
    ``where``, as every view reads them: the reading graph's where it states any for the
    subject (the reader's own word), else every graph's, as the named queries read them.
    The reader's subjects are one uncorrelated set: at 700k papers 7 ms over a plain scan
    of the statuses, where ``NOT EXISTS`` for each fact cost 35–40 ms."""
    return f"""(SELECT * FROM staging.facts AS x WHERE x.k = '{key}' AND {where}
    AND (x.g = {_OWN} OR x.s NOT IN (SELECT s FROM staging.facts WHERE k = '{key}' AND g = {_OWN})))"""
#: The relations a paper is one of a technique's papers by (tkg:primaryPaper counts as introduces).
_PAPER_OF = (("tkg:introducesTechnique", "introduces"), ("tkg:extendsTechnique", "extends"),
             ("tkg:usesTechnique", "uses"), ("tkg:evaluatesTechnique", "evaluates"))


def paper_links(narrow: Callable[[str], str] = _page) -> str:
    """A WITH clause: ``links`` (technique, paper, role), each paper a technique introduces,
    extends, uses or evaluates, narrowed by ``narrow`` of the paper's column (by default to
    the papers in ``$page``, NULL for all)."""
    return f"""
  links AS (SELECT DISTINCT s AS technique, o AS paper, 'introduces' AS role FROM staging.facts
            WHERE k = 'tkg:primaryPaper' AND {narrow("o")}
            UNION
            SELECT DISTINCT o, s, CASE k {" ".join(f"WHEN '{k}' THEN '{r}'" for k, r in _PAPER_OF)} END
            FROM staging.facts WHERE k IN ({", ".join(f"'{k}'" for k, _r in _PAPER_OF)}) AND {narrow("s")})"""


PAPER_LINKS = paper_links()

TWINS: dict[str, Twin] = {
    "lineage-paper-links": Twin(
        f"""WITH {PAPER_LINKS},
  statuses AS (SELECT DISTINCT s AS paper, o AS status FROM {own_first('tkg:readingStatus', _page("s"))})
SELECT technique, paper, role, status FROM links LEFT JOIN statuses USING (paper)
WHERE CAST($technique AS VARCHAR[]) IS NULL OR technique IN (SELECT unnest(CAST($technique AS VARCHAR[])))""",
        {"technique": "iri", "paper": "iri", "role": "string", "status": "iri"},
        {"technique": _iris},
        by_paper="paper",
        linked_only=True,
    ),
    "lineage-papers": Twin(
        f"""WITH {PAPER_LINKS},
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
        status="status",
        linked_only=True,
        keys=f"""WITH {PAPER_LINKS}
SELECT technique, paper, role FROM links
WHERE (CAST($technique AS VARCHAR[]) IS NULL OR technique IN (SELECT unnest(CAST($technique AS VARCHAR[]))))
  AND (CAST($paper AS VARCHAR[]) IS NULL OR paper IN (SELECT unnest(CAST($paper AS VARCHAR[]))))""",
    ),
    "bibliography": Twin(
        f"""WITH papers AS (SELECT DISTINCT s AS paper FROM staging.facts
                  WHERE k IN ('tkg:readingCategory', 'tkg:readingStatus') AND {_page("s")}),
  facts AS (SELECT s, {_pick('dcterms:title', 't')}, {_pick('tkg:arxivId', 'a')}, {_pick('bibo:doi', 'doi')},
                   {_pick('foaf:page', 'u')}, {_pick('dcterms:issued', 'i')}, {_pick('tkg:venue', 'v')},
                   {_pick('tkg:arxivPrimaryCategory', 'pc')}, {_pick('tkg:citationKey', 'ck')},
                   {_pick('tkg:readingStatus', 'st')},
                   {joined("o", "' '", "k = 'types'")} AS types,
                   {joined("o", "chr(10)", "k = 'tkg:venue'")} AS venues,
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
                     {joined("CAST(m.n AS VARCHAR) || chr(9) || nm.o", "chr(10)")} AS authors
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
        status="status",
        keys=f"""WITH papers AS (SELECT DISTINCT s AS paper FROM staging.facts
                  WHERE k IN ('tkg:readingCategory', 'tkg:readingStatus')),
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
             JOIN {own_first('tkg:readingStatus', _page("s"))} AS st ON st.s = r.s
             WHERE r.k = 'tkg:readingCategory' AND {_page("r.s")} AND st.o NOT IN ({", ".join(_NOT_QUEUED)})),
  times AS (SELECT s, max(o) AS changed FROM {own_first('tkg:statusChangedAt', "s IN (SELECT paper FROM queued)")}
            GROUP BY s),
  facts AS (SELECT s, min(TRY_CAST(o AS BIGINT)) FILTER (WHERE k = 'tkg:position') AS position,
                   min(o) FILTER (WHERE k = 'dcterms:title') AS title,
                   min(o) FILTER (WHERE k = 'tkg:venue') AS venue
            FROM staging.facts WHERE s IN (SELECT paper FROM queued)
              AND k IN ('tkg:position', 'dcterms:title', 'tkg:venue') GROUP BY s)
SELECT CAST($section AS VARCHAR) AS section, TRY_CAST(categoryPosition AS BIGINT) AS categoryPosition,
       category, category__d,
       q.paper, any_value(f.position) AS position, any_value(f.title) AS title,
       min(regexp_replace(q.status, '^.*/status/', '')) AS status, any_value(f.venue) AS venue,
       any_value(tm.changed) AS changed
FROM queued AS q JOIN positioned USING (cat) LEFT JOIN facts AS f ON f.s = q.paper
LEFT JOIN times AS tm ON tm.s = q.paper
GROUP BY categoryPosition, category, category__d, q.paper""",
        {"section": "string", "categoryPosition": "integer", "category": "term", "paper": "iri",
         "position": "integer", "title": "string", "status": "string", "venue": "string", "changed": "dateTime"},
        {"section": lambda v: v.value},
        by_paper="paper",
    ),
    "read-without-note": Twin(
        f"""WITH done AS (SELECT DISTINCT s AS paper
                  FROM {own_first('tkg:readingStatus', f"o = '{STATUS_BASE}read' AND {_page('s')}")}
                  EXCEPT SELECT s FROM staging.facts WHERE k = 'tkg:hasNote' AND o = 'true'
                  EXCEPT SELECT o FROM staging.facts WHERE k = 'tkg:noteOf'),
  titles AS (SELECT DISTINCT s, o, d FROM staging.facts WHERE k = 'dcterms:title' AND {_page("s")}),
  times AS (SELECT DISTINCT s, o, d FROM {own_first('tkg:statusChangedAt', _page("s"))}),
  cats AS (SELECT r.s AS paper, {joined("l.o", "' | '")} AS categories,
                  {same_language("TRUE", "l.d")} AS categories__d
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


#: The reading list: each paper with a status (its rows in the list's order, kept as an
#: answer table, :attr:`Twin.in_order`); a note's text in the reading graph replaces its
#: other texts (kg.reading.prefer_reading).
_LISTED = f"""WITH chosen AS (SELECT DISTINCT s AS paper, o AS status
                 FROM {own_first('tkg:readingStatus', _page("s"))}),
  labels AS (SELECT r.s AS paper, l.o, l.d FROM staging.facts AS r
             JOIN staging.facts AS l ON l.s = r.o AND l.k IN ('skos:prefLabel', 'skos:prefLabel@zh')
             WHERE r.k = 'tkg:readingCategory' AND r.s IN (SELECT paper FROM chosen)),
  cats AS (SELECT paper, {joined("o", "' | '")} AS categories,
                  {same_language("TRUE")} AS categories__d
           FROM labels GROUP BY paper),
  facts AS (SELECT s, {_pick('dcterms:title', 't')}, {_pick('tkg:statusChangedAt', 'at')},
                   {pick('v', "k = 'tkg:venue'", (f"graph_name <> '{graph_name(READING_LIST)}'", "priority"))},
                   max(o) FILTER (WHERE k = 'tkg:hasNote') AS flag,
                   min(TRY_CAST(o AS BIGINT)) FILTER (WHERE k = 'tkg:position') AS position
            FROM staging.ranked WHERE s IN (SELECT paper FROM chosen)
              AND k IN ('dcterms:title', 'tkg:statusChangedAt', 'tkg:venue', 'tkg:hasNote', 'tkg:position')
            GROUP BY s),
  notes AS (SELECT DISTINCT s AS note, o AS paper FROM staging.facts
            WHERE k = 'tkg:noteOf' AND o IN (SELECT paper FROM chosen)
              AND s NOT IN (SELECT s FROM staging.facts WHERE k = 'tkg:deletedAt')),
  bodies AS (SELECT n.note, n.paper, v.o, v.d, v.graph_name = '{graph_name(READING)}' AS mine
             FROM notes AS n JOIN staging.ranked AS v ON v.s = n.note AND v.k = 'rdf:value'),
  texts AS (SELECT b.paper, {joined("b.o", "chr(31)")} AS notes FROM bodies AS b
            WHERE NOT EXISTS (SELECT 1 FROM bodies AS m WHERE m.note = b.note AND m.mine)
               OR EXISTS (SELECT 1 FROM bodies AS m WHERE m.note = b.note AND m.mine AND m.o = b.o
                          AND m.d IS NOT DISTINCT FROM b.d)
            GROUP BY b.paper)
SELECT c.paper, f.t.o AS title, f.t.d AS title__d, c.status, f.at.o AS changed, f.at.d AS changed__d,
       cats.categories, cats.categories__d, f.v.o AS venue, f.v.d AS venue__d, f.flag AS hasNote, f.position,
       texts.notes
FROM chosen AS c LEFT JOIN facts AS f ON f.s = c.paper LEFT JOIN cats ON cats.paper = c.paper
LEFT JOIN texts ON texts.paper = c.paper"""
#: ... narrowed to a status and to a category whose name (either language's) holds a text,
#: any case: one of the names the categories column joins with " | ".
TWINS["reading-list"] = Twin(
    f"""SELECT * FROM {STORED} AS listed
WHERE (CAST($status AS VARCHAR) IS NULL OR status = CAST($status AS VARCHAR))
  AND (CAST($category AS VARCHAR) IS NULL OR list_bool_or(list_transform(string_split(categories, ' | '),
         lambda c: contains(lower(c), lower(CAST($category AS VARCHAR))))))""",
    {"paper": "iri", "title": "term", "status": "iri", "changed": "term", "categories": "term", "venue": "term",
     "hasNote": "boolean", "position": "integer", "notes": "string"},
    {"status": lambda v: v.value, "category": lambda v: v.value},
    stored=_LISTED,
    by_paper="paper",
    kept=False,  # (the stored table is the answer without parameters)
    in_order=True,
)


#: reading-queue-lineage's rows for every technique at once: each queued paper with each
#: technique it uses or introduced, its title and that technique's English names; kept as
#: an answer table, narrowed at query time to the lineage of the technique given.
_QUEUED_LINKS = f"""WITH links AS (SELECT DISTINCT s AS paper, o AS lineage FROM staging.facts
                 WHERE k IN ({", ".join(f"'{k}'" for k, _r in _PAPER_OF)}) AND {_page("s")}
                 UNION SELECT DISTINCT o, s FROM staging.facts WHERE k = 'tkg:primaryPaper' AND {_page("o")}),
  queued AS (SELECT links.paper, links.lineage, st.o AS status FROM links
             JOIN {own_first('tkg:readingStatus', _page("s"))} AS st ON st.s = links.paper
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
FROM {STORED} AS q SEMI JOIN lineage AS l ON l.lineage = q.lineage
GROUP BY q.paper""",
    {"technique": "iri", "paper": "iri", "title": "term", "status": "string", "via": "iri", "viaName": "langEn"},
    {"technique": lambda v: v.value},
    stored=_QUEUED_LINKS,
    by_paper="paper",
    linked_only=True,
)


TWINS["lineage-nodes"] = Twin(
    f"""WITH techs AS (SELECT DISTINCT s FROM staging.facts WHERE k = 'a:tkg:Technique'),
  f AS (SELECT * FROM staging.ranked WHERE s IN (SELECT s FROM techs)),
  one AS (SELECT s, {_pick('skos:notation', 'i')}, {_pick('skos:prefLabel@zh', 'zh')},
                 {_pick('skos:definition', 'def')}, {_pick('dcterms:date', 'dt')},
                 {_pick('tkg:headlineResult', 'h')}, {_pick('tkg:headlineConditional', 'c')},
                 {_pick('tkg:primaryPaper', 'p')}, {_pick('tkg:repository', 'repo')},
                 {_pick('tkg:onComparisonPage', 'on')}, {_pick('tkg:addedBy', 'ab')},
                 {pick('n', "k = 'skos:prefLabel' AND d = '@en'")},
                 {joined("o", "', '", "k = 'skos:altLabel'")} AS aliases,
                 {same_language("k = 'skos:altLabel'")} AS aliases__d
          FROM f WHERE k IN ('skos:notation', 'skos:prefLabel@zh', 'skos:definition', 'dcterms:date',
                             'tkg:headlineResult', 'tkg:headlineConditional', 'tkg:primaryPaper', 'tkg:repository',
                             'tkg:onComparisonPage', 'skos:prefLabel', 'skos:altLabel', 'tkg:addedBy')
          GROUP BY s),
  broader AS (SELECT DISTINCT s, o AS category FROM f WHERE k = 'skos:broader'),
  cats AS (SELECT s, {_pick('skos:notation', 'cid')}, {_pick('tkg:position', 'cpos')},
                  {pick('clabel', "k = 'skos:prefLabel' AND d = '@en'")}
           FROM staging.ranked WHERE s IN (SELECT category FROM broader)
             AND k IN ('skos:notation', 'tkg:position', 'skos:prefLabel') GROUP BY s),
  names AS (SELECT s, o, d FROM staging.facts WHERE k = 'foaf:name'),
  people AS (SELECT a.s, min(nm.o) AS who FROM f AS a JOIN names AS nm ON nm.s = a.o
             WHERE a.k IN ('tkg:firstAuthor', 'tkg:responsibleTeam') GROUP BY a.s),
  orgs AS (SELECT a.s, {joined("nm.o", "', '")} AS organisations,
                  {same_language("TRUE", "nm.d")} AS organisations__d FROM f AS a
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
       one.c.o AS conditional, one.c.d AS conditional__d, one.p.o AS paper, one.repo.o AS repository, stars.stars,
       one.ab.o AS addedBy
FROM one JOIN broader AS b ON b.s = one.s JOIN cats ON cats.s = b.category
LEFT JOIN people ON people.s = one.s LEFT JOIN orgs ON orgs.s = one.s LEFT JOIN stars ON stars.s = one.s
WHERE one.i IS NOT NULL AND one.n IS NOT NULL AND one.on IS NOT NULL
  AND cats.cid IS NOT NULL AND cats.clabel IS NOT NULL AND cats.cpos IS NOT NULL""",
    {"technique": "iri", "id": "term", "name": "term", "nameZh": "term", "aliases": "term", "category": "iri",
     "categoryId": "term", "categoryLabel": "term", "categoryPosition": "term", "onPage": "term",
     "summary": "term", "date": "term", "people": "string", "organisations": "term", "headline": "term",
     "conditional": "term", "paper": "iri", "repository": "iri", "stars": "integer", "addedBy": "iri"},
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
      AND NOT EXISTS (SELECT 1 FROM staging.ranked AS m WHERE m.s = d.s AND m.k = 'dcterms:date'
                      AND m.graph_name = '{graph_name(MY_TECHNIQUES)}' AND m.o <> d.o)  -- the reader's date wins
    UNION ALL SELECT DISTINCT s, o, o, 'repository pushed' FROM staging.facts
    WHERE k = 'tkg:pushedAt' AND {_page("s")}),
  items AS (SELECT DISTINCT item FROM dated),
  titles AS (SELECT DISTINCT s, o, d FROM staging.facts WHERE k = 'dcterms:title' AND s IN (SELECT item FROM items)),
  names AS (SELECT DISTINCT s, o, d FROM staging.facts
            WHERE k = 'skos:prefLabel' AND d = '@en' AND s IN (SELECT item FROM items)),
  repos AS (SELECT DISTINCT s, o, d FROM staging.facts WHERE k = 'schema:name' AND s IN (SELECT item FROM items)),
  statuses AS (SELECT DISTINCT s, o FROM {own_first('tkg:readingStatus', "s IN (SELECT item FROM items)")}),
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
    SELECT "when", kind, item, label, label__d, detail, detail__d FROM {STORED} AS stored
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
  techniques AS (SELECT repository, {joined("name", "', '")} AS techniques,
                        {same_language("TRUE")} AS techniques__d FROM names GROUP BY repository)
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


#: Papers by author: the people whose name contains the text, their papers through an ordered
#: author list (or, for a paper without one, its creators) and the others on that list.
TWINS["papers-by-author"] = Twin(
    f"""WITH people AS (
    SELECT DISTINCT s AS person, o AS name, d AS name__d FROM staging.facts
    WHERE k = 'foaf:name' AND contains(lower(o), lower(CAST($author AS VARCHAR)))
      AND s IN (SELECT s FROM staging.facts WHERE k = 'a:foaf:Person')),
  listed AS (SELECT DISTINCT a.s AS paper, a.o AS list, m.o AS person FROM staging.facts AS m
             JOIN staging.facts AS a ON a.k = 'bibo:authorList' AND a.o = m.s
             WHERE m.k = 'rdf:_n' AND m.o IN (SELECT person FROM people)),
  created AS (SELECT DISTINCT s AS paper, o AS person FROM staging.facts
              WHERE k = 'dcterms:creator' AND o IN (SELECT person FROM people)
                AND s NOT IN (SELECT s FROM staging.facts WHERE k = 'bibo:authorList')),
  papers AS (SELECT paper, person FROM listed UNION SELECT paper, person FROM created),
  facts AS (SELECT s, {pick('t', "k = 'dcterms:title'", ())},
                   min(left(o, 4)) FILTER (WHERE k = 'dcterms:issued') AS year
            FROM staging.facts WHERE k IN ('dcterms:title', 'dcterms:issued') AND s IN (SELECT paper FROM papers)
            GROUP BY s),
  others AS (SELECT l.paper, l.person, c.o AS co FROM listed AS l
             JOIN staging.facts AS c ON c.k = 'rdf:_n' AND c.s = l.list
             UNION SELECT p.paper, p.person, c.o FROM created AS p
             JOIN staging.facts AS c ON c.k = 'dcterms:creator' AND c.s = p.paper),
  coauthors AS (SELECT x.paper, x.person, {joined("n.o", "', '")} AS coauthors,
                       {same_language("TRUE", "n.d")} AS coauthors__d
                FROM others AS x JOIN staging.facts AS n ON n.k = 'foaf:name' AND n.s = x.co
                WHERE x.co <> x.person GROUP BY x.paper, x.person)
SELECT CAST($author AS VARCHAR) AS author, p.person, pe.name, pe.name__d, p.paper, f.t.o AS title, f.t.d AS title__d,
       f.year, c.coauthors, c.coauthors__d
FROM papers AS p JOIN people AS pe USING (person) LEFT JOIN facts AS f ON f.s = p.paper
LEFT JOIN coauthors AS c USING (paper, person)""",
    {"author": "string", "person": "iri", "name": "term", "paper": "iri", "title": "term", "year": "string",
     "coauthors": "term"},
    {"author": lambda v: v.value},
    kept=False,  # (no answer without the name to look for)
)
