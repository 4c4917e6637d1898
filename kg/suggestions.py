"""``kg suggest lineage``: typed lineage edges between techniques, proposed from citation evidence.

It reads the graph only: the techniques (names, aliases, dates, primary papers), the
citations their papers make (``citations`` graph, see :mod:`kg.citations`), the lineage
edges already there, and the reader's decisions (``lineage-decisions``, see
:mod:`kg.decisions`). Evidence that technique C derives from technique P comes in three
kinds, each with a weight:

- ``methodology`` (0.35): C's paper cites P's paper with the methodology intent;
- ``influential`` (0.35): C's paper cites P's paper and Semantic Scholar marks it influential;
- ``names`` (0.45, 0.55 with the methodology intent): a sentence in which C's paper cites
  anything names P (its name or an alias from the catalog) in lineage wording ("we
  extend", "following", "based on", ...);
- ``wording`` (0.45, 0.55 with the methodology intent): a sentence of C's citation of P's
  own paper in lineage wording, naming P or not ("we extend the advantage of [3]").

Lineage wording is not usage: a sentence that says C was trained, run or implemented with
something ("trained with TP=8 and FSDP [14]", "we use ZeRO-1", "optimised with AdamW") is
no lineage evidence unless a typed relation is named too ("we extend ZeRO"). A pair is
proposed only when its wording names it (``names`` or ``wording``), or when the citation is
both methodological and influential: a methodology intent alone proposes nothing, nor does a
background mention, nor a parent dated after the child. Generic infrastructure a paper
trains with is weighed down as a parent: a parent in the distributed-systems, optimizer or
kernel categories (:data:`INFRASTRUCTURE`) of a child in another category counts its
evidence at :data:`INFRASTRUCTURE_FACTOR` of its weight, and needs wording of a relation
that is more than use ("we extend ZeRO"; not "built on", "written in" or "following").

The score of a pair is ``1 - Π(1 - weight)`` over its evidence (0 to 1). The relation is
read from the wording (refines / extends / combines / replaces / generalizes / specializes /
portsTo / reimplements / implements / buildsOn), else it is ``derivesFrom``. Pairs that
already have an edge are reported as confirmed by citations (weighted evidence: more than a
background citation), as cited for background only, or as lacking citation evidence; pairs
the reader rejected are never proposed again.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from pyoxigraph import Literal, NamedNode

from kg.citations import CitationRecord, citations_of
from kg.errors import NotFoundError
from kg.results import python_value
from kg.vocab import DCTERMS, SKOS, TKG

if TYPE_CHECKING:
    from kg.decisions import Decision
    from kg.store.base import GraphStore

__all__ = [
    "EdgeFact",
    "Evidence",
    "LineageFacts",
    "LineageReport",
    "Suggestion",
    "TechniqueInfo",
    "categories",
    "find_suggestion",
    "lineage_wording",
    "lineage_facts",
    "lineage_report",
    "relation_from_wording",
    "suggestion_id",
    "technique_info",
    "techniques",
    "with_categories",
]

WEIGHTS = {"methodology": 0.35, "influential": 0.35, "names": 0.45, "names+methodology": 0.55, "wording": 0.45,
           "wording+methodology": 0.55}
#: The categories of generic infrastructure that papers train with: as a parent of a
#: technique of another category, its evidence counts at INFRASTRUCTURE_FACTOR.
INFRASTRUCTURE = frozenset({"distributed", "optimizers", "kernels"})
INFRASTRUCTURE_FACTOR = 0.3
#: Evidence that names the lineage (it alone can propose a pair).
_WORDED = frozenset({"names", "names+methodology", "wording", "wording+methodology"})
#: Wording that makes a sentence naming a technique lineage evidence, and the relation it
#: reads as (None: lineage, untyped). Checked in this order; the first that matches wins.
_CUES: tuple[tuple[str, str | None], ...] = (
    (r"\brefine[sd]?\b|\brefining\b|\bimprove[sd]? (?:up)?on\b", "refines"),
    (r"\bgenerali[sz]e[sd]?\b|\bgenerali[sz]ing\b|\bgenerali[sz]ation of\b", "generalizes"),
    (r"\bspeciali[sz]e[sd]?\b|\bspecial case of\b|\brestrict(?:s|ed)?\b", "specializes"),
    (r"\breplace[sd]?\b|\breplacing\b|\binstead of\b|\bsubstitut", "replaces"),
    (r"\bcombine[sd]?\b|\bcombining\b|\bmerge[sd]?\b|\bhybrid of\b", "combines"),
    (r"\breimplement", "reimplements"),
    (r"\bport(?:s|ed|ing)?\b|\badapt(?:s|ed|ing)? .{1,60}? to\b|\bcarr(?:y|ies|ied) .{1,40}? to\b", "portsTo"),
    (r"\bextend(?:s|ed|ing)?\b|\bextension of\b|\bon top of\b|\badd(?:s|ed|ing)? .{1,40}? to\b", "extends"),
    (r"\bimplement(?:s|ed|ing)?\b|\bimplementation of\b", "implements"),
    (r"\bbuil(?:d|ds|t) (?:up)?on\b|\bbuilding (?:up)?on\b|\bwritten (?:in|with)\b", "buildsOn"),
    (r"\bfollow(?:s|ed|ing)?\b|\bbased on\b|\binspired by\b|\bderived? from\b|\bvariant of\b|\badopt(?:s|ed)?\b|"
     r"\bmodif(?:y|ies|ied)\b|\bborrow", None),
)
_CUE_PATTERNS = tuple((re.compile(p, re.IGNORECASE), r) for p, r in _CUES)
#: The citing side speaking of itself.
_OWN = re.compile(r"\b(?:we|our|us|ours|this (?:work|paper|method|model|design))\b|\bhere\b", re.IGNORECASE)
#: Wording of use, not lineage: what a paper was trained, run or built with, or compared to.
_USAGE = re.compile(
    r"\b(?:train(?:s|ed|ing)?|pre-?train\w*|fine-?tun\w*|run(?:s|ning)?|ran|launch\w*|implement(?:s|ed)?|"
    r"optimi[sz]e[sd]?|parallelli?[sz]ed|shard(?:s|ed)?|scal(?:e|ed|ing)|evaluat\w*|benchmark\w*)\b[^.;]{0,48}?"
    r"\b(?:with|using|via|on|under|in)\b|\busing\b|\bwe (?:use|used|employ|employed|rely on|leverage[sd]?|apply|"
    r"applied|adopt|adopted|enable|enabled|turn on)\b|\b(?:is|are|was|were) (?:used|employed|applied|enabled)\b|"
    r"\bfor (?:distributed )?(?:training|parallelism|sharding|optimi[sz]ation)\b|"
    r"\b[A-Z]{2,5}\s*=\s*\d|\bwith (?:\w+[- ]){0,2}(?:parallelism|sharding|offload\w*)\b|"
    r"\bcompar(?:e|es|ed|ing|ison)\b|\bbaselines?\b|\boutperform\w*|\bversus\b|\bvs\.?(?=\s)", re.IGNORECASE)
DERIVES_FROM = "derivesFrom"
_NOTATION, _PREF_LABEL, _ALT_LABEL = SKOS.notation.value, SKOS.prefLabel.value, SKOS.altLabel.value
_DATE, _PRIMARY_PAPER = DCTERMS.date.value, TKG.primaryPaper.value


@functools.lru_cache(maxsize=65536)
def _cues(sentence: str) -> tuple[int, ...]:
    """The indexes in :data:`_CUE_PATTERNS` of the cues ``sentence`` has."""
    return tuple(i for i, (pattern, _relation) in enumerate(_CUE_PATTERNS) if pattern.search(sentence))


def lineage_wording(sentence: str) -> bool:
    """Whether ``sentence`` reads as lineage: it has a cue, and is not about what was used
    (a typed relation such as "we extend" counts even beside wording of use)."""
    found = _cues(sentence)
    if not found:
        return False
    if any(_CUE_PATTERNS[i][1] is not None for i in found):
        return True
    return not _USAGE.search(sentence)


def relation_from_wording(sentences: list[str]) -> str | None:
    """The typed relation the sentences' wording names (the first cue that matches in any of
    them, in the order of :data:`_CUES`), ``derivesFrom`` for untyped lineage wording, or
    None when no sentence has lineage wording."""
    found = sorted({i for s in sentences for i in _cues(s)})
    if not found:
        return None
    typed = [_CUE_PATTERNS[i][1] for i in found if _CUE_PATTERNS[i][1] is not None]
    return typed[0] if typed else DERIVES_FROM


def suggestion_id(child: str, parent: str) -> str:
    """The stable id of the suggestion that ``child`` derives from ``parent`` (IRIs)."""
    return "sg-" + hashlib.sha1(f"{child}\x1f{parent}".encode()).hexdigest()[:8]


@dataclass(frozen=True)
class TechniqueInfo:
    iri: str
    id: str
    name: str
    labels: tuple[str, ...]
    date: str | None
    papers: tuple[str, ...]
    category: str | None = None


@dataclass(frozen=True)
class Evidence:
    """One piece of evidence: what kind, which citation, the sentence and its intents."""

    kind: str
    citing: str
    cited: str
    weight: float
    sentence: str | None = None
    intents: tuple[str, ...] = ()
    citation: str | None = None

    def line(self) -> str:
        """``[methodology] We extend GRPO's ...`` or ``(influential citation)``."""
        if self.sentence:
            return (f"[{', '.join(self.intents)}] " if self.intents else "") + self.sentence
        return {"methodology": "(cites the parent's paper with the methodology intent)",
                "influential": "(cites the parent's paper; Semantic Scholar marks it influential)",
                "background": "(cites the parent's paper for background only)"}.get(
            self.kind, f"({self.kind})")

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "weight": self.weight, "sentence": self.sentence, "intents": list(self.intents),
                "citing": self.citing, "cited": self.cited, "citation": self.citation}


@dataclass
class Suggestion:
    """A pair child → parent with its evidence: proposed, or an existing edge checked."""

    id: str
    child: TechniqueInfo
    parent: TechniqueInfo
    relation: str
    score: float
    evidence: list[Evidence] = field(default_factory=list)
    #: new (proposed), confirmed or lacking (an existing edge), rejected (by the reader)
    status: str = "new"
    existing_relation: str | None = None
    basis: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "status": self.status, "child": self.child.name, "child_id": self.child.id,
            "child_iri": self.child.iri, "parent": self.parent.name, "parent_id": self.parent.id,
            "parent_iri": self.parent.iri, "relation": self.relation, "existing_relation": self.existing_relation,
            "basis": self.basis, "score": round(self.score, 3), "evidence": [e.as_dict() for e in self.evidence],
        }


@dataclass
class LineageReport:
    suggestions: list[Suggestion] = field(default_factory=list)
    existing: list[Suggestion] = field(default_factory=list)
    rejected: list[Suggestion] = field(default_factory=list)
    citations_read: int = 0

    def all(self) -> list[Suggestion]:
        return [*self.suggestions, *self.existing, *self.rejected]


def techniques(store: GraphStore) -> dict[str, TechniqueInfo]:
    """Every technique with its id, English name, aliases, date and primary papers."""
    # The properties of each technique in one walk (index seeks from ?t), assembled here:
    # OPTIONALs for the labels, dates and papers would multiply rows and cost twice as much.
    rows = store.select(
        """SELECT ?t ?p ?o WHERE { ?t a tkg:Technique ; ?p ?o
             FILTER(?p IN (skos:notation, skos:prefLabel, skos:altLabel, dcterms:date, tkg:primaryPaper)) }"""
    )
    props: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
    for row in rows.rows:
        t, o = row["t"], row["o"]
        if isinstance(t, NamedNode) and isinstance(row["p"], NamedNode) and o is not None:
            props[t.value][row["p"].value].append(o)
    out: dict[str, TechniqueInfo] = {}
    for iri, by in props.items():
        names = [o.value for o in by[_PREF_LABEL] if isinstance(o, Literal) and o.language == "en"]
        if not by[_NOTATION] or not names:
            continue
        out[iri] = technique_info(iri, [str(python_value(o)) for o in by[_NOTATION]], names,
                                  [str(python_value(o)) for o in by[_ALT_LABEL]],
                                  [str(python_value(o)) for o in by[_DATE]],
                                  [str(python_value(o)) for o in by[_PRIMARY_PAPER]])
    return out


def categories(store: GraphStore) -> dict[str, str]:
    """Each technique's category id (the least, if several)."""
    rows = store.select("""SELECT ?t (MIN(?id) AS ?c) WHERE { ?t a tkg:Technique ; skos:broader ?cat .
                             ?cat skos:notation ?id } GROUP BY ?t""")
    return {str(r["t"]): str(r["c"]) for r in rows.records() if r["c"] is not None}


def with_categories(known: dict[str, TechniqueInfo], found: dict[str, str]) -> dict[str, TechniqueInfo]:
    """``known`` with each technique's category from ``found`` (IRI → category id)."""
    return {iri: replace(info, category=found.get(iri)) for iri, info in known.items()}


def technique_info(iri: str, ids: Sequence[str], names: Sequence[str], aliases: Sequence[str],
                   dates: Sequence[str], papers: Sequence[str]) -> TechniqueInfo:
    """A technique from its values, whichever graphs gave them and in whatever order: where
    it has several ids, English names or dates, the least of each counts."""
    name = min(names)
    return TechniqueInfo(iri, min(ids), name, (name, *sorted(set(aliases) - {name})), min(dates) if dates else None,
                         tuple(sorted(set(papers))))


def _fold(text: str) -> str:
    return " ".join(text.replace("-", " ").split()).casefold()


_EDGE_PUNCTUATION = "\"'“”‘’()[]{}.,;:!?"


class _Names:
    """Finds the techniques a sentence names. Single-word labels match with their own
    capitals (so "Switch" is not "switch"); labels of several words match in any case and
    with a hyphen for a space; the longest label wins where labels overlap ("Gated
    DeltaNet" is not "DeltaNet"); a plural or possessive ending is allowed.

    Word n-grams are looked up in dictionaries rather than matched with one large regular
    expression: compiling an alternation of every label of a large catalog costs more than
    reading all the sentences."""

    def __init__(self, known: dict[str, TechniqueInfo]) -> None:
        self.exact: dict[str, set[str]] = defaultdict(set)
        self.folded: dict[str, set[str]] = defaultdict(set)
        self.starts: dict[str, int] = {}  # first folded word of a label of several words -> its longest length
        self._seen: dict[str, frozenset[str]] = {}
        for info in known.values():
            for label in (label.strip() for label in info.labels):
                if len(label) < 2:
                    continue
                if " " in label:
                    key = _fold(label)
                    self.folded[key].add(info.iri)
                    first, length = key.split(" ", 1)[0], key.count(" ") + 1
                    self.starts[first] = max(self.starts.get(first, 0), length)
                else:
                    self.exact[label].add(info.iri)

    @staticmethod
    def _bare(word: str) -> tuple[str, ...]:
        """The word, and the word without a plural or possessive ending."""
        for ending in ("'s", "’s", "s"):
            if word.endswith(ending) and len(word) > len(ending) + 1:
                return word, word[: -len(ending)]
        return (word,)

    def named(self, sentence: str) -> frozenset[str]:
        """The IRIs of the techniques ``sentence`` names (remembered: a sentence is asked about
        once per parent it might back)."""
        found = self._seen.get(sentence)
        if found is None:
            found = self._seen[sentence] = frozenset(self._named(sentence))
        return found

    def _named(self, sentence: str) -> set[str]:
        words = [w for w in (w.strip(_EDGE_PUNCTUATION) for w in sentence.split()) if w]
        out: set[str] = set()
        covered: set[int] = set()
        if self.starts:
            tokens: list[str] = []
            owner: list[int] = []
            for index, word in enumerate(words):
                for token in _fold(word).split(" "):
                    if token:
                        tokens.append(token)
                        owner.append(index)
            i = 0
            while i < len(tokens):
                longest = self.starts.get(tokens[i], 0)
                for n in range(min(longest, len(tokens) - i), 1, -1):
                    head = " ".join(tokens[i:i + n - 1])
                    hits = next((self.folded[k] for k in (f"{head} {b}" for b in self._bare(tokens[i + n - 1]))
                                 if k in self.folded), None)
                    if hits is not None:
                        out |= hits
                        covered.update(owner[i:i + n])
                        i += n
                        break
                else:
                    i += 1
        for index, word in enumerate(words):
            if index in covered:
                continue
            hits = next((self.exact[b] for b in self._bare(word) if b in self.exact), None)
            if hits is None and "-" in word:  # a label of several words written with hyphens: Gated-DeltaNet
                hits = self.folded.get(_fold(word))
            if hits:
                out |= hits
        return out


def _year(value: str | None) -> str | None:
    return value[:7] if value else None


def _later(parent: TechniqueInfo, child: TechniqueInfo) -> bool:
    a, b = _year(parent.date), _year(child.date)
    return bool(a and b and a > b)


def _evidence(records: list[CitationRecord], known: dict[str, TechniqueInfo], names: _Names,
              paper_techniques: dict[str, set[str]]
              ) -> tuple[dict[tuple[str, str], list[Evidence]], set[tuple[str, str]]]:
    """Evidence per (child, parent), and the pairs whose papers cite each other plainly."""
    found: dict[tuple[str, str], list[Evidence]] = defaultdict(list)
    plain: set[tuple[str, str]] = set()
    for record in records:
        children = paper_techniques.get(record.citing, set())
        parents = paper_techniques.get(record.cited, set())
        for child in children:
            for parent in parents - {child}:
                plain.add((child, parent))
                if "methodology" in record.intents:
                    found[(child, parent)].append(Evidence("methodology", record.citing, record.cited,
                                                           WEIGHTS["methodology"], citation=record.node))
                if record.influential:
                    found[(child, parent)].append(Evidence("influential", record.citing, record.cited,
                                                           WEIGHTS["influential"], citation=record.node))
            for context in record.contexts:
                mentioned = names.named(context.text)
                named = mentioned - {child}
                # Lineage wording about the citing side ("we extend", "KDA refines"), not a
                # description of the cited work ("[4] combined a simulation with ...").
                lineage = lineage_wording(context.text) and (child in mentioned or bool(_OWN.search(context.text)))
                used = not lineage and bool(_USAGE.search(context.text))
                suffix = "+methodology" if "methodology" in context.intents else ""
                for parent in named:
                    if lineage:
                        kind = "names" + suffix
                        found[(child, parent)].append(Evidence(kind, record.citing, record.cited, WEIGHTS[kind],
                                                               context.text, context.intents, record.node))
                    elif parent in parents:  # the parent's own paper, named in passing or as something used
                        found[(child, parent)].append(Evidence("use" if used else "sentence", record.citing,
                                                               record.cited, 0.0, context.text, context.intents,
                                                               record.node))
                # Sentences of a citation of the parent's own paper that do not name it.
                for parent in parents - named - {child}:
                    if lineage:
                        kind = "wording" + suffix
                        found[(child, parent)].append(Evidence(kind, record.citing, record.cited, WEIGHTS[kind],
                                                               context.text, context.intents, record.node))
                    elif suffix or used:  # still shows why the citation is methodological, or what was used
                        found[(child, parent)].append(Evidence("use" if used else "sentence", record.citing,
                                                               record.cited, 0.0, context.text, context.intents,
                                                               record.node))
    return found, plain


def _infrastructure(child: TechniqueInfo, parent: TechniqueInfo) -> bool:
    """Whether ``parent`` is generic infrastructure to ``child`` (see :data:`INFRASTRUCTURE`)."""
    return parent.category in INFRASTRUCTURE and parent.category != child.category


def _weighed(evidence: list[Evidence], factor: float) -> list[Evidence]:
    return evidence if factor == 1.0 else [replace(e, weight=round(e.weight * factor, 4)) for e in evidence]


#: Relations that, said of generic infrastructure, say only that it was used: a technique
#: "built on", "implemented in" or "written in" a framework does not descend from it.
_USED_AS = frozenset({DERIVES_FROM, "buildsOn", "implements"})


def _proposable(evidence: list[Evidence], infrastructure: bool) -> bool:
    """Whether the evidence may propose a pair: wording that names the lineage, or (for a
    parent that is no generic infrastructure to the child) a citation both methodological
    and influential. Of infrastructure, only wording of a relation that is more than use
    ("we extend ZeRO", not "written in Triton" or "following Megatron-LM")."""
    worded = [e for e in evidence if e.weight > 0 and e.kind in _WORDED]
    if infrastructure:
        return any((relation_from_wording([e.sentence]) or DERIVES_FROM) not in _USED_AS
                   for e in worded if e.sentence)
    if worded:
        return True
    kinds = {e.kind for e in evidence if e.weight > 0}
    # Methodological and influential, unless every sentence of the citation says what was used.
    sentences = {e.kind for e in evidence if e.sentence}
    return {"methodology", "influential"} <= kinds and sentences != {"use"}


def _score(evidence: list[Evidence]) -> float:
    rest = 1.0
    for item in evidence:
        rest *= 1.0 - item.weight
    return 1.0 - rest


class EdgeFact(NamedTuple):
    """An existing lineage edge as :func:`lineage_report` reads it."""

    child: str
    parent: str
    relation: str
    basis: str


@dataclass
class LineageFacts:
    """What :func:`lineage_report` weighs: the techniques, the citations their primary papers
    make (as :func:`kg.citations.citations_of` gives them, in its order) and the lineage
    edges there are (those of the ``lineage-edges`` named query). :func:`lineage_facts`
    reads them from the store; ``kg.analytics.suggest`` from fresh analytics tables."""

    techniques: dict[str, TechniqueInfo]
    citations: list[CitationRecord]
    edges: list[EdgeFact]


def lineage_facts(store: GraphStore) -> LineageFacts:
    """The facts of :func:`lineage_report`, read from the store by SPARQL (the edges by the
    named query ``lineage-edges``, run here rather than through the answer layer, kg.answer:
    kg.analytics builds on this module, and the answer layer on kg.analytics)."""
    import queries

    known = with_categories(techniques(store), categories(store))
    records = citations_of(store, of_techniques=True) if any(info.papers for info in known.values()) else []
    text, bindings = queries.prepare(queries.get("lineage-edges"), {})
    edges = store.select(text, bindings).records()
    return LineageFacts(known, records, [EdgeFact(r["child"], r["parent"], r["relation"], r["basis"] or "stated")
                                         for r in edges])


def lineage_report(store: GraphStore | None, technique: NamedNode | None = None, *, min_score: float = 0.0,
                   facts: LineageFacts | None = None, decided: dict[tuple[str, str], Decision] | None = None
                   ) -> LineageReport:
    """Suggestions (best first), the existing edges checked against the citations, and the
    pairs the reader rejected; only pairs touching ``technique`` when it is given. The
    techniques, citations and edges come from ``facts`` when given, else from the store;
    the reader's decisions from ``decided`` when given (read from the store's view the
    tables are fresh for: kg.analytics.suggest), else from the store."""
    if facts is None or decided is None:
        from kg.decisions import decisions

        assert store is not None, "facts and decisions come from the store"
        facts = facts if facts is not None else lineage_facts(store)
        decided = decided if decided is not None else decisions(store)
    known, records = facts.techniques, facts.citations
    paper_techniques: dict[str, set[str]] = defaultdict(set)
    for info in known.values():
        for paper in info.papers:
            paper_techniques[paper].add(info.iri)
    found, plain = _evidence(records, known, _Names(known), paper_techniques)
    existing: dict[tuple[str, str], EdgeFact] = {}
    for fact in sorted(facts.edges):  # a pair with several relations: the first in name order
        existing.setdefault((fact.child, fact.parent), fact)
    report = LineageReport(citations_read=len(records))
    pairs = set(found) | set(existing)
    for child_iri, parent_iri in sorted(pairs):
        if technique is not None and technique.value not in (child_iri, parent_iri):
            continue
        if child_iri not in known or parent_iri not in known:
            continue
        child, parent = known[child_iri], known[parent_iri]
        infrastructure = _infrastructure(child, parent)
        evidence = _weighed(_dedupe(found.get((child_iri, parent_iri), [])),
                            INFRASTRUCTURE_FACTOR if infrastructure else 1.0)
        weighted = [e for e in evidence if e.weight > 0]
        wording = relation_from_wording([e.sentence for e in evidence if e.sentence])
        relation = wording or DERIVES_FROM
        score = _score(weighted)
        item = Suggestion(suggestion_id(child_iri, parent_iri), child, parent, relation, score, evidence)
        edge = existing.get((child_iri, parent_iri))
        if edge is not None:
            item.existing_relation, item.basis = edge.relation, edge.basis
            # More than a background citation: methodology, influence or lineage wording.
            cited = (child_iri, parent_iri) in plain or evidence
            item.status = "confirmed" if weighted else ("background" if cited else "lacking")
            report.existing.append(item)
            continue
        if not _proposable(weighted, infrastructure) or _later(parent, child) or score < min_score:
            continue
        decision = decided.get((child_iri, parent_iri))
        if decision is not None and decision.verdict == "rejected":
            item.status = "rejected"
            report.rejected.append(item)
            continue
        report.suggestions.append(item)
    report.suggestions.sort(key=lambda s: (-s.score, s.child.name.casefold(), s.parent.name.casefold()))
    report.existing.sort(key=lambda s: (s.status != "confirmed", -s.score, s.child.name.casefold()))
    return report


def _dedupe(evidence: list[Evidence]) -> list[Evidence]:
    """One item per (kind, citation, sentence); the strongest first."""
    seen: dict[tuple[str, str, str, str | None], Evidence] = {}
    for item in evidence:
        seen.setdefault((item.kind, item.citing, item.cited, item.sentence), item)
    sentences = {(e.citing, e.cited, e.sentence) for e in seen.values() if e.weight > 0 and e.sentence}
    kept = [e for e in seen.values() if not (e.weight == 0 and (e.citing, e.cited, e.sentence) in sentences)]
    # Sentences first (methodology ones before the rest), then the citations' flags.
    return sorted(kept, key=lambda e: (e.sentence is None, "methodology" not in e.intents, -e.weight,
                                       e.sentence or ""))


def find_suggestion(store: GraphStore, ident: str, *, facts: LineageFacts | None = None) -> Suggestion:
    """The suggestion (new, or rejected earlier) with id ``ident``; NotFoundError otherwise.
    The techniques, citations and edges from ``facts`` when given (see :func:`lineage_report`)."""
    report = lineage_report(store, facts=facts)
    wanted = ident.strip().lower()
    for item in [*report.suggestions, *report.rejected]:
        if item.id == wanted:
            return item
    for item in report.existing:
        if item.id == wanted and item.basis == "accepted":
            return item  # accepted earlier: it can be rejected, or accepted with another relation
        if item.id == wanted:
            raise NotFoundError(f"{ident} is the existing edge {item.child.name} {item.existing_relation} "
                                f"{item.parent.name}, not a suggestion",
                                hint="Only proposed edges can be accepted or rejected; see kg suggest lineage.")
    close = [s.id for s in report.suggestions if s.id.startswith(wanted[:5])][:4]
    raise NotFoundError(f"there is no lineage suggestion {ident!r}", suggestions=close,
                        hint=None if close else "List them with: kg suggest lineage")
