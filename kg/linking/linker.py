"""A paper's texts to scored links with their evidence (pure: no store).

For each text of a paper (title, abstract, TLDR, reading-list "why" text and category,
Zotero tags and notes), every name the matcher finds is judged (:mod:`kg.linking.context`)
against all the paper's texts, its categories and the acronyms it defines; a name that
means the technique becomes one piece of evidence: the sentence (or the whole text, where
it is short), the field, the graph, the relation its wording reads
(:mod:`kg.linking.relations`) and a score::

    score = field weight × certainty of the name × (1 where the wording is explicit;
            0.95 for a default "uses"; 0.8 for "mentions")

A distinctive name of a technique found in the paper ("Grouped-Query Attention") confirms
its acronyms there ("GQA"), unless a veto or the paper's own definition says otherwise,
and a distinctive name of any technique shows the paper is about ML (the domain an
acronym or a common word needs). A
name the paper introduces that holds another technique's name extends that technique
("Switch Transformer", and the paper's own names: "DanceGRPO", "Dr. GRPO"). A
link's relation is the strongest its evidence reads and its score ``1 - Π(1 - s)`` over
the best item of each field (:func:`kg.linking.model.strongest`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence

from kg.linking.context import CERTAINTY, Judge, Rules, Verdict, definitions, load_rules
from kg.linking.model import FIELD_WEIGHTS, Evidence, Link, PaperText, TextField, strongest
from kg.linking.names import Alias, TechniqueLabels, aliases, label_variants
from kg.linking.patterns import Hit, Matcher, normalise
from kg.linking.relations import own_names, read_relation, sentence_bounds

__all__ = ["EVIDENCE_CHARS", "Linker", "merge"]

#: The longest evidence text kept: a sentence, cut around the name where it is longer.
EVIDENCE_CHARS = 320
_WHOLE = ("title", "zotero-tag", "reading-list-category", "reading-list-why")
_DEFAULT_FACTOR = {True: 1.0, False: 0.95}


def _excerpt(text: str, start: int, end: int, field: str) -> str:
    if field in _WHOLE and len(text) <= EVIDENCE_CHARS:
        return " ".join(text.split())
    left, right = sentence_bounds(text, start, end)
    if right - left > EVIDENCE_CHARS:
        half = (EVIDENCE_CHARS - (end - start)) // 2
        left, right = max(left, start - half), min(right, end + half)
        return "…" + " ".join(text[left:right].split()) + "…"
    return " ".join(text[left:right].split())


class Linker:
    """Links papers to ``techniques`` by their names, under ``rules``."""

    def __init__(self, techniques: Sequence[TechniqueLabels], rules: Rules | None = None) -> None:
        self.techniques = {t.iri: t for t in techniques}
        self.rules = rules if rules is not None else load_rules()
        self.aliases = aliases(techniques)
        self.matcher = Matcher(self.aliases, lowercase=self.rules.lowercase)
        names = {t.iri: [v for label in t.labels for v in label_variants(label)] for t in techniques}
        self.judge = Judge(self.rules, names)
        self._coined = {a.label: a for a in self.aliases if a.kind in ("acronym", "coined")}

    def find(self, fields: Sequence[TextField]) -> list[tuple[TextField, list[Hit]]]:
        """The names found in each of ``fields`` (only fields with some)."""
        out = []
        for item in fields:
            hits = self.matcher.find(item.text)
            if hits:
                out.append((item, hits))
        return out

    def evidence(self, paper: PaperText, *, found: list[tuple[TextField, list[Hit]]] | None = None
                 ) -> dict[str, list[Evidence]]:
        """Technique IRI → the evidence ``paper``'s texts give for it."""
        found = self.find(paper.fields) if found is None else found
        if not found:
            return {}
        # One context for the paper: its texts, normalised, one per line; where each hit stands in it.
        offsets: dict[int, int] = {}
        parts: list[str] = []
        at = 0
        for item in paper.fields:
            offsets[id(item)] = at
            parts.append(normalise(item.text, lower=False))
            at += len(item.text) + 1
        context = "\n".join(parts)
        own: dict[Alias, list[tuple[int, int]]] = defaultdict(list)
        for item, hits in found:
            base = offsets[id(item)]
            for hit in hits:
                own[hit.alias].append((base + hit.start, base + hit.end))
        defined = definitions("\n".join(f.text for f in paper.fields)) if any(
            hit.alias.kind == "acronym" for _item, hits in found for hit in hits) else {}
        verdicts: dict[tuple[Alias, str], Verdict] = {}
        # A distinctive name of any technique ("DanceGRPO", "Gated DeltaNet") shows the paper
        # is about ML techniques: that is the domain an acronym or a word needs.
        distinctive = [a for a in own if a.kind in ("phrase", "coined")]
        categories = paper.categories
        for alias in sorted(distinctive, key=lambda a: a.label) + [a for a in own if a not in distinctive]:
            for technique in alias.techniques:
                verdicts[(alias, technique)] = self.judge.judge(alias, technique, context, categories, defined,
                                                                own[alias])
            if alias.kind in ("phrase", "coined") and any(verdicts[(alias, t)].ok for t in alias.techniques):
                categories = categories | self.rules.domain_categories
        sure = {t for (alias, t), v in verdicts.items() if v.ok and v.certainty in ("distinctive", "defined")}
        own_work = own_names(next((f.text for f in paper.fields if f.field == "title"), ""),
                             " ".join(f.text for f in paper.fields if f.field in ("abstract", "tldr")))
        out: dict[str, dict[tuple[str, str, str], Evidence]] = defaultdict(dict)
        for item, hits in found:
            for hit in hits:
                reading = None
                for technique in hit.alias.techniques:
                    verdict = verdicts[(hit.alias, technique)]
                    if not verdict.ok:
                        continue
                    certainty = verdict.certainty
                    if certainty == "domain" and technique in sure:
                        certainty = "confirmed"
                    reading = reading or read_relation(item.text, hit.start, hit.end, item.field, own_work)
                    factor = 0.8 if reading.relation == "mentions" else _DEFAULT_FACTOR[reading.explicit]
                    score = round(FIELD_WEIGHTS.get(item.field, 0.5) * CERTAINTY[certainty] * factor, 3)
                    text = _excerpt(item.text, hit.start, hit.end, item.field)
                    _keep(out[technique], Evidence(item.field, text, item.source, reading.relation, score))
                if reading is not None and reading.relation == "introduces":
                    for technique, evidence in self._nested(item, hit, paper, context, defined):
                        _keep(out[technique], evidence)
        for technique, evidence in self._made_of(own_work, paper, context, defined):
            _keep(out[technique], evidence)
        return {t: sorted(items.values(), key=lambda e: -e.score) for t, items in out.items()}

    def _nested(self, item: TextField, hit: Hit, paper: PaperText, context: str,
                defined: dict[str, str]) -> list[tuple[str, Evidence]]:
        """A technique named inside the name of one the text introduces ("Switch Transformer"
        holds "Transformer", "Triton-Ascend" "Triton"): the paper extends it."""
        out = []
        for inner in self.matcher.find_all(item.text):
            if not (hit.start <= inner.start and inner.end <= hit.end) or (inner.start, inner.end) == (
                    hit.start, hit.end):
                continue
            for technique in inner.alias.techniques - hit.alias.techniques:
                verdict = self.judge.judge(inner.alias, technique, context, paper.categories, defined, [],
                                           inside=True)
                if verdict.ok:
                    score = round(FIELD_WEIGHTS.get(item.field, 0.5) * CERTAINTY[verdict.certainty] * 0.9, 3)
                    text = _excerpt(item.text, hit.start, hit.end, item.field)
                    out.append((technique, Evidence(item.field, text, item.source, "extends", score)))
        return out


    def _made_of(self, own: Sequence[str], paper: PaperText, context: str, defined: dict[str, str]
                 ) -> list[tuple[str, Evidence]]:
        """A technique whose acronym or coined name makes part of the name the paper gives
        its own work ("DanceGRPO", "Dr. GRPO", "ZeRO-Offload", "DeepSeekMoE"): the paper
        extends it."""
        out = []
        for name in own:
            for part in _parts(name):
                alias = self._coined.get(part)
                if alias is None:
                    continue
                item = next((f for f in paper.fields if name in f.text), None)
                if item is None:
                    continue
                at = item.text.index(name)
                for technique in alias.techniques:
                    verdict = self.judge.judge(alias, technique, context, paper.categories, defined, [], inside=True)
                    if verdict.ok:
                        score = round(FIELD_WEIGHTS.get(item.field, 0.5) * CERTAINTY[verdict.certainty] * 0.9, 3)
                        out.append((technique, Evidence(item.field, _excerpt(item.text, at, at + len(name), item.field),
                                                        item.source, "extends", score)))
        return out

    def link(self, paper: PaperText) -> list[Link]:
        """The automatic links of ``paper`` from its texts."""
        return merge(paper.iri, self.evidence(paper))


_BOUNDARY = re.compile(r"[\s\-‐.]+|(?<=[a-z])(?=[A-Z])")


def _parts(name: str) -> list[str]:
    """The pieces of a name between its word boundaries, spaces, hyphens and capitals after
    small letters ("DanceGRPO" → "Dance", "GRPO", "DanceGRPO"), the name itself left out."""
    cuts = sorted({0, len(name)} | {x for m in _BOUNDARY.finditer(name) for x in (m.start(), m.end())})
    out = []
    for i, a in enumerate(cuts):
        for b in cuts[i + 1:]:
            part = name[a:b].strip(" -‐.")
            if len(part) >= 2 and part != name and part == name[a:b]:
                out.append(part)
    return list(dict.fromkeys(out))


def _keep(found: dict[tuple[str, str, str], Evidence], item: Evidence) -> None:
    """Keep ``item`` unless the same text of the same field says more already."""
    key = (item.field, item.source, item.text)
    earlier = found.get(key)
    if earlier is None or (earlier.score, -_rank(earlier.relation)) < (item.score, -_rank(item.relation)):
        found[key] = item


def _rank(relation: str) -> int:
    from kg.linking.model import PRIORITY

    return PRIORITY[relation]


def merge(paper: str, *found: dict[str, list[Evidence]]) -> list[Link]:
    """Links of ``paper`` from the evidence of several readers (its texts, its citations),
    strongest evidence first, by technique IRI."""
    joined: dict[str, list[Evidence]] = defaultdict(list)
    for part in found:
        for technique, items in part.items():
            joined[technique] += items
    links = []
    for technique in sorted(joined):
        items = sorted(joined[technique], key=lambda e: (-e.score, e.field, e.text))
        relation, score = strongest(items)
        links.append(Link(paper, technique, relation, score, "auto", items))
    return links


def link_all(linker: Linker, papers: Iterable[PaperText]) -> Iterable[Link]:
    for paper in papers:
        yield from linker.link(paper)
