"""Reading state: each paper's current status, its history, and reading-list imports.

The current status of a paper lives in the ``reading`` named graph as
``<paper> tkg:readingStatus <status>``, next to one ``tkg:ReadingEvent`` per change
(when, from what, to what, and where: reading-list, cli, web or zotero). Every writer
— ``kg reading set``, the web app, a reading-list import and the Zotero sync — goes
through :func:`status_change`, so they all leave the same history behind.

Importing a reading list replaces the ``reading-list`` graph (what the file says) and
seeds the reading state only where it says something new: a paper without a status
gets the listed one, and a paper whose listed status changed since the last import
gets the new one. A status set later with ``kg reading set`` survives re-imports of an
unchanged file.
"""

from __future__ import annotations

import datetime as dt
import unicodedata
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import get_close_matches
from pathlib import Path
from typing import Any

from pyoxigraph import Literal, NamedNode, Triple

from kg.catalog import Catalog
from kg.errors import NotFoundError, ReadingListError
from kg.graphs import READING, READING_LIST, own_first
from kg.iris import paper_label, parse_arxiv_id, slugify, status_iri
from kg.readinglist import (
    PaperMatcher,
    ReadingList,
    entry_paper_iri,
    normalize_title,
    parse_reading_list,
    reading_list_triples,
)
from kg.results import Term, python_value
from kg.store.base import Activity, GraphStore, Transaction
from kg.vocab import BIBO, DCTERMS, ID, PROV, RDF, SKOS, TKG, boolean, datetime_literal, text

__all__ = [
    "KNOWN_STATUSES",
    "add_paper",
    "paper_title",
    "paper_known",
    "STATUS_ALIASES",
    "ImportReport",
    "StatusChange",
    "current_statuses",
    "import_reading_list",
    "IndexEntry",
    "reading_index",
    "note_text",
    "prefer_reading",
    "listed_rows",
    "reading_rows",
    "resolve_paper",
    "set_status",
    "status_change",
    "status_concept_triples",
    "status_removal",
    "known_status",
    "parse_status",
    "status_slug",
]

#: The statuses TechKG knows, with their labels. Anything else is a custom status: kept
#: verbatim from Zotero, or given on purpose with ``kg reading set ... --custom``.
KNOWN_STATUSES: dict[str, str] = {
    "to-read": "To read",
    "reading": "Reading",
    "read": "Read",
    "skipped": "Skipped",
}
#: Other words for the known statuses (case, spaces, hyphens and underscores do not matter).
STATUS_ALIASES: dict[str, str] = {"toread": "to-read", "unread": "to-read", "todo": "to-read", "done": "read",
                                   "inprogress": "reading", "skip": "skipped"}
STATUS_SCHEME = ID["scheme/reading-status"]


def _status_key(status: str) -> str:
    return "".join(ch for ch in status.strip().casefold() if ch not in " -_")


_BY_KEY = {**{_status_key(slug): slug for slug in KNOWN_STATUSES},
           **{_status_key(label): slug for slug, label in KNOWN_STATUSES.items()}, **STATUS_ALIASES}


def known_status(status: str) -> str | None:
    """The known status ``status`` names (forgiving about case, spaces and aliases), or None."""
    return _BY_KEY.get(_status_key(status))


def status_slug(status: str) -> str:
    """``read``, ``to-read`` ... for known statuses (forgiving), a slug for custom ones."""
    return known_status(status) or slugify(status)


#: The longest custom status, in characters.
MAX_STATUS = 60


def check_custom_status(status: str) -> str:
    """A custom status as it will be kept (stripped), or :class:`StatusError` for one that
    is empty, longer than :data:`MAX_STATUS` characters, or holds a newline or another
    control character (it is shown in one table cell, a page and a Zotero Extra line)."""
    from kg.errors import StatusError

    text = status.strip()
    if not text:
        raise StatusError("a reading status cannot be empty", hint="Give a short status, e.g. \"On hold\".")
    if any(unicodedata.category(c).startswith("C") for c in text):
        raise StatusError("a reading status is one line of text: no newlines, tabs or control characters",
                          hint="Give a short status on one line, e.g. \"On hold\".")
    if len(text) > MAX_STATUS:
        raise StatusError(f"a reading status is at most {MAX_STATUS} characters; this one has {len(text)}",
                          hint="Give a shorter status, e.g. \"On hold\"; keep longer words in a note.")
    return text


def parse_status(status: str, *, custom: bool = False) -> str:
    """A status a person typed: a known status or one of its aliases; any other text only
    with ``custom`` (then kept as given). A typo is refused with the closest known status."""
    from kg.errors import StatusError

    text = status.strip()
    known = ", ".join(KNOWN_STATUSES)
    if not text:
        raise StatusError("a reading status cannot be empty", hint=f"Use one of: {known}.")
    slug = known_status(text)
    if slug is not None:
        return slug
    if custom:
        return check_custom_status(text)
    close = get_close_matches(_status_key(text), list(_BY_KEY), n=1, cutoff=0.5)
    guess = f": did you mean {_BY_KEY[close[0]]}?" if close else ""
    raise StatusError(f"{status!r} is not a reading status{guess}",
                      hint=f"Use one of: {known}; or pass --custom to keep {text!r} as a status of your own.")


def status_concept_triples(status: str) -> list[Triple]:
    """The SKOS concept for a status; custom statuses keep their original text as label."""
    slug = status_slug(status)
    node = status_iri(slug)
    label = KNOWN_STATUSES.get(slug, status.strip())
    return [
        Triple(node, RDF.type, TKG.ReadingStatus),
        Triple(node, RDF.type, SKOS.Concept),
        Triple(node, SKOS.inScheme, STATUS_SCHEME),
        Triple(node, SKOS.prefLabel, text(label, "en" if slug in KNOWN_STATUSES else None)),
        Triple(node, SKOS.notation, text(slug, None)),
    ]


def known_status_triples() -> list[Triple]:
    out = [Triple(STATUS_SCHEME, RDF.type, SKOS.ConceptScheme),
           Triple(STATUS_SCHEME, SKOS.prefLabel, text("Reading statuses"))]
    for slug in KNOWN_STATUSES:
        out += status_concept_triples(slug)
    return out


@dataclass(frozen=True)
class StatusChange:
    paper: NamedNode
    status: str
    previous: str | None
    at: dt.datetime
    via: str


def _clear_current(tx: Transaction, paper: NamedNode) -> None:
    tx.update(
        f"DELETE WHERE {{ GRAPH {READING} {{ {paper} tkg:readingStatus ?s }} }} ;\n"
        f"DELETE WHERE {{ GRAPH {READING} {{ {paper} tkg:statusChangedAt ?t }} }}",
        touches=[READING],
    )


def _change_triples(
    paper: NamedNode, status: str, *, previous: str | None, via: str, at: dt.datetime, first_seen: bool
) -> tuple[list[Triple], StatusChange]:
    """The triples of one status change (the new current status and its event)."""
    slug = status_slug(status)
    event = ID["reading-event/" + uuid.uuid4().hex]
    stamp = datetime_literal(at)
    triples = [
        Triple(paper, TKG.readingStatus, status_iri(slug)),
        Triple(paper, TKG.statusChangedAt, stamp),
        Triple(event, RDF.type, TKG.ReadingEvent),
        Triple(event, TKG.paper, paper),
        Triple(event, TKG.status, status_iri(slug)),
        Triple(event, PROV.atTime, datetime_literal(at, precise=True)),  # orders changes within a second
        Triple(event, TKG.via, text(via, None)),
    ]
    if previous:
        triples.append(Triple(event, TKG.previousStatus, status_iri(status_slug(previous))))
    if first_seen:
        triples.append(Triple(paper, TKG.addedAt, stamp))
    if slug not in KNOWN_STATUSES:
        triples += status_concept_triples(status)
    return triples, StatusChange(paper, slug, status_slug(previous) if previous else None, at, via)


def status_change(
    tx: Transaction,
    paper: NamedNode,
    status: str,
    *,
    previous: str | None,
    via: str,
    at: dt.datetime | None = None,
    first_seen: bool = False,
) -> StatusChange:
    """Add a status change of ``paper`` to ``tx``: the new current status and an event.
    Every writer comes here, so a custom status is checked here too (:func:`check_custom_status`)."""
    if known_status(status) is None:
        status = check_custom_status(status)
    _clear_current(tx, paper)
    triples, change = _change_triples(paper, status, previous=previous, via=via, at=at or dt.datetime.now(dt.UTC),
                                      first_seen=first_seen)
    tx.insert(READING, triples)
    tx.changes.papers.add(paper.value)
    return change


def _removal_triples(papers: Iterable[NamedNode], *, previous: str, via: str, at: dt.datetime) -> list[Triple]:
    """One ``tkg:ReadingRemoval`` event for ``papers``, all taken off the reading state at
    ``at`` from the status ``previous``: one triple per paper beyond the event's own four, so
    a list replacement that drops 50,000 papers shrinks the reading graph (each paper's two
    current-status triples go) rather than growing it."""
    event = ID["reading-event/" + uuid.uuid4().hex]
    return [
        Triple(event, RDF.type, TKG.ReadingRemoval),
        *(Triple(event, TKG.paper, paper) for paper in papers),
        Triple(event, TKG.previousStatus, status_iri(status_slug(previous))),
        Triple(event, PROV.atTime, datetime_literal(at, precise=True)),
        Triple(event, TKG.via, text(via, None)),
    ]


def status_removal(
    tx: Transaction, paper: NamedNode, *, previous: str, via: str, at: dt.datetime | None = None
) -> None:
    """Take ``paper`` off the reading state in ``tx``: its current status goes, and a
    ``tkg:ReadingRemoval`` event records which status it had, when and where (a Zotero
    item deleted, or its status cleared there)."""
    _clear_current(tx, paper)
    tx.changes.papers.add(paper.value)
    tx.insert(READING, _removal_triples([paper], previous=previous, via=via, at=at or dt.datetime.now(dt.UTC)))


def _current_triples(store: GraphStore) -> dict[str, list[Triple]]:
    """paper IRI → the triples of its current status (the status and when it changed), as
    the reading graph holds them: two scans, whatever the number of papers."""
    out: dict[str, list[Triple]] = {}
    for predicate in (TKG.readingStatus, TKG.statusChangedAt):
        for row in store.select(f"SELECT ?paper ?o WHERE {{ GRAPH {READING} {{ ?paper {predicate} ?o }} }}"):
            paper, value = row["paper"], row["o"]
            if isinstance(paper, NamedNode) and value is not None:
                out.setdefault(paper.value, []).append(Triple(paper, predicate, value))
    return out


def current_statuses(store: GraphStore, papers: Sequence[NamedNode] | None = None) -> dict[str, tuple[str, str | None]]:
    """paper IRI → (status slug, changed-at) for every paper with a status (of ``papers``
    only, when given: one lookup each, not a scan of the reading state)."""
    rows = store.select(
        f"""SELECT ?paper ?slug ?at WHERE {{ GRAPH {READING} {{
              ?paper tkg:readingStatus ?status OPTIONAL {{ ?paper tkg:statusChangedAt ?at }} }}
              BIND(REPLACE(STR(?status), "^.*/status/", "") AS ?slug) }}""",
        None if papers is None else {"paper": list(papers)},
    )
    return {
        row["paper"].value: (row["slug"].value, row["at"].value if row["at"] else None)  # type: ignore[union-attr]
        for row in rows
    }


def set_status(
    store: GraphStore, paper: NamedNode, status: str, *, via: str = "cli", at: dt.datetime | None = None
) -> StatusChange:
    """Set ``paper``'s reading status in one atomic write (``kg reading set``, the web app).
    A custom status must pass :func:`check_custom_status`."""
    if known_status(status) is None:
        status = check_custom_status(status)
    current = current_statuses(store, [paper]).get(paper.value)
    with store.transaction(Activity(f"set reading status ({via})", stats={"updated": 1})) as tx:
        change = status_change(tx, paper, status, previous=current[0] if current else None,
                               via=via, at=at, first_seen=current is None)
    return change


def paper_known(store: GraphStore, paper: NamedNode) -> bool:
    """Whether the graph holds ``paper`` as a paper."""
    return store.ask("ASK { ?p a bibo:Document }", {"p": paper})


def paper_title(store: GraphStore, paper: NamedNode) -> str | None:
    """The title of ``paper`` (one, when sources give several), or None."""
    rows = store.select("SELECT (MIN(STR(?t)) AS ?title) WHERE { ?paper dcterms:title ?t }", {"paper": paper})
    value = rows.rows[0].get("title") if rows.rows else None
    return value.value if isinstance(value, Literal) else None


def add_paper(
    store: GraphStore, paper: NamedNode, status: str, *, title: str | None = None, via: str = "cli"
) -> StatusChange:
    """Add a paper the graph does not hold yet to the reading state with ``status``, in one
    write. Without a ``title`` it is marked as needing metadata (tkg:needsMetadata), which
    ``kg ingest arxiv`` fills in for an arXiv paper."""
    triples = [Triple(paper, RDF.type, BIBO.Document)]
    if title:
        triples.append(Triple(paper, DCTERMS.title, text(title, None)))
    else:
        triples.append(Triple(paper, TKG.needsMetadata, boolean(True)))
    try:
        triples.append(Triple(paper, TKG.arxivId, text(parse_arxiv_id(paper.value).id, None)))
    except ValueError:
        pass
    with store.transaction(Activity(f"add a paper ({via})", stats={"added": 1})) as tx:
        tx.insert(READING, triples)
        change = status_change(tx, paper, status, previous=None, via=via, first_seen=True)
    return change


@dataclass
class ImportReport:
    path: str
    entries: int
    papers: int
    read: int
    to_read: int
    with_note: int
    categories: int
    linked_techniques: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    status_changes: int = 0
    stated_counts: tuple[int, int, int] | None = None
    unchanged: bool = False
    #: Papers of the previous list that this one no longer has (their status went too).
    removed: list[str] = field(default_factory=list)
    #: (papers, read, to read) counted once per paper, for a paper listed in two sections.
    paper_counts: tuple[int, int, int] | None = None

    @property
    def counts_match(self) -> bool:
        """Whether the header's counts are the tables' (rows, or distinct papers)."""
        return self.stated_counts is None or self.stated_counts in (
            (self.entries, self.read, self.to_read), self.paper_counts)


def _listed_statuses(store: GraphStore) -> dict[str, str]:
    rows = store.select(
        f"""SELECT ?paper ?slug WHERE {{ GRAPH {READING_LIST} {{ ?paper tkg:listedStatus ?s }}
              BIND(REPLACE(STR(?s), "^.*/status/", "") AS ?slug) }}"""
    )
    return {row["paper"].value: row["slug"].value for row in rows}  # type: ignore[union-attr]


def import_reading_list(
    store: GraphStore,
    path: Path | str,
    catalog: Catalog,
    *,
    tx: Transaction | None = None,
    at: dt.datetime | None = None,
    accept_counts: bool = False,
) -> ImportReport:
    """Make the list in ``path`` the user's reading list (within ``tx`` if given, else in
    its own transaction): it replaces the previous list, papers that left the list leave
    the reading state, and papers that stay keep their statuses and notes.

    A malformed file, or one whose tables disagree with the counts its header states
    (unless ``accept_counts``), raises before anything is written."""
    reading_list = parse_reading_list(path)
    report, triples, listed = _prepare(reading_list, catalog)
    if not report.counts_match and not accept_counts:
        assert report.stated_counts is not None
        total, read, to_read = report.stated_counts
        raise ReadingListError(
            f"the header states {total} entries, {read} read, {to_read} to read, but the tables hold "
            f"{report.entries} entries, {report.read} read, {report.to_read} to read",
            path=str(path),
            hint="Nothing was written. A table may be cut short: fix the file or its header, or pass "
            "--accept-counts to import it as it is.",
        )
    own_tx = tx is None
    transaction = tx or store.transaction(Activity("kg import reading-list", used=[str(path)]))
    changed = transaction.replace_graph(READING_LIST, triples, sources=[str(Path(path))])
    report.unchanged = not changed
    at = at or dt.datetime.now(dt.UTC)
    previous_listed = _listed_statuses(store)
    current = current_statuses(store)
    held = _current_triples(store)
    # Written as data, one DELETE DATA and one INSERT DATA, never an update per paper.
    cleared: list[Triple] = []
    added: list[Triple] = []
    gone = previous_listed.keys() - {p.value for p in listed}
    titles = _titles(store, gone)
    removed: dict[str, list[NamedNode]] = {}  # previous status → the papers that had it: one event each
    for paper_value in sorted(gone):
        now_status = current.get(paper_value)
        if now_status is not None:
            cleared += held.get(paper_value, [])
            removed.setdefault(now_status[0], []).append(NamedNode(paper_value))
        report.removed.append(titles.get(paper_value, paper_value))
    for previous, papers in sorted(removed.items()):
        added += _removal_triples(papers, previous=previous, via="reading-list", at=at)
    for paper, listed_status in listed.items():
        now_status = current.get(paper.value)
        before = previous_listed.get(paper.value)
        if now_status is None or (before is not None and before != listed_status):
            if known_status(listed_status) is None:  # as status_change checks every writer's
                listed_status = check_custom_status(listed_status)
            cleared += held.get(paper.value, [])
            more, _ = _change_triples(paper, listed_status, previous=now_status[0] if now_status else None,
                                      via="reading-list", at=at, first_seen=now_status is None)
            added += more
            report.status_changes += 1
    if report.status_changes:
        added += known_status_triples()
    transaction.delete(READING, cleared)
    transaction.insert(READING, added)
    transaction.activity.stats.update(
        {"entries": report.entries, "added": report.status_changes, "removed": len(report.removed)}
    )
    if own_tx:
        transaction.commit()
    return report


def _titles(store: GraphStore, papers: Iterable[str]) -> dict[str, str]:
    wanted = [NamedNode(p) for p in papers]
    if not wanted:
        return {}
    rows = store.select("SELECT ?paper (SAMPLE(?t) AS ?title) WHERE { ?paper dcterms:title ?t } GROUP BY ?paper",
                        {"paper": wanted})
    return {str(r["paper"]): str(r["title"]) for r in rows.records()}


def _prepare(reading_list: ReadingList, catalog: Catalog) -> tuple[ImportReport, list[Triple], dict[NamedNode, str]]:
    papers = PaperMatcher(catalog.papers.values())
    triples = [triple for triple, _paper in reading_list_triples(reading_list, papers)]
    listed: dict[NamedNode, str] = {}
    notes: set[str] = set()
    unmatched: list[str] = []
    by_paper_iri: dict[str, list[str]] = {}
    for tech in catalog.techniques.values():
        if tech.paper:
            by_paper_iri.setdefault(catalog.papers[tech.paper].iri.value, []).append(tech.name)
    linked: list[str] = []
    for entry in reading_list.entries:
        node, known = entry_paper_iri(entry, papers)
        if known is None:
            unmatched.append(entry.title)
        # A paper listed twice: "read" anywhere wins over "to-read".
        if listed.get(node) != "read":
            listed[node] = entry.status
        if entry.has_note:
            notes.add(node.value)
        linked += by_paper_iri.get(node.value, [])
    entries, read, to_read = reading_list.counts
    report = ImportReport(
        path=reading_list.path, entries=entries, papers=len(listed), read=read, to_read=to_read,
        with_note=len(notes), categories=len(reading_list.categories),
        linked_techniques=sorted(set(linked)), unmatched=unmatched,
        stated_counts=reading_list.stated_counts,
        paper_counts=(len(listed), sum(s == "read" for s in listed.values()),
                      sum(s == "to-read" for s in listed.values())),
    )
    triples += status_concept_triples_for(listed.values())
    return report, triples, listed


def status_concept_triples_for(statuses: Iterable[str]) -> list[Triple]:
    out: list[Triple] = []
    for status in sorted(set(statuses)):
        out += status_concept_triples(status)
    return out


def resolve_paper(store: GraphStore, query: str) -> NamedNode:
    """Find a paper by IRI, arXiv id, exact or partial title; suggest close titles otherwise."""
    value = query.strip()
    if value.startswith(("http://", "https://")):
        return NamedNode(value)
    try:
        return parse_arxiv_id(value).iri
    except ValueError:
        pass
    # A title or alternative title given exactly is one index lookup; the match below reads
    # every title (about a minute at 700k papers).
    exact = store.select(
        "SELECT DISTINCT ?paper WHERE { ?paper dcterms:title|dcterms:alternative ?title . ?paper a bibo:Document }",
        {"title": [Literal(value), Literal(value, language="en")]},
    )
    if len(exact) == 1 and isinstance(paper := exact.rows[0]["paper"], NamedNode):
        return paper
    rows = store.select(
        """SELECT DISTINCT ?paper ?title WHERE { ?paper a bibo:Document .
             { ?paper dcterms:title ?title } UNION { ?paper dcterms:alternative ?title } }"""
    )
    titles: dict[str, set[str]] = {}
    for row in rows:
        titles.setdefault(normalize_title(str(python_value(row["title"]))), set()).add(row["paper"].value)  # type: ignore[union-attr]
    wanted = normalize_title(value)
    if wanted in titles and len(titles[wanted]) == 1:
        return NamedNode(next(iter(titles[wanted])))
    partial = {iri for title, iris in titles.items() if wanted and wanted in title for iri in iris}
    if len(partial) == 1:
        return NamedNode(partial.pop())
    display = {normalize_title(str(python_value(r["title"]))): str(python_value(r["title"])) for r in rows}
    if len(partial) > 1:
        names = sorted({display[t] for t, iris in titles.items() if iris & partial})[:5]
        raise NotFoundError(f"{query!r} matches {len(partial)} papers", suggestions=names,
                            hint="Be more specific, or give the arXiv id: " + "; ".join(names))
    close = get_close_matches(wanted, list(titles), n=3, cutoff=0.5)
    suggestions = [display[c] for c in close]
    raise NotFoundError(f"no paper matches {query!r}", suggestions=suggestions,
                        hint=None if suggestions else "Give its arXiv id or URL, or words of its title as "
                        "kg query bibliography shows it; kg reading set --add adds a paper the graph does not hold.")


def reading_rows(
    store: GraphStore, *, status: str | None = None, category: str | None = None,
    papers: Sequence[NamedNode] | None = None,
) -> list[dict[str, object]]:
    """The reading list with current statuses, asked of the store (the named query
    ``reading-list``, which fresh analytics tables answer too: see :func:`listed_rows`);
    ``status``, ``category`` (a case-blind substring of a category name) and ``papers``
    (these papers only) filter it."""
    from queries import get

    bindings: dict[str, Term | Sequence[Term]] = {}
    if papers is not None:
        if not papers:
            return []
        bindings["paper"] = list(papers)
    if status:
        bindings["status"] = status_iri(status_slug(status))
    if category:
        bindings["category"] = Literal(category)
    return listed_rows(store.select(get("reading-list").text, bindings).records())


def listed_rows(records: Iterable[dict[str, Any]]) -> list[dict[str, object]]:
    """The rows of the named query ``reading-list`` (as plain values) as ``kg reading list``
    and the web app show them: the status by its name, the categories as a list, the notes'
    texts as one (HTML as paragraphs), ``has_note`` (the list's flag, or a note) and a label."""
    out = []
    for record in records:
        record["status"] = str(record["status"]).rsplit("/status/", 1)[-1]
        categories = record["categories"]
        record["categories"] = [c for c in str(categories).split(" | ") if c] if categories else []
        notes = record.pop("notes")  # (most papers have none)
        bodies = [note_text(b) for b in str(notes).split("\u001f") if b.strip()] if notes else []
        record["note"] = "\n\n".join(b for b in bodies if b) or None
        record["has_note"] = bool(record.pop("hasNote")) or bool(record["note"])
        title = record["title"]
        record["label"] = str(title) if title else paper_label(str(record["paper"]))
        out.append(record)
    return out


def prefer_reading(note: str, body: str) -> str:
    """The filter that keeps ``body`` (the text of ``note``) unless the reading graph gives
    the note another text, or the reader deleted it (:mod:`kg.notes`): the reader's word
    replaces the copy of a Zotero note in the zotero graph."""
    var = body.lstrip("?$")
    return (f"FILTER NOT EXISTS {{ {note} tkg:deletedAt ?gone_{var} }} "
            f"OPTIONAL {{ GRAPH {READING} {{ {note} rdf:value ?mine_{var} }} }} "
            f"FILTER(!BOUND(?mine_{var}) || sameTerm(?mine_{var}, {body}))")


def note_text(body: str) -> str:
    """A note's text: a Zotero note's HTML as plain paragraphs (plain text is kept as it is)."""
    if "<" not in body:
        return body.strip()
    from html.parser import HTMLParser

    class _Text(HTMLParser):
        BLOCKS = {"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "blockquote", "pre"}

        def __init__(self) -> None:
            super().__init__(convert_charrefs=True)
            self.parts: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            if tag in self.BLOCKS:
                self.parts.append("\n")

        def handle_data(self, data: str) -> None:
            self.parts.append(data)

    parser = _Text()
    parser.feed(body)
    parser.close()
    paragraphs = (" ".join(line.split()) for line in "".join(parser.parts).split("\n"))
    return "\n".join(p for p in paragraphs if p)


@dataclass(frozen=True)
class IndexEntry:
    """Where a paper stands on the reading list, without its details."""

    paper: str
    status: str
    categories: tuple[str, ...]
    position: int | None
    #: Only for papers without a position, which sort by title after the others.
    title: str | None = None

    @property
    def order(self) -> tuple[bool, int, str]:
        return (self.position is None, self.position or 0, self.title or "")


def reading_index(store: GraphStore) -> list[IndexEntry]:
    """Every paper with a reading status, its status, categories and place on the list,
    in list order: what a page needs to choose the papers it shows before asking
    :func:`reading_rows` for their details. Each fact comes from a scan of one property,
    joined here, which on a large list is many times faster than :func:`reading_rows`."""

    def pairs(sparql: str) -> list[tuple[str, Any]]:
        return [(str(row["s"]), row["o"]) for row in store.select(sparql).records()]

    labels = dict(pairs("""SELECT ?s (SAMPLE(?l) AS ?o) WHERE {
                             ?s a tkg:ReadingListCategory ; skos:prefLabel ?l } GROUP BY ?s"""))
    statuses = {paper: str(status).rsplit("/status/", 1)[-1]
                for paper, status in pairs(f"""SELECT ?s ?o WHERE {{ ?s tkg:readingStatus ?o .
                                                 {own_first("?s", "readingStatus", "?o", "own")} }}""")}
    categories: dict[str, set[str]] = {}
    for paper, category in pairs("SELECT ?s ?o WHERE { ?s tkg:readingCategory ?o }"):
        if paper in statuses and str(category) in labels:
            categories.setdefault(paper, set()).add(labels[str(category)])
    positions: dict[str, int] = {}
    for paper, position in pairs("SELECT ?s ?o WHERE { ?s tkg:position ?o }"):
        if paper in statuses and isinstance(position, int):
            positions[paper] = min(position, positions.get(paper, position))
    titles: dict[str, str] = {}
    if len(positions) < len(statuses):  # papers off the list's order sort by title
        for paper, title in pairs("SELECT ?s ?o WHERE { ?s tkg:readingStatus ?status ; dcterms:title ?o }"):
            if paper not in positions:
                titles.setdefault(paper, str(title))
    index = [IndexEntry(paper, status, tuple(sorted(categories.get(paper, ()))), positions.get(paper),
                        titles.get(paper)) for paper, status in statuses.items()]
    return sorted(index, key=lambda e: e.order)

