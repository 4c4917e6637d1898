"""``kg suggest reading``: papers not on the reading list, ranked by citation evidence towards
what the reader follows.

It reads the graph only. The *seeds* are the papers that stand for what the reader
follows: with a technique, its primary paper and the papers that use it; otherwise the
papers marked read (the :data:`READ_SEEDS` read most recently, so that the work stays
bounded however long the reader's history) and the primary papers of the techniques the
reader follows: those they chose (``kg follow``), or until they choose, those inferred
(whose paper is on the reading list, and those the recent reads use).
A paper not on the reading list, not a seed and not rejected by the reader
(:mod:`kg.rejections`) gets evidence, each piece a probability that it is worth reading:

- methodology or influential citations between it and a seed, both ways: it cites a seed
  for its method (0.45; influentially 0.6), or a seed builds on it (0.5; influentially 0.6);
- co-citation: papers citing it together with a seed, 0.12 each, combined as below and
  capped at 0.5 per seed;
- bibliographic coupling: references it shares with a seed, 0.08 each, capped at 0.4 per seed;
- Semantic Scholar's recommendations (``kg ingest citations --recommendations``): for a
  seed's paper (0.35), or for the reader as a whole, from the papers read and followed and
  against those rejected (0.4);
- it introduces, extends or uses a technique the reader follows (kg link's links, or the
  reader's own: 0.45, as much as citing a seed for its method): "uses GQA, a technique you
  follow".

A technique's seeds are its primary paper and the papers linked to it that are on the
reading list already; the others linked to it are what it suggests.

The score is the chance that at least one piece is right, ``1 - Π(1 - p)`` over the
evidence: 0 to 1, never past 1 however much evidence piles up, and a paper with two
independent pieces ranks above one with either. Each suggestion carries its evidence, a
one-line reason from the strongest piece, and that citation's sentence where Semantic
Scholar gave one; :func:`paper_details` adds authors, TLDR or abstract and citation count.
:func:`add_to_reading_list` puts chosen papers on the list as to-read.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Protocol

from pyoxigraph import Literal, NamedNode

from kg.graphs import CITATIONS, READING, own_first
from kg.iris import paper_link
from kg.sparqltext import values_block
from kg.vocab import CITO, TKG

if TYPE_CHECKING:
    from kg.store.base import GraphStore

__all__ = ["READER", "ReadingFacts", "ReadingSuggestion", "SparqlReadingFacts", "add_to_reading_list",
           "paper_details", "reading_suggestions", "recent_reads", "seeds", "with_details"]

WEIGHTS = {"cites-method": 0.45, "cites-influential": 0.6, "method-of": 0.5, "influence-of": 0.6,
           "co-cited": 0.12, "coupled": 0.08, "recommended": 0.35, "recommended-for-you": 0.4,
           "uses-followed": 0.45}
#: The most co-citation, and bibliographic coupling, count for towards one seed.
CO_CITATION_CAP = 0.5
COUPLING_CAP = 0.4
#: The seed that stands for the reader as a whole (Semantic Scholar's list-based recommendations).
READER = "https://w3id.org/techkg/id/agent/reader"
#: How many of the papers marked read (the most recent) count as seeds, and how many
#: papers of one technique: the work stays bounded however long the reader's history.
READ_SEEDS = 100
TECHNIQUE_SEEDS = 300
_READ = "https://w3id.org/techkg/id/status/read"
#: The relations that make a paper one of a technique's papers (kg.linking).
PAPER_OF = "tkg:introducesTechnique|tkg:extendsTechnique|tkg:usesTechnique|tkg:evaluatesTechnique"


@dataclass
class ReadingSuggestion:
    paper: str
    title: str
    score: float
    reason: str
    evidence: list[dict[str, Any]] = field(default_factory=list)
    year: str | None = None
    venue: str | None = None
    arxiv: str | None = None
    doi: str | None = None
    #: The sentence of the strongest citation that has one, and its intents.
    sentence: str | None = None
    sentence_intents: tuple[str, ...] = ()
    #: Filled by :func:`with_details`: authors, TLDR, abstract, citation count.
    authors: list[str] = field(default_factory=list)
    tldr: str | None = None
    abstract: str | None = None
    citations: int | None = None

    @property
    def id(self) -> str:
        from kg.rejections import reading_id

        return reading_id(self.paper)

    @property
    def link(self) -> str:
        return paper_link(self.arxiv, self.doi, self.paper)

    @property
    def summary(self) -> str:
        """The TLDR, else the start of the abstract (a sentence or two)."""
        if self.tldr:
            return self.tldr
        if not self.abstract:
            return ""
        flat = " ".join(self.abstract.split())
        return flat if len(flat) <= 240 else flat[:239].rsplit(" ", 1)[0] + "…"

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "paper": self.paper, "title": self.title, "score": round(self.score, 3),
                "reason": self.reason, "sentence": self.sentence, "sentence_intents": list(self.sentence_intents),
                "authors": self.authors, "year": self.year, "venue": self.venue, "tldr": self.tldr,
                "abstract": self.abstract, "summary": self.summary, "citations": self.citations, "link": self.link,
                "evidence": self.evidence}


class ReadingFacts(Protocol):
    """What :func:`reading_suggestions` reads: :class:`SparqlReadingFacts` asks the store;
    ``kg.analytics.suggest`` answers from fresh analytics tables. Both give the same rows
    (papers as IRIs, values as their text); the choosing, scoring and ordering is shared."""

    def technique_seeds(self, technique: str) -> tuple[str | None, list[tuple[str, str]]]:
        """The technique's English name (the least, if several) and its first
        :data:`TECHNIQUE_SEEDS` papers as (paper, role) pairs, role ``primary`` (its
        primary paper) or ``uses``, in role then paper order."""
        ...

    def reads(self, limit: int) -> list[tuple[str, str]]:
        """(paper, when its status changed) for the papers marked read, with a date: at
        least every row of the ``limit`` papers read most recently (more may come)."""
        ...

    def first_reads(self, limit: int) -> list[str]:
        """The first ``limit`` papers marked read, in IRI order (dated or not)."""
        ...

    def followed(self, uses: Sequence[str]) -> list[tuple[str, str, str]]:
        """(primary paper, technique's English name, technique) of the techniques whose
        primary paper is on the reading list, and of those the papers ``uses`` introduce,
        extend or use."""
        ...

    def linked_to(self, techniques: Sequence[str]) -> list[tuple[str, str]]:
        """(paper, technique) for the papers that introduce, extend or use ``techniques``
        (a link queries see: kg link's above the threshold, or the reader's)."""
        ...

    def titles(self, papers: Sequence[str]) -> dict[str, str]:
        """Each paper's title (the least, if several)."""
        ...

    def evidence(self, seeds: Sequence[str]) -> list[dict[str, Any]]:
        """Rows ``{cand, seed, kind[, n]}`` from the citations graph for ``seeds``: the typed
        links into and out of a seed (kinds as in :data:`WEIGHTS`), ``co-cited`` with ``n``,
        the papers citing the candidate together with the seed, and ``coupled`` with ``n``,
        the references the candidate shares with the seed."""
        ...

    def sentences(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], list[tuple[str, tuple[str, ...]]]]:
        """The context sentences (text, intents), in order, of the citations ``pairs``
        (citing, cited) that have some."""
        ...

    def listed(self, papers: Sequence[str]) -> set[str]:
        """Which of ``papers`` are on the reading list (have a status)."""
        ...

    def about(self, papers: Sequence[str]) -> dict[str, dict[str, Any]]:
        """title, year, venue, arxiv, doi of each paper (the least value of each)."""
        ...


def recent_reads(facts: ReadingFacts) -> list[str]:
    """The :data:`READ_SEEDS` papers read most recently (then, if fewer have a date, the
    first ones read without one)."""
    # Sorted here: Oxigraph's ORDER BY on dates costs more than reading every dated read
    # (an OPTIONAL date and a GROUP BY would cost seconds).
    dated = sorted(facts.reads(READ_SEEDS), key=lambda item: (_newest_first(item[1]), item[0]))
    uses = list(dict.fromkeys(p for p, _at in dated))[:READ_SEEDS]
    if len(uses) < READ_SEEDS:  # statuses set without a date
        uses = list(dict.fromkeys([*uses, *facts.first_reads(READ_SEEDS)]))[:READ_SEEDS]
    return uses


def seeds(store: GraphStore | None, technique: NamedNode | None = None, *, facts: ReadingFacts | None = None,
          followed: Sequence[str] | None = None) -> dict[str, str]:
    """Seed paper IRI → how to name it in a reason (a technique's name, or a short title),
    from ``facts`` (default: the store, by SPARQL). ``followed``: the techniques the reader
    chose to follow (:func:`kg.follows.followed`); None: those inferred from their reading."""
    if facts is None:
        assert store is not None, "the facts come from the store"
        facts = SparqlReadingFacts(store)
    return _seeds(facts, technique, followed)[0]


def _seeds(facts: ReadingFacts, technique: NamedNode | None, chosen: Sequence[str] | None = None
           ) -> tuple[dict[str, str], dict[str, str]]:
    """The seeds (paper → how to name it) and the techniques followed (IRI → name): those
    ``chosen`` (kg follow), or, when None, those inferred from the reading."""
    out: dict[str, str] = {}
    uses: list[str] = []
    followed: dict[str, str] = {}
    if technique is not None:
        name, rows = facts.technique_seeds(technique.value)
        if name is not None:
            followed[technique.value] = name
        linked = [paper for paper, role in rows if role != "primary"] if name is not None else []
        listed = facts.listed(linked) if linked else set()
        for paper, role in rows if name is not None else []:
            if role == "primary":
                out[paper] = f"{name}'s paper"
            elif paper in listed:  # a linked paper not on the list is a suggestion, not a seed
                uses.append(paper)
    else:
        uses = recent_reads(facts)
        names: dict[str, str] = {}
        if chosen is not None:
            # The techniques the reader chose to follow (kg follow): their primary papers.
            for iri in chosen:
                name, rows = facts.technique_seeds(iri)
                if name is None:
                    continue
                followed[iri] = name
                for paper, role in rows:
                    if role == "primary":
                        names[paper] = min(name, names.get(paper, name))
        else:
            # The techniques followed, as inferred: those whose paper is on the list, and
            # those the papers read lately introduce, extend or use.
            for paper, name, followed_technique in facts.followed(uses):
                names[paper] = min(name, names.get(paper, name))
                followed[followed_technique] = min(name, followed.get(followed_technique, name))
        out.update({paper: f"{name}'s paper" for paper, name in names.items()})
    for paper, title in facts.titles([p for p in dict.fromkeys(uses) if p not in out]).items():
        out.setdefault(paper, _short(title))
    return out, followed


def _newest_first(at: str | None) -> tuple[int, float, str]:
    """A sort key for ``ORDER BY DESC(?at)``: dates and times by their instant (a date or
    time without a zone taken as UTC), newest first, then anything else by its text."""
    text = at or ""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return (1, 0.0, text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (0, -moment.timestamp(), "")


def _short(title: str, width: int = 48) -> str:
    return f"“{title}”" if len(title) <= width else f"“{title[:width - 1].rstrip()}…”"


class SparqlReadingFacts:
    """:class:`ReadingFacts` from the store, by SPARQL: walks from bound papers (index
    seeks), never a scan of the citations."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    def technique_seeds(self, technique: str) -> tuple[str | None, list[tuple[str, str]]]:
        t = NamedNode(technique)
        names = self.store.select(
            'SELECT (MIN(?n) AS ?name) WHERE { ?t skos:prefLabel ?n FILTER(LANG(?n) = "en") }', {"t": t}).records()
        name = names[0]["name"] if names else None
        if name is None:
            return None, []
        rows = self.store.select(
            f"""SELECT DISTINCT ?p ?role WHERE {{ {{ ?t tkg:primaryPaper ?p BIND("primary" AS ?role) }}
                 UNION {{ ?p {PAPER_OF} ?t BIND("uses" AS ?role) }} }} ORDER BY ?role ?p
                 LIMIT {TECHNIQUE_SEEDS}""", {"t": t})
        return str(name), [(r["p"], r["role"]) for r in rows.records() if isinstance(r["p"], str)]

    def reads(self, limit: int) -> list[tuple[str, str]]:
        rows = self.store.select(f"""SELECT ?p ?at WHERE {{ ?p tkg:readingStatus <{_READ}> ; tkg:statusChangedAt ?at .
                                       {own_first("?p", "readingStatus", f"<{_READ}>", "own")}
                                       {own_first("?p", "statusChangedAt", "?at", "ownAt")} }}""")
        return [(row["p"].value, row["at"].value) for row in rows.rows
                if isinstance(row["p"], NamedNode) and isinstance(row["at"], Literal)]

    def first_reads(self, limit: int) -> list[str]:
        rows = self.store.select(f"""SELECT DISTINCT ?p WHERE {{ ?p tkg:readingStatus <{_READ}> FILTER(isIRI(?p))
                                       {own_first("?p", "readingStatus", f"<{_READ}>", "own")} }}
                                     ORDER BY ?p LIMIT {limit}""")
        return [r["p"] for r in rows.records()]

    def followed(self, uses: Sequence[str]) -> list[tuple[str, str, str]]:
        rows = self.store.select("""SELECT ?p ?name ?t WHERE { ?t tkg:primaryPaper ?p ; skos:prefLabel ?name .
                                      FILTER(LANG(?name) = "en") ?p tkg:readingStatus ?s }""").records()
        if uses:
            rows += self.store.select(
                """SELECT DISTINCT ?p ?name ?t WHERE {
                     ?r tkg:introducesTechnique|tkg:extendsTechnique|tkg:usesTechnique ?t .
                     ?t tkg:primaryPaper ?p ; skos:prefLabel ?name . FILTER(LANG(?name) = "en") }""",
                {"r": [NamedNode(p) for p in uses]}).records()
        return [(r["p"], str(r["name"]), r["t"]) for r in rows if isinstance(r["p"], str)]

    def linked_to(self, techniques: Sequence[str]) -> list[tuple[str, str]]:
        if not techniques:
            return []
        rows = self.store.select(
            "SELECT DISTINCT ?p ?t WHERE { ?p tkg:introducesTechnique|tkg:extendsTechnique|tkg:usesTechnique ?t }",
            {"t": [NamedNode(t) for t in techniques]})
        return [(r["p"], r["t"]) for r in rows.records() if isinstance(r["p"], str)]

    def titles(self, papers: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for start in range(0, len(papers), 2000):
            chunk = [NamedNode(p) for p in papers[start:start + 2000]]
            rows = self.store.select("SELECT ?p (MIN(?t) AS ?title) WHERE { ?p dcterms:title ?t } GROUP BY ?p",
                                     {"p": chunk})
            out.update({r["p"]: str(r["title"]) for r in rows.records() if r["title"] is not None})
        return out

    def evidence(self, seeds: Sequence[str]) -> list[dict[str, Any]]:
        """Two queries per chunk of seeds, both walks from the bound seeds: the typed links
        into and out of a seed, and the papers cited together with a seed, counted by the store."""
        out: list[dict[str, Any]] = []
        g = CITATIONS
        method, influential = CITO.usesMethodIn.value, TKG.citesInfluentially.value
        kinds = {(False, method): "cites-method", (False, influential): "cites-influential",
                 (True, method): "method-of", (True, influential): "influence-of",
                 (False, TKG.recommendedFor.value): "recommended"}
        nodes = [NamedNode(p) for p in seeds]
        for start in range(0, len(nodes), 5000):
            # The VALUES go inside the GRAPH group: outside it, Oxigraph evaluates the group first.
            bound = values_block({"seed": nodes[start:start + 5000]})
            rows = self.store.select(
                f"""SELECT DISTINCT ?cand ?seed ?p ?out WHERE {{ GRAPH {g} {{ {bound}
                      {{ ?cand ?p ?seed FILTER(?p IN (cito:usesMethodIn, tkg:citesInfluentially, tkg:recommendedFor))
                         BIND(false AS ?out) }}
                      UNION {{ ?seed ?p ?cand FILTER(?p IN (cito:usesMethodIn, tkg:citesInfluentially))
                               BIND(true AS ?out) }} }} FILTER(isIRI(?cand)) }}""")
            for row in rows.records():
                out.append({"cand": row["cand"], "seed": row["seed"], "kind": kinds[(bool(row["out"]), row["p"])]})
            # Cited together with a seed (co-cited), and citing what a seed cites (coupled).
            for kind, shared in (("co-cited", "?x cito:cites ?seed . ?x cito:cites ?cand"),
                                 ("coupled", "?seed cito:cites ?x . ?cand cito:cites ?x")):
                rows = self.store.select(
                    f"""SELECT ?cand ?seed (COUNT(?x) AS ?n) WHERE {{ GRAPH {g} {{ {bound}
                          {shared} }} FILTER(?cand != ?seed && isIRI(?cand)) }}
                        GROUP BY ?cand ?seed""")
                out += [{"cand": r["cand"], "seed": r["seed"], "kind": kind, "n": int(r["n"])}
                        for r in rows.records()]
        return out

    def sentences(self, pairs: Sequence[tuple[str, str]]) -> dict[tuple[str, str], list[tuple[str, tuple[str, ...]]]]:
        from kg.citations import citations_of

        if not pairs:
            return {}
        wanted = set(pairs)
        records = citations_of(self.store, [NamedNode(p) for p in sorted({a for a, _b in wanted})],
                               cited=[NamedNode(p) for p in sorted({b for _a, b in wanted})])
        return {(r.citing, r.cited): [(c.text, tuple(c.intents)) for c in r.contexts] for r in records
                if (r.citing, r.cited) in wanted and r.contexts}

    def listed(self, papers: Sequence[str]) -> set[str]:
        nodes = [NamedNode(p) for p in papers]
        if not nodes:
            return set()
        rows = self.store.select("SELECT DISTINCT ?p WHERE { ?p tkg:readingStatus ?s }", {"p": nodes})
        return {r["p"] for r in rows.records()}

    def about(self, papers: Sequence[str]) -> dict[str, dict[str, Any]]:
        nodes = [NamedNode(p) for p in papers]
        if not nodes:
            return {}
        rows = self.store.select(
            """SELECT ?p (MIN(?t) AS ?title) (MIN(STR(?i)) AS ?issued) (MIN(?v) AS ?venue) (MIN(?a) AS ?arxiv)
                 (MIN(?d) AS ?doi) WHERE { OPTIONAL { ?p dcterms:title ?t } OPTIONAL { ?p dcterms:issued ?i }
                 OPTIONAL { ?p tkg:venue ?v } OPTIONAL { ?p tkg:arxivId ?a } OPTIONAL { ?p bibo:doi ?d } }
               GROUP BY ?p""",
            {"p": nodes})
        return {r["p"]: {"title": _text(r["title"]), "year": str(r["issued"])[:4] if r["issued"] else None,
                         "venue": _text(r["venue"]), "arxiv": _text(r["arxiv"]), "doi": _text(r["doi"])}
                for r in rows.records()}


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _reason(evidence: list[dict[str, Any]]) -> str:
    top = evidence[0]
    seed = top["seed_name"]
    n = top.get("n", 1)
    phrase = {
        "cites-method": f"uses the method of {seed}",
        "cites-influential": f"builds on {seed} (an influential citation)",
        "method-of": f"{seed} uses its method",
        "influence-of": f"{seed} builds on it (an influential citation)",
        "co-cited": f"cited together with {seed} by {n} paper" + ("s" if n != 1 else ""),
        "coupled": f"shares {n} reference{'s' if n != 1 else ''} with {seed}",
        "recommended": f"Semantic Scholar recommends it to readers of {seed}",
        "recommended-for-you": "Semantic Scholar recommends it from what you read and follow",
        "uses-followed": f"uses {seed}, a technique you follow",
    }[top["kind"]]
    more = len(evidence) - 1
    return phrase + (f"; and {more} more link{'s' if more != 1 else ''}" if more else "")


def _weight(kind: str, n: int) -> float:
    """The probability a piece of evidence gives (see the module's docstring)."""
    if kind == "co-cited":
        return min(CO_CITATION_CAP, 1 - (1 - WEIGHTS[kind]) ** n)
    if kind == "coupled":
        return min(COUPLING_CAP, 1 - (1 - WEIGHTS[kind]) ** n)
    return WEIGHTS[kind]


def _score(weights: list[float]) -> float:
    """``1 - Π(1 - p)``, the weights taken in one order so that the rows' order never changes it."""
    rest = 1.0
    for weight in sorted(weights):
        rest *= 1.0 - weight
    return round(1.0 - rest, 12)


#: Which way the citation of a kind of evidence goes: (candidate cites seed) or (seed cites candidate).
_CITES_SEED = {"cites-method", "cites-influential"}
_CITED_BY_SEED = {"method-of", "influence-of"}


def reading_suggestions(store: GraphStore | None, *, technique: NamedNode | None = None, limit: int = 10,
                        facts: ReadingFacts | None = None, rejected: Collection[str] | None = None,
                        followed: Sequence[str] | None = None) -> list[ReadingSuggestion]:
    """The ``limit`` best papers to read next, with their evidence, a reason and the strongest
    evidence's sentence, from ``facts`` (default: the store, by SPARQL). Papers the reader
    rejected (``rejected``, default read from the store) are never suggested; ``followed``
    as :func:`seeds` takes it."""
    if facts is None:
        assert store is not None, "the facts come from the store"
        facts = SparqlReadingFacts(store)
    if rejected is None:
        from kg.rejections import rejected as read_rejected

        assert store is not None, "the rejections come from the store"
        rejected = set(read_rejected(store))
    named, following = _seeds(facts, technique, followed)
    if not named and not following:
        return []
    if technique is None:  # Semantic Scholar's recommendations for the reader as a whole
        named = {**named, READER: "what you read and follow"}
    evidence: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for paper, followed_technique in facts.linked_to(sorted(following)):
        if paper not in named and paper not in rejected:
            evidence[paper].append({"kind": "uses-followed", "seed": followed_technique,
                                    "seed_name": following[followed_technique], "weight": WEIGHTS["uses-followed"]})
    for row in facts.evidence(list(named)) if named else []:
        cand = row["cand"]
        if cand in named or not isinstance(cand, str) or cand in rejected:
            continue
        kind = row["kind"]
        if kind == "recommended" and row["seed"] == READER:
            kind = "recommended-for-you"
        n = int(row.get("n", 1))
        evidence[cand].append({"kind": kind, "seed": row["seed"], "seed_name": named[row["seed"]],
                               "weight": round(_weight(kind, n), 6), **({"n": n} if "n" in row else {})})
    scores = {paper: _score([e["weight"] for e in items]) for paper, items in evidence.items()}
    ranked = sorted(scores, key=lambda p: (-scores[p], p))
    best: list[str] = []
    # Papers on the reading list drop out; only the head of the ranking is checked.
    for start in range(0, len(ranked), max(50, 2 * limit)):
        batch = ranked[start:start + max(50, 2 * limit)]
        listed = facts.listed(batch)
        best += [p for p in batch if p not in listed][: limit - len(best)]
        if len(best) >= limit:
            break
    about = facts.about(best)
    ordered = {paper: sorted(evidence[paper], key=lambda e: (-e["weight"], e["seed_name"], e["kind"], e["seed"],
                                                             e.get("n", 0))) for paper in best}
    cited = [(paper, e["seed"]) if e["kind"] in _CITES_SEED else (e["seed"], paper)
             for paper in best for e in ordered[paper] if e["kind"] in _CITES_SEED | _CITED_BY_SEED]
    sentences = facts.sentences(list(dict.fromkeys(cited)))
    out = []
    for paper in best:
        items = ordered[paper]
        info = about.get(paper, {})
        item = ReadingSuggestion(paper, info.get("title") or paper, scores[paper], _reason(items), items,
                                 info.get("year"), info.get("venue"), info.get("arxiv"), info.get("doi"))
        item.sentence, item.sentence_intents = _strongest_sentence(paper, items, sentences)
        out.append(item)
    return out


def _strongest_sentence(paper: str, items: list[dict[str, Any]],
                        sentences: dict[tuple[str, str], list[tuple[str, tuple[str, ...]]]]
                        ) -> tuple[str | None, tuple[str, ...]]:
    """The sentence of the strongest citation that has one: a methodology sentence first."""
    for e in items:
        if e["kind"] not in _CITES_SEED | _CITED_BY_SEED:
            continue
        pair = (paper, e["seed"]) if e["kind"] in _CITES_SEED else (e["seed"], paper)
        found = sentences.get(pair, [])
        if found:
            text, intents = min(found, key=lambda s: ("methodology" not in s[1], found.index(s)))
            return text, intents
    return None, ()


def paper_details(store: GraphStore, papers: Sequence[str]) -> dict[str, dict[str, Any]]:
    """authors (in order, the first ones), TLDR, abstract and citation count of each paper."""
    nodes = [NamedNode(p) for p in dict.fromkeys(papers)]
    if not nodes:
        return {}
    rows = store.select(
        """SELECT ?p (MIN(?t) AS ?tldr) (MIN(?a) AS ?abstract) (MAX(?c) AS ?citations) WHERE {
             OPTIONAL { ?p tkg:tldr ?t } OPTIONAL { ?p dcterms:abstract ?a } OPTIONAL { ?p tkg:citationCount ?c } }
           GROUP BY ?p""", {"p": nodes})
    out: dict[str, dict[str, Any]] = {r["p"]: {"tldr": _text(r["tldr"]), "abstract": _text(r["abstract"]),
                                              "citations": int(r["citations"]) if r["citations"] is not None else None,
                                              "authors": []}
                                      for r in rows.records()}
    people = store.select(
        """SELECT ?p ?n ?name WHERE { ?p bibo:authorList ?list . ?list ?member ?who . ?who foaf:name ?name
             FILTER(STRSTARTS(STR(?member), "http://www.w3.org/1999/02/22-rdf-syntax-ns#_"))
             BIND(xsd:integer(STRAFTER(STR(?member), "#_")) AS ?n) }""", {"p": nodes})
    ordered: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for r in people.records():
        ordered[r["p"]].append((int(r["n"]), str(r["name"])))
    creators: dict[str, list[str]] = defaultdict(list)  # papers with no author list: their creators
    for r in store.select("SELECT ?p ?name WHERE { ?p dcterms:creator ?who . ?who foaf:name ?name }",
                          {"p": nodes}).records():
        creators[r["p"]].append(str(r["name"]))
    for paper, entry in out.items():
        names = [name for _n, name in sorted(ordered[paper])] if paper in ordered else sorted(creators[paper])
        entry["authors"] = list(dict.fromkeys(names))
    return out


def with_details(found: Sequence[ReadingSuggestion], details: dict[str, dict[str, Any]]) -> None:
    """Put each paper's authors, TLDR, abstract and citation count (from :func:`paper_details`
    or the search index) on its suggestion."""
    for item in found:
        info = details.get(item.paper, {})
        item.authors = list(info.get("authors") or [])
        item.tldr, item.abstract, item.citations = info.get("tldr"), info.get("abstract"), info.get("citations")


def add_to_reading_list(store: GraphStore, papers: Sequence[str], *, via: str = "suggest") -> list[str]:
    """Put ``papers`` on the reading list as to-read (those already on it stay as they are),
    in one transaction; returns those added."""
    from kg.reading import current_statuses, known_status_triples, status_change
    from kg.store.base import Activity

    current = current_statuses(store)
    new = [p for p in dict.fromkeys(papers) if p not in current]
    if not new:
        return []
    with store.transaction(Activity("kg suggest reading --add", stats={"added": len(new)})) as tx:
        for paper in new:
            status_change(tx, NamedNode(paper), "to-read", previous=None, via=via, first_seen=True)
        tx.insert(READING, known_status_triples())
    return new
