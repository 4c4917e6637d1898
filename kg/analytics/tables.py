"""The analytics tables: what each holds, and the SQL that makes it from the staged facts.

Each :class:`Table` is one ``CREATE TABLE ... AS SELECT`` over ``staging.ranked`` (the
facts with their graph's name, priority and modification time). Every table carries
``source_graph`` and ``source_modified``: the named graph its row comes from (for an
entity, the graph that types it; where several do, the first in
:data:`kg.graphs.SOURCES` order) and when that graph last changed. All times are UTC.

The keys a table reads are found in its SQL, so the incremental build knows which
tables a changed graph touches. *Shared* keys (names, labels, positions, star counts:
properties several kinds of node carry) count only for the subjects of the table's own
classes; a table that needs another kind's values reads them from that kind's table and
names it in ``after``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from kg.analytics.aggregates import best, sorted_set
from kg.analytics.staging import KEYS, REPOSITORY_COUNTS
from kg.graphs import CITATIONS, READING, graph_name

__all__ = ["SHARED_KEYS", "TABLES", "Table", "ordered", "table"]

#: Properties carried by several kinds of node.
SHARED_KEYS: frozenset[str] = frozenset({
    "skos:notation", "skos:prefLabel", "skos:prefLabel@zh", "skos:definition", "tkg:position", "rdfs:label",
    "rdfs:comment", "foaf:name", "tkg:firstAuthor", *REPOSITORY_COUNTS, "tkg:passed", "prov:startedAtTime",
    "prov:endedAtTime", "prov:generatedAtTime"})

#: The name of the citations graph in the staged facts.
_CITATIONS = graph_name(CITATIONS)
_READ = "https://w3id.org/techkg/id/status/read"
#: The dated status changes of a paper (the reading graph's are its own: kg.graphs.own_first).
_CHANGED = "k = 'tkg:statusChangedAt' AND d IS NOT NULL AND d <> '_'"

_KEY_LITERAL = re.compile(r"'([^']+)'")


@dataclass(frozen=True)
class Table:
    """One analytics table."""

    name: str
    description: str
    sql: str
    #: Tables this one reads (built first, and rebuilding them rebuilds this one).
    after: tuple[str, ...] = ()
    #: The column of the paper each row is about, where a paper's rows read only that paper's
    #: reading state: after status changes, only their rows are made again (kg.analytics.patch).
    by_paper: str | None = None
    keys: frozenset[str] = field(init=False)
    classes: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        found = {k for k in _KEY_LITERAL.findall(self.sql) if k in KEYS}
        object.__setattr__(self, "keys", frozenset(found))
        object.__setattr__(self, "classes", frozenset(k for k in found if k.startswith("a:")))


def _pivot(cls: Sequence[str], subject: str, columns: Sequence[tuple[str, str]]) -> str:
    """Entities typed with any of ``cls`` and one value per column (name, key); where
    graphs disagree, the value from the graph with the best priority wins, and among that
    graph's values the least (every pick below breaks ties so: the same row every build)."""
    types = ", ".join(f"'a:{c}'" for c in cls)
    keys = ", ".join(sorted({f"'{key}'" for _name, key in columns}))
    picks = ",\n        ".join(
        f"{best('o', 'priority', where=f'k = {key!r}')} AS {name}" for name, key in columns
    )
    return f"""
  {subject}_e AS (SELECT s, arg_min(g, priority) AS g FROM staging.ranked
                  WHERE k IN ({types}) GROUP BY s),
  {subject}_p AS (SELECT s,
        {picks}
      FROM staging.ranked WHERE k IN ({keys}) AND s IN (SELECT s FROM {subject}_e) GROUP BY s),
  {subject} AS (SELECT e.s AS {subject}, p.* EXCLUDE (s), gr.name AS source_graph,
                       gr.modified AS source_modified
                FROM {subject}_e AS e LEFT JOIN {subject}_p AS p USING (s)
                JOIN staging.graphs AS gr ON gr.id = e.g)"""


def _owned(cls: Sequence[str], subject: str, columns: Sequence[tuple[str, str]], key: str, owned: str,
           owner: str) -> str:
    """:func:`_pivot` of entities that belong to another (a snapshot to its repository, a
    kernel to its technique), with ``owner``: each ``owned`` entity's ``owner``, the subject of
    its ``key`` fact (the best graph's; of its values, the least)."""
    return f"""{_pivot(cls, subject, columns)},
  owner AS (SELECT o AS {owned}, arg_min(s, (priority, s)) AS {owner} FROM staging.ranked
            WHERE k = '{key}' GROUP BY o)"""


def _link(key: str, left: str, right: str) -> str:
    """A link table from the facts of one key, one row per link however many graphs hold it."""
    return f"""
WITH links AS (SELECT s, o, arg_min(g, priority) AS g FROM staging.ranked WHERE k = '{key}'
               GROUP BY s, o)
SELECT s AS {left}, o AS {right}, gr.name AS source_graph, gr.modified AS source_modified
FROM links JOIN staging.graphs AS gr ON gr.id = links.g"""


#: Columns of the entity tables: (column, key) pairs, read by :func:`_pivot`.
_CATEGORY = (
    ("category_id", "skos:notation"),
    ("label", "skos:prefLabel"),
    ("label_zh", "skos:prefLabel@zh"),
    ("definition", "skos:definition"),
    ("position", "tkg:position"),
)
_TECHNIQUE = (
    ("technique_id", "skos:notation"),
    ("name", "skos:prefLabel"),
    ("name_zh", "skos:prefLabel@zh"),
    ("broader", "skos:broader"),
    ("on_page", "tkg:onComparisonPage"),
    ("date", "dcterms:date"),
    ("date_note", "tkg:dateNote"),
    ("summary", "skos:definition"),
    ("first_author_iri", "tkg:firstAuthor"),
    ("team_iri", "tkg:responsibleTeam"),
    ("primary_paper", "tkg:primaryPaper"),
    ("headline", "tkg:headlineResult"),
    ("conditional", "tkg:headlineConditional"),
    ("added_by", "tkg:addedBy"),
)
_DERIVATION = (
    ("entity", "prov:entity"),
    ("relation_iri", "tkg:relation"),
    ("basis", "tkg:basis"),
    ("note", "rdfs:comment"),
)
_PAPER = (
    ("title", "dcterms:title"),
    ("issued", "dcterms:issued"),
    ("venue", "tkg:venue"),
    ("arxiv_id", "tkg:arxivId"),
    ("doi", "bibo:doi"),
)
_COUNTS = (
    ("stars", "tkg:stars"),
    ("forks", "tkg:forks"),
    ("open_issues", "tkg:openIssues"),
    ("watchers", "tkg:watchers"),
    ("contributors", "tkg:contributors"),
    ("pushed_at", "tkg:pushedAt"),
)
_REPOSITORY = (
    ("name", "schema:name"),
    *_COUNTS,
    ("archived", "tkg:archived"),
    ("latest_release", "tkg:latestRelease"),
    ("latest_release_date", "tkg:latestReleaseDate"),
)
_SNAPSHOT = (("taken_at", "prov:generatedAtTime"), *_COUNTS)
_SECTION = (("label", "skos:prefLabel"), ("position", "tkg:position"))
_EVENT = (  # the papers: one row each (a removal can name many)
    ("status_iri", "tkg:status"),
    ("previous_iri", "tkg:previousStatus"),
    ("at_time", "prov:atTime"),
    ("via", "tkg:via"),
)
_KERNEL = (
    ("form", "tkg:kernelForm"),
    ("module_path", "tkg:modulePath"),
    ("rationale", "tkg:rationale"),
)
_RUN = (
    ("technique", "tkg:verifies"),
    ("passed", "tkg:passed"),
    ("started_at", "prov:startedAtTime"),
    ("ended_at", "prov:endedAtTime"),
    ("torch_version", "tkg:torchVersion"),
    ("device", "tkg:device"),
    ("dtype", "tkg:dtype"),
)
_CHECK = (
    ("name", "rdfs:label"),
    ("claim", "tkg:claim"),
    ("passed", "tkg:passed"),
    ("max_abs_error", "tkg:maxAbsError"),
    ("max_rel_error", "tkg:maxRelError"),
    ("tolerance", "tkg:tolerance"),
    ("duration_seconds", "tkg:durationSeconds"),
)

# The SQL below uses the build's macros: kg_int, kg_double, kg_bool and kg_time turn a
# literal's text into a typed value (NULL when it does not parse); kg_local(iri) is the
# last segment of an IRI (a status, relation or category slug).

TABLES: tuple[Table, ...] = (
    Table(
        "categories",
        "The technique categories (a SKOS scheme), in page order.",
        f"""
WITH {_pivot(["tkg:TechniqueCategory"], "c", _CATEGORY)}
SELECT c AS category, coalesce(category_id, kg_local(c)) AS category_id, label, label_zh,
       definition, kg_int(position) AS position, source_graph, source_modified
FROM c ORDER BY position NULLS LAST, category_id""",
    ),
    Table(
        "authors",
        "People: authors of papers and of techniques.",
        f"""
WITH {_pivot(["foaf:Person"], "a", [("name", "foaf:name")])}
SELECT a AS person, name, source_graph, source_modified FROM a""",
    ),
    Table(
        "organisations",
        "Organisations and teams (kind: organisation or team), each with the organisation it is "
        "part of (parent) and the one the analyses count it under (canonical: the top of that chain).",
        f"""
WITH RECURSIVE {_pivot(["foaf:Organization", "foaf:Group"], "o",
                       [("name", "foaf:name"), ("parent", "schema:parentOrganization")])},
  kinds AS (SELECT s, bool_or(k = 'a:foaf:Organization') AS is_org FROM staging.ranked
            WHERE k IN ('a:foaf:Organization', 'a:foaf:Group') GROUP BY s),
  up(organisation, top, depth) AS (
    SELECT o, o, 0 FROM o
    UNION ALL
    SELECT up.organisation, p.parent, up.depth + 1 FROM up JOIN o AS p ON p.o = up.top
    WHERE p.parent IS NOT NULL AND up.depth < 16),
  canonical AS (SELECT organisation, arg_max(top, depth) AS canonical FROM up GROUP BY organisation)
SELECT o.o AS organisation, name, CASE WHEN kinds.is_org THEN 'organisation' ELSE 'team' END AS kind,
       o.parent, canonical.canonical, source_graph, source_modified
FROM o JOIN kinds ON kinds.s = o.o JOIN canonical ON canonical.organisation = o.o
ORDER BY name, organisation""",
    ),
    Table(
        "techniques",
        "Techniques with their category, date, people, paper and headline; mine: one you added "
        "(kg technique add). Where you gave your own value of a catalog technique's fact, it is yours.",
        f"""
WITH {_pivot(["tkg:Technique"], "t", _TECHNIQUE)}
SELECT t.t AS technique, coalesce(t.technique_id, kg_local(t.t)) AS technique_id, t.name,
       t.name_zh, coalesce(c.category_id, kg_local(t.broader)) AS category_id,
       coalesce(kg_bool(t.on_page), false) AS on_page, t.date,
       TRY_CAST(left(t.date, 4) AS INTEGER) AS year, t.date_note, t.summary,
       a.name AS first_author, o.name AS team, t.primary_paper, t.headline,
       kg_bool(t.conditional) AS headline_conditional, t.added_by IS NOT NULL AS mine, t.source_graph,
       t.source_modified
FROM t
LEFT JOIN categories AS c ON c.category = t.broader
LEFT JOIN authors AS a ON a.person = t.first_author_iri
LEFT JOIN organisations AS o ON o.organisation = t.team_iri
ORDER BY category_id, technique_id""",
        after=("categories", "authors", "organisations"),
    ),
    Table(
        "technique_dimensions",
        "The comparison page's dimensions, one row per technique and dimension.",
        "",  # filled in below from kg.catalog.DIMENSIONS
        after=("techniques",),
    ),
    Table(
        "technique_organisations",
        "Which organisations a technique comes from.",
        _link("tkg:organization", "technique", "organisation"),
    ),
    Table(
        "lineage_edges",
        "Typed lineage edges from a derived technique (child) to its parent.",
        f"""
WITH edges AS (
  SELECT s AS child, o AS parent, regexp_extract(k, '[^:]+$') AS relation,
         arg_min(graph_name, priority) AS source_graph,
         arg_min(graph_modified, priority) AS source_modified
  FROM staging.ranked
  WHERE k IN ('tkg:refines', 'tkg:generalizes', 'tkg:specializes', 'tkg:replaces', 'tkg:combines',
              'tkg:extends', 'tkg:inverts', 'tkg:reimplements', 'tkg:portsTo', 'tkg:buildsOn',
              'tkg:implements', 'tkg:derivesFrom')
  GROUP BY s, o, k),
{_pivot(["prov:Derivation"], "d", _DERIVATION)},
  qualified AS (SELECT q.s AS child, d.entity AS parent, kg_local(d.relation_iri) AS relation,
                       min(d.basis) AS basis, min(d.note) AS note
                FROM staging.ranked AS q JOIN d ON d.d = q.o
                WHERE q.k = 'prov:qualifiedDerivation' GROUP BY ALL)
SELECT e.child, ct.technique_id AS child_id, e.parent, pt.technique_id AS parent_id, e.relation,
       coalesce(q.basis, 'stated') AS basis, q.note, e.source_graph, e.source_modified
FROM edges AS e
LEFT JOIN qualified AS q USING (child, parent, relation)
LEFT JOIN techniques AS ct ON ct.technique = e.child
LEFT JOIN techniques AS pt ON pt.technique = e.parent
ORDER BY parent_id, child_id, relation""",
        after=("techniques",),
    ),
    Table(
        "lineage_closure",
        "Every (technique, ancestor) pair with the shortest and longest path between them; "
        "source_graph lists the graphs of the edges on the paths between them.",
        """
WITH RECURSIVE edges AS (
  SELECT child, parent, min(source_graph) AS source_graph, max(source_modified) AS source_modified
  FROM lineage_edges GROUP BY child, parent),
reach(technique, ancestor, distance) AS (
  SELECT child, parent, 1 FROM edges
  UNION
  SELECT r.technique, e.parent, r.distance + 1 FROM reach AS r JOIN edges AS e ON e.child = r.ancestor
  WHERE e.parent <> r.technique AND r.distance < 256),
pairs AS (SELECT technique, ancestor, min(distance) AS min_distance, max(distance) AS max_distance
          FROM reach GROUP BY technique, ancestor),
-- each (graph, time) of the edges, and each walk's start, end and the kinds of edge on it: an
-- edge x -> y is on a walk from t to a where t reaches x (or is x) and y reaches a (or is a)
kinds AS (SELECT row_number() OVER (ORDER BY source_graph, source_modified) AS kind, *
          FROM (SELECT DISTINCT source_graph, source_modified FROM edges)),
marked AS (SELECT e.child, e.parent, k.kind FROM edges AS e JOIN kinds AS k
           ON k.source_graph IS NOT DISTINCT FROM e.source_graph
          AND k.source_modified IS NOT DISTINCT FROM e.source_modified),
walks(technique, ancestor, kind) AS (
  SELECT child, parent, kind FROM marked
  UNION
  SELECT w.technique, e.parent, unnest(CASE WHEN w.kind = e.kind THEN [w.kind] ELSE [w.kind, e.kind] END)
  FROM walks AS w JOIN marked AS e ON e.child = w.ancestor)
SELECT p.technique, p.ancestor, p.min_distance, p.max_distance,
       array_to_string(list_sort(list_distinct(list(k.source_graph))), ', ') AS source_graph,
       max(k.source_modified) AS source_modified
FROM pairs AS p JOIN walks AS w USING (technique, ancestor) JOIN kinds AS k USING (kind)
GROUP BY p.technique, p.ancestor, p.min_distance, p.max_distance ORDER BY technique, ancestor""",
        after=("lineage_edges",),
    ),
    Table(
        "papers",
        "Papers, reports and pages: title, year, venue, identifiers and kind.",
        f"""
WITH {_pivot(["bibo:Document"], "p", _PAPER)},
  kinds AS (SELECT s, list(DISTINCT k) AS types FROM staging.ranked
            WHERE k IN ('a:fabio:Preprint', 'a:bibo:AcademicArticle', 'a:bibo:Report',
                        'a:fabio:BlogPost', 'a:bibo:Webpage') GROUP BY s)
SELECT p AS paper, title, TRY_CAST(left(issued, 4) AS INTEGER) AS year, issued, venue, arxiv_id,
       doi,
       CASE WHEN list_contains(types, 'a:fabio:Preprint') THEN 'preprint'
            WHEN list_contains(types, 'a:bibo:AcademicArticle') THEN 'article'
            WHEN list_contains(types, 'a:bibo:Report') THEN 'report'
            WHEN list_contains(types, 'a:fabio:BlogPost') THEN 'blog'
            WHEN list_contains(types, 'a:bibo:Webpage') THEN 'web page' END AS kind,
       source_graph, source_modified
FROM p LEFT JOIN kinds ON kinds.s = p.p""",
    ),
    Table(
        "paper_techniques",
        "Which techniques a paper introduces (role: primary, the technique's catalog paper; introduces, read by "
        "kg link or decided by you), extends, uses, evaluates or only mentions (kg links).",
        """
SELECT paper, technique, role, arg_min(graph_name, priority) AS source_graph,
       arg_min(graph_modified, priority) AS source_modified
FROM (SELECT o AS paper, s AS technique, 'primary' AS role, graph_name, graph_modified, priority
      FROM staging.ranked WHERE k = 'tkg:primaryPaper'
      UNION ALL
      SELECT s, o, CASE k WHEN 'tkg:introducesTechnique' THEN 'introduces' WHEN 'tkg:extendsTechnique' THEN 'extends'
                          WHEN 'tkg:usesTechnique' THEN 'uses' WHEN 'tkg:evaluatesTechnique' THEN 'evaluates'
                          ELSE 'mentions' END,
             graph_name, graph_modified, priority
      FROM staging.ranked WHERE k IN ('tkg:introducesTechnique', 'tkg:extendsTechnique', 'tkg:usesTechnique',
                                      'tkg:evaluatesTechnique', 'tkg:mentionsTechnique'))
GROUP BY paper, technique, role""",
    ),
    Table(
        "citations",
        "Which paper cites which, with Semantic Scholar's intents (methodology, background, result), the "
        "influential flag and the number of context sentences.",
        """
WITH links AS (SELECT s, o, arg_min(g, priority) AS g FROM staging.ranked WHERE k = 'cito:cites'
               GROUP BY s, o),
  flags AS (SELECT s, o, bool_or(k = 'cito:usesMethodIn') AS methodology,
                   bool_or(k = 'cito:obtainsBackgroundFrom') AS background,
                   bool_or(k = 'cito:usesConclusionsFrom') AS result,
                   bool_or(k = 'tkg:citesInfluentially') AS influential
            FROM staging.ranked
            WHERE k IN ('cito:usesMethodIn', 'cito:obtainsBackgroundFrom', 'cito:usesConclusionsFrom',
                        'tkg:citesInfluentially')
            GROUP BY s, o),
  nodes AS (SELECT a.s AS c, a.o AS citing, b.o AS cited FROM staging.ranked AS a
            JOIN staging.ranked AS b ON b.s = a.s AND b.k = 'cito:hasCitedEntity'
            WHERE a.k = 'cito:hasCitingEntity'),
  contexts AS (SELECT n.citing, n.cited, count(DISTINCT x.o) AS contexts FROM nodes AS n
               JOIN staging.ranked AS x ON x.s = n.c AND x.k = 'tkg:citationContext' GROUP BY ALL)
SELECT l.s AS citing, l.o AS cited, coalesce(f.methodology, false) AS methodology,
       coalesce(f.background, false) AS background, coalesce(f.result, false) AS result,
       coalesce(f.influential, false) AS influential, CAST(coalesce(c.contexts, 0) AS INTEGER) AS contexts,
       gr.name AS source_graph, gr.modified AS source_modified
FROM links AS l LEFT JOIN flags AS f ON f.s = l.s AND f.o = l.o
LEFT JOIN contexts AS c ON c.citing = l.s AND c.cited = l.o
JOIN staging.graphs AS gr ON gr.id = l.g""",
    ),
    Table(
        "citation_counts",
        "Semantic Scholar's counts for the papers kg ingest citations looked up: citing papers, references and "
        "influential citations (all of Semantic Scholar, not only those in the graph).",
        f"""
SELECT s AS paper, kg_int({best('o', 'priority', where="k = 'tkg:citationCount'")}) AS citation_count,
       kg_int({best('o', 'priority', where="k = 'tkg:referenceCount'")}) AS reference_count,
       kg_int({best('o', 'priority', where="k = 'tkg:influentialCitationCount'")})
         AS influential_citation_count,
       arg_min(graph_name, priority) AS source_graph, arg_min(graph_modified, priority) AS source_modified
FROM staging.ranked WHERE k IN ('tkg:citationCount', 'tkg:referenceCount', 'tkg:influentialCitationCount')
GROUP BY s""",
    ),
    # What kg suggest reads (kg.analytics.suggest): the citations graph alone, as kg ingest citations wrote it.
    Table(
        "citation_evidence",
        "The citations kg ingest citations wrote (the citations graph alone), one row per citing and cited paper: "
        "the plain cito:cites link, Semantic Scholar's intents and the influential flag.",
        f"""
SELECT s AS citing, o AS cited, bool_or(k = 'cito:cites') AS cites, bool_or(k = 'cito:usesMethodIn') AS methodology,
       bool_or(k = 'cito:obtainsBackgroundFrom') AS background, bool_or(k = 'cito:usesConclusionsFrom') AS result,
       bool_or(k = 'tkg:citesInfluentially') AS influential, any_value(graph_name) AS source_graph,
       any_value(graph_modified) AS source_modified
FROM staging.ranked
WHERE graph_name = '{_CITATIONS}' AND k IN ('cito:cites', 'cito:usesMethodIn', 'cito:obtainsBackgroundFrom',
                                           'cito:usesConclusionsFrom', 'tkg:citesInfluentially')
GROUP BY s, o""",
    ),
    Table(
        "citation_contexts",
        "The sentences in which a paper cites another (Semantic Scholar's contexts, the citations graph alone), "
        "one row per citation and position, with the sentence's intents.",
        f"""
WITH g AS (SELECT s, k, o, graph_name, graph_modified FROM staging.ranked
           WHERE graph_name = '{_CITATIONS}' AND k IN ('cito:hasCitingEntity', 'cito:hasCitedEntity',
                                                       'tkg:citationContext', 'rdf:value', 'tkg:position',
                                                       'tkg:intent')),
  contexts AS (SELECT a.o AS citing, b.o AS cited, x.o AS context
               FROM g AS a JOIN g AS b ON b.s = a.s AND b.k = 'cito:hasCitedEntity'
               JOIN g AS x ON x.s = a.s AND x.k = 'tkg:citationContext'
               WHERE a.k = 'cito:hasCitingEntity'),
  sentences AS (SELECT c.citing, c.cited, c.context, kg_int(p.o) AS position, t.o AS text,
                       t.graph_name AS source_graph, t.graph_modified AS source_modified
                FROM contexts AS c JOIN g AS t ON t.s = c.context AND t.k = 'rdf:value'
                JOIN g AS p ON p.s = c.context AND p.k = 'tkg:position'),
  intents AS (SELECT s AS context, {sorted_set('o')} AS intents FROM g WHERE k = 'tkg:intent' GROUP BY s)
SELECT s.citing, s.cited, s.position, min(s.text) AS text,
       list_sort(list_distinct(flatten(list(coalesce(i.intents, []))))) AS intents,
       any_value(s.source_graph) AS source_graph, any_value(s.source_modified) AS source_modified
FROM sentences AS s LEFT JOIN intents AS i USING (context)
GROUP BY s.citing, s.cited, s.position""",
    ),
    Table(
        "paper_recommendations",
        "Semantic Scholar's recommendations (kg ingest citations --recommendations): a paper recommended to the "
        "readers of another.",
        f"""
SELECT s AS paper, o AS recommended_for, any_value(graph_name) AS source_graph,
       any_value(graph_modified) AS source_modified
FROM staging.ranked WHERE graph_name = '{_CITATIONS}' AND k = 'tkg:recommendedFor' GROUP BY s, o""",
    ),
    Table(
        "suggest_techniques",
        "What kg suggest lineage matches sentences against: every value of each technique (and of anything else "
        "with a primary paper) from every graph: ids, English names, aliases, dates, primary papers.",
        f"""
SELECT s AS technique, bool_or(k = 'a:tkg:Technique') AS is_technique,
       {sorted_set('o', "k = 'skos:notation'")} AS ids,
       {sorted_set('o', "k = 'skos:prefLabel' AND d = '@en'")} AS names,
       {sorted_set('o', "k = 'skos:altLabel'")} AS aliases,
       {sorted_set('o', "k = 'dcterms:date'")} AS dates,
       {sorted_set('o', "k = 'tkg:primaryPaper'")} AS papers,
       arg_min(graph_name, priority) AS source_graph, max(graph_modified) AS source_modified
FROM staging.ranked
WHERE k IN ('a:tkg:Technique', 'skos:notation', 'skos:prefLabel', 'skos:altLabel', 'dcterms:date', 'tkg:primaryPaper')
  AND s IN (SELECT s FROM staging.facts WHERE k IN ('a:tkg:Technique', 'tkg:primaryPaper'))
  AND NOT starts_with(s, '_:')
GROUP BY s""",
    ),
    Table(
        "suggest_citations",
        "What kg suggest lineage weighs: the citations the primary papers make (citation_evidence), each with its "
        "sentences in order (citation_contexts).",
        """
WITH papers AS (SELECT DISTINCT unnest(papers) AS paper FROM suggest_techniques),
  links AS (SELECT * FROM citation_evidence WHERE citing IN (SELECT paper FROM papers)),
  sentences AS (SELECT c.citing, c.cited, list({'text': c.text, 'intents': c.intents} ORDER BY c.position) AS contexts
                FROM citation_contexts AS c SEMI JOIN links AS l ON l.citing = c.citing AND l.cited = c.cited
                WHERE c.position IS NOT NULL GROUP BY c.citing, c.cited)
SELECT l.citing, l.cited, l.methodology, l.background, l.result, l.influential, s.contexts, l.source_graph,
       l.source_modified
FROM links AS l LEFT JOIN sentences AS s USING (citing, cited)""",
        after=("suggest_techniques", "citation_evidence", "citation_contexts"),
    ),
    Table(
        "suggest_edges",
        "The lineage edges kg suggest lineage checks: the qualified derivations between techniques with English "
        "names (the lineage-edges named query), with the relation's name and how the edge is known (basis).",
        """
WITH named AS (SELECT DISTINCT s FROM staging.facts WHERE k = 'skos:prefLabel' AND d = '@en'),
  d AS (SELECT s, k, o FROM staging.facts WHERE k IN ('prov:entity', 'tkg:relation', 'tkg:basis'))
SELECT q.s AS child, e.o AS parent,
       CASE WHEN contains(r.o, '#') THEN substr(r.o, strpos(r.o, '#') + 1) ELSE '' END AS relation,
       coalesce(nullif(b.o, ''), 'stated') AS basis, arg_min(q.graph_name, q.priority) AS source_graph,
       max(q.graph_modified) AS source_modified
FROM staging.ranked AS q JOIN d AS e ON e.s = q.o AND e.k = 'prov:entity'
JOIN d AS r ON r.s = q.o AND r.k = 'tkg:relation' LEFT JOIN d AS b ON b.s = q.o AND b.k = 'tkg:basis'
WHERE q.k = 'prov:qualifiedDerivation' AND q.s IN (SELECT s FROM named) AND e.o IN (SELECT s FROM named)
GROUP BY ALL""",
    ),
    Table(
        "suggest_paper_ids",
        "Every paper of the citations graph, numbered, for kg suggest reading's joins (suggest_links).",
        """
SELECT CAST(row_number() OVER (ORDER BY paper) AS INTEGER) AS id, paper, source_graph, source_modified FROM (
  SELECT paper, any_value(source_graph) AS source_graph, max(source_modified) AS source_modified FROM (
    SELECT citing AS paper, source_graph, source_modified FROM citation_evidence
    UNION ALL SELECT cited, source_graph, source_modified FROM citation_evidence
    UNION ALL SELECT paper, source_graph, source_modified FROM paper_recommendations
    UNION ALL SELECT recommended_for, source_graph, source_modified FROM paper_recommendations)
  GROUP BY paper)""",
        after=("citation_evidence", "paper_recommendations"),
    ),
    Table(
        "suggest_links",
        "The citations graph by paper number (suggest_paper_ids), for kg suggest reading's joins: the plain link, "
        "the methodology intent and the influential flag.",
        """
SELECT a.id AS citing, b.id AS cited, e.cites, e.methodology, e.influential, e.source_graph, e.source_modified
FROM citation_evidence AS e JOIN suggest_paper_ids AS a ON a.paper = e.citing
JOIN suggest_paper_ids AS b ON b.paper = e.cited""",
        after=("citation_evidence", "suggest_paper_ids"),
    ),
    Table(
        "suggest_papers",
        "What kg suggest reading shows of a paper: the least of its titles, dates, venues, arXiv ids and DOIs.",
        """
SELECT s AS paper, min(o) FILTER (WHERE k = 'dcterms:title') AS title,
       min(o) FILTER (WHERE k = 'dcterms:issued') AS issued, min(o) FILTER (WHERE k = 'tkg:venue') AS venue,
       min(o) FILTER (WHERE k = 'tkg:arxivId') AS arxiv_id, min(o) FILTER (WHERE k = 'bibo:doi') AS doi,
       arg_min(graph_name, priority) AS source_graph, max(graph_modified) AS source_modified
FROM staging.ranked
WHERE k IN ('dcterms:title', 'dcterms:issued', 'tkg:venue', 'tkg:arxivId', 'bibo:doi') AND NOT starts_with(s, '_:')
GROUP BY s""",
    ),
    Table(
        "suggest_reading",
        "What kg suggest reading knows of the reading list: the papers on it, whether each is marked read, and "
        "the times its status changed (as written).",
        f"""
SELECT s AS paper, coalesce({best('o', 'priority', where="k = 'tkg:readingStatus'")} = '{_READ}', false) AS read,
       coalesce({sorted_set('o', f"{_CHANGED} AND graph_name = '{graph_name(READING)}'")},
                {sorted_set('o', _CHANGED)}, []) AS changed_at,
       arg_min(graph_name, priority) AS source_graph, arg_min(graph_modified, priority) AS source_modified
FROM staging.ranked
WHERE k IN ('tkg:readingStatus', 'tkg:statusChangedAt') AND NOT starts_with(s, '_:')
  AND s IN (SELECT s FROM staging.facts WHERE k = 'tkg:readingStatus')
GROUP BY s""",
        by_paper="paper",
    ),
    Table(
        "authorship",
        "Who wrote which paper, with the author's position (1 = first) where the graph records it.",
        """
WITH docs AS (SELECT DISTINCT s FROM staging.ranked WHERE k = 'a:bibo:Document'),
  listed AS (SELECT l.s AS paper, m.o AS person, min(m.n) AS position,
                    arg_min(l.graph_name, l.priority) AS source_graph,
                    arg_min(l.graph_modified, l.priority) AS source_modified
             FROM staging.ranked AS l JOIN staging.ranked AS m ON m.s = l.o AND m.k = 'rdf:_n'
             WHERE l.k = 'bibo:authorList' GROUP BY l.s, m.o),
  named AS (SELECT s AS paper, o AS person, bool_or(k = 'tkg:firstAuthor') AS first,
                   arg_min(graph_name, priority) AS source_graph,
                   arg_min(graph_modified, priority) AS source_modified
            FROM staging.ranked
            WHERE k = 'dcterms:creator' OR (k = 'tkg:firstAuthor' AND s IN (SELECT s FROM docs))
            GROUP BY s, o)
SELECT coalesce(l.paper, n.paper) AS paper, coalesce(l.person, n.person) AS person,
       CAST(coalesce(l.position, CASE WHEN n.first THEN 1 END) AS INTEGER) AS position,
       coalesce(l.position, CASE WHEN n.first THEN 1 END) = 1 AS first_author,
       coalesce(l.source_graph, n.source_graph) AS source_graph,
       coalesce(l.source_modified, n.source_modified) AS source_modified
FROM listed AS l FULL JOIN named AS n ON n.paper = l.paper AND n.person = l.person""",
    ),
    Table(
        "affiliations",
        "Which organisation a person is affiliated with.",
        _link("schema:affiliation", "person", "organisation"),
    ),
    Table(
        "repositories",
        "Code repositories with their latest counts.",
        f"""
WITH {_pivot(["schema:SoftwareSourceCode"], "r", _REPOSITORY)}
SELECT r AS repository, name, kg_int(stars) AS stars, kg_int(forks) AS forks,
       kg_int(open_issues) AS open_issues, kg_int(watchers) AS watchers,
       kg_int(contributors) AS contributors, kg_time(pushed_at) AS pushed_at,
       kg_bool(archived) AS archived, latest_release,
       kg_time(latest_release_date) AS latest_release_date, source_graph, source_modified
FROM r ORDER BY repository""",
    ),
    Table(
        "technique_repositories",
        "Which repository holds a technique's code.",
        _link("tkg:repository", "technique", "repository"),
    ),
    Table(
        "repository_snapshots",
        "A repository's counts as seen by each ingest run, one row per snapshot.",
        f"""
WITH {_owned(["tkg:RepositorySnapshot"], "sn", _SNAPSHOT, "tkg:snapshot", "snapshot", "repository")}
SELECT sn AS snapshot, owner.repository, kg_time(taken_at) AS taken_at, kg_int(stars) AS stars,
       kg_int(forks) AS forks, kg_int(open_issues) AS open_issues, kg_int(watchers) AS watchers,
       kg_int(contributors) AS contributors, kg_time(pushed_at) AS pushed_at,
       source_graph, source_modified
FROM sn LEFT JOIN owner ON owner.snapshot = sn.sn ORDER BY repository, taken_at""",
    ),
    Table(
        "reading_categories",
        "The sections of the reading list.",
        f"""
WITH {_pivot(["tkg:ReadingListCategory"], "c", _SECTION)}
SELECT c AS category, label, kg_int(position) AS position, source_graph, source_modified
FROM c ORDER BY position NULLS LAST, label""",
    ),
    Table(
        "paper_reading_categories",
        "Which reading-list section a paper is listed in.",
        _link("tkg:readingCategory", "paper", "category"),
    ),
    Table(
        "reading_events",
        "Every reading-status change: when, from what, to what, and where it was made; a "
        "paper taken off the reading state (a Zotero item deleted) is a row with no status.",
        f"""
WITH {_pivot(["tkg:ReadingEvent", "tkg:ReadingRemoval"], "ev", _EVENT)},
  -- A removal names every paper a list replacement took off (a change names one).
  ev_paper AS (SELECT DISTINCT s, o AS paper FROM staging.ranked
               WHERE k = 'tkg:paper' AND s IN (SELECT ev FROM ev))
SELECT ev AS event, ev_paper.paper, kg_local(status_iri) AS status,
       kg_local(previous_iri) AS previous_status, kg_time(at_time) AS changed_at, via,
       status_iri IS NULL AS removed, source_graph, source_modified
FROM ev LEFT JOIN ev_paper ON ev_paper.s = ev.ev ORDER BY changed_at, event, paper""",
    ),
    Table(
        "reading_state",
        "Each paper's current reading status, when it was added, and when it was read.",
        f"""
WITH state AS (
  SELECT s AS paper,
         {best('o', 'priority', where="k = 'tkg:readingStatus'")} AS status_iri,
         {best('o', 'priority', where="k = 'tkg:statusChangedAt'")} AS changed,
         {best('o', 'priority', where="k = 'tkg:addedAt'")} AS added,
         {best('o', 'priority', where="k = 'tkg:listedStatus'")} AS listed_iri,
         bool_or(kg_bool(o)) FILTER (WHERE k = 'tkg:hasNote') AS has_note,
         arg_min(graph_name, priority) FILTER (WHERE k = 'tkg:readingStatus') AS source_graph,
         arg_min(graph_modified, priority) FILTER (WHERE k = 'tkg:readingStatus') AS source_modified
  FROM staging.ranked
  WHERE k IN ('tkg:readingStatus', 'tkg:statusChangedAt', 'tkg:addedAt', 'tkg:listedStatus',
              'tkg:hasNote')
  GROUP BY s),
  first_read AS (SELECT paper, min(changed_at) AS read_at FROM reading_events WHERE status = 'read'
                 GROUP BY paper)
SELECT paper, kg_local(status_iri) AS status, kg_time(changed) AS changed_at,
       kg_time(added) AS added_at,
       CASE WHEN first_read.read_at IS NOT NULL THEN first_read.read_at
            WHEN kg_local(status_iri) = 'read' THEN kg_time(changed) END AS read_at,
       kg_local(listed_iri) AS listed_status, coalesce(has_note, false) AS has_note,
       source_graph, source_modified
FROM state LEFT JOIN first_read USING (paper)
WHERE status_iri IS NOT NULL""",
        after=("reading_events",),
        by_paper="paper",
    ),
    Table(
        "paper_categories",
        "Each paper's categories under both schemes: its reading-list sections (scheme 'reading') "
        "and the categories of the techniques it introduces, extends, uses or evaluates (scheme 'technique').",
        """
SELECT prc.paper, 'reading' AS scheme, rc.label AS category, rc.position,
       prc.source_graph, prc.source_modified
FROM paper_reading_categories AS prc JOIN reading_categories AS rc ON rc.category = prc.category
UNION
SELECT pt.paper, 'technique', coalesce(c.label, t.category_id), c.position,
       min(pt.source_graph), max(pt.source_modified)
FROM paper_techniques AS pt JOIN techniques AS t ON t.technique = pt.technique
LEFT JOIN categories AS c ON c.category_id = t.category_id
WHERE pt.role <> 'mentions'
GROUP BY ALL""",
        after=(
            "paper_reading_categories",
            "reading_categories",
            "paper_techniques",
            "techniques",
            "categories",
        ),
    ),
    Table(
        "paper_organisations",
        "Which organisations a paper comes from: through its authors' affiliations (via_author) "
        "or as the primary paper of an organisation's technique (via_technique).",
        """
SELECT paper, organisation, bool_or(via = 'author') AS via_author,
       bool_or(via = 'technique') AS via_technique,
       min(source_graph) AS source_graph, max(source_modified) AS source_modified
FROM (SELECT a.paper, af.organisation, 'author' AS via, a.source_graph, a.source_modified
      FROM authorship AS a JOIN affiliations AS af ON af.person = a.person
      UNION ALL
      SELECT pt.paper, tor.organisation, 'technique', pt.source_graph, pt.source_modified
      FROM paper_techniques AS pt
      JOIN technique_organisations AS tor ON tor.technique = pt.technique
      WHERE pt.role = 'primary')
GROUP BY paper, organisation""",
        after=("authorship", "affiliations", "paper_techniques", "technique_organisations"),
    ),
    Table(
        "organisation_coauthorship",
        "Pairs of organisations (organisation < with_organisation, by IRI) and the number of "
        "papers with authors affiliated with each.",
        """
WITH org_papers AS (SELECT paper, organisation, source_graph, source_modified
                    FROM paper_organisations WHERE via_author)
SELECT x.organisation, y.organisation AS with_organisation, count(*) AS papers,
       min(least(x.source_graph, y.source_graph)) AS source_graph,
       max(greatest(x.source_modified, y.source_modified)) AS source_modified
FROM org_papers AS x
JOIN org_papers AS y ON x.paper = y.paper AND x.organisation < y.organisation
GROUP BY x.organisation, y.organisation""",
        after=("paper_organisations",),
    ),
    Table(
        "kernels",
        "Reference kernels: kernel, executable reference, or none with the reason.",
        f"""
WITH {_owned(["tkg:ReferenceKernel"], "kn", _KERNEL, "tkg:referenceKernel", "kernel", "technique")}
SELECT kn AS kernel, owner.technique, t.technique_id, form, module_path, rationale,
       kn.source_graph, kn.source_modified
FROM kn LEFT JOIN owner ON owner.kernel = kn.kn
LEFT JOIN techniques AS t ON t.technique = owner.technique
ORDER BY technique_id""",
        after=("techniques",),
    ),
    Table(
        "verification_runs",
        "Runs of the kernels' checks: what they verified, on what, and whether they passed.",
        f"""
WITH {_pivot(["tkg:VerificationRun"], "r", _RUN)}
SELECT r AS run, r.technique, t.technique_id, kg_bool(passed) AS passed,
       kg_time(started_at) AS started_at, kg_time(ended_at) AS ended_at,
       torch_version, device, dtype, r.source_graph, r.source_modified
FROM r LEFT JOIN techniques AS t ON t.technique = r.technique ORDER BY ended_at, run""",
        after=("techniques",),
    ),
    Table(
        "verification_checks",
        "The numerical checks of each verification run, with their errors and tolerances.",
        f"""
WITH {_owned(["tkg:CheckResult"], "c", _CHECK, "tkg:check", "check_result", "run")}
SELECT c AS check_result, owner.run, name, claim, kg_bool(passed) AS passed,
       kg_double(max_abs_error) AS max_abs_error, kg_double(max_rel_error) AS max_rel_error,
       kg_double(tolerance) AS tolerance, kg_double(duration_seconds) AS duration_seconds,
       source_graph, source_modified
FROM c LEFT JOIN owner ON owner.check_result = c.c ORDER BY run, check_result""",
    ),
)


def _dimensions_sql() -> str:
    from kg.catalog import DIMENSIONS
    from kg.vocab import TKG

    rows = ", ".join(
        f"('{prop.value.replace(TKG.base, 'tkg:')}', '{key}', '{label}', {i})"
        for i, (key, prop, label) in enumerate(DIMENSIONS, start=1)
    )
    keys = ", ".join(f"'{prop.value.replace(TKG.base, 'tkg:')}'" for _k, prop, _l in DIMENSIONS)
    return f"""
WITH dims(k, dimension, label, position) AS (VALUES {rows}),
  techs AS (SELECT DISTINCT s FROM staging.ranked WHERE k = 'a:tkg:Technique')
SELECT f.s AS technique, t.technique_id, d.dimension, d.label, d.position,
       arg_min(f.o, f.priority) AS value, arg_min(f.graph_name, f.priority) AS source_graph,
       arg_min(f.graph_modified, f.priority) AS source_modified
FROM staging.ranked AS f JOIN dims AS d ON d.k = f.k LEFT JOIN techniques AS t ON t.technique = f.s
WHERE f.k IN ({keys}) AND f.s IN (SELECT s FROM techs)
GROUP BY ALL ORDER BY technique_id, position"""


TABLES = tuple(
    Table(t.name, t.description, _dimensions_sql(), t.after, t.by_paper)
    if t.name == "technique_dimensions"
    else t
    for t in TABLES
)
_BY_NAME = {t.name: t for t in TABLES}


def table(name: str) -> Table:
    return _BY_NAME[name]


def ordered(names: set[str] | frozenset[str]) -> list[Table]:
    """``names`` plus every table built after one of them, in build order."""
    wanted = set(names)
    changed = True
    while changed:
        changed = False
        for t in TABLES:
            if t.name not in wanted and wanted.intersection(t.after):
                wanted.add(t.name)
                changed = True
    return [t for t in TABLES if t.name in wanted]
