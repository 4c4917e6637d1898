"""What each workbench page shows, read from the graph through the named queries and
the store interface. Plain functions of a :class:`~kg.store.base.GraphStore` that return
dicts and lists; the pages render them, the tests can call them directly.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyoxigraph import NamedNode

import kg.answer
from kg.counts import UNCATEGORISED
from kg.graphs import PROVENANCE, READING, graph_name, own_first
from kg.iris import status_iri
from kg.owntech.overrides import mine_first
from kg.reading import KNOWN_STATUSES, reading_index, reading_rows
from kg.resolve import Resolver, technique_names
from kg.results import Solutions
from kg.sparqltext import inject_values
from kg.store.base import GraphStore
from kg.views import Edge, compare, kernel_status, lineage_edges, lineage_tree, technique_card
from kg.vocab import PREFIXES
from kg.wording import KERNEL_STATE_MEANINGS, KernelState, reading_summary

__all__ = [
    "CARDS_PER_PAGE",
    "KERNEL_BADGES",
    "STATUS_LABELS",
    "CardFilters",
    "catalog_signature",
    "choice_matches",
    "comparison",
    "count_papers",
    "facets",
    "filter_cards",
    "listed_choices",
    "fold",
    "reading_page",
    "technique_cards",
    "technique_choices",
    "paper_statuses",
    "technique_links",
    "technique_page",
    "with_statuses",
    "with_techniques",
]

#: Kernel state (kg.wording.KernelState) → (badge text, badge style, what it means).
KERNEL_BADGES: dict[str, tuple[str, str, str]] = {
    str(state): (str(state), style, KERNEL_STATE_MEANINGS[state])
    for state, style in ((KernelState.verified, "ok"), (KernelState.failing, "bad"),
                         (KernelState.not_run, "warn"), (KernelState.none, "muted"))
}
#: Kernel filter value → the states it selects.
KERNEL_FILTERS: dict[str, tuple[str, ...]] = {str(state): (str(state),) for state in KernelState}
STATUS_LABELS: dict[str, str] = dict(KNOWN_STATUSES)

_READ = status_iri("read")
#: Every technique's card, without its paper counts (:data:`_PAPER_COUNTS`). ``$ONLY``
#: becomes a pattern that narrows it to the comparison page's techniques (and the reader's
#: own); where the reader gave their own value of a fact, it replaces the catalog's.
_CARDS = """
SELECT ?technique ?id ?name ?nameZh ?categoryId ?categoryLabel ?categoryPosition ?onPage
       ?firstAuthor ?team ?organisations ?aliases ?date ?headline ?conditional ?conditions
       ?suits ?availability ?addedBy
WHERE {
  $ONLY
  ?technique a tkg:Technique ; skos:notation ?id ; skos:prefLabel ?name ; skos:broader ?category ;
             tkg:onComparisonPage ?onPage .
  FILTER(LANG(?name) = "en")
  ?category skos:notation ?categoryId ; skos:prefLabel ?categoryLabel ; tkg:position ?categoryPosition .
  FILTER(LANG(?categoryLabel) = "en")
  OPTIONAL { ?technique skos:prefLabel ?nameZh . FILTER(LANG(?nameZh) = "zh") }
  OPTIONAL { ?technique tkg:firstAuthor/foaf:name ?firstAuthor }
  OPTIONAL { ?technique tkg:responsibleTeam/foaf:name ?team }
  OPTIONAL {
    SELECT ?technique (GROUP_CONCAT(DISTINCT ?org; separator="\\n") AS ?organisations)
    WHERE { ?technique tkg:organization/foaf:name ?org } GROUP BY ?technique
  }
  OPTIONAL {
    SELECT ?technique (GROUP_CONCAT(DISTINCT ?alias; separator="\\n") AS ?aliases)
    WHERE { ?technique skos:altLabel ?alias } GROUP BY ?technique
  }
  $SINGLE
  OPTIONAL { ?technique tkg:addedBy ?addedBy }
}
ORDER BY ?categoryPosition ?name"""
_MINE, _ANY, _BINDS = mine_first("?technique", {
    "date": "dcterms:date", "headline": "tkg:headlineResult", "conditional": "tkg:headlineConditional",
    "conditions": "tkg:headlineConditions", "suits": "tkg:suitedFor", "availability": "tkg:availability"})
_CARDS = _CARDS.replace("$SINGLE", "\n  ".join([*_ANY, _MINE, *_BINDS]))  # the reader's values last: cheaper

#: The papers behind each technique (VALUES-bound to the cards shown: a large store links
#: hundreds of thousands of papers, and a page counts only those of its own cards).
_PAPER_COUNTS = """
SELECT ?technique (COUNT(DISTINCT ?paper) AS ?papers) (COUNT(DISTINCT ?listedPaper) AS ?listed)
       (COUNT(DISTINCT ?readPaper) AS ?read) WHERE {
  { ?technique tkg:primaryPaper ?paper }
  UNION { ?paper tkg:introducesTechnique|tkg:extendsTechnique|tkg:usesTechnique|tkg:evaluatesTechnique ?technique }
  OPTIONAL { ?paper tkg:readingStatus ?anyStatus . BIND(?paper AS ?listedPaper) }
  OPTIONAL { ?paper tkg:readingStatus $READ . BIND(?paper AS ?readPaper) }
} GROUP BY ?technique""".replace("$READ", str(_READ))

_EVIDENCE = """SELECT ?label ?url WHERE { ?t tkg:evidence ?e . ?e rdfs:label ?label ; schema:url ?url ;
                 tkg:position ?p } ORDER BY ?p"""

_KERNEL = """SELECT ?kernel ?form ?module ?rationale WHERE { ?t tkg:referenceKernel ?kernel .
               OPTIONAL { ?kernel tkg:kernelForm ?form } OPTIONAL { ?kernel tkg:modulePath ?module }
               OPTIONAL { ?kernel tkg:rationale ?rationale } } LIMIT 1"""

_CHECKS = """SELECT ?check ?name ?claim ?maxAbs ?maxRel ?tolerance ?passed ?seconds ?detail WHERE {
               ?run tkg:check ?check . ?check rdfs:label ?name ; tkg:passed ?passed .
               OPTIONAL { ?check tkg:claim ?claim } OPTIONAL { ?check tkg:maxAbsError ?maxAbs }
               OPTIONAL { ?check tkg:maxRelError ?maxRel } OPTIONAL { ?check tkg:tolerance ?tolerance }
               OPTIONAL { ?check tkg:durationSeconds ?seconds } OPTIONAL { ?check rdfs:comment ?detail } }
             ORDER BY ?check"""


def _records(result: object) -> list[dict[str, Any]]:
    assert isinstance(result, Solutions)
    return result.records()


#: What the provenance graph records of each graph: changes with every write to it.
_GRAPH_RECORDS = f"""SELECT ?g ?modified ?activity ?hash ?count WHERE {{ GRAPH {PROVENANCE} {{
  ?g dcterms:modified ?modified .
  OPTIONAL {{ ?g prov:wasGeneratedBy ?activity }} OPTIONAL {{ ?g tkg:contentHash ?hash }}
  OPTIONAL {{ ?g tkg:tripleCount ?count }} }} }}"""


def catalog_signature(store: GraphStore) -> str | None:
    """A name for the state of every graph but the reading state's (``graph/reading``: the
    statuses, their events and the papers added to the list by hand), or None for a store
    that cannot tell when it changed. It stays the same across reading-status writes, so what
    a page reads of the techniques (names, cards, lineage, kernels, papers, citations) can be
    kept across them while the statuses are read again (:func:`with_statuses`); any other
    write changes it. Made from the provenance graph's record of each graph (its last write,
    run, digest and size); a graph without a record (written around TechKG) makes it the
    store's revision, which changes with every write."""
    import hashlib
    import json

    revision = getattr(store, "revision", lambda: None)()
    if revision is None:
        return None
    records = {str(r["g"]): [str(r[k]) if r[k] is not None else None for k in ("modified", "activity", "hash", "count")]
               for r in store.select(_GRAPH_RECORDS).records()}
    graphs = sorted(g.value for g in store.named_graphs() if g not in (READING, PROVENANCE))
    if any(g not in records for g in graphs):
        return str(revision)
    return hashlib.sha256(json.dumps([(g, records[g]) for g in graphs]).encode()).hexdigest()


_STATUSES = f"""SELECT ?paper (SAMPLE(?st) AS ?status) WHERE {{ ?paper tkg:readingStatus ?st .
                  {own_first("?paper", "readingStatus", "?st", "own")} }} GROUP BY ?paper"""


def paper_statuses(store: GraphStore, papers: Iterable[str]) -> dict[str, str]:
    """paper IRI → its reading status (slug), for ``papers`` that have one: one lookup each."""
    wanted = sorted(set(papers))
    if not wanted:
        return {}
    rows = store.select(_STATUSES, {"paper": [NamedNode(p) for p in wanted]}).records()
    return {str(r["paper"]): str(r["status"]).rsplit("/status/", 1)[-1] for r in rows if r["status"] is not None}


def _restatus(store: GraphStore, papers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    now = paper_statuses(store, (str(p["paper"]) for p in papers))
    return [{**p, "status": now.get(str(p["paper"]))} for p in papers]


def fold(text: object) -> str:
    """Case- and accent-blind form of ``text`` for searching."""
    decomposed = unicodedata.normalize("NFKD", str(text or ""))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


def _lines(value: object) -> list[str]:
    return sorted({part.strip() for part in str(value or "").split("\n") if part.strip()}, key=str.casefold)




#: Cards on one Techniques page: the lineage of a large store has thousands of techniques,
#: and the page counts the papers of the cards it shows only.
CARDS_PER_PAGE = 120


def technique_cards(store: GraphStore, *, lineage_only: bool = True, counts: bool = True) -> list[dict[str, Any]]:
    """Every technique as a card: names, category, people, headline, fit, kernel and
    reading; without ``lineage_only``, only the techniques of the comparison page and the
    reader's own (``mine``). Without
    ``counts``, the papers and reading badge are left out: :func:`count_papers` adds
    them to the cards a page shows."""
    cards: dict[str, dict[str, Any]] = {}
    query = _CARDS.replace("$ONLY", "" if lineage_only else
                           "{ ?technique tkg:onComparisonPage true } UNION { ?technique tkg:addedBy tkg:reader }")
    rows = _records(store.query(query))
    kernels = kernel_status(store, None if lineage_only else sorted({NamedNode(r["technique"]) for r in rows},
                                                                    key=lambda n: n.value))
    for row in rows:
        iri = row["technique"]
        if iri in cards:
            continue
        date = str(row["date"]) if row["date"] is not None else ""
        kernel = kernels.get(iri, str(KernelState.not_run))
        text, style, title = KERNEL_BADGES[kernel]
        cards[iri] = {
            "iri": iri, "id": row["id"], "name": row["name"], "nameZh": row["nameZh"],
            "category": row["categoryId"], "categoryLabel": row["categoryLabel"],
            "categoryPosition": int(row["categoryPosition"]), "onPage": bool(row["onPage"]),
            "who": row["firstAuthor"] or row["team"] or "", "isTeam": not row["firstAuthor"] and bool(row["team"]),
            "organisations": _lines(row["organisations"]), "aliases": _lines(row["aliases"]),
            "date": date, "year": date[:4], "headline": row["headline"] or "",
            "conditional": bool(row["conditional"]), "conditions": row["conditions"] or "",
            "suits": row["suits"] or "", "availability": row["availability"] or "",
            "kernel": kernel, "kernelBadge": text, "kernelStyle": style, "kernelTitle": title,
            "mine": bool(row["addedBy"]),
        }
    found = list(cards.values())
    return count_papers(store, found) if counts else found


_EVENTS = """SELECT ?event ?paper WHERE { { ?event a tkg:ReadingEvent } UNION { ?event a tkg:ReadingRemoval }
                                         ?event tkg:paper ?paper }"""
_GRAPH_STATUSES = "SELECT ?paper ?g ?status WHERE { GRAPH ?g { ?paper tkg:readingStatus ?status } }"


def reading_changes(store: GraphStore, con: Any) -> dict[str, list[str]] | None:
    """What changed in the reading state since the analytics tables ``con`` were made, when
    nothing else did: each paper whose status changed, with the statuses it has now, the one
    that counts first (as the tables rank graphs); None when another graph changed too. Every
    status change leaves an event (:func:`kg.reading.status_change`), so the papers changed are
    those of the events the store and the tables do not share; only these are read from the
    store, and the tables answer for the rest."""
    from kg.analytics.files import graph_states

    built = dict(con.execute("SELECT graph, signature FROM staging.graphs").fetchall())
    graphs = graph_states(store)
    now = {g: state.signature for g, state in graphs.items()}
    if {g for g in built.keys() | now.keys() if built.get(g) != now.get(g)} - {READING.value}:
        return None
    then = {(str(e), str(p)) for e, p in con.execute("SELECT event, paper FROM reading_events").fetchall()}
    events = {(str(r["event"]), str(r["paper"])) for r in store.select(_EVENTS).records()}
    changed = sorted({paper for _event, paper in then ^ events})
    if not changed:
        return {}
    found: dict[str, list[tuple[int, str]]] = {p: [] for p in changed}
    rows = store.select(_GRAPH_STATUSES, {"paper": [NamedNode(p) for p in changed]}).records()
    for r in rows:
        state = graphs.get(str(r["g"]))
        slug = str(r["status"]).rsplit("/status/", 1)[-1]
        found[str(r["paper"])].append((state.priority if state else 1 << 62, slug))
    return {paper: [slug for _rank, slug in sorted(ranked)] for paper, ranked in found.items()}


def count_papers(store: GraphStore, cards: list[dict[str, Any]], *, analytics: bool = True) -> list[dict[str, Any]]:
    """``cards`` with the papers behind each (introducing or using it), how many of them
    are read, and the reading badge; only these cards' papers are counted. With
    ``analytics``, fresh analytics tables count them (a technique of a large corpus has
    thousands of papers, each a lookup for the store)."""
    if not cards:
        return cards
    counted: dict[str, tuple[int, int, int]] | None = None
    if analytics:
        from kg.analytics.answers import freshness
        from kg.analytics.materialize import database_path
        from kg.analytics.overview import technique_paper_counts

        con, why = freshness(store, database_path(store.location), stale=True)
        if con is not None:
            now = reading_changes(store, con) if why else {}
            if now is None:  # stale beyond the reading state: the store counts
                con.close()
            else:
                counted = technique_paper_counts(con, [c["iri"] for c in cards], now=now)
    if counted is None:
        text = inject_values(_PAPER_COUNTS, {"technique": [NamedNode(c["iri"]) for c in cards]})
        counted = {str(r["technique"]): (int(r["papers"] or 0), int(r["listed"] or 0), int(r["read"] or 0))
                   for r in _records(store.query(text))}
    for card in cards:
        papers, listed, read = counted.get(card["iri"], (0, 0, 0))
        card.update(papers=papers, read=read, readingBadge=reading_summary(read, listed))
    return cards


_CHOICES = """SELECT ?id ?name ?categoryLabel ?categoryPosition ?onPage WHERE {
  ?technique a tkg:Technique ; skos:notation ?id ; skos:prefLabel ?name ; skos:broader ?category ;
             tkg:onComparisonPage ?onPage .
  FILTER(LANG(?name) = "en")
  ?category skos:prefLabel ?categoryLabel ; tkg:position ?categoryPosition . FILTER(LANG(?categoryLabel) = "en")
} ORDER BY ?categoryPosition ?name"""


_ALIASES = "SELECT ?id ?alias WHERE { ?technique a tkg:Technique ; skos:notation ?id ; skos:altLabel ?alias }"

#: The Compare page lists every technique in its pickers' suggestions up to this many;
#: past it, the comparison page's own, and the rest are found as one types (choice_matches).
CHOICES_LISTED = 300
#: Matches the Compare page's search field is offered at most.
CHOICES_MATCHED = 20


def technique_choices(store: GraphStore) -> list[dict[str, Any]]:
    """Every technique's id, name, aliases and category, in page order: what the Compare
    page's pickers choose from."""
    seen: dict[str, dict[str, Any]] = {}
    for row in _records(store.query(_CHOICES)):
        seen.setdefault(row["id"], {**row, "aliases": []})
    for row in _records(store.query(_ALIASES)):
        if row["id"] in seen:
            seen[row["id"]]["aliases"].append(row["alias"])
    return list(seen.values())


def listed_choices(choices: list[dict[str, Any]], chosen: Iterable[str] = ()) -> list[dict[str, Any]]:
    """The choices the Compare page lists with its pickers: all of them up to
    :data:`CHOICES_LISTED`, else those of the comparison page and the ones ``chosen``."""
    if len(choices) <= CHOICES_LISTED:
        return choices
    keep = set(chosen)
    return [c for c in choices if c["onPage"] or c["id"] in keep]


def choice_matches(choices: list[dict[str, Any]], text: str, limit: int = CHOICES_MATCHED) -> list[dict[str, Any]]:
    """The choices whose id, name or an alias contains ``text`` (case- and accent-blind):
    those that start with it first, the comparison page's before lineage-only ones."""
    needle = fold(text).strip()
    if not needle:
        return listed_choices(choices)[:limit]
    ranked: list[tuple[int, int, int, dict[str, Any]]] = []
    for position, choice in enumerate(choices):
        names = [fold(n) for n in (choice["id"], choice["name"], *choice["aliases"])]
        if any(needle in n for n in names):
            starts = any(n.startswith(needle) for n in names)
            ranked.append((0 if starts else 1, 0 if choice["onPage"] else 1, position, choice))
    ranked.sort(key=lambda item: item[:3])
    return [choice for *_rank, choice in ranked[:limit]]


@dataclass(frozen=True)
class CardFilters:
    """The filters of the Techniques page, as given in its URL."""

    q: str = ""
    category: str = ""
    organisation: str = ""
    year: str = ""
    kernel: str = ""
    #: Also show lineage-only parents (techniques not on the comparison page).
    all: bool = False

    @classmethod
    def from_query(cls, params: Mapping[str, str]) -> CardFilters:
        return cls(q=params.get("q", "").strip()[:200], category=params.get("category", "").strip(),
                   organisation=params.get("organisation", "").strip(), year=params.get("year", "").strip(),
                   kernel=params.get("kernel", "").strip(), all=params.get("all", "") in ("1", "on", "true"))

    @property
    def active(self) -> bool:
        return bool(self.q or self.category or self.organisation or self.year or self.kernel)


def shown_by_default(card: Mapping[str, Any]) -> bool:
    """Whether the Techniques page lists a card without "all": the comparison page's
    techniques and the reader's own."""
    return bool(card["onPage"] or card.get("mine"))


def _matches(card: dict[str, Any], needle: str) -> bool:
    names = [card["name"], card["id"], card["nameZh"] or "", *card["aliases"]]
    return any(needle in fold(name) for name in names)


def filter_cards(cards: Iterable[dict[str, Any]], filters: CardFilters) -> list[dict[str, Any]]:
    """The cards that pass every filter; a search matches the name, id, Chinese name or an alias."""
    needle = fold(filters.q).strip()
    kernels = KERNEL_FILTERS.get(filters.kernel, (filters.kernel,))
    out = []
    for card in cards:
        if not filters.all and not shown_by_default(card):
            continue
        if filters.category and card["category"] != filters.category:
            continue
        if filters.organisation and filters.organisation not in card["organisations"]:
            continue
        if filters.year and card["year"] != filters.year:
            continue
        if filters.kernel and card["kernel"] not in kernels:
            continue
        if needle and not _matches(card, needle):
            continue
        out.append(card)
    return out


def facets(cards: Iterable[dict[str, Any]], *,
           include_lineage_only: bool = False) -> dict[str, list[tuple[str, str, int]]]:
    """The choices of each filter, as (value, label, count), from every card."""
    cards = [c for c in cards if include_lineage_only or shown_by_default(c)]
    categories: dict[str, tuple[str, int, int]] = {}
    for c in cards:
        label, position, n = categories.get(c["category"], (c["categoryLabel"], c["categoryPosition"], 0))
        categories[c["category"]] = (label, position, n + 1)
    organisations = Counter(org for c in cards for org in c["organisations"])
    years = Counter(c["year"] for c in cards if c["year"])
    kernels = Counter(value for c in cards for value, members in KERNEL_FILTERS.items() if c["kernel"] in members)
    return {
        "category": [(cid, label, n) for cid, (label, _pos, n) in sorted(categories.items(), key=lambda i: i[1][1])],
        "organisation": [(org, org, n) for org, n in sorted(organisations.items(), key=lambda i: i[0].casefold())],
        "year": [(y, y, n) for y, n in sorted(years.items(), reverse=True)],
        "kernel": [(k, k, kernels[k]) for k in KERNEL_FILTERS if kernels[k]],
    }


# -- one technique -----------------------------------------------------------------------


def _compact(iri: str) -> str:
    for name, base in PREFIXES.items():
        if iri.startswith(base) and name != "id":
            return f"{name}:{iri[len(base):]}"
    return iri


def evidence(store: GraphStore, technique: NamedNode) -> list[dict[str, str]]:
    return [{"label": r["label"], "url": r["url"]} for r in store.select(_EVIDENCE, {"t": technique}).records()]


def kernel_record(store: GraphStore, technique: NamedNode) -> dict[str, Any]:
    """The reference kernel, its runs (newest first) and the checks of the latest run."""
    status = kernel_status(store, [technique]).get(technique.value, str(KernelState.not_run))
    found = store.select(_KERNEL, {"t": technique}).records()
    runs = _records(kg.answer.run(store, "kernel-runs", {"technique": technique.value}))
    latest = runs[0] if runs else None
    checks = store.select(_CHECKS, {"run": NamedNode(latest["run"])}).records() if latest else []
    text, style, title = KERNEL_BADGES[status]
    return {"status": status, "badge": text, "style": style, "title": title,
            "kernel": found[0] if found else None, "runs": runs, "latest": latest, "checks": checks}


def provenance(store: GraphStore, subject: str) -> list[dict[str, Any]]:
    """Each fact about ``subject`` with the named graph, run and time it comes from, the
    file it was read from and the links that state it (:func:`kg.provenance.fact_provenance`)."""
    from kg.provenance import fact_provenance
    from kg.sources import source_label

    out = []
    for f in fact_provenance(store, NamedNode(subject)):
        value = str(f.value.value)
        out.append({
            "property": _compact(f.property), "value": value if len(value) <= 160 else value[:157] + "…",
            "graph": graph_name(NamedNode(f.graph)), "run": f.activity or "", "ended": f.ended or "",
            "modified": f.modified or "", "used": [source_label(s) for s in f.sources], "stated_in": f.stated_in,
        })
    return out


def _tree(node: Any) -> dict[str, Any]:
    return {"iri": node.iri, "name": node.name, "relation": node.relation, "basis": node.basis, "note": node.note,
            "children": [_tree(c) for c in node.children]}


def technique_citations(store: GraphStore, technique: NamedNode, *, limit: int = 50) -> dict[str, Any]:
    """What the citations say about a technique: the papers citing its paper for its method,
    and the lineage edges suggested from or to it (pending the reader's decision)."""
    from kg.citations import has_citations
    from kg.suggestions import lineage_report

    if not has_citations(store):
        return {"available": False, "citedBy": [], "suggestions": []}
    result = kg.answer.run(store, "cited-by-technique", {"technique": technique.value, "intent": "methodology"})
    assert isinstance(result, Solutions)
    cited_by = result.records()
    suggestions = [{**s.as_dict(), "lines": [e.line() for e in s.evidence[:3]], "more": max(0, len(s.evidence) - 3)}
                   for s in lineage_report(store, technique).suggestions]
    return {"available": True, "citedBy": cited_by[:limit], "citedByTotal": len(cited_by), "suggestions": suggestions}


def technique_page(store: GraphStore, technique: NamedNode, *, edges: list[Edge] | None = None,
                   names: dict[str, tuple[str, str]] | None = None) -> dict[str, Any]:
    """The full card of one technique, with its papers, repository, lineage, kernel and
    provenance. ``edges`` (:func:`kg.views.lineage_edges`) and ``names``
    (:func:`kg.resolve.technique_names`): the store's, when the caller has read them already."""
    edges = lineage_edges(store) if edges is None else edges  # read once for the card and both trees
    card = technique_card(store, technique, edges=edges)
    if not card:
        return {}
    names = technique_names(store) if names is None else names
    ids = {iri: ident for iri, (_name, ident) in names.items()}
    up, down = lineage_tree(store, technique, edges=edges, names=names)
    papers = card["papers"]
    read = sum(1 for p in papers if p.get("status") == "read")
    facts = provenance(store, technique.value)
    if card.get("repository"):
        facts += provenance(store, card["repository"])
    sources: dict[str, dict[str, Any]] = {}
    for fact in facts:
        source = sources.setdefault(fact["graph"], {"graph": fact["graph"], "facts": 0, "run": fact["run"],
                                                    "ended": fact["ended"]})
        source["facts"] += 1
    return {
        "card": card, "ids": ids, "evidence": evidence(store, technique), "sources": list(sources.values()),
        "ancestors": [_tree(c) for c in up.children], "descendants": [_tree(c) for c in down.children],
        "kernel": kernel_record(store, technique), "provenance": facts,
        "readingBadge": reading_summary(read, sum(1 for p in papers if p.get("status"))),
        "citations": technique_citations(store, technique),
        "links": technique_links(store, technique),
    }


#: How many links a technique's page lists for review (the best scores first).
LINKS_TO_REVIEW = 100


def technique_links(store: GraphStore, technique: NamedNode) -> dict[str, Any]:
    """The technique's links as the page shows them: each paper's link (relation, status,
    evidence), and the automatic ones the reader has not decided on, to accept or reject
    (:data:`LINKS_TO_REVIEW` at most, best first)."""
    from kg.graphs import graph_name
    from kg.linking.listing import list_links

    rows = list_links(store, technique=technique.value)
    by_paper: dict[str, dict[str, Any]] = {}
    pending: list[dict[str, Any]] = []
    for row in rows:
        link = row.link
        item = {"id": row.id, "paper": link.paper, "title": row.paper_title or link.paper, "relation": link.relation,
                "score": link.score, "status": link.status, "shown": row.shown, "readingStatus": row.reading_status,
                "evidence": [{"field": e.field, "text": e.text, "source": graph_name(NamedNode(e.source))}
                             for e in link.evidence[:3]], "more": max(0, len(link.evidence) - 3)}
        by_paper[link.paper] = item
        if link.status == "auto":
            pending.append(item)
    pending.sort(key=lambda i: (-i["score"], str(i["title"]).casefold()))
    return {"byPaper": by_paper, "pending": pending[:LINKS_TO_REVIEW], "pendingTotal": len(pending),
            "total": len(rows)}


def with_techniques(store: GraphStore, rows: Iterable[dict[str, Any]]) -> None:
    """Give each reading-list row the techniques its paper is linked to (chips on the page)."""
    from kg.linking.listing import techniques_of

    rows = list(rows)
    linked = techniques_of(store, [str(r["paper"]) for r in rows])
    for row in rows:
        row["techniques"] = linked.get(str(row["paper"]), [])


def with_statuses(store: GraphStore, page: dict[str, Any]) -> dict[str, Any]:
    """A :func:`technique_page` or :func:`comparison` (kept across reading-status writes:
    see :func:`catalog_signature`) with its papers' reading statuses, and what is counted
    from them, read again: one lookup per paper listed, instead of the whole page."""
    from kg.views import reading_papers_summary

    if "card" in page:  # a technique page
        card = page["card"]
        papers = _restatus(store, card["papers"])
        read = sum(1 for p in papers if p.get("status") == "read")
        return {**page, "card": {**card, "papers": papers},
                "readingBadge": reading_summary(read, sum(1 for p in papers if p.get("status")))}
    if not page:
        return page
    cards = [{**c, "papers": _restatus(store, c["papers"])} for c in page["cards"]]
    rows = [(label, [reading_papers_summary(c["papers"]) for c in cards]) if label == "Reading" else (label, values)
            for label, values in page["rows"]]
    return {**page, "cards": cards, "rows": rows}


# -- comparison ------------------------------------------------------------------------


def _verification(kernel: dict[str, Any]) -> str:
    latest = kernel["latest"]
    if latest is None:
        return "no kernel (reasoned)" if kernel["status"] == KernelState.none else "never verified"
    verdict = "passed" if latest["passed"] else "failed"
    return (f"{verdict} {latest['passedChecks']}/{latest['checks']} checks on {latest['device']} "
            f"({latest['dtype'] or 'dtype n/a'}, torch {latest['torchVersion']}), {str(latest['ended'])[:10]}")


def comparison(store: GraphStore, techniques: list[NamedNode]) -> dict[str, Any]:
    """The side-by-side table of :func:`kg.views.compare` plus the latest kernel
    verification of each technique; ``ids`` maps each column to its technique id."""
    table = compare(store, techniques)
    kernels = [kernel_record(store, t) for t in techniques]
    rows = list(table["rows"])
    at = next((i for i, (label, _values) in enumerate(rows) if label == "Reference kernel"), len(rows) - 1)
    rows.insert(at + 1, ("Latest verification", [_verification(k) for k in kernels]))
    table["rows"] = rows
    table["ids"] = [c["id"] for c in table["cards"]]
    table["kernels"] = kernels
    return table


# -- reading list ------------------------------------------------------------------------


#: A reading list this long is counted from the analytics tables even when they are stale
#: (saying so on the page): asking the store would take more than the server's timeout.
STALE_TABLES_ABOVE = 20_000
#: Papers listed per category on the reading page, and in one chosen category.
PAPERS_PER_CATEGORY = 50
PAPERS_IN_ONE_CATEGORY = 2000


@dataclass
class ReadingCategory:
    name: str
    papers: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    total: int = 0
    #: Papers that match but are not listed (beyond the page's limit).
    more: int = 0

    @property
    def percent_read(self) -> int:
        return round(100 * self.counts.get("read", 0) / self.total) if self.total else 0


def reading_page(store: GraphStore, *, status: str = "", category: str = "", analytics: bool = True,
                 stale_above: int = STALE_TABLES_ABOVE, kept: Any = None) -> dict[str, Any]:
    """The reading list grouped by category (in list order), with each category's progress
    from the reading-progress query; ``status`` and ``category`` narrow the papers shown.
    A category lists at most :data:`PAPERS_PER_CATEGORY` papers (:data:`PAPERS_IN_ONE_CATEGORY`
    when it is the one chosen) and counts the rest in ``more``. The papers are chosen from
    the light :func:`reading_index`; only those shown are read in full. With ``analytics``,
    the analytics tables count and choose the papers instead (the same page, faster on a
    large list) when they are fresh, or when only statuses changed since they were made (the
    papers changed are read from the store: :func:`reading_changes`); on a list of
    ``stale_above`` papers or more, tables stale for more than that too, the page saying why
    in ``stale`` (the papers shown still come from the store). ``kept``: see
    :func:`_reading_from_tables`."""
    if analytics:
        from kg.analytics.answers import freshness
        from kg.analytics.materialize import database_path

        con, why = freshness(store, database_path(store.location), stale=True)
        if con is not None:
            now = reading_changes(store, con) if why else {}
            data = _reading_from_tables(store, con, status=status, category=category, now=now, kept=kept)
            if now is not None:  # fresh, or only statuses changed since: the tables and the changes
                return data
            if data["total"] >= stale_above:  # say so; the papers shown are read from the store
                return {**data, "stale": why}
    progress = _records(kg.answer.run(store, "reading-progress", resolve=Resolver(store)))
    index = reading_index(store)
    groups: dict[str, ReadingCategory] = {}
    for p in progress:
        groups[p["category"]] = ReadingCategory(p["category"], total=int(p["papers"]), counts={
            "read": int(p["read"]), "reading": int(p["reading"]), "to-read": int(p["toRead"]),
            "skipped": int(p["skipped"]), "other": int(p["other"])})
    statuses = Counter(entry.status for entry in index)
    loose = Counter(entry.status for entry in index if not entry.categories)
    if loose:  # counted like any category (kg.counts), so its progress reads "1 of 4 read", not "0 of 0"
        groups[UNCATEGORISED] = ReadingCategory(UNCATEGORISED, total=sum(loose.values()), counts=_known(loose))
    wanted = fold(category).strip()
    limit = PAPERS_IN_ONE_CATEGORY if wanted else PAPERS_PER_CATEGORY
    chosen: dict[str, list[str]] = {}  # category -> papers shown, in list order
    for entry in index:
        if status and entry.status != status:
            continue
        for name in entry.categories or (UNCATEGORISED,):
            if wanted and wanted not in fold(name):
                continue
            group = groups.setdefault(name, ReadingCategory(name))
            papers = chosen.setdefault(name, [])
            if len(papers) < limit:
                papers.append(entry.paper)
            else:
                group.more += 1
    shown_papers = {paper for papers in chosen.values() for paper in papers}
    details = {str(row["paper"]): row for row in
               reading_rows(store, papers=[NamedNode(p) for p in sorted(shown_papers)])}
    with_techniques(store, details.values())
    for name, papers in chosen.items():
        groups[name].papers = [details[p] for p in papers if p in details]
    groups = _uncategorised_last(groups)
    shown = [g for g in groups.values() if g.papers or (not status and not wanted)]
    known = list(KNOWN_STATUSES) + sorted(s for s in statuses if s not in KNOWN_STATUSES)
    return {
        "categories": shown, "all_categories": [g.name for g in groups.values()],
        "statuses": known, "counts": statuses, "total": len(index),
        "read": statuses.get("read", 0),
        "history": reading_history(store, statuses),
    }


def _known(counts: Mapping[str, int]) -> dict[str, int]:
    """A category's counts by the page's columns: the four known statuses and the rest as "other"."""
    known = {k: counts.get(k, 0) for k in ("read", "reading", "to-read", "skipped")}
    known["other"] = sum(counts.values()) - sum(known.values())
    return known


def _uncategorised_last(groups: dict[str, ReadingCategory]) -> dict[str, ReadingCategory]:
    """The list's categories in their order, then :data:`kg.counts.UNCATEGORISED`."""
    return dict(sorted(groups.items(), key=lambda item: item[0] == UNCATEGORISED))


def reading_history(store: GraphStore, now: Mapping[str, int]) -> list[dict[str, Any]]:
    """Papers read and to read at the end of each day a status changed, oldest first.

    The counts start from today's (``now``: status → papers) and undo, day by day back,
    the changes the reading events record, so the last point is always today's state even
    where a status was set without an event; the graph sends one row per day and kind of
    change, not one per event."""
    rows = _records(store.select("""
        SELECT ?day ?to ?from (COUNT(?e) AS ?n) WHERE {
          ?e a tkg:ReadingEvent ; prov:atTime ?t .
          OPTIONAL { ?e tkg:status ?s } OPTIONAL { ?e tkg:previousStatus ?p }
          BIND(SUBSTR(STR(?t), 1, 10) AS ?day)
          BIND(COALESCE(REPLACE(STR(?s), "^.*/status/", ""), "") AS ?to)
          BIND(COALESCE(REPLACE(STR(?p), "^.*/status/", ""), "") AS ?from)
        } GROUP BY ?day ?to ?from ORDER BY ?day"""))
    change: dict[str, Counter[str]] = {}
    for row in rows:
        moves = change.setdefault(str(row["day"]), Counter())
        moves[str(row["to"])] += int(row["n"])
        moves[str(row["from"])] -= int(row["n"])
    counts = {"read": now.get("read", 0), "to-read": now.get("to-read", 0)}
    history: list[dict[str, Any]] = []
    for day in sorted(change, reverse=True):
        history.append({"day": day, "read": counts["read"], "to_read": counts["to-read"]})
        counts = {k: max(0, v - change[day][k]) for k, v in counts.items()}  # backdated events can overshoot
    return history[::-1]


def _reading_from_tables(store: GraphStore, con: Any, *, status: str, category: str,
                         now: Mapping[str, list[str]] | None, kept: Any = None) -> dict[str, Any]:
    """:func:`reading_page` from the analytics tables (with the statuses changed since, ``now``:
    :func:`reading_changes`): the counts and the choice of papers come from DuckDB, and only
    the papers shown are read from the store. ``kept`` (``get(key, make)``, as the workbench's
    caches) keeps the tables' own overview for the build they hold: it takes a second or more
    on a long list, and the statuses changed since are moved on it. Closes ``con``."""
    from kg.analytics.overview import RESERVE, reading_overview, reading_patched, tables_made

    wanted = fold(category).strip()
    limit = PAPERS_IN_ONE_CATEGORY if wanted else PAPERS_PER_CATEGORY
    try:
        def made() -> Any:
            return reading_overview(con, status=status, wanted=wanted, limit=limit + RESERVE)

        key = (store.location, tables_made(con), status, wanted, limit)
        base = kept.get(key, made) if kept is not None else made()
        overview = (reading_patched(con, base, now or {}, status=status, wanted=wanted, limit=limit)
                    or reading_overview(con, status=status, wanted=wanted, limit=limit, now=now))
    finally:
        con.close()
    groups: dict[str, ReadingCategory] = {}
    # as reading-progress orders them: by position, those without one first (SPARQL puts unbound first)
    ordered = sorted(overview.categories.items(), key=lambda item: (item[1][0] is not None, item[1][0] or 0, item[0]))
    for name, (_position, counts) in ordered:
        groups[name] = ReadingCategory(name, total=sum(counts.values()), counts=_known(counts))
    for name, (_keys, more) in overview.shown.items():
        groups.setdefault(name, ReadingCategory(name)).more = more
    wanted_papers = sorted({key[-1] for keys, _more in overview.shown.values() for key in keys})
    details = {str(row["paper"]): row for row in reading_rows(store, papers=[NamedNode(p) for p in wanted_papers])}
    with_techniques(store, details.values())
    for name, (keys, _more) in overview.shown.items():
        groups[name].papers = [details[key[-1]] for key in keys if key[-1] in details]
    statuses = Counter(overview.statuses)
    groups = _uncategorised_last(groups)
    shown = [g for g in groups.values() if g.papers or (not status and not wanted)]
    known_statuses = list(KNOWN_STATUSES) + sorted(s for s in statuses if s not in KNOWN_STATUSES)
    return {
        "categories": shown, "all_categories": [g.name for g in groups.values()],
        "statuses": known_statuses, "counts": statuses, "total": sum(statuses.values()),
        "read": statuses.get("read", 0), "history": reading_history(store, statuses),
    }
