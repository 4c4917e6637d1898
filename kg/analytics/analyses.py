"""The analyses: questions people ask of their reading and of the field, as SQL.

Each analysis returns a :class:`Report` of named sections (one table each). The SQL
lives in :data:`QUERIES`, one named query per section, with DuckDB ``$parameters``;
the CLI, the notebook and the benchmark all run the same text.

Definitions used throughout:

- a paper's *category* is its reading-list section (``by="reading"``), or the category
  of a technique it introduces or uses (``by="technique"``); a paper can count in several;
- a paper is *read* at its first change to "read" (a reading event), or, without
  events, when its current status "read" was set;
- *kernel status* is the one vocabulary of :mod:`kg.wording` (as ``kg show`` and the web
  app): ``none`` where a kernel makes no sense (with a reason), else ``verified``/``failing``
  by the latest run, ``not run`` with no run recorded;
- a repository's *growth* is the star count of its latest snapshot minus that of its
  first; it is *stale* when archived or not pushed to for ``stale_days`` before ``as_of``;
- a technique's *uptake* is the papers that introduce, extend, use or evaluate it per year
  (the links queries see: kg links), with those that only mention it apart.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kg.errors import AnalyticsError

if TYPE_CHECKING:
    import duckdb

__all__ = ["ANALYSES", "QUERIES", "Report", "Section", "run", "run_query"]

_CATEGORIES = """
  cats AS (
    SELECT rs.paper, coalesce(pc.category, $none) AS category,
           coalesce(pc.position, 999999) AS position
    FROM reading_state AS rs
    LEFT JOIN paper_categories AS pc ON pc.paper = rs.paper AND pc.scheme = $by)"""

QUERIES: dict[str, str] = {
    # -- reading ---------------------------------------------------------------------
    "progress.categories": f"""
WITH {_CATEGORIES}
SELECT category, count(*) AS papers,
       count(*) FILTER (WHERE rs.status = 'read') AS read,
       count(*) FILTER (WHERE rs.status = 'reading') AS reading,
       count(*) FILTER (WHERE rs.status = 'to-read') AS to_read,
       count(*) FILTER (WHERE rs.status = 'skipped') AS skipped,
       count(*) FILTER (WHERE rs.status NOT IN ('read', 'reading', 'to-read', 'skipped')) AS other,
       round(100.0 * count(*) FILTER (WHERE rs.status = 'read') / count(*), 1) AS read_pct
FROM cats JOIN reading_state AS rs USING (paper)
GROUP BY category, position ORDER BY position, category""",
    "progress.timeline": """
WITH reads AS (SELECT CAST(date_trunc($period, read_at) AS DATE) AS period, count(*) AS read
               FROM reading_state WHERE read_at IS NOT NULL GROUP BY 1),
  -- A paper's status at the end of a period: its current one from the period it was set in
  -- (even when older events carry later times), else its latest event up to then.
  changes AS (SELECT paper, status, epoch(changed_at) AS rank,
                     CAST(date_trunc($period, changed_at) AS DATE) AS period
              FROM reading_events WHERE changed_at IS NOT NULL
              UNION ALL
              SELECT paper, status, 1e12, CAST(date_trunc($period, changed_at) AS DATE)
              FROM reading_state WHERE changed_at IS NOT NULL),
  periods AS (SELECT period FROM reads UNION SELECT period FROM changes),
  at_end AS (SELECT p.period, c.paper, arg_max(c.status, c.rank) AS status
             FROM periods AS p JOIN changes AS c ON c.period <= p.period GROUP BY p.period, c.paper),
  states AS (SELECT period, count(*) FILTER (WHERE status = 'to-read') AS to_read,
                    count(*) FILTER (WHERE status = 'reading') AS reading
             FROM at_end GROUP BY period)
SELECT p.period, coalesce(r.read, 0) AS read,
       CAST(sum(coalesce(r.read, 0)) OVER (ORDER BY p.period) AS BIGINT) AS cumulative,
       coalesce(s.to_read, 0) AS to_read, coalesce(s.reading, 0) AS reading
FROM periods AS p LEFT JOIN reads AS r USING (period) LEFT JOIN states AS s USING (period)
ORDER BY p.period""",
    "progress.backlog": f"""
WITH {_CATEGORIES}
SELECT category, count(*) AS backlog, count(*) FILTER (WHERE rs.status = 'reading') AS in_progress,
       CAST(min(rs.added_at) AS DATE) AS oldest_added,
       CAST(median(date_diff('day', rs.added_at, CAST($as_of AS TIMESTAMP))) AS INTEGER)
         AS median_age_days
FROM cats JOIN reading_state AS rs USING (paper)
WHERE rs.status IN ('to-read', 'reading')
GROUP BY category, position ORDER BY backlog DESC, position, category""",
    "progress.time_to_read": f"""
WITH {_CATEGORIES},
  timed AS (SELECT cats.category, cats.position, cats.paper,
                   date_diff('second', rs.added_at, rs.read_at) / 86400.0 AS days
            FROM cats JOIN reading_state AS rs USING (paper)
            WHERE rs.read_at IS NOT NULL AND rs.added_at IS NOT NULL AND rs.read_at >= rs.added_at)
SELECT CASE WHEN grouping(category) = 1 THEN '(all)' ELSE category END AS category,
       count(*) AS papers, round(median(days), 1) AS median_days, round(avg(days), 1) AS mean_days,
       round(max(days), 1) AS max_days
FROM timed GROUP BY ROLLUP (category)
ORDER BY grouping(category), min(position), category""",
    # -- papers ----------------------------------------------------------------------
    "papers.per_year": """
SELECT year, count(*) AS papers FROM papers WHERE year IS NOT NULL GROUP BY year ORDER BY year""",
    "papers.per_category": """
SELECT category, count(*) AS papers FROM paper_categories WHERE scheme = 'technique'
GROUP BY category, position ORDER BY papers DESC, category""",
    "papers.per_year_category": """
SELECT p.year, pc.category, count(*) AS papers
FROM papers AS p JOIN paper_categories AS pc ON pc.paper = p.paper AND pc.scheme = 'technique'
WHERE p.year IS NOT NULL GROUP BY ALL ORDER BY p.year, pc.category""",
    "papers.per_organisation": """
WITH po AS (SELECT po.*, coalesce(o.canonical, po.organisation) AS canonical, o.name AS unit
            FROM paper_organisations AS po LEFT JOIN organisations AS o USING (organisation))
SELECT coalesce(c.name, po.canonical) AS organisation, count(DISTINCT po.paper) AS papers,
       count(DISTINCT po.paper) FILTER (WHERE po.via_author) AS via_authors,
       count(DISTINCT po.paper) FILTER (WHERE po.via_technique) AS via_techniques,
       string_agg(DISTINCT po.unit, ', ' ORDER BY po.unit) FILTER (WHERE po.organisation <> po.canonical) AS units
FROM po LEFT JOIN organisations AS c ON c.organisation = po.canonical
GROUP BY ALL ORDER BY papers DESC, organisation LIMIT $top""",
    # -- influence (kg analytics papers --influential) ----------------------------
    "influence.most_influential": """
SELECT coalesce(p.title, c.cited) AS paper, p.year, count(*) AS citations,
       count(*) FILTER (WHERE c.influential) AS influential, count(*) FILTER (WHERE c.methodology) AS methodology,
       max(cc.influential_citation_count) AS s2_influential, max(cc.citation_count) AS s2_citations
FROM citations AS c LEFT JOIN papers AS p ON p.paper = c.cited
LEFT JOIN citation_counts AS cc ON cc.paper = c.cited
GROUP BY c.cited, p.title, p.year HAVING count(*) FILTER (WHERE c.influential OR c.methodology) > 0
ORDER BY influential DESC, methodology DESC, citations DESC, paper LIMIT $top""",
    "influence.intents": """
SELECT intent, citations FROM (
  SELECT 1 AS o, 'methodology' AS intent, count(*) FILTER (WHERE methodology) AS citations FROM citations
  UNION ALL SELECT 2, 'background', count(*) FILTER (WHERE background) FROM citations
  UNION ALL SELECT 3, 'result', count(*) FILTER (WHERE result) FROM citations
  UNION ALL SELECT 4, 'influential', count(*) FILTER (WHERE influential) FROM citations
  UNION ALL SELECT 5, 'with contexts', count(*) FILTER (WHERE contexts > 0) FROM citations
  UNION ALL SELECT 6, 'all', count(*) FROM citations) ORDER BY o""",
    # -- lineage ---------------------------------------------------------------------
    "lineage.summary": """
WITH nodes AS (SELECT child AS t FROM lineage_edges UNION SELECT parent FROM lineage_edges),
  depth AS (SELECT n.t, coalesce(max(lc.max_distance), 0) AS depth
            FROM nodes AS n LEFT JOIN lineage_closure AS lc ON lc.technique = n.t GROUP BY n.t),
  fan AS (SELECT parent, count(DISTINCT child) AS children FROM lineage_edges GROUP BY parent)
SELECT (SELECT count(*) FROM nodes) AS techniques_in_lineage,
       (SELECT count(*) FROM lineage_edges) AS edges,
       (SELECT count(*) FROM nodes WHERE t NOT IN (SELECT child FROM lineage_edges)) AS roots,
       (SELECT count(*) FROM nodes WHERE t NOT IN (SELECT parent FROM lineage_edges)) AS leaves,
       (SELECT max(depth) FROM depth) AS max_depth,
       (SELECT round(avg(depth), 2) FROM depth) AS mean_depth,
       (SELECT max(children) FROM fan) AS max_fan_out,
       (SELECT round(avg(children), 2) FROM fan) AS mean_fan_out""",
    "lineage.depth": """
WITH nodes AS (SELECT child AS t FROM lineage_edges UNION SELECT parent FROM lineage_edges),
  depth AS (SELECT n.t, coalesce(max(lc.max_distance), 0) AS depth
            FROM nodes AS n LEFT JOIN lineage_closure AS lc ON lc.technique = n.t GROUP BY n.t)
SELECT depth, count(*) AS techniques FROM depth GROUP BY depth ORDER BY depth""",
    "lineage.most_derived_from": """
WITH fan AS (SELECT parent AS technique, count(DISTINCT child) AS children
             FROM lineage_edges GROUP BY parent),
  desc_ AS (SELECT ancestor AS technique, count(*) AS descendants
            FROM lineage_closure GROUP BY ancestor)
SELECT coalesce(t.name, d.technique) AS technique, t.category_id AS category,
       coalesce(f.children, 0) AS children, d.descendants
FROM desc_ AS d LEFT JOIN fan AS f USING (technique) LEFT JOIN techniques AS t USING (technique)
ORDER BY d.descendants DESC, children DESC, technique LIMIT $top""",
    "lineage.fan_out": """
SELECT coalesce(t.name, e.parent) AS technique, t.category_id AS category,
       count(DISTINCT e.child) AS children,
       string_agg(DISTINCT e.relation, ', ' ORDER BY e.relation) AS relations
FROM lineage_edges AS e LEFT JOIN techniques AS t ON t.technique = e.parent
GROUP BY ALL ORDER BY children DESC, technique LIMIT $top""",
    "lineage.longest_chains": """
WITH RECURSIVE edges AS (SELECT DISTINCT child, parent FROM lineage_edges),
  roots AS (SELECT DISTINCT parent AS t FROM edges WHERE parent NOT IN (SELECT child FROM edges)),
  walk(node, path) AS (
    SELECT t, [t] FROM roots
    UNION ALL
    SELECT e.child, list_append(w.path, e.child) FROM walk AS w JOIN edges AS e ON e.parent = w.node
    WHERE NOT list_contains(w.path, e.child) AND len(w.path) < 256),
  leaves AS (SELECT path FROM walk WHERE node NOT IN (SELECT parent FROM edges)),
  ranked AS (SELECT path, len(path) - 1 AS length FROM leaves
             ORDER BY length DESC, path LIMIT $top),
  named AS (SELECT r.length, r.path, u.pos, coalesce(t.name, u.iri) AS name
            FROM ranked AS r, unnest(r.path) WITH ORDINALITY AS u(iri, pos)
            LEFT JOIN techniques AS t ON t.technique = u.iri)
SELECT length, string_agg(name, ' → ' ORDER BY pos) AS chain
FROM named GROUP BY length, path ORDER BY length DESC, chain""",
    "lineage.relations": """
SELECT relation, count(*) AS edges, count(*) FILTER (WHERE basis = 'inferred') AS inferred
FROM lineage_edges GROUP BY relation ORDER BY edges DESC, relation""",
    # -- adoption --------------------------------------------------------------------
    "adoption.repositories": """
WITH snaps AS (
  SELECT repository, count(*) AS snapshots, min(taken_at) AS first_at, max(taken_at) AS last_at,
         arg_min(stars, taken_at) AS first_stars, arg_max(stars, taken_at) AS last_stars
  FROM repository_snapshots GROUP BY repository),
  techs AS (SELECT tr.repository,
                   string_agg(DISTINCT coalesce(t.name, tr.technique), ', ') AS techniques
            FROM technique_repositories AS tr
            LEFT JOIN techniques AS t ON t.technique = tr.technique GROUP BY 1)
SELECT coalesce(r.name, r.repository) AS repository, techs.techniques,
       coalesce(s.last_stars, r.stars) AS stars, s.last_stars - s.first_stars AS growth,
       round((s.last_stars - s.first_stars) * 30.0
             / nullif(date_diff('day', s.first_at, s.last_at), 0), 1) AS growth_per_30_days,
       coalesce(s.snapshots, 0) AS snapshots, CAST(r.pushed_at AS DATE) AS pushed
FROM repositories AS r LEFT JOIN snaps AS s USING (repository) LEFT JOIN techs USING (repository)
WHERE coalesce(s.last_stars, r.stars) IS NOT NULL
ORDER BY stars DESC, repository LIMIT $top""",
    "adoption.most_active": """
WITH snaps AS (
  SELECT repository, min(taken_at) AS first_at, max(taken_at) AS last_at,
         arg_min(stars, taken_at) AS first_stars, arg_max(stars, taken_at) AS last_stars
  FROM repository_snapshots GROUP BY repository HAVING count(*) >= 2)
SELECT coalesce(r.name, s.repository) AS repository, s.first_stars, s.last_stars,
       s.last_stars - s.first_stars AS growth,
       round(100.0 * (s.last_stars - s.first_stars) / nullif(s.first_stars, 0), 1) AS growth_pct,
       CAST(s.first_at AS DATE) AS since, CAST(s.last_at AS DATE) AS until
FROM snaps AS s LEFT JOIN repositories AS r USING (repository)
ORDER BY growth DESC, repository LIMIT $top""",
    "adoption.stale": """
SELECT coalesce(name, repository) AS repository, stars, CAST(pushed_at AS DATE) AS pushed,
       date_diff('day', pushed_at, CAST($as_of AS TIMESTAMP)) AS days_since_push,
       coalesce(archived, false) AS archived
FROM repositories
WHERE archived OR pushed_at < CAST($as_of AS TIMESTAMP) - to_days(CAST($stale_days AS INTEGER))
ORDER BY archived DESC, days_since_push DESC NULLS LAST, repository LIMIT $top""",
    "adoption.by_category": """
WITH repo_stars AS (
  SELECT r.repository, coalesce(
      (SELECT arg_max(s.stars, s.taken_at) FROM repository_snapshots AS s
       WHERE s.repository = r.repository),
      r.stars) AS stars
  FROM repositories AS r)
SELECT coalesce(c.label, t.category_id) AS category, count(DISTINCT rs.repository) AS repositories,
       sum(rs.stars) AS stars
FROM (SELECT DISTINCT technique, repository FROM technique_repositories) AS tr
JOIN repo_stars AS rs USING (repository) JOIN techniques AS t ON t.technique = tr.technique
LEFT JOIN categories AS c ON c.category_id = t.category_id
WHERE rs.stars IS NOT NULL GROUP BY ALL ORDER BY stars DESC, category""",
    "adoption.timeline": """
WITH top AS (SELECT repository FROM repository_snapshots GROUP BY repository
             ORDER BY arg_max(stars, taken_at) DESC, repository LIMIT $top)
SELECT coalesce(r.name, s.repository) AS repository, CAST(s.taken_at AS DATE) AS taken, s.stars
FROM repository_snapshots AS s JOIN top USING (repository)
LEFT JOIN repositories AS r USING (repository)
ORDER BY repository, taken""",
    # -- uptake: papers per technique per year ------------------------------------------
    "uptake.per_year": """
WITH links AS (SELECT DISTINCT technique, paper, role FROM paper_techniques),
  chosen AS (SELECT technique FROM links
             WHERE role <> 'mentions' AND (CAST($technique AS VARCHAR) IS NULL OR technique = $technique)
             GROUP BY technique ORDER BY count(DISTINCT paper) DESC, technique LIMIT $top)
SELECT coalesce(t.name, l.technique) AS technique, p.year,
       count(DISTINCT l.paper) FILTER (WHERE l.role <> 'mentions') AS papers,
       count(DISTINCT l.paper) FILTER (WHERE l.role IN ('primary', 'introduces')) AS introduce,
       count(DISTINCT l.paper) FILTER (WHERE l.role = 'extends') AS extend,
       count(DISTINCT l.paper) FILTER (WHERE l.role = 'uses') AS use,
       count(DISTINCT l.paper) FILTER (WHERE l.role = 'evaluates') AS evaluate,
       count(DISTINCT l.paper) FILTER (WHERE l.role = 'mentions') AS mention
FROM links AS l JOIN chosen USING (technique) JOIN papers AS p ON p.paper = l.paper
LEFT JOIN techniques AS t ON t.technique = l.technique
WHERE p.year IS NOT NULL
GROUP BY ALL ORDER BY technique, p.year""",
    "uptake.totals": """
WITH links AS (SELECT DISTINCT technique, paper FROM paper_techniques WHERE role <> 'mentions'),
  chosen AS (SELECT technique FROM links
             WHERE CAST($technique AS VARCHAR) IS NULL OR technique = $technique
             GROUP BY technique ORDER BY count(*) DESC, technique LIMIT $top),
  years AS (SELECT l.technique, p.year, count(*) AS papers FROM links AS l JOIN chosen USING (technique)
            JOIN papers AS p ON p.paper = l.paper WHERE p.year IS NOT NULL GROUP BY ALL)
SELECT coalesce(t.name, l.technique) AS technique, count(DISTINCT l.paper) AS papers,
       count(DISTINCT l.paper) FILTER (WHERE rs.status = 'read') AS read,
       (SELECT min(year) FROM years AS y WHERE y.technique = l.technique) AS first_year,
       (SELECT arg_max(year, papers) FROM years AS y WHERE y.technique = l.technique) AS busiest_year
FROM links AS l JOIN chosen USING (technique) LEFT JOIN techniques AS t ON t.technique = l.technique
LEFT JOIN reading_state AS rs ON rs.paper = l.paper
GROUP BY l.technique, t.name ORDER BY papers DESC, technique""",
    # -- authors and organisations ----------------------------------------------------
    "authors.authors": """
WITH counts AS (SELECT person, count(*) AS papers,
                       count(*) FILTER (WHERE first_author) AS first_author_papers
                FROM authorship GROUP BY person
                ORDER BY papers DESC, first_author_papers DESC, person LIMIT $top),
  orgs AS (SELECT af.person, string_agg(DISTINCT o.name, ', ') AS organisations
           FROM affiliations AS af JOIN organisations AS o USING (organisation)
           WHERE af.person IN (SELECT person FROM counts) GROUP BY af.person)
SELECT coalesce(a.name, t.name, c.person) AS author,
       CASE WHEN a.person IS NOT NULL THEN 'person' ELSE coalesce(t.kind, 'person') END AS kind,
       c.papers, c.first_author_papers, orgs.organisations
FROM counts AS c LEFT JOIN authors AS a USING (person) LEFT JOIN orgs USING (person)
LEFT JOIN organisations AS t ON t.organisation = c.person AND a.person IS NULL
ORDER BY c.papers DESC, c.first_author_papers DESC, author""",
    "authors.organisations": """
WITH canon AS (SELECT organisation, coalesce(canonical, organisation) AS canonical FROM organisations),
  authors_of AS (SELECT coalesce(k.canonical, af.organisation) AS organisation, count(DISTINCT person) AS authors
                 FROM affiliations AS af LEFT JOIN canon AS k USING (organisation)
                 WHERE person IN (SELECT person FROM authorship) GROUP BY 1),
  papers_of AS (SELECT coalesce(k.canonical, po.organisation) AS organisation, count(DISTINCT paper) AS papers
                FROM paper_organisations AS po LEFT JOIN canon AS k USING (organisation)
                WHERE via_author GROUP BY 1)
SELECT coalesce(o.name, p.organisation) AS organisation, p.papers, coalesce(a.authors, 0) AS authors
FROM papers_of AS p LEFT JOIN authors_of AS a USING (organisation)
LEFT JOIN organisations AS o USING (organisation)
ORDER BY p.papers DESC, organisation LIMIT $top""",
    "authors.co_authorship": """
WITH org_papers AS (SELECT DISTINCT po.paper, coalesce(o.canonical, po.organisation) AS organisation
                    FROM paper_organisations AS po LEFT JOIN organisations AS o USING (organisation)
                    WHERE po.via_author),
  p AS (SELECT x.organisation, y.organisation AS with_organisation, count(*) AS papers
        FROM org_papers AS x JOIN org_papers AS y ON x.paper = y.paper AND x.organisation < y.organisation
        GROUP BY ALL)
SELECT coalesce(oa.name, p.organisation) AS organisation,
       coalesce(ob.name, p.with_organisation) AS with_organisation, p.papers
FROM p
LEFT JOIN organisations AS oa ON oa.organisation = p.organisation
LEFT JOIN organisations AS ob ON ob.organisation = p.with_organisation
ORDER BY p.papers DESC, organisation, with_organisation LIMIT $top""",
    # -- kernels ---------------------------------------------------------------------
    "kernels.techniques": """
WITH latest AS (SELECT technique, arg_max(passed, ended_at) AS passed, max(ended_at) AS last_run,
                       count(*) AS runs
                FROM verification_runs WHERE ended_at IS NOT NULL GROUP BY technique),
  checks AS (SELECT r.technique, count(*) FILTER (WHERE c.passed) AS passed, count(*) AS total
             FROM verification_checks AS c
             JOIN (SELECT technique, arg_max(run, ended_at) AS run FROM verification_runs
                   GROUP BY technique) AS r
               ON r.run = c.run
             GROUP BY r.technique)
SELECT t.name AS technique, coalesce(c.label, t.category_id) AS category, k.form,
       CASE WHEN k.form = 'none' THEN 'none'
            WHEN l.passed THEN 'verified'
            WHEN l.passed IS NOT NULL THEN 'failing'
            ELSE 'not run' END AS status,
       l.runs, l.last_run, ch.passed AS checks_passed, ch.total AS checks
FROM techniques AS t
LEFT JOIN categories AS c ON c.category_id = t.category_id
LEFT JOIN kernels AS k ON k.technique = t.technique
LEFT JOIN latest AS l ON l.technique = t.technique
LEFT JOIN checks AS ch ON ch.technique = t.technique
WHERE t.on_page OR $all
ORDER BY coalesce(c.position, 999999), technique""",
    "kernels.coverage": """
WITH status AS (
  SELECT t.technique, coalesce(c.label, t.category_id) AS category,
         coalesce(c.position, 999999) AS position,
         CASE WHEN k.form = 'none' THEN 'none'
              WHEN l.passed THEN 'verified'
              WHEN l.passed IS NOT NULL THEN 'failing'
              ELSE 'not run' END AS status
  FROM techniques AS t
  LEFT JOIN categories AS c ON c.category_id = t.category_id
  LEFT JOIN kernels AS k ON k.technique = t.technique
  LEFT JOIN (SELECT technique, arg_max(passed, ended_at) AS passed FROM verification_runs
             WHERE ended_at IS NOT NULL GROUP BY technique) AS l ON l.technique = t.technique
  WHERE t.on_page OR $all)
SELECT category, count(*) AS techniques,
       count(*) FILTER (WHERE status = 'verified') AS verified,
       count(*) FILTER (WHERE status = 'failing') AS failing,
       count(*) FILTER (WHERE status = 'not run') AS "not run",
       count(*) FILTER (WHERE status = 'none') AS "none"
FROM status GROUP BY category, position ORDER BY position, category""",
}


@dataclass
class Section:
    """One table of a report."""

    name: str
    title: str
    columns: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    #: When there are no rows: why, and what to run (:data:`EMPTY`).
    empty: str | None = None


@dataclass
class Report:
    """The sections one analysis produces, in order."""

    name: str
    sections: list[Section]

    def section(self, name: str) -> Section:
        for s in self.sections:
            if s.name == name:
                return s
        raise AnalyticsError(
            f"the {self.name} analysis has no section {name!r}",
            hint="Its sections are: " + ", ".join(s.name for s in self.sections) + ".",
        )

    def to_dict(self) -> dict[str, list[dict[str, Any]]]:
        return {s.name: s.rows for s in self.sections}


#: analysis → its sections as (query suffix, title) and the parameters it takes.
ANALYSES: dict[str, tuple[tuple[tuple[str, str], ...], tuple[str, ...]]] = {
    "progress": (
        (
            ("categories", "Reading progress per category"),
            ("timeline", "Read and to read over time"),
            ("backlog", "Backlog per category"),
            ("time_to_read", "Days from added to read"),
        ),
        ("by", "period", "as_of"),
    ),
    "papers": (
        (
            ("per_year", "Papers per year"),
            ("per_category", "Papers per technique category"),
            ("per_organisation", "Papers per organisation"),
            ("per_year_category", "Papers per year and category"),
        ),
        ("top",),
    ),
    "influence": (
        (
            ("most_influential", "Most influentially cited papers (kg ingest citations)"),
            ("intents", "Citations per intent"),
        ),
        ("top",),
    ),
    "lineage": (
        (
            ("summary", "Lineage at a glance"),
            ("depth", "Techniques per lineage depth"),
            ("most_derived_from", "Most derived-from techniques"),
            ("fan_out", "Largest fan-out"),
            ("longest_chains", "Longest chains"),
            ("relations", "Edges per relation"),
        ),
        ("top",),
    ),
    "adoption": (
        (
            ("repositories", "Repositories by stars"),
            ("most_active", "Most active (star growth)"),
            ("stale", "Stale repositories"),
            ("by_category", "Stars per category"),
            ("timeline", "Stars over time"),
        ),
        ("top", "stale_days", "as_of"),
    ),
    "uptake": (
        (
            ("totals", "Papers per technique (introduce, extend, use or evaluate it)"),
            ("per_year", "Papers per technique per year: the adoption curve"),
        ),
        ("top", "technique"),
    ),
    "authors": (
        (
            ("authors", "Most prolific authors"),
            ("organisations", "Most prolific organisations"),
            ("co_authorship", "Co-authorship between organisations"),
        ),
        ("top",),
    ),
    "kernels": (
        (
            ("coverage", "Kernel coverage per category"),
            ("techniques", "Kernel status per technique"),
        ),
        ("all",),
    ),
}

_NO_GITHUB = "No repository has GitHub figures yet: run kg ingest github first."
_NO_AFFILIATION = ("No author has a recorded affiliation: arXiv, GitHub and Semantic Scholar give none, so this "
                   "needs an RDF import with schema:affiliation (kg import rdf); kg analytics papers counts papers "
                   "per organisation through their techniques.")
#: "analysis.section" → what an empty section means and what fills it ("analysis.*": every
#: section of an analysis whose first section is empty too).
EMPTY: dict[str, str] = {
    "adoption.*": _NO_GITHUB,
    "adoption.most_active": "Growth needs two GitHub snapshots of a repository: run kg ingest github again later.",
    "adoption.timeline": "Stars over time need two GitHub snapshots of a repository: run kg ingest github again "
                         "later.",
    "adoption.stale": "No repository went --stale-days days without a push.",
    "authors.*": "No paper has a recorded author yet: kg build records the catalog's first authors, and kg ingest "
                 "arxiv adds whole author lists.",
    "authors.organisations": _NO_AFFILIATION,
    "authors.co_authorship": _NO_AFFILIATION,
    "influence.*": "No citations yet: run kg ingest citations first.",
    "progress.*": "The reading list is empty: kg build seeds it, kg import reading-list FILE replaces it.",
    "progress.time_to_read": "No paper has gone from to-read to read since it was added: kg reading set TITLE read "
                             "records it.",
    "lineage.*": "The graph has no lineage yet: run kg build.",
    "kernels.*": "No kernel is recorded yet: kg build records the kernel registry, kg kernels verify runs them.",
    "papers.*": "The graph holds no papers yet: run kg build.",
}

_DEFAULTS: dict[str, Any] = {
    "technique": None,
    "by": "reading",
    "period": "month",
    "top": 10,
    "stale_days": 180,
    "all": False,
}


def _params(names: Sequence[str], given: dict[str, Any]) -> dict[str, Any]:
    """The parameters ``names`` from ``given`` or their defaults, checked."""
    out = {n: given[n] if given.get(n) is not None else _DEFAULTS.get(n) for n in names}
    if "as_of" in out:
        value = out["as_of"] or dt.datetime.now(dt.UTC).date()
        try:
            out["as_of"] = dt.date.fromisoformat(str(value)).isoformat()
        except ValueError:
            raise AnalyticsError(
                f"{value!r} is not a date", hint="Give --as-of as YYYY-MM-DD."
            ) from None
    if "by" in out:
        if out["by"] not in ("reading", "technique"):
            raise AnalyticsError(
                f"unknown grouping {out['by']!r}", hint="Use --by reading or --by technique."
            )
        out["none"] = "(no section)" if out["by"] == "reading" else "(no technique)"
    if out.get("period") not in (None, "week", "month", "quarter", "year"):
        raise AnalyticsError(
            f"unknown period {out['period']!r}", hint="Use --period week, month, quarter or year."
        )
    return out


def run_query(
    con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None
) -> Section:
    """Run the named query ``name`` (``analysis.section``) and return its rows."""
    import duckdb

    analysis, _, section = name.partition(".")
    sql = QUERIES[name]
    used = {k: v for k, v in (params or {}).items() if f"${k}" in sql}
    try:
        cursor = con.execute(sql, used)
        columns = [d[0] for d in cursor.description or []]
        rows = [dict(zip(columns, r, strict=True)) for r in cursor.fetchall()]
    except duckdb.Error as exc:
        raise AnalyticsError(
            f"the {name} query failed: {exc}",
            hint="Rebuild the analytics file with `kg analytics build --full`.",
        ) from None
    titles = dict(ANALYSES[analysis][0])
    return Section(section, titles.get(section, section), columns, rows)


def run(con: duckdb.DuckDBPyConnection, analysis: str, **options: Any) -> Report:
    """Run every section of ``analysis`` (progress, papers, lineage, adoption, authors, kernels)."""
    if analysis not in ANALYSES:
        raise AnalyticsError(
            f"there is no analysis {analysis!r}", hint="Analyses: " + ", ".join(ANALYSES) + "."
        )
    sections, names = ANALYSES[analysis]
    params = _params(names, options)
    report = Report(analysis, [run_query(con, f"{analysis}.{s}", params) for s, _title in sections])
    nothing = not report.sections[0].rows  # the first section empty: the source has not been read at all
    for section in report.sections:
        if not section.rows:
            key = f"{analysis}.{section.name}"
            section.empty = EMPTY.get(f"{analysis}.*") if nothing else EMPTY.get(key, EMPTY.get(f"{analysis}.*"))
            if nothing and key in EMPTY and analysis == "authors":
                section.empty = EMPTY[key]  # authors exist without affiliations: say what is missing
    return report
