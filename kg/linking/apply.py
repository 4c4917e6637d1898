"""Linking the store: every paper (``kg link``), or the papers a write touched.

Both read the techniques and their names from the union (the catalog's and the reader's
own), the papers' texts, the primary papers and the citations, link them
(:class:`kg.linking.linker.Linker`, :func:`kg.linking.citing.citation_evidence`) and write
the result in a transaction of their own (:mod:`kg.linking.write`). A technique's primary
paper is always linked to it as *introduces* (status manual, evidence from the graph that
says so), with whatever its texts add.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kg.citations import citations_of, has_citations
from kg.graphs import CITATIONS
from kg.linking.citing import citation_evidence
from kg.linking.context import context_file, load_rules
from kg.linking.decisions import decided_pairs, threshold
from kg.linking.linker import Linker, merge
from kg.linking.model import Evidence, Link, PaperText
from kg.linking.names import TechniqueLabels, aliases
from kg.linking.reads import each_paper, paper_texts, primary_papers, technique_labels
from kg.linking.write import state_lines, write_all, write_papers

if TYPE_CHECKING:
    from kg.store.base import GraphStore

__all__ = ["LinkReport", "link_everything", "link_papers", "linked_names", "rules_digest"]

Progress = Callable[[str, int, int], None]


@dataclass
class LinkReport:
    """What a run linked: papers read, links made (by relation and status), how many queries
    see, and for a run over some papers the triples it removed and added."""

    papers: int = 0
    techniques: int = 0
    links: int = 0
    shown: int = 0
    relations: dict[str, int] = field(default_factory=dict)
    statuses: dict[str, int] = field(default_factory=dict)
    removed: int = 0
    added: int = 0
    whole: bool = True
    #: The papers a run over some papers linked again (none for a whole run).
    changed: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"papers": self.papers, "techniques": self.techniques, "links": self.links, "shown": self.shown,
                "relations": self.relations, "statuses": self.statuses, "removed": self.removed,
                "added": self.added, "whole": self.whole}


def rules_digest() -> str:
    """A digest of the context rules the linker reads (a change re-links everything)."""
    return hashlib.sha256(context_file().read_bytes()).hexdigest()[:16]


def linked_names(techniques: Sequence[TechniqueLabels]) -> dict[str, list[str]]:
    """Technique IRI → the names the matcher looks for."""
    out: dict[str, list[str]] = {t.iri: [] for t in techniques}
    for alias in aliases(techniques):
        for iri in alias.techniques:
            out[iri].append(f"{alias.kind}:{alias.label}")
    return out


def _catalog_link(paper: str, technique: str, graph: str, name: str, found: list[Link]) -> Link:
    auto = next((link for link in found if link.technique == technique), None)
    claim = Evidence("catalog", f"the primary paper of {name}", graph, "introduces", 1.0)
    return Link(paper, technique, "introduces", 1.0, "manual", [claim, *(auto.evidence if auto else [])])


def _links(papers: Iterable[tuple[str, PaperText | None]], primary: Mapping[str, Mapping[str, str]],
           cited: Mapping[str, Mapping[str, list[Evidence]]], linker: Linker) -> Iterator[Link]:
    """The links of each paper (with its texts, if any)."""
    for paper, text in papers:
        links = merge(paper, linker.evidence(text) if text is not None else {}, dict(cited.get(paper, {})))
        mine = primary.get(paper, {})
        for link in links:
            if link.technique not in mine:
                yield link
        for technique, graph in sorted(mine.items()):
            if technique in linker.techniques:
                yield _catalog_link(paper, technique, graph, linker.techniques[technique].name, links)


def _citations(store: GraphStore, linker: Linker, primary: Mapping[str, Mapping[str, str]],
               papers: Sequence[str] | None, texts: Mapping[str, PaperText] | None = None
               ) -> dict[str, dict[str, list[Evidence]]]:
    """The citations' evidence for ``papers`` (None: every paper); the citing papers'
    categories from ``texts``, or read for them alone."""
    if not has_citations(store):
        return {}
    from pyoxigraph import NamedNode

    from kg.linking.reads import titles

    records = citations_of(store, [NamedNode(p) for p in papers] if papers is not None else None)
    names = titles(store, sorted({r.cited for r in records if r.cited in primary}))
    if texts is None:
        texts = paper_texts(store, sorted({r.citing for r in records if r.contexts}))
    return citation_evidence(records, {p: set(ts) for p, ts in primary.items()}, linker, source=CITATIONS.value,
                             titles=names, categories={p: t.categories for p, t in texts.items()})


def link_everything(store: GraphStore, *, progress: Progress | None = None, label: str = "kg link") -> LinkReport:
    """Link every paper of the store and replace the ``links`` graph with the result. The
    papers' texts are read a lot at a time (:func:`kg.linking.reads.each_paper`)."""
    from kg.store.base import Activity

    techniques = technique_labels(store)
    linker = Linker(techniques, load_rules())
    primary = primary_papers(store)
    cited = _citations(store, linker, primary, None)
    decided, limit = decided_pairs(store), threshold(store)
    activity = Activity(label, stats={"papers": 0})

    def counted() -> Iterator[tuple[str, PaperText | None]]:
        for paper in each_paper(store, set(cited) | set(primary), progress=progress):
            activity.stats["papers"] += 1
            yield paper

    counts = write_all(store, _links(counted(), primary, cited, linker), decided=decided, threshold=limit,
                       names=linked_names(techniques), rules=rules_digest(), activity=activity, progress=progress)
    return _report(activity.stats["papers"], len(techniques), counts)


def _report(papers: int, techniques: int, counts: Mapping[str, int], **more: Any) -> LinkReport:
    from kg.linking.model import RELATIONS, STATUSES

    return LinkReport(papers, techniques, counts.get("links", 0), counts.get("shown", 0),
                      {r: counts[r] for r in RELATIONS if counts.get(r)},
                      {s: counts[s] for s in STATUSES if counts.get(s)}, **more)


def link_papers(store: GraphStore, papers: Sequence[str], *, label: str = "kg link", names_too: bool = False
                ) -> LinkReport:
    """Link ``papers`` again (their text and citation evidence) and write what changed of
    their links, in one transaction; with ``names_too``, also record the names the
    techniques are linked by now (after a change of names)."""
    from kg.store.base import Activity

    wanted = sorted(set(papers))
    techniques = technique_labels(store)
    if not wanted and not names_too:
        return LinkReport(techniques=len(techniques), whole=False)
    linker = Linker(techniques, load_rules())
    texts = paper_texts(store, wanted)
    primary = primary_papers(store)
    cited = _citations(store, linker, primary, wanted, texts)
    decided, limit = decided_pairs(store), threshold(store)
    links = list(_links(((p, texts.get(p)) for p in wanted), primary, cited, linker))
    counts: dict[str, int] = {"links": len(links)}
    from kg.linking.write import visible

    counts["shown"] = sum(visible(link, decided, limit) for link in links)
    for link in links:
        counts[link.relation] = counts.get(link.relation, 0) + 1
        counts[link.status] = counts.get(link.status, 0) + 1
    extra = list(state_lines(linked_names(techniques), rules_digest())) if names_too else []
    removed, added = write_papers(store, wanted, links, decided=decided, threshold=limit,
                                  activity=Activity(label, stats={"papers": len(wanted)}), extra=extra)
    return _report(len(wanted), len(techniques), counts, removed=removed, added=added, whole=False, changed=wanted)
