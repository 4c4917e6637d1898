"""``kg ingest citations``: Semantic Scholar's citation graph into the ``citations`` graph.

One run, fetched first and written in one transaction (a failed run writes nothing):

1. The papers to look at: the ids given (any form the API takes), a search, or every
   paper of the graph with an arXiv id or DOI (papers that are only citation candidates
   excepted). One ``POST /paper/batch`` per 500 of them gives their S2 ids and counts;
   an id the API does not know is reported as missing.
2. Their citation lists: ``/citations`` (papers citing them) and ``/references`` (papers
   they cite), both by default. An incremental run fetches a list only when the paper's
   ``citationCount`` (or ``referenceCount``) changed since the list was last fetched, so a
   refresh where nothing changed costs the batch requests alone.
3. Optionally (``recommendations``), Semantic Scholar's recommendations for the papers
   marked read and the techniques' papers, kept as ``tkg:recommendedFor``.

The ``citations`` graph then holds (see :mod:`kg.citations` for the CiTO terms):

- for each paper looked at, on the node the graph already has for it: ``tkg:s2PaperId``,
  ``tkg:corpusId``, its abstract (``dcterms:abstract``), TLDR (``tkg:tldr``) and fields of
  study (``tkg:fieldOfStudy``) for kg link, the counts, and the counts its lists were
  fetched at;
- each citation of a fetched list: ``cito:cites``, the intent properties, and a
  ``cito:Citation`` node with its context sentences and intents and the influential flag;
- each paper new to TechKG met at the other end of a citation (or recommended): a
  candidate paper (``tkg:candidate true``) with title, abstract, fields of study, year,
  venue, authors, arXiv id, DOI and S2 ids. A paper with an arXiv id gets its arXiv IRI, one with a DOI its DOI IRI,
  so ``kg ingest arxiv`` and the catalog land on the same node; others get their
  semanticscholar.org IRI.

Citations of lists this run did not fetch stay as they were; candidates nothing refers
to any more are dropped. The graph's provenance (run, time, counts) is the
transaction's ``prov:Activity``.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyoxigraph import NamedNode, Triple

from ingest.arxiv import known_papers
from ingest.http import stats_for
from ingest.merge import IngestReport
from ingest.secrets import safe_url
from ingest.semanticscholar import SOURCE, S2Edge, S2Paper, SemanticScholarSource, paper_id
from kg import scratch
from kg.citations import CITATION_PREDICATES, INFLUENTIAL, INTENT_PROPERTIES, citation_node, context_node
from kg.errors import IngestError, OfflineError
from kg.graphs import CITATIONS, READING
from kg.iris import arxiv_iri, doi_iri, person_iri, skolem
from kg.store.base import Activity, GraphStore
from kg.vocab import BIBO, CITO, DCTERMS, FOAF, RDF, TKG, boolean, date_literal, integer, text

__all__ = ["CitationRun", "Tracked", "ingest_citations", "s2_iri", "tracked_papers"]

Progress = Callable[[int, int], None]
S2_PAPER_BASE = "https://www.semanticscholar.org/paper/"
#: Above this many triples, a first run writes the graph through the store's bulk loader.
BULK_TRIPLES = 20_000
_PERSON_BASE = "https://w3id.org/techkg/id/person/"
_TRUE = boolean(True)


def s2_iri(s2_id: str) -> NamedNode:
    """The node of a paper known only to Semantic Scholar: its semanticscholar.org page."""
    return NamedNode(S2_PAPER_BASE + s2_id)


@dataclass
class Tracked:
    """A paper of the graph to look up, with what the last run recorded about it."""

    node: NamedNode
    request_id: str
    s2_id: str | None = None
    citation_list_count: int | None = None
    reference_list_count: int | None = None
    list_limit: int | None = None


def _value(row: dict[str, Any], name: str) -> str | None:
    term = row.get(name)
    return term.value if term is not None else None


def _state(store: GraphStore) -> dict[str, dict[str, str]]:
    """What the citations graph records about each paper an earlier run looked up: its S2
    id, its counts, the counts its lists were fetched at and their limit."""
    rows = store.select(
        f"""SELECT ?paper ?s2 ?cc ?rc ?ic ?cl ?rl ?limit WHERE {{ GRAPH {CITATIONS} {{ ?paper tkg:listLimit ?limit .
              OPTIONAL {{ ?paper tkg:s2PaperId ?s2 }}
              OPTIONAL {{ ?paper tkg:citationCount ?cc }} OPTIONAL {{ ?paper tkg:referenceCount ?rc }}
              OPTIONAL {{ ?paper tkg:influentialCitationCount ?ic }}
              OPTIONAL {{ ?paper tkg:citationListCount ?cl }} OPTIONAL {{ ?paper tkg:referenceListCount ?rl }}
              OPTIONAL {{ ?paper dcterms:abstract ?ab }} OPTIONAL {{ ?paper tkg:tldr ?tl }} }} }}"""
    )
    out: dict[str, dict[str, str]] = {}
    for row in rows:
        record = {k: v for k in ("s2", "cc", "rc", "ic", "cl", "rl", "limit", "ab", "tl")
                  if (v := _value(row, k)) is not None}
        out[row["paper"].value] = record  # type: ignore[union-attr]
    return out


def _s2_nodes(store: GraphStore) -> dict[str, NamedNode]:
    """S2 paperId → the node the citations graph gives that paper."""
    rows = store.select(f"SELECT ?paper ?s2 WHERE {{ GRAPH {CITATIONS} {{ ?paper tkg:s2PaperId ?s2 }} }}")
    return {r["s2"]: NamedNode(r["paper"]) for r in rows.records()}


def tracked_papers(store: GraphStore) -> list[Tracked]:
    """Every paper of the graph with an arXiv id or DOI, outside the candidates that only
    the citations graph knows (a paper on the reading list counts, wherever it came from)."""
    rows = store.select(
        f"""SELECT ?paper (SAMPLE(?a) AS ?arxiv) (SAMPLE(?d) AS ?doi) WHERE {{
              {{ GRAPH ?g {{ ?paper a bibo:Document }} FILTER(?g != {CITATIONS}) }}
              UNION {{ GRAPH {READING} {{ ?paper tkg:readingStatus ?s }} }}
              OPTIONAL {{ ?paper tkg:arxivId ?a }} OPTIONAL {{ ?paper bibo:doi ?d }} }} GROUP BY ?paper"""
    )
    state = _state(store)
    out = []
    for row in rows:
        node = row["paper"]
        if not isinstance(node, NamedNode):
            continue
        arxiv, doi = _value(row, "arxiv"), _value(row, "doi")
        if arxiv is None and node.value.startswith("https://arxiv.org/abs/"):
            arxiv = node.value.removeprefix("https://arxiv.org/abs/")
        if doi is None and node.value.startswith("https://doi.org/"):
            doi = node.value.removeprefix("https://doi.org/")
        if not arxiv and not doi:
            continue
        try:
            request = paper_id(f"ARXIV:{arxiv}" if arxiv else f"DOI:{doi}")
        except IngestError:
            continue
        out.append(_tracked(node, request, state.get(node.value, {})))
    return sorted(out, key=lambda t: t.request_id)


def _tracked(node: NamedNode, request: str, record: dict[str, str]) -> Tracked:
    def number(key: str) -> int | None:
        return int(record[key]) if key in record else None

    return Tracked(node, request, record.get("s2"), number("cl"), number("rl"), number("limit"))


# -- triples ----------------------------------------------------------------------------------


@functools.lru_cache(maxsize=65536)
def _person(name: str) -> tuple[NamedNode, tuple[Triple, ...]]:
    node = person_iri(name)
    return node, (Triple(node, RDF.type, FOAF.Person), Triple(node, RDF.type, FOAF.Agent),
                  Triple(node, FOAF.name, text(name, None)))


def _is_person(node: Any) -> bool:
    return isinstance(node, NamedNode) and node.value.startswith(_PERSON_BASE)


def _authors_seq(node: NamedNode) -> NamedNode:
    return skolem("s2-authors", node.value)


def _given(node: NamedNode, facts: Iterable[tuple[NamedNode, str | None]]) -> list[Triple]:
    """``node``'s plain-text facts (property, value), for the values given."""
    return [Triple(node, prop, text(value, None)) for prop, value in facts if value]


def _candidate_triples(node: NamedNode, paper: S2Paper, *, candidate: bool) -> list[Triple]:
    """A paper new to TechKG, as Semantic Scholar describes it (its abstract and TLDR come
    with its ids: :func:`_ids_triples`)."""
    t = [Triple(node, RDF.type, BIBO.Document), Triple(node, RDF.type, BIBO.AcademicArticle),
         Triple(node, DCTERMS.title, text(paper.title or f"Semantic Scholar paper {paper.paper_id}", None))]
    if paper.publication_date:
        t.append(Triple(node, DCTERMS.issued, date_literal(paper.publication_date)))
    elif paper.year:
        t.append(Triple(node, DCTERMS.issued, date_literal(f"{paper.year:04d}")))
    t += _given(node, ((TKG.venue, paper.venue), (TKG.arxivId, paper.arxiv), (BIBO.doi, paper.doi)))
    if candidate:
        t.append(Triple(node, TKG.candidate, _TRUE))
    if paper.authors:
        seq = _authors_seq(node)
        t += [Triple(node, BIBO.authorList, seq), Triple(seq, RDF.type, RDF.Seq)]
        seen: set[NamedNode] = set()
        for position, name in enumerate(paper.authors, start=1):
            person, about = _person(name)
            t.append(Triple(seq, RDF[f"_{position}"], person))
            if person not in seen:
                seen.add(person)
                t += [Triple(node, DCTERMS.creator, person), *about]
        t.append(Triple(node, TKG.firstAuthor, _person(paper.authors[0])[0]))
    return t


def _ids_triples(node: NamedNode, paper: S2Paper) -> list[Triple]:
    """The paper's Semantic Scholar ids, and what kg link reads of it: its abstract, TLDR
    and fields of study."""
    t = _given(node, ((TKG.s2PaperId, paper.paper_id), (TKG.corpusId, paper.corpus_id),
                      (DCTERMS.abstract, paper.abstract), (TKG.tldr, paper.tldr)))
    t += [Triple(node, TKG.fieldOfStudy, text(f, None)) for f in paper.fields_of_study]
    return t


def edge_triples(citing: NamedNode, cited: NamedNode, edge: S2Edge) -> list[Triple]:
    """The triples of one citation (see :mod:`kg.citations`)."""
    t = [Triple(citing, CITO.cites, cited)]
    t += [Triple(citing, INTENT_PROPERTIES[i], cited) for i in sorted(edge.intents)]
    if edge.influential:
        t.append(Triple(citing, INFLUENTIAL, cited))
    if not (edge.contexts or edge.intents or edge.influential):
        return t
    c = citation_node(citing, cited)
    t += [Triple(c, RDF.type, CITO.Citation), Triple(c, CITO.hasCitingEntity, citing),
          Triple(c, CITO.hasCitedEntity, cited), Triple(c, TKG.influential, boolean(edge.influential))]
    t += [Triple(c, CITO.hasCitationCharacterization, INTENT_PROPERTIES[i]) for i in sorted(edge.intents)]
    for position, context in enumerate(edge.contexts, start=1):
        x = context_node(citing, cited, position)
        t += [Triple(c, TKG.citationContext, x), Triple(x, RDF.type, TKG.CitationContext),
              Triple(x, RDF.value, text(context.text, None)), Triple(x, TKG.position, integer(position))]
        t += [Triple(x, TKG.intent, text(i, None)) for i in context.intents]
    return t


# -- the graph as parts ---------------------------------------------------------------------


class _Parts:
    """The citations graph split into what a run replaces: citations by (citing, cited),
    recommendations by (paper, for), and everything else by subject."""

    def __init__(self, triples: Iterable[Triple]) -> None:
        triples = list(triples)
        owner: dict[Any, tuple[Any, Any]] = {}
        ends: dict[Any, dict[str, Any]] = defaultdict(dict)
        for t in triples:
            if t.predicate == CITO.hasCitingEntity:
                ends[t.subject]["citing"] = t.object
            elif t.predicate == CITO.hasCitedEntity:
                ends[t.subject]["cited"] = t.object
        for c, pair in ends.items():
            if "citing" in pair and "cited" in pair:
                owner[c] = (pair["citing"], pair["cited"])
        for t in triples:
            if t.predicate == TKG.citationContext and t.subject in owner:
                owner[t.object] = owner[t.subject]
        self.edges: dict[tuple[Any, Any], list[Triple]] = defaultdict(list)
        self.recommended: dict[tuple[Any, Any], list[Triple]] = {}
        self.subjects: dict[Any, list[Triple]] = defaultdict(list)
        for t in triples:
            if t.predicate in CITATION_PREDICATES:
                self.edges[(t.subject, t.object)].append(t)
            elif t.subject in owner:
                self.edges[owner[t.subject]].append(t)
            elif t.predicate == TKG.recommendedFor:
                self.recommended[(t.subject, t.object)] = [t]
            else:
                self.subjects[t.subject].append(t)

    def candidates(self) -> set[Any]:
        return {s for s, ts in self.subjects.items() if any(t.predicate == TKG.candidate for t in ts)}

    def triples(self) -> list[Triple]:
        out: dict[Triple, None] = {}
        for group in (self.subjects, self.edges, self.recommended):
            for ts in group.values():
                out.update(dict.fromkeys(ts))
        return list(out)

    def collect(self, keep: set[Any]) -> None:
        """Drop candidates nothing refers to any more (and their author lists), then people."""
        referenced = {end for pair in self.edges for end in pair} | {end for pair in self.recommended for end in pair}
        for node in self.candidates() - referenced - keep:
            self.subjects.pop(node, None)
            self.subjects.pop(_authors_seq(node), None)
        used = {t.object for ts in self.subjects.values() for t in ts}
        for subject in [s for s in self.subjects if _is_person(s)]:
            if subject not in used:
                del self.subjects[subject]


# -- the run ------------------------------------------------------------------------------------


@dataclass
class CitationRun:
    """What one ``kg ingest citations`` asks for."""

    ids: Sequence[str] | None = None
    query: str | None = None
    max_results: int = 10
    references: bool = True
    citations: bool = True
    max_per_paper: int | None = None
    recommendations: bool = False
    recommendation_limit: int = 20
    full: bool = False
    #: With ``query``: also fetch the citation lists of each paper found (else the papers
    #: found are written as candidates, with their counts, and nothing more is asked).
    lists: bool = False
    label: str = "kg ingest citations"


@dataclass
class _Found:
    node: NamedNode
    key: str
    paper: S2Paper
    tracked: Tracked | None
    lists: dict[str, list[S2Edge]] = field(default_factory=dict)


class _Nodes:
    """Which node each Semantic Scholar paper gets: the one the graph has (by S2 id, arXiv
    id or DOI), else its arXiv IRI, DOI IRI or semanticscholar.org IRI."""

    def __init__(self, store: GraphStore) -> None:
        self.known = known_papers(store)
        self.by_s2 = _s2_nodes(store)
        rows = store.select(
            f"""SELECT DISTINCT ?p WHERE {{ {{ GRAPH ?g {{ ?p a bibo:Document }} FILTER(?g != {CITATIONS}) }}
                  UNION {{ GRAPH {READING} {{ ?p tkg:readingStatus ?s }} }} }}""")
        self.outside = {r["p"].value for r in rows if r["p"] is not None}  # type: ignore[union-attr]
        listed = store.select(f"SELECT DISTINCT ?p WHERE {{ GRAPH {READING} {{ ?p tkg:readingStatus ?s }} }}")
        self.on_list = {r["p"].value for r in listed if r["p"] is not None}  # type: ignore[union-attr]

    def node(self, paper: S2Paper) -> NamedNode | None:
        if paper.paper_id and paper.paper_id in self.by_s2:
            return self.by_s2[paper.paper_id]
        if paper.arxiv and (hit := self.known.get("arxiv:" + paper.arxiv)):
            return hit
        if paper.doi and (hit := self.known.get("doi:" + paper.doi)):
            return hit
        if paper.arxiv:
            node = arxiv_iri(paper.arxiv)
        elif paper.doi:
            node = doi_iri(paper.doi)
        elif paper.paper_id:
            node = s2_iri(paper.paper_id)
        else:
            return None
        if paper.paper_id:
            self.by_s2[paper.paper_id] = node
        return node

    def is_new(self, node: NamedNode) -> bool:
        return node.value not in self.outside


def _wanted_lists(found: _Found, run: CitationRun) -> list[str]:
    """The lists of a paper this run fetches: all of them on a first or full run, else
    only those whose count changed since they were last fetched (or whose limit grew)."""
    out = []
    tracked, paper = found.tracked, found.paper
    limit = run.max_per_paper or 0
    for direction, wanted, count, listed in (
        ("citations", run.citations, paper.citation_count, tracked.citation_list_count if tracked else None),
        ("references", run.references, paper.reference_count, tracked.reference_list_count if tracked else None),
    ):
        if not wanted:
            continue
        earlier_limit = tracked.list_limit if tracked else None
        limit_grew = earlier_limit is not None and earlier_limit != 0 and (limit == 0 or limit > earlier_limit)
        if run.full or listed is None or count is None or listed != count or limit_grew:
            out.append(direction)
    return out


def ingest_citations(store: GraphStore, source: SemanticScholarSource, run: CitationRun | None = None, *,
                     progress: Progress | None = None) -> IngestReport:
    """Fetch what ``run`` asks for and merge it into the ``citations`` graph in one transaction."""
    run = run or CitationRun()
    before = stats_for(source.client).as_dict()
    mode = "search" if run.query else ("ids" if run.ids else "tracked")
    report = IngestReport(source=SOURCE, mode=mode, store=store.location)
    nodes = _Nodes(store)
    state = _state(store)
    requests: dict[str, Tracked | None] = {}
    if run.query:
        results = source.search_bulk(run.query, limit=run.max_results)
        batch: dict[str, S2Paper | None] = {p.paper_id: p for p in results if p.paper_id}
        requests = dict.fromkeys(batch)
    else:
        if run.ids:
            requests = {paper_id(i): None for i in run.ids}
        else:
            requests = {t.request_id: t for t in tracked_papers(store)}
            if not requests:
                raise IngestError("there is no paper to look up: the graph holds no paper with an arXiv id or DOI",
                                  source=SOURCE, hint="Run kg build first, or name ids: "
                                                      "kg ingest citations ARXIV:2412.06464")
        try:
            batch = source.papers(requests, progress=progress)
        except OfflineError as error:
            raise OfflineError(f"{error.message}; nothing was written", source=SOURCE,
                               hint="Run once without --offline to fill the cache.") from None
    found: list[_Found] = []
    seen: set[str] = set()
    for key, paper in batch.items():
        if paper is None or not paper.paper_id:
            report.missing.append(key)
            continue
        if paper.paper_id in seen:  # the same paper under two of its ids
            continue
        seen.add(paper.paper_id)
        node = nodes.node(paper)
        assert node is not None
        tracked = requests.get(key) or _tracked(node, key, state.get(node.value, {}))
        found.append(_Found(node, key, paper, tracked))
    if run.ids and not found and report.missing:
        raise IngestError(f"Semantic Scholar knows none of the {len(report.missing)} papers asked for: "
                          + ", ".join(report.missing[:10]) + (" ..." if len(report.missing) > 10 else ""),
                          source=SOURCE, hint="Check the ids (ARXIV:2412.06464, DOI:10.…, CorpusId:…, a 40-hex "
                                              "paperId); nothing was written.")
    lists = [(f, d) for f in found for d in _wanted_lists(f, run)] if not run.query or run.lists else []
    for done, (item, direction) in enumerate(lists, start=1):
        assert item.paper.paper_id is not None
        try:
            edges = source.edges(item.paper.paper_id, direction, limit=run.max_per_paper)
        except OfflineError:
            report.not_in_cache.append(f"{item.key} ({direction})")
            continue
        if edges is not None:
            item.lists[direction] = edges.edges
        if progress:
            progress(done, len(lists))
    recommended: dict[NamedNode, list[S2Paper]] = {}
    if run.recommendations:
        recommended = _recommendations(store, source, found, run, report, nodes)
    if not found:
        report.http = stats_for(source.client).since(before)
        report.notes.append("no paper was found: nothing was written")
        return report
    if not recommended and not any(item.lists for item in found) and all(
            _unchanged(item, state.get(item.node.value), run) for item in found):
        report.unchanged += [item.key for item in found]
        report.notes.append("no count changed since the last run: nothing to fetch or write")
        report.http = stats_for(source.client).since(before)
        return report
    old, merged, counts = _merge(store, nodes, found, recommended, run)
    for item in found:
        outcome = counts["outcomes"].get(item.node.value, "unchanged")
        getattr(report, outcome).append(item.key)
    report.nodes = [*(item.node.value for item in found), *counts["fresh"]]
    report.notes.append(f"{counts['citations']} citations written from {counts['lists']} lists "
                        f"({counts['with_contexts']} with contexts), {counts['candidates']} new candidate papers")
    if counts["skipped"]:
        titles = ", ".join(f"“{t}”" for t in counts["skipped_titles"][:3])
        report.notes.append(f"{counts['skipped']} citations skipped: Semantic Scholar gives the other paper no id"
                            + (f" ({titles}{' ...' if counts['skipped'] > 3 else ''})" if titles else ""))
    if counts["self"]:
        report.notes.append(f"{counts['self']} citations of a paper by itself left out")
    if recommended:
        report.notes.append(f"{sum(len(v) for v in recommended.values())} recommendations for "
                            f"{len(recommended)} papers")
    report.http = stats_for(source.client).since(before)
    stats = {**report.counts(), "requests": report.http.get("requests", 0)}
    activity = Activity(run.label, used=[safe_url(source.api_url)], stats=stats)
    if not old and len(merged) > BULK_TRIPLES:
        # A first run: Oxigraph's bulk loader takes a large graph many times faster than an
        # INSERT DATA, and swaps it in as atomically.
        _bulk_write(store, merged, activity)
        report.graph_written = True
        report.activity = activity.iri.value
        return report
    # The change, not the whole graph: a refresh that fetched a few lists writes those lists.
    new = set(merged)
    removed, added = [t for t in old if t not in new], [t for t in merged if t not in old]
    if removed or added:
        with store.transaction(activity) as tx:
            tx.delete(CITATIONS, removed)
            tx.insert(CITATIONS, added)
        report.graph_written = True
        report.activity = activity.iri.value
    return report


def _bulk_write(store: GraphStore, triples: list[Triple], activity: Activity) -> None:
    import pyoxigraph as ox

    with scratch.folder("techkg-citations-") as folder:
        path = folder / "citations.nt"
        with open(path, "w", encoding="utf-8") as fh:
            fh.writelines(f"{t.subject} {t.predicate} {t.object} .\n" for t in triples)
        store.load_file(path, graph=CITATIONS, fmt=ox.RdfFormat.N_TRIPLES, gzipped=False, activity=activity)


def _unchanged(item: _Found, earlier: dict[str, str] | None, run: CitationRun) -> bool:
    """Whether the citations graph already says all the batch said about ``item``."""
    if earlier is None or run.full:
        return False
    paper = item.paper
    now = {"s2": paper.paper_id, "cc": paper.citation_count, "rc": paper.reference_count,
           "ic": paper.influential_count, "ab": paper.abstract, "tl": paper.tldr}
    return all((str(value) if value is not None else None) == earlier.get(key) for key, value in now.items())


def _recommendations(store: GraphStore, source: SemanticScholarSource, found: list[_Found], run: CitationRun,
                     report: IngestReport, nodes: _Nodes) -> dict[NamedNode, list[S2Paper]]:
    """Recommendations: for each paper named on the command line; otherwise for each
    technique's primary paper among those looked up (``tkg:recommendedFor`` that paper),
    and one list-based request for the reader (``tkg:recommendedFor`` the reader): the
    papers read and those of the techniques followed as papers to be like, the papers the
    reader rejected from ``kg suggest reading`` as papers to be unlike."""
    from kg.follows import followed
    from kg.rejections import READER, rejected

    if run.ids or run.query:
        seeds = found
    else:
        rows = store.select("SELECT DISTINCT ?p WHERE { ?t a tkg:Technique ; tkg:primaryPaper ?p }")
        wanted = {r["p"].value for r in rows if r["p"] is not None}  # type: ignore[union-attr]
        seeds = [f for f in found if f.node.value in wanted]
    out: dict[NamedNode, list[S2Paper]] = {}
    for item in seeds:
        assert item.paper.paper_id is not None
        try:
            papers = source.recommendations(item.paper.paper_id, limit=run.recommendation_limit)
        except OfflineError:
            report.not_in_cache.append(f"{item.key} (recommendations)")
            continue
        if papers is not None:
            out[item.node] = [p for p in papers if p.paper_id]
    if run.ids or run.query:
        return out
    followed_papers = store.select(
        "SELECT DISTINCT ?p WHERE { ?t tkg:primaryPaper ?p }",
        {"t": [NamedNode(t) for t in followed(store).iris] or [NamedNode("urn:techkg:none")]})
    liked = [*(r["p"].value for r in store.select(  # type: ignore[union-attr]
        "SELECT DISTINCT ?p WHERE { ?p tkg:readingStatus <https://w3id.org/techkg/id/status/read> }").rows
        if r["p"] is not None), *(r["p"].value for r in followed_papers.rows if r["p"] is not None)]  # type: ignore[union-attr]
    positive = _s2_ids(list(dict.fromkeys(liked)), found, nodes)[:MAX_POSITIVE]
    negative = _s2_ids(sorted(rejected(store)), found, nodes)[:MAX_POSITIVE]
    if positive:
        try:
            papers = source.recommend(positive, negative, limit=run.recommendation_limit)
        except OfflineError:
            report.not_in_cache.append("the reader (recommendations)")
            return out
        out[READER] = [p for p in papers if p.paper_id]
        report.notes.append(f"{len(out[READER])} recommendations for you, from {len(positive)} papers read or "
                            f"followed and {len(negative)} rejected")
    return out


#: The most papers given as ones to be like (or unlike) in one list-based request.
MAX_POSITIVE = 100


def _s2_ids(papers: list[str], found: list[_Found], nodes: _Nodes) -> list[str]:
    """Ids the API takes for ``papers`` (IRIs): their S2 paperId where known, else their
    arXiv id or DOI; papers with none are left out."""
    by_node = {item.node.value: item.paper.paper_id for item in found if item.paper.paper_id}
    by_node.update({node.value: s2 for s2, node in nodes.by_s2.items() if node.value not in by_node})
    out = []
    for paper in papers:
        if paper in by_node:
            out.append(str(by_node[paper]))
        elif paper.startswith("https://arxiv.org/abs/"):
            out.append("ARXIV:" + paper.removeprefix("https://arxiv.org/abs/"))
        elif paper.startswith("https://doi.org/"):
            out.append("DOI:" + paper.removeprefix("https://doi.org/"))
    return out


def _merge(store: GraphStore, nodes: _Nodes, found: list[_Found], recommended: dict[NamedNode, list[S2Paper]],
           run: CitationRun) -> tuple[set[Triple], list[Triple], dict[str, Any]]:
    """The old citations graph, and the new one: the old with this run's papers, lists and
    recommendations swapped in."""
    existing = store.triples(CITATIONS)
    parts = _Parts(existing)
    old_edges = {k: set(v) for k, v in parts.edges.items()}
    old_subjects = {k: set(v) for k, v in parts.subjects.items()}
    limit = run.max_per_paper or 0
    fresh_papers: dict[NamedNode, S2Paper] = {}
    counts: dict[str, Any] = {"citations": 0, "with_contexts": 0, "lists": 0, "candidates": 0, "outcomes": {},
                              "fresh": [], "skipped": 0, "skipped_titles": [], "self": 0}
    touched: dict[str, set[tuple[Any, Any]]] = defaultdict(set)
    for item in found:
        node, paper = item.node, item.paper
        state = [*_ids_triples(node, paper)]
        for prop, value in ((TKG.citationCount, paper.citation_count), (TKG.referenceCount, paper.reference_count),
                            (TKG.influentialCitationCount, paper.influential_count)):
            if value is not None:
                state.append(Triple(node, prop, integer(value)))
        tracked = item.tracked
        lists = {"citations": (TKG.citationListCount, paper.citation_count,
                               tracked.citation_list_count if tracked else None),
                 "references": (TKG.referenceListCount, paper.reference_count,
                                tracked.reference_list_count if tracked else None)}
        for direction, (prop, count, earlier) in lists.items():
            value = count if direction in item.lists else earlier
            if value is not None:
                state.append(Triple(node, prop, integer(value)))
        earlier_limit = tracked.list_limit if tracked and tracked.list_limit is not None else limit
        state.append(Triple(node, TKG.listLimit, integer(limit if item.lists else earlier_limit)))
        if nodes.is_new(node):
            state += _candidate_triples(node, paper, candidate=node.value not in nodes.on_list)
        parts.subjects[node] = [t for t in state if t.subject == node]
        seq = [t for t in state if t.subject != node and not _is_person(t.subject)]
        if seq:
            parts.subjects[_authors_seq(node)] = seq
        for t in state:
            if _is_person(t.subject):
                parts.subjects[t.subject] = list(dict.fromkeys([*parts.subjects.get(t.subject, []), t]))
    refetched = {(item.node, d) for item in found for d in item.lists}
    for key in [k for k in parts.edges if (k[1], "citations") in refetched or (k[0], "references") in refetched]:
        for end in key:
            touched[end.value].add(key)
        del parts.edges[key]
    for item in found:
        node = item.node
        for direction, edges in item.lists.items():
            counts["lists"] += 1
            for edge in edges:
                other = nodes.node(edge.paper)
                if other is None:  # no paperId, arXiv id or DOI: nothing to point at
                    counts["skipped"] += 1
                    if edge.paper.title:
                        counts["skipped_titles"].append(edge.paper.title)
                    continue
                if other == node:
                    counts["self"] += 1
                    continue
                citing, cited = (other, node) if direction == "citations" else (node, other)
                if (citing, cited) not in parts.edges:
                    counts["citations"] += 1
                    counts["with_contexts"] += bool(edge.contexts)
                parts.edges[(citing, cited)] = edge_triples(citing, cited, edge)
                touched[node.value].add((citing, cited))
                if nodes.is_new(other):
                    fresh_papers.setdefault(other, edge.paper)
    for seed, papers in recommended.items():
        for key in [k for k in parts.recommended if k[1] == seed]:
            del parts.recommended[key]
        for paper in papers:
            other = nodes.node(paper)
            if other is None or other == seed:
                continue
            parts.recommended[(other, seed)] = [Triple(other, TKG.recommendedFor, seed)]
            if nodes.is_new(other):
                fresh_papers.setdefault(other, paper)
    looked_up = {item.node for item in found}
    previously = {NamedNode(k) for k in _state(store)}  # looked up by an earlier run
    for other, paper in fresh_papers.items():
        if other in looked_up or other in previously:
            continue
        if other not in old_subjects:
            counts["candidates"] += 1
        counts["fresh"].append(other.value)
        triples = _candidate_triples(other, paper, candidate=other.value not in nodes.on_list)
        triples += _ids_triples(other, paper)
        if paper.citation_count is not None:
            triples.append(Triple(other, TKG.citationCount, integer(paper.citation_count)))
        parts.subjects[other] = [t for t in triples if t.subject == other]
        parts.subjects.pop(_authors_seq(other), None)
        for t in triples:
            if t.subject != other:
                parts.subjects[t.subject] = list(dict.fromkeys([*parts.subjects.get(t.subject, []), t]))
    parts.collect(previously | looked_up)
    for item in found:
        node = item.node
        before = old_subjects.get(node, set())
        after = set(parts.subjects.get(node, []))
        keys = touched.get(node.value, set())
        changed_edges = any(old_edges.get(k, set()) != set(parts.edges.get(k, [])) for k in keys)
        if not any(t.predicate == TKG.s2PaperId for t in before):
            counts["outcomes"][node.value] = "added"
        elif before != after or changed_edges:
            counts["outcomes"][node.value] = "updated"
    return set(existing), parts.triples(), counts
