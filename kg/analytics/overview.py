"""The reading page's numbers from the analytics tables: each category's counts per status,
every paper's status counted once, and the papers each category shows first
(:func:`reading_overview`), brought up to date after status changes without reading the
tables again (:func:`reading_patched`); and the Techniques page's paper counts
(:func:`technique_paper_counts`). The workbench (kg.server.web.models) reads them while
the tables are fresh.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kg.analytics.twins import STATUS_BASE

if TYPE_CHECKING:
    import duckdb


__all__ = ["RESERVE", "ReadingOverview", "reading_overview", "reading_patched", "tables_made", "technique_paper_counts"]


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
    read = (f"paper IN (SELECT s FROM staging.facts WHERE k = 'tkg:readingStatus' AND o = '{STATUS_BASE}read')"
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
    counts += [("Not in a category", None, slug, n) for slug, n in con.execute(  # kg.counts.UNCATEGORISED
        "SELECT status, count(*) FROM web_status WHERE paper NOT IN (SELECT paper FROM web_listed) GROUP BY status"
    ).fetchall()]
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
        for label in labels or ["Not in a category"]:
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
