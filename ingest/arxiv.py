"""arXiv: paper metadata from the arXiv API into the ``arxiv`` named graph.

Fetching uses the ``arxiv`` package (4.x) for what it does well (query URLs, paging,
turning Atom entries into ``arxiv.Result``) with its HTTP replaced by TechKG's client
(:mod:`ingest.http`): one User-Agent, arXiv's politeness (one request every 3 s, one
connection at a time), retries, the on-disk cache and ``--offline`` all apply, and an
error feed can be read to name the id arXiv rejected. The endpoint is the package's
query URL format, pointed at ``api_url``.

- :meth:`ArxivSource.fetch` looks ids up in batches of up to 100 per request. Old-style
  (``astro-ph/0601001``) and versioned (``2104.12255v1``) ids are normalised; the
  version seen is recorded; an id the API does not return is reported as missing.
- :meth:`ArxivSource.search` runs a query (``ti:"delta rule"``); its results are
  candidate papers (``tkg:candidate true``) and stay off the reading list unless asked.
- :func:`ingest_arxiv` writes what was fetched into the ``arxiv`` graph in one
  transaction, merged with what earlier runs found. Papers keep the node the graph
  already has for them (by arXiv id, arXiv IRI or DOI), so no paper gets two nodes.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import arxiv
import httpx
from arxiv import _feed
from pyoxigraph import NamedNode, Triple

from ingest.http import commit_cache, describe_status, expect_xml, send, stats_for
from ingest.merge import Bundle, IngestReport, merge
from ingest.safexml import parse_lxml
from ingest.secrets import safe_url
from kg.errors import IngestError, OfflineError
from kg.graphs import ARXIV, CATALOG, CITATIONS, READING
from kg.iris import ArxivId, normalize_doi, parse_arxiv_id, person_iri, skolem
from kg.store.base import Activity, GraphStore
from kg.vocab import (
    BIBO,
    DCTERMS,
    FABIO,
    FOAF,
    ID,
    RDF,
    TKG,
    boolean,
    datetime_literal,
    integer,
    text,
)

__all__ = [
    "DEFAULT_API_URL",
    "MAX_BATCH",
    "ArxivFetch",
    "ArxivRecord",
    "ArxivSource",
    "ingest_arxiv",
    "ingest_records",
    "known_papers",
    "record_bundle",
    "tracked_ids",
]

DEFAULT_API_URL = "https://export.arxiv.org/api/query"
#: Ids per request: longer GET URLs fail with 414 and arXiv truncates long lists.
MAX_BATCH = 100
_ATOM = "{http://www.w3.org/2005/Atom}"
_ERROR_ID = re.compile(r"^https?://arxiv\.org/api/errors")
_PERSON_BASE = ID["person/"].value

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ArxivRecord:
    """One paper as arXiv describes it (from the API or from OAI-PMH)."""

    id: str
    version: int | None
    title: str
    abstract: str = ""
    authors: tuple[str, ...] = ()
    primary_category: str | None = None
    categories: tuple[str, ...] = ()
    published: dt.datetime | None = None
    updated: dt.datetime | None = None
    doi: str | None = None
    journal_ref: str | None = None
    comment: str | None = None
    pdf_url: str | None = None
    subjects: tuple[str, ...] = ()

    @property
    def arxiv_id(self) -> ArxivId:
        return ArxivId(self.id, self.version)

    @classmethod
    def from_result(cls, result: arxiv.Result) -> ArxivRecord:
        parsed = parse_arxiv_id(result.entry_id)
        return cls(
            id=parsed.id,
            version=parsed.version,
            title=_clean(result.title),
            abstract=_clean(result.summary),
            authors=tuple(_clean(a.name) for a in result.authors if a.name and a.name.strip()),
            primary_category=result.primary_category or None,
            categories=tuple(dict.fromkeys(c for c in result.categories if c)),
            published=result.published,
            updated=result.updated,
            doi=_clean(result.doi) if result.doi else None,
            journal_ref=_clean(result.journal_ref) if result.journal_ref else None,
            comment=_clean(result.comment) if result.comment else None,
            pdf_url=result.pdf_url,
        )


def _clean(value: str | None) -> str:
    return " ".join((value or "").split())


@dataclass
class ArxivFetch:
    """What a lookup found: records by versionless id, ids arXiv did not return, and
    (offline) ids whose batch the cache could not answer."""

    records: dict[str, ArxivRecord] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    not_in_cache: list[str] = field(default_factory=list)


class _FeedClient(arxiv.Client):  # type: ignore[misc]  # the arxiv package ships no types
    """The arxiv package's client with its HTTP done by an ``httpx.Client``.

    Paging, URL building (``query_url_format``) and result construction stay the
    package's; fetching a page goes through TechKG's client, is checked (status,
    content type, error feeds, safe and strict XML) and then parsed by the package.
    """

    def __init__(self, http: httpx.Client, api_url: str, page_size: int) -> None:
        super().__init__(page_size=page_size, delay_seconds=0.0, num_retries=0)
        self.query_url_format = api_url.rstrip("?") + "?{}"
        self._http = http

    def _parse_feed(self, url: str, first_page: bool = True, _try_index: int = 0) -> _feed.ParsedFeed:
        response = send(self._http, "GET", url, source="arxiv")
        where = safe_url(url)
        if response.status_code != 200:
            _raise_error_feed(response.content, where, response.status_code)
            raise describe_status(response, source="arxiv", what="the query")
        body = expect_xml(response, source="arxiv")
        root = parse_lxml(body, source="arxiv", url=where)
        _raise_error_entries(root, where, 200)
        feed = _feed.parse(body)
        commit_cache(response)
        if not feed.results and not first_page:
            raise IngestError(f"arxiv: {where} returned an empty page in the middle of the results",
                              source="arxiv", url=where,
                              hint="arXiv's API does this now and then; run the command again.")
        return feed


def _raise_error_entries(root: Any, url: str, status: int) -> None:
    for entry in root.iter(f"{_ATOM}entry"):
        entry_id = (entry.findtext(f"{_ATOM}id") or "").strip()
        title = (entry.findtext(f"{_ATOM}title") or "").strip()
        if _ERROR_ID.match(entry_id) or title == "Error":
            message = _clean(entry.findtext(f"{_ATOM}summary")) or "unknown error"
            bad = re.search(r"\bfor (.+)$", message)
            what = f"the id {bad.group(1)!r}" if bad and "id" in message else "the query"
            hint = (f"Correct or remove {bad.group(1)!r}: arXiv ids look like 2104.12255, 2104.12255v1 "
                    "or astro-ph/0601001." if bad and "id" in message
                    else "Check the query syntax (https://info.arxiv.org/help/api/user-manual.html).")
            raise IngestError(f"arxiv rejected {what}: {message} (HTTP {status})", source="arxiv", url=url,
                              status=status, hint=hint)


def _raise_error_feed(body: bytes, url: str, status: int) -> None:
    try:
        root = parse_lxml(body, source="arxiv", url=url)
    except IngestError:
        return
    _raise_error_entries(root, url, status)


class ArxivSource:
    """The arXiv API, through ``client`` (see :func:`ingest.http.build_client`)."""

    def __init__(self, *, client: httpx.Client, api_url: str = DEFAULT_API_URL, batch_size: int = MAX_BATCH) -> None:
        if not 1 <= batch_size <= MAX_BATCH:
            raise IngestError(f"batch_size must be 1 to {MAX_BATCH}, not {batch_size}", source="arxiv")
        self.client = client
        self.api_url = api_url
        self.batch_size = batch_size

    def _feed_client(self, page_size: int) -> _FeedClient:
        return _FeedClient(self.client, self.api_url, page_size)

    def fetch(self, ids: Iterable[str], *, progress: Progress | None = None) -> ArxivFetch:
        """Look up ``ids`` in batches. Ids arXiv does not know are in ``missing``."""
        wanted: dict[str, str] = {}  # versionless id (or the raw text) -> what to ask for
        for raw in ids:
            value = raw.strip()
            if not value:
                continue
            try:
                parsed = parse_arxiv_id(value)
            except ValueError:
                wanted.setdefault(value, value)  # arXiv is the judge; it names what it rejects
                continue
            if parsed.id not in wanted or parsed.version is not None:
                wanted[parsed.id] = str(parsed)
        out = ArxivFetch()
        keys = list(wanted)
        client = self._feed_client(MAX_BATCH)
        done = 0
        for start in range(0, len(keys), self.batch_size):
            batch = keys[start:start + self.batch_size]
            search = arxiv.Search(id_list=[wanted[k] for k in batch], max_results=len(batch))
            try:
                results = list(client.results(search))
            except OfflineError:
                out.not_in_cache.extend(wanted[k] for k in batch)
                results = []
            else:
                for result in results:
                    record = ArxivRecord.from_result(result)
                    out.records[record.id] = record
                out.missing.extend(wanted[k] for k in batch if k not in out.records)
            done += len(batch)
            if progress:
                progress(done, len(keys))
        return out

    def search(self, query: str, *, max_results: int = 10, progress: Progress | None = None) -> list[ArxivRecord]:
        """The first ``max_results`` results of ``query`` (arXiv's search syntax)."""
        if max_results < 1:
            raise IngestError("--max must be at least 1", source="arxiv")
        client = self._feed_client(min(max_results, MAX_BATCH))
        records: list[ArxivRecord] = []
        for result in client.results(arxiv.Search(query=query, max_results=max_results)):
            records.append(ArxivRecord.from_result(result))
            if progress:
                progress(len(records), max_results)
        return records


# -- the graph --------------------------------------------------------------------------


def known_papers(store: GraphStore) -> dict[str, NamedNode]:
    """Existing paper nodes by ``arxiv:<id>`` and ``doi:<doi>``, so a fetched paper joins
    the node the graph already has for it."""
    rows = store.select(
        """SELECT DISTINCT ?paper ?id ?doi WHERE { ?paper a bibo:Document .
             OPTIONAL { ?paper tkg:arxivId ?id } OPTIONAL { ?paper bibo:doi ?doi } }"""
    )
    out: dict[str, NamedNode] = {}
    for row in rows:
        paper = row["paper"]
        if not isinstance(paper, NamedNode):
            continue
        if row["id"] is not None:
            out.setdefault("arxiv:" + row["id"].value, paper)  # type: ignore[union-attr]
        elif paper.value.startswith("https://arxiv.org/abs/"):
            try:
                out.setdefault("arxiv:" + parse_arxiv_id(paper.value).id, paper)
            except ValueError:
                pass
        if row["doi"] is not None:
            try:
                out.setdefault("doi:" + normalize_doi(row["doi"].value), paper)  # type: ignore[union-attr]
            except ValueError:
                pass
        if paper.value.startswith("https://doi.org/"):
            out.setdefault("doi:" + paper.value.removeprefix("https://doi.org/"), paper)
    return out


def tracked_ids(store: GraphStore) -> list[str]:
    """The arXiv ids of every paper the graph holds (catalog, reading list, earlier runs),
    but not the candidates that only the citations graph knows (name them to fetch them)."""
    rows = store.select(
        f"""SELECT DISTINCT ?paper ?id WHERE {{ {{ GRAPH ?g {{ ?paper a bibo:Document }} FILTER(?g != {CITATIONS}) }}
             UNION {{ ?paper tkg:readingStatus ?s }}
             OPTIONAL {{ ?paper tkg:arxivId ?id }}
             FILTER(BOUND(?id) || STRSTARTS(STR(?paper), "https://arxiv.org/abs/")) }}"""
    )
    ids: set[str] = set()
    for row in rows:
        value = row["id"].value if row["id"] is not None else row["paper"].value  # type: ignore[union-attr]
        try:
            ids.add(parse_arxiv_id(value).id)
        except ValueError:
            continue
    return sorted(ids)


def _node_for(record: ArxivRecord, known: dict[str, NamedNode]) -> NamedNode:
    node = known.get("arxiv:" + record.id)
    if node is None and record.doi:
        for doi in record.doi.split():
            try:
                node = known.get("doi:" + normalize_doi(doi))
            except ValueError:
                continue
            if node is not None:
                break
    return node or record.arxiv_id.iri


def _iri(value: str | None) -> NamedNode | None:
    if value and value.startswith(("http://", "https://")) and not re.search(r"[\s<>\"{}|\\^`]", value):
        return NamedNode(value)
    return None


_TYPE, _SEQ, _TITLE, _ABSTRACT, _SUBJECT = RDF.type, RDF.Seq, DCTERMS.title, DCTERMS.abstract, DCTERMS.subject
_ISSUED, _MODIFIED, _CREATOR = DCTERMS.issued, DCTERMS.modified, DCTERMS.creator
_DOI, _AUTHORS = BIBO.doi, BIBO.authorList
_ID, _VERSION, _PRIMARY, _CATEGORY = TKG.arxivId, TKG.arxivVersion, TKG.arxivPrimaryCategory, TKG.arxivCategory
_JOURNAL, _COMMENT, _PDF, _CANDIDATE, _FIRST = TKG.journalRef, TKG.arxivComment, TKG.pdf, TKG.candidate, TKG.firstAuthor
_PAPER_TYPES = (BIBO.Document, BIBO.AcademicArticle, FABIO.Preprint)
_TRUE = boolean(True)


@functools.lru_cache(maxsize=65536)
def _person(name: str) -> tuple[NamedNode, tuple[Triple, ...]]:
    node = person_iri(name)
    return node, (Triple(node, _TYPE, FOAF.Person), Triple(node, _TYPE, FOAF.Agent),
                  Triple(node, FOAF.name, text(name, None)))


@functools.lru_cache(maxsize=256)
def _member(position: int) -> NamedNode:
    return RDF[f"_{position}"]


def record_bundle(record: ArxivRecord, node: NamedNode, *, candidate: bool = False) -> Bundle:
    """The triples of one paper in the ``arxiv`` graph."""
    seq = skolem("arxiv-authors", record.id)
    t: list[Triple] = [Triple(node, _TYPE, kind) for kind in _PAPER_TYPES]
    t += [Triple(node, _TITLE, text(record.title or record.id, None)), Triple(node, _ID, text(record.id, None))]
    if record.abstract:
        t.append(Triple(node, _ABSTRACT, text(record.abstract, None)))
    if record.version:
        t.append(Triple(node, _VERSION, integer(record.version)))
    if record.primary_category:
        t.append(Triple(node, _PRIMARY, text(record.primary_category, None)))
    t += [Triple(node, _CATEGORY, text(category, None)) for category in record.categories]
    t += [Triple(node, _SUBJECT, text(subject, None)) for subject in record.subjects]
    if record.published:
        t.append(Triple(node, _ISSUED, datetime_literal(record.published)))
    if record.updated:
        t.append(Triple(node, _MODIFIED, datetime_literal(record.updated)))
    t += [Triple(node, _DOI, text(doi, None)) for doi in (record.doi or "").split() if doi.startswith("10.")]
    if record.journal_ref:
        t.append(Triple(node, _JOURNAL, text(record.journal_ref, None)))
    if record.comment:
        t.append(Triple(node, _COMMENT, text(record.comment, None)))
    pdf = _iri(record.pdf_url)
    if pdf is not None:
        t.append(Triple(node, _PDF, pdf))
    if candidate:
        t.append(Triple(node, _CANDIDATE, _TRUE))
    if record.authors:
        t += [Triple(node, _AUTHORS, seq), Triple(seq, _TYPE, _SEQ)]
        seen: set[NamedNode] = set()
        for position, name in enumerate(record.authors, start=1):
            person, about = _person(name)
            t.append(Triple(seq, _member(position), person))
            if person not in seen:
                seen.add(person)
                t.append(Triple(node, _CREATOR, person))
                t += about
        t.append(Triple(node, _FIRST, _person(record.authors[0])[0]))
    return Bundle(key=record.id, node=node, triples=t, owned={node, seq})


def _nodes(store: GraphStore, sparql: str) -> set[str]:
    return {row["node"].value for row in store.select(sparql) if row["node"] is not None}  # type: ignore[union-attr]


def ingest_arxiv(
    store: GraphStore,
    source: ArxivSource,
    *,
    ids: Sequence[str] | None = None,
    query: str | None = None,
    max_results: int = 10,
    to_read: bool = False,
    progress: Progress | None = None,
    label: str = "kg ingest arxiv",
) -> IngestReport:
    """Fetch papers (``ids``, a search ``query``, or every arXiv paper the graph tracks)
    and merge them into the ``arxiv`` graph in one transaction.

    Search results are candidates; they (and named ids) go on the reading list as
    ``to-read`` only with ``to_read``. Nothing is written when fetching fails.
    """
    before = stats_for(source.client).as_dict()
    if query:
        records = source.search(query, max_results=max_results, progress=progress)
        fetched = ArxivFetch(records={r.id: r for r in records})
    else:
        wanted = list(ids) if ids else tracked_ids(store)
        if not wanted:
            raise IngestError("there are no arXiv ids to look up: the graph tracks no arXiv paper", source="arxiv",
                              hint="Run kg build first, or name ids: kg ingest arxiv 2412.06464 1706.03762")
        fetched = source.fetch(wanted, progress=progress)
    if fetched.not_in_cache and not fetched.records:
        raise OfflineError(
            f"arxiv: --offline, and the cache answers none of the {len(fetched.not_in_cache)} ids: "
            + ", ".join(fetched.not_in_cache[:20]) + (" ..." if len(fetched.not_in_cache) > 20 else ""),
            source="arxiv", hint="Run once without --offline to fill the cache; nothing was written.")
    return ingest_records(store, list(fetched.records.values()), client=source.client, used=source.api_url,
                          label=label, mode="search" if query else "ids", candidates=bool(query), to_read=to_read,
                          missing=fetched.missing, not_in_cache=fetched.not_in_cache, before=before)


def ingest_records(
    store: GraphStore,
    records: Sequence[ArxivRecord],
    *,
    client: httpx.Client,
    used: str,
    label: str,
    mode: str,
    candidates: bool = False,
    to_read: bool = False,
    missing: Sequence[str] = (),
    not_in_cache: Sequence[str] = (),
    before: dict[str, Any] | None = None,
) -> IngestReport:
    """Merge ``records`` (from the API or OAI-PMH) into the ``arxiv`` graph, as one
    :class:`prov:Activity` labelled ``label`` that used ``used``."""
    report = IngestReport(source="arxiv", mode=mode, store=store.location, missing=list(missing),
                          not_in_cache=list(not_in_cache))
    known = known_papers(store)
    listed = _nodes(store, f"""SELECT DISTINCT ?node WHERE {{ {{ ?node tkg:readingStatus ?s }} UNION
                                {{ ?node tkg:listedStatus ?s }}
                                UNION {{ GRAPH {CATALOG} {{ ?node a bibo:Document }} }} }}""")
    earlier = _nodes(store, f"SELECT ?node WHERE {{ GRAPH {ARXIV} {{ ?node tkg:candidate true }} }}")
    fetched_before = _nodes(store, f"SELECT ?node WHERE {{ GRAPH {ARXIV} {{ ?node tkg:arxivId ?id }} }}")
    bundles = []
    new_on_list: list[NamedNode] = []
    for record in records:
        node = _node_for(record, known)
        on_list = node.value in listed
        # A candidate stays one until it is on the reading list; a paper fetched by id never becomes one.
        found_by_search = candidates and node.value not in fetched_before
        candidate = (found_by_search or node.value in earlier) and not on_list and not to_read
        bundles.append(record_bundle(record, node, candidate=candidate))
        if to_read and not on_list:
            new_on_list.append(node)
    merged, outcomes = merge(store.triples(ARXIV), bundles, collectable=lambda n: n.value.startswith(_PERSON_BASE))
    report.record(outcomes)
    report.nodes = list(dict.fromkeys([*(b.node.value for b in bundles if outcomes.get(b.key) != "unchanged"),
                                       *(n.value for n in new_on_list)]))
    report.http = stats_for(client).since(before or {})
    stats = {**report.counts(), "requests": report.http.get("requests", 0)}
    activity = Activity(label, used=[safe_url(used)], stats=stats)
    with store.transaction(activity) as tx:
        report.graph_written = tx.replace_graph(ARXIV, merged, force=True)
        if new_on_list:
            from kg.reading import current_statuses, known_status_triples, status_change

            current = current_statuses(store, new_on_list)
            for node in new_on_list:
                if node.value not in current:
                    status_change(tx, node, "to-read", previous=None, via="cli", first_seen=True)
            tx.insert(READING, known_status_triples())
            report.notes.append(f"{len(new_on_list)} papers put on the reading list as to-read")
    report.activity = activity.iri.value
    return report
