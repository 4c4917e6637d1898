"""The labelled set of paper-technique links (``tests/linking/labelled.jsonl``) and how the
linker scores on it.

Each line names a text and its gold links (technique id and relation; a paper's missing
technique has no link). The texts are read where they are recorded, never copied here:
arXiv's Atom answers and Semantic Scholar's cassettes in ``../shared/fixtures``, the
catalog's bibliography (titles), the user's reading list in ``../shared/seeds`` (title,
"why" text, section). Lines marked ``written`` are hard negatives written for the
ambiguous names where no recorded text has one, with their own title and abstract.
``hard_negative`` names the ambiguous names a line is a trap for. A line may also carry
its own texts (``title``, ``abstract``, ``tldr``, ``why``, ``section``, ``contexts``,
``categories``): so can any other set of labelled papers (``python -m bench links
--labelled FILE``), with ``links`` as ``[{"technique": ID, "relation": R}]``.

:func:`evaluate` runs the linker as ``kg link`` runs it (the catalog's names and the
context rules; no primary-paper knowledge, so introduces must be read from the text) and
counts, at the default threshold: precision and recall per relation, for introduces,
extends and uses together (a pair counts when both sides put it in that group), and the
links made on hard negatives (at any score).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Example", "Scores", "catalog_techniques", "evaluate", "load"]

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "tests" / "linking" / "labelled.jsonl"
SHARED = ROOT.parent / "shared"
GROUP = ("introduces", "extends", "uses")


@dataclass
class Example:
    id: str
    source: str
    title: str = ""
    abstract: str = ""
    why: str = ""
    section: str = ""
    contexts: list[str] = field(default_factory=list)
    categories: tuple[str, ...] = ()
    links: dict[str, str] = field(default_factory=dict)
    hard_negative: tuple[str, ...] = ()
    written: bool = False


def _atom(fixtures: Path) -> dict[str, tuple[str, str, tuple[str, ...]]]:
    from lxml import etree

    ns = {"a": "http://www.w3.org/2005/Atom"}
    out: dict[str, tuple[str, str, tuple[str, ...]]] = {}
    for path in sorted((fixtures / "arxiv" / "atom").glob("*.xml")):
        root = etree.fromstring(path.read_bytes(), etree.XMLParser(resolve_entities=False, no_network=True))
        for entry in root.findall("a:entry", ns):
            ident = entry.findtext("a:id", default="", namespaces=ns)
            if "/abs/" not in ident:
                continue
            key = ident.split("/abs/", 1)[1].rsplit("v", 1)[0]
            title = " ".join((entry.findtext("a:title", default="", namespaces=ns)).split())
            summary = " ".join((entry.findtext("a:summary", default="", namespaces=ns)).split())
            terms = tuple(c.get("term", "") for c in entry.findall("a:category", ns))
            out[key] = (title, summary, terms)
    return out


def _s2(fixtures: Path) -> dict[str, tuple[str, str, list[str]]]:
    import yaml

    folder = fixtures / "semanticscholar"
    out: dict[str, tuple[str, str, list[str]]] = {}

    def take(paper: Any, contexts: list[str]) -> None:
        if isinstance(paper, dict) and paper.get("paperId") and paper.get("title"):
            out[paper["paperId"]] = (paper["title"], paper.get("abstract") or "", contexts)

    for path in sorted(folder.glob("*.yaml")):
        for interaction in yaml.safe_load(path.read_text(encoding="utf-8"))["interactions"]:
            body = interaction["response"].get("body")
            try:
                data = json.loads(body["string"]) if isinstance(body, dict) else None
            except (TypeError, ValueError):
                continue
            items = data.get("data") if isinstance(data, dict) and "data" in data else data
            if isinstance(data, dict) and "recommendedPapers" in data:
                items = data["recommendedPapers"]
            for item in items if isinstance(items, list) else [items]:
                if isinstance(item, dict):
                    take(item.get("citedPaper") or item.get("citingPaper") or item, [])
    citing = json.loads((folder / "Citation.json").read_text(encoding="utf-8"))
    take(citing["citingPaper"], list(citing.get("contexts") or []))  # its own sentences citing another
    cited = json.loads((folder / "Reference.json").read_text(encoding="utf-8"))
    take(cited["citedPaper"], [])  # the sentences are the citing paper's, not this one's
    return out


def load(path: Path = LABELLED, shared: Path = SHARED) -> list[Example]:
    """The labelled set with its texts read from the recordings, the catalog and the seed list."""
    from kg.catalog import load_catalog
    from kg.readinglist import parse_reading_list

    fixtures = shared / "fixtures"
    atom, s2 = _atom(fixtures), _s2(fixtures)
    catalog = load_catalog()
    seed = parse_reading_list(next(iter(sorted((shared / "seeds").glob("004_*.txt")))))
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        kind, _, key = row["id"].partition(":")
        example = Example(row["id"], row.get("source", kind), links={g["technique"].rsplit("/", 1)[-1]: g["relation"]
                                                                    for g in row.get("links", [])},
                          hard_negative=tuple(row.get("hard_negative", ())), written=bool(row.get("written")))
        if row.get("abstract") or kind not in ("arxiv", "s2", "catalog", "reading-list"):
            # A line that carries its own texts (the written hard negatives, or any set of real
            # papers given whole): title, abstract, TLDR, why text, section, citation sentences.
            example.title, example.abstract = row.get("title", ""), row.get("abstract", "")
            example.why, example.section = row.get("why", ""), row.get("section", "")
            example.contexts = list(row.get("contexts", ()))
            example.categories = tuple(row.get("categories", ()))
            if row.get("tldr"):
                example.abstract = (example.abstract + "\n" + row["tldr"]).strip()
        elif kind == "arxiv":
            example.title, example.abstract, example.categories = atom[key]
        elif kind == "s2":
            example.title, example.abstract, example.contexts = s2[key]
        elif kind == "catalog":
            example.title = catalog.papers[key].title
        elif kind == "reading-list":
            entry = seed.entries[int(key)]
            assert entry.title == row["title"], (entry.title, row["title"])
            example.title, example.why, example.section = entry.title, entry.why, entry.category
        out.append(example)
    return out


def catalog_techniques() -> list[Any]:
    """The catalog's techniques with the names ``kg link`` reads for them from the store."""
    from kg.catalog import load_catalog
    from kg.linking.names import TechniqueLabels

    catalog = load_catalog()
    return [TechniqueLabels(t.iri.value, t.id, t.name, tuple([t.name, *t.aliases, *([t.label_zh] if t.label_zh
                                                                                    else [])]), (t.id,))
            for t in catalog.techniques.values()]


def paper_text(example: Example) -> Any:
    from kg.linking.model import PaperText, TextField

    fields = [TextField("title", example.title, "g:source")]
    if example.abstract:
        fields.append(TextField("abstract", example.abstract, "g:source"))
    if example.why:
        fields.append(TextField("reading-list-why", example.why, "g:reading-list"))
    if example.section:
        fields.append(TextField("reading-list-category", example.section, "g:reading-list"))
    fields += [TextField("citation-context", c, "g:citations") for c in example.contexts]
    return PaperText(example.id, fields, frozenset(example.categories))


@dataclass
class Scores:
    """What :func:`evaluate` counts."""

    examples: int
    threshold: float
    per_relation: dict[str, tuple[int, int, int]]  # relation -> (true positives, predicted, gold)
    group: tuple[int, int, int]
    any_relation: tuple[int, int, int]
    hard_negatives: int
    hard_negative_links: list[tuple[str, str, str, float]]
    misses: list[tuple[str, str, str, str]]
    wrong: list[tuple[str, str, str, str]]
    seconds: float
    characters: int

    @staticmethod
    def ratio(hit: int, of: int) -> float | None:
        return hit / of if of else None

    def precision(self, relation: str | None = None) -> float | None:
        tp, predicted, _gold = self.group if relation is None else self.per_relation[relation]
        return self.ratio(tp, predicted)

    def recall(self, relation: str | None = None) -> float | None:
        tp, _predicted, gold = self.group if relation is None else self.per_relation[relation]
        return self.ratio(tp, gold)


def evaluate(examples: Sequence[Example], *, threshold: float | None = None, repeat: int = 1) -> Scores:
    from kg.linking.decisions import DEFAULT_THRESHOLD
    from kg.linking.linker import Linker
    from kg.linking.model import RELATIONS

    limit = DEFAULT_THRESHOLD if threshold is None else threshold
    techniques = catalog_techniques()
    ids = {t.iri: t.id for t in techniques}
    linker = Linker(techniques)
    texts = [paper_text(e) for e in examples]
    started = time.perf_counter()
    found: list[list[Any]] = []
    for _ in range(repeat):
        found = [linker.link(text) for text in texts]
    seconds = (time.perf_counter() - started) / repeat
    per = {r: [0, 0, 0] for r in RELATIONS}
    group = [0, 0, 0]
    anyrel = [0, 0, 0]
    hard: list[tuple[str, str, str, float]] = []
    misses: list[tuple[str, str, str, str]] = []
    wrong: list[tuple[str, str, str, str]] = []
    for example, links in zip(examples, found, strict=True):
        predicted = {ids[link.technique]: link.relation for link in links if link.score >= limit}
        if example.hard_negative:
            hard += [(example.id, ids[link.technique], link.relation, link.score) for link in links
                     if ids[link.technique] not in example.links]
        for relation in RELATIONS:
            p = {t for t, r in predicted.items() if r == relation}
            g = {t for t, r in example.links.items() if r == relation}
            per[relation][0] += len(p & g)
            per[relation][1] += len(p)
            per[relation][2] += len(g)
        p_group = {t for t, r in predicted.items() if r in GROUP}
        g_group = {t for t, r in example.links.items() if r in GROUP}
        group[0] += len(p_group & g_group)
        group[1] += len(p_group)
        group[2] += len(g_group)
        anyrel[0] += len(set(predicted) & set(example.links))
        anyrel[1] += len(predicted)
        anyrel[2] += len(example.links)
        misses += [(example.id, t, r, predicted.get(t, "-")) for t, r in example.links.items() if r in GROUP
                   and t not in p_group]
        wrong += [(example.id, t, r, example.links.get(t, "-")) for t, r in predicted.items() if r in GROUP
                  and t not in g_group]
    return Scores(len(examples), limit, {r: (v[0], v[1], v[2]) for r, v in per.items()},
                  (group[0], group[1], group[2]), (anyrel[0], anyrel[1], anyrel[2]),
                  sum(1 for e in examples if e.hard_negative), hard, misses, wrong, seconds,
                  sum(len(f.text) for t in texts for f in t.fields))


def rows(scores: Scores) -> Iterable[dict[str, Any]]:
    """Per relation and for the group, the figures the benchmark prints."""
    from kg.linking.model import RELATIONS

    def fmt(value: float | None) -> str:
        return "-" if value is None else f"{value:.3f}"

    for relation in RELATIONS:
        tp, predicted, gold = scores.per_relation[relation]
        yield {"relation": relation, "gold": gold, "predicted": predicted, "correct": tp,
               "precision": fmt(scores.precision(relation)), "recall": fmt(scores.recall(relation))}
    tp, predicted, gold = scores.group
    yield {"relation": "introduces+extends+uses", "gold": gold, "predicted": predicted, "correct": tp,
           "precision": fmt(scores.precision()), "recall": fmt(scores.recall())}
    tp, predicted, gold = scores.any_relation
    yield {"relation": "any relation", "gold": gold, "predicted": predicted, "correct": tp,
           "precision": fmt(Scores.ratio(tp, predicted)), "recall": fmt(Scores.ratio(tp, gold))}


def main(argv: list[str] | None = None) -> None:
    """``python -m bench.labelled``: what the set holds, and where the linker and the gold disagree."""
    import argparse
    from collections import Counter

    parser = argparse.ArgumentParser(prog="python -m bench.labelled",
                                     description="The labelled set of paper-technique links: its sources, and the "
                                                 "links the linker misses or adds (python -m bench links scores it).")
    parser.add_argument("--threshold", type=float, default=None, help="least score of a link (default: kg's)")
    args = parser.parse_args(argv)
    examples = load()
    print("sources:", ", ".join(f"{n} {s}" for s, n in sorted(Counter(e.source for e in examples).items())))
    scores = evaluate(examples, threshold=args.threshold)
    for title, items in (("missed (gold relation, found)", scores.misses),
                         ("not in the gold (found, gold)", scores.wrong)):
        print(f"{title}: {len(items)}")
        for ident, technique, first, second in items:
            print(f"  {ident}  {technique}: {first}, {second}")


if __name__ == "__main__":
    main()
