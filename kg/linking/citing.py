"""Links from citations: the citations graph as evidence (pure: no store).

A paper that cites a technique's primary paper gets a link to the technique

- with the *methodology* intent (Semantic Scholar read that it uses the cited method):
  *uses*, its methodology sentence as the evidence where it has one;
- *influentially* (Semantic Scholar's flag): *uses*, weaker;

and a paper whose citation sentence names a technique (any cited paper: "we follow the
GQA setup of [12]") gets a link read from that sentence like any other text
(:class:`kg.linking.linker.Linker`, field ``citation-context``). A background citation that
names nothing links nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from kg.citations import CitationRecord
from kg.linking.linker import Linker
from kg.linking.model import Evidence, PaperText, TextField

__all__ = ["INFLUENTIAL", "METHODOLOGY", "citation_evidence"]

METHODOLOGY = 0.6
INFLUENTIAL = 0.5


def citation_evidence(records: Iterable[CitationRecord], primary: Mapping[str, set[str]], linker: Linker, *,
                      source: str, titles: Mapping[str, str] | None = None,
                      categories: Mapping[str, frozenset[str]] | None = None
                      ) -> dict[str, dict[str, list[Evidence]]]:
    """Citing paper → technique → evidence, from ``records``; ``primary``: paper IRI → the
    techniques it introduced; ``source``: the citations graph's IRI; ``titles``: the cited
    papers' titles (for evidence without a sentence); ``categories``: the citing papers'."""
    out: dict[str, dict[str, list[Evidence]]] = defaultdict(lambda: defaultdict(list))
    titles = titles or {}
    categories = categories or {}
    for record in records:
        cited_techniques = primary.get(record.cited, set())
        if cited_techniques and ("methodology" in record.intents or record.influential):
            method = next((c.text for c in record.contexts if "methodology" in c.intents), None)
            for technique in cited_techniques - primary.get(record.citing, set()):
                if "methodology" in record.intents:
                    text = method or f"(cites {titles.get(record.cited, record.cited)} for its method)"
                    out[record.citing][technique].append(
                        Evidence("citation-context", text, source, "uses", METHODOLOGY))
                if record.influential:
                    text = f"(cites {titles.get(record.cited, record.cited)}; Semantic Scholar marks it influential)"
                    out[record.citing][technique].append(Evidence("citation-context", text, source, "uses",
                                                                  INFLUENTIAL))
        if not record.contexts:
            continue
        sentences = PaperText(record.citing, [TextField("citation-context", c.text, source) for c in record.contexts],
                              categories.get(record.citing, frozenset()))
        for technique, items in linker.evidence(sentences).items():
            if technique in primary.get(record.citing, set()):
                continue  # a paper citing others about its own technique: the catalog already says
            out[record.citing][technique] += items
    return {paper: dict(found) for paper, found in out.items()}
