"""A deterministic, seeded synthetic corpus in TechKG's vocabulary, for benchmarks.

``generate(n_papers, seed=42, out=path)`` writes N-Triples (gzip if the name ends in
``.gz``): synthetic techniques hanging off the real catalog's techniques in lineage
chains, papers with a title and an abstract, ordered authors, citations, reading
statuses and reading-list categories, and repositories with dated star snapshots. About
14 triples per paper: 100k papers ≈ 1.4M triples. Load it on top of ``kg build`` with
``kg import rdf FILE --graph bench`` so that named queries find real techniques too.

A paper's links to techniques are not drawn at random: its abstract is written from
sentences that name techniques (a synthetic one by its name, "Synthetic technique 17", or
a catalog one by one of its names) in the wording of a relation ("we train ... with X",
"we extend X", "compared against X", "prior work such as X"), or none, with now and then a
name in another sense ("checkpoints are written to SSD storage"), and the linker
(:mod:`kg.linking`) reads the links from the title and abstract; the corpus holds the
direct triples of those it would show (``paper tkg:usesTechnique technique``, ...).

Run ``python -m bench.corpus N OUT`` to write one (``--help`` for the options).
"""

from __future__ import annotations

import gzip
import itertools
import random
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = ["BASE", "CorpusInfo", "ROOT_TECHNIQUES", "generate"]

BASE = "http://bench.techkg.invalid/"
TKG = "https://w3id.org/techkg/ns#"
ID = "https://w3id.org/techkg/id/"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD = "http://www.w3.org/2001/XMLSchema#"
SKOS = "http://www.w3.org/2004/02/skos/core#"
PROV = "http://www.w3.org/ns/prov#"
DCT = "http://purl.org/dc/terms/"
BIBO = "http://purl.org/ontology/bibo/"
FOAF = "http://xmlns.com/foaf/0.1/"
CITO = "http://purl.org/spar/cito/"
SCHEMA = "https://schema.org/"

#: Real catalog techniques that synthetic lineage grows from (id, category).
ROOT_TECHNIQUES = (
    ("transformer", "attention"), ("gated-deltanet", "attention"), ("mla", "attention"),
    ("switch-transformer", "moe"), ("latentmoe", "moe"), ("muon", "optimizers"),
    ("grpo", "rl-post-training"), ("triton", "kernels"), ("zero", "distributed"),
    ("deepep", "distributed"), ("qat", "quantized-training"), ("situ", "activations"),
)
RELATIONS = ("refines", "generalizes", "extends", "replaces", "combines", "portsTo", "buildsOn")
STATUSES = ("to-read", "reading", "read", "skipped")
#: The share of papers whose abstract names techniques (one, or two).
NAMING = 0.3
#: Sentences in a relation's wording; {n} is the technique's name.
_WORDING = {
    "uses": ("We train {model} with {n} on {k} GPUs.", "Our method is built on top of {n}.",
             "Our kernels apply {n} at every layer.", "We adopt {n} for {goal}."),
    "extends": ("We extend {n} with {feature}.", "This work builds on {n} and adds {feature}."),
    "evaluates": ("Compared against {n}, it is {k}x faster.", "It outperforms {n} on {goal}."),
    "mentions": ("Prior work such as {n} targets {goal}.", "Unlike {n}, the method needs no {feature}."),
}
_RELATION_WEIGHTS = (("uses", 0.45), ("extends", 0.2), ("evaluates", 0.2), ("mentions", 0.15))
_FILLER = ("Experiments on {k} GPUs show a {k}x speedup.", "The code is public.",
           "We study {goal} at scale.", "Results hold across model sizes.")
#: Names in another sense: they must link nothing.
_DECOYS = ("Checkpoints are written to SSD storage.", "The transformer substation feeds the cluster.",
           "Detectors report TP and FP counts per class.")
_MODELS = ("language models", "vision encoders", "recommenders", "speech models")
_FEATURES = ("per-channel gates", "a learned router", "low-rank updates", "chunked scans")
_GOALS = ("long contexts", "memory use", "throughput", "stability")
VENUES = ("arXiv", "NeurIPS", "ICML", "ICLR", "MLSys", "SOSP", "OSDI", "SC", "ACL", "EuroSys")
WORDS = ("sparse", "attention", "expert", "routing", "gradient", "parallel", "pipeline", "kernel",
         "quantized", "low-rank", "optimizer", "memory", "efficient", "scalable", "state", "delta",
         "policy", "reward", "distributed", "sharded", "fused", "latent", "compressed", "adaptive")


@dataclass(frozen=True)
class CorpusInfo:
    path: Path
    triples: int
    papers: int
    techniques: int
    authors: int
    repositories: int
    snapshots: int
    #: A synthetic technique at the end of the deepest lineage chain.
    deepest: str
    deepest_depth: int


def _lit(value: str, datatype: str | None = None, lang: str | None = None) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    if lang:
        return f'"{escaped}"@{lang}'
    if datatype:
        return f'"{escaped}"^^<{datatype}>'
    return f'"{escaped}"'


class _Writer:
    def __init__(self, fh: IO[str]) -> None:
        self.fh = fh
        self.count = 0

    def t(self, s: str, p: str, o: str) -> None:
        self.fh.write(f"<{s}> <{p}> {o} .\n")
        self.count += 1

    def iri(self, s: str, p: str, o: str) -> None:
        self.t(s, p, f"<{o}>")


#: More words for abstracts (``generate(..., abstracts=True)``), so that a search has terms
#: of every frequency to look for.
ABSTRACT_WORDS = WORDS + ("transformer", "training", "throughput", "latency", "benchmark", "baseline", "token",
                          "sequence", "context", "decoder", "encoder", "scaling", "loss", "accuracy", "recurrent",
                          "linear", "softmax", "gating", "decay", "chunkwise", "hardware", "cluster", "bandwidth",
                          "precision", "fp8", "activation", "checkpoint", "shard", "rank", "collective", "overlap")


_ABSTRACT_WEIGHTS = list(itertools.accumulate(1 / (k + 1) ** 0.8 for k in range(len(ABSTRACT_WORDS))))


def _abstract(rng: random.Random, i: int) -> str:
    """A synthetic abstract of 40 to 80 words (Zipf-like: the first words of the list are the
    commonest), with the paper's own number so that each is distinct."""
    words = rng.choices(ABSTRACT_WORDS, cum_weights=_ABSTRACT_WEIGHTS, k=rng.randint(40, 80))
    return " ".join(words).capitalize() + f" (study {i})."


class _Texts:
    """Writes each paper's abstract and the links the linker reads from its title and abstract."""

    def __init__(self, techniques: list[tuple[str, int, str]], roots: list[tuple[str, int, str]]) -> None:
        from bench.labelled import catalog_techniques
        from kg.linking.linker import Linker
        from kg.linking.names import TechniqueLabels

        catalog = {t.iri: t for t in catalog_techniques()}
        labels = [catalog[iri] for iri, _depth, _cat in roots if iri in catalog]
        labels += [TechniqueLabels(iri, f"synthetic-{i}", f"Synthetic technique {i}",
                                   (f"Synthetic technique {i}",), (f"synthetic-{i}",))
                   for i, (iri, _depth, _cat) in enumerate(techniques)]
        self.linker = Linker(labels)
        self.names: list[tuple[str, tuple[str, ...]]] = [(t.iri, t.labels) for t in labels]
        self.labels = dict(self.names)
        self.synthetic = len(techniques)

    def _name(self, rng: random.Random, topic: str) -> str:
        """A name of the paper's topic technique, or of another: mostly a synthetic one, else
        a catalog one."""
        if topic in self.labels and rng.random() < 0.5:
            return rng.choice(self.labels[topic])
        if rng.random() < 0.8 and self.synthetic:
            _iri, labels = self.names[len(self.names) - self.synthetic + rng.randrange(self.synthetic)]
        else:
            _iri, labels = self.names[rng.randrange(len(self.names) - self.synthetic)]
        return rng.choice(labels)

    def paper(self, w: _Writer, rng: random.Random, paper: str, title: str, topic: str, introduces: str | None,
              extra: str | None = None) -> None:
        """The abstract of ``paper``, drawn with ``rng``: it may name its ``topic`` technique;
        ``extra`` (words for a search to find) ends it, and the linker reads it too."""
        from kg.linking.model import RELATION_PROPERTIES, PaperText, TextField

        fill = {"k": rng.randint(2, 64), "model": rng.choice(_MODELS), "feature": rng.choice(_FEATURES),
                "goal": rng.choice(_GOALS)}
        sentences = [rng.choice(_FILLER).format(**fill)]
        if introduces is not None:
            number = introduces.rsplit("/", 1)[1]
            sentences.insert(0, f"We propose Synthetic technique {number}, a method for {fill['goal']}.")
        if rng.random() < NAMING:
            for _ in range(1 + (rng.random() < 0.3)):
                relation = rng.choices([r for r, _w in _RELATION_WEIGHTS], [w for _r, w in _RELATION_WEIGHTS])[0]
                name = self._name(rng, topic)
                sentences.append(rng.choice(_WORDING[relation]).format(n=name, **fill))
        if rng.random() < 0.05:
            sentences.append(rng.choice(_DECOYS))
        rng.shuffle(sentences)
        abstract = " ".join(sentences) + (f" {extra}" if extra else "")
        w.t(paper, DCT + "abstract", _lit(abstract))
        text = PaperText(paper, [TextField("title", title, ""), TextField("abstract", abstract, "")])
        for link in self.linker.link(text):
            if link.score >= 0.5:
                w.iri(paper, RELATION_PROPERTIES[link.relation].value, link.technique)


def generate(n_papers: int = 100_000, *, seed: int = 42, out: Path, abstracts: bool = False) -> CorpusInfo:
    """Write the corpus to ``out`` and return what it contains; with ``abstracts``, each
    paper's abstract has more words too, for a search to find (drawn apart: the rest of the
    corpus is the same, but for the links those words make)."""
    rng = random.Random(seed)
    words_rng = random.Random(seed + 3)
    out.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if out.suffix == ".gz" else open
    n_techniques = max(50, n_papers // 200)
    n_authors = max(30, n_papers // 3)
    n_orgs = max(10, n_papers // 500)
    n_repos = max(10, n_papers // 50)
    n_reading_cats = 12
    with opener(out, "wt", encoding="utf-8") as fh:
        w = _Writer(fh)
        orgs = [f"{BASE}org/{i}" for i in range(n_orgs)]
        for i, org in enumerate(orgs):
            w.iri(org, RDF + "type", FOAF + "Organization")
            w.t(org, FOAF + "name", _lit(f"Lab {i}"))
        authors = [f"{BASE}person/{i}" for i in range(n_authors)]
        for i, person in enumerate(authors):
            w.iri(person, RDF + "type", FOAF + "Person")
            w.t(person, FOAF + "name", _lit(f"Author {i}"))
            w.iri(person, SCHEMA + "affiliation", rng.choice(orgs))
        cats = [f"{BASE}reading-category/{i}" for i in range(n_reading_cats)]
        for i, cat in enumerate(cats):
            w.iri(cat, RDF + "type", TKG + "ReadingListCategory")
            w.t(cat, SKOS + "prefLabel", _lit(f"Reading category {i}"))

        # Techniques: chains growing from real catalog techniques.
        techniques: list[tuple[str, int, str]] = []  # (iri, depth, category)
        roots = [(f"{ID}technique/{tid}", 0, cat) for tid, cat in ROOT_TECHNIQUES]
        for i in range(n_techniques):
            pool = roots + techniques
            # Prefer recent techniques as parents so chains get deep.
            parent, depth, category = pool[-1 - int(rng.random() ** 3 * len(pool))] if techniques else rng.choice(roots)
            node = f"{BASE}technique/{i}"
            rel = rng.choice(RELATIONS)
            w.iri(node, RDF + "type", TKG + "Technique")
            w.t(node, SKOS + "prefLabel", _lit(f"Synthetic technique {i}", lang="en"))
            w.t(node, SKOS + "notation", _lit(f"synthetic-{i}"))
            w.iri(node, SKOS + "broader", f"{ID}category/{category}")
            w.t(node, TKG + "onComparisonPage", _lit("false", XSD + "boolean"))
            w.iri(node, TKG + rel, parent)
            w.iri(node, PROV + "wasDerivedFrom", parent)
            techniques.append((node, depth + 1, category))
        tech_iris = [t[0] for t in techniques] + [r[0] for r in roots]

        repos = [f"{BASE}repo/{i}" for i in range(n_repos)]
        snapshots = 0
        for i, repo in enumerate(repos):
            w.iri(repo, RDF + "type", SCHEMA + "SoftwareSourceCode")
            w.t(repo, SCHEMA + "name", _lit(f"lab/repo-{i}"))
            stars = rng.randint(0, 40_000)
            w.t(repo, TKG + "stars", _lit(str(stars), XSD + "integer"))
            month = rng.randint(1, 12)
            w.t(repo, TKG + "pushedAt", _lit(f"2026-{month:02d}-15T00:00:00Z", XSD + "dateTime"))
            w.iri(rng.choice(tech_iris), TKG + "repository", repo)
            for k in range(3):
                snap = f"{repo}/snapshot/{k}"
                w.iri(repo, TKG + "snapshot", snap)
                w.iri(snap, RDF + "type", TKG + "RepositorySnapshot")
                w.t(snap, PROV + "generatedAtTime", _lit(f"2026-{3 * k + 3:02d}-01T00:00:00Z", XSD + "dateTime"))
                w.t(snap, TKG + "stars", _lit(str(max(0, stars - (2 - k) * rng.randint(0, 500))), XSD + "integer"))
                snapshots += 1

        papers = [f"{BASE}paper/{i}" for i in range(n_papers)]
        # The abstracts and the primary papers draw from streams of their own: the rest of the
        # corpus (years, authors, citations, reading statuses) is the same whatever they write.
        texts_rng, primary_rng = random.Random(seed + 1), random.Random(seed + 2)
        every = max(1, len(techniques) // 200)
        primary = {primary_rng.randrange(n_papers): node for node, _depth, _cat in techniques[::every]}
        writer = _Texts(techniques, roots)
        for i, paper in enumerate(papers):
            year = rng.randint(2016, 2026)
            w.iri(paper, RDF + "type", BIBO + "Document")
            title = " ".join(rng.choice(WORDS) for _ in range(5)).capitalize()
            w.t(paper, DCT + "title", _lit(f"{title} ({i})"))
            w.t(paper, DCT + "issued", _lit(str(year), XSD + "gYear"))
            w.t(paper, TKG + "venue", _lit(f"{rng.choice(VENUES)}'{year % 100:02d}"))
            first, second = rng.sample(authors, 2)
            seq = f"{paper}/authors"
            w.iri(paper, BIBO + "authorList", seq)
            w.iri(seq, RDF + "_1", first)
            w.iri(seq, RDF + "_2", second)
            w.iri(paper, DCT + "creator", first)
            if i:
                w.iri(paper, CITO + "cites", papers[rng.randrange(i)])
                if rng.random() < 0.6:
                    w.iri(paper, CITO + "cites", papers[rng.randrange(i)])
            writer.paper(w, texts_rng, paper, f"{title} ({i})", rng.choice(tech_iris), primary.get(i),
                         _abstract(words_rng, i) if abstracts else None)
            if rng.random() < 0.35:
                w.iri(paper, TKG + "readingStatus", f"{ID}status/{rng.choice(STATUSES)}")
                w.t(paper, TKG + "statusChangedAt",
                    _lit(f"{rng.randint(2024, 2026)}-{rng.randint(1, 12):02d}-01T00:00:00Z", XSD + "dateTime"))
                w.iri(paper, TKG + "readingCategory", rng.choice(cats))
        for index, node in primary.items():
            w.iri(node, TKG + "primaryPaper", papers[index])
        deepest = max(techniques, key=lambda t: t[1])
        return CorpusInfo(out, w.count, n_papers, n_techniques, n_authors, n_repos, snapshots,
                          deepest[0], deepest[1])


def refresh(source: Path, *, out: Path, changed: float = 0.05, added: float = 0.02, seed: int = 45) -> int:
    """Write ``out``: the corpus ``source`` (written by :func:`generate`) as a later ingest
    would see it, with a share ``changed`` of its papers revised (a new title, a corrected
    year, one more citation) and ``added`` as many new papers as it has appended. Returns
    the triples written."""
    rng = random.Random(seed)
    paper = f"<{BASE}paper/"
    title, issued = f"> <{DCT}title> ", f"> <{DCT}issued> "
    papers = techniques = 0
    written = 0
    with source.open(encoding="utf-8") as fh:  # first pass: how many papers and techniques
        for line in fh:
            if line.startswith(paper) and f"> <{RDF}type> " in line:
                papers += 1
            elif line.startswith(f"<{BASE}technique/") and f"> <{RDF}type> " in line:
                techniques += 1
    revised = set(rng.sample(range(papers), int(papers * changed)))
    with source.open(encoding="utf-8") as fh, out.open("w", encoding="utf-8") as target:
        for line in fh:
            if line.startswith(paper):
                head = line[len(paper):line.index(">")]
                if head.isdigit() and int(head) in revised:
                    subject = line[:line.index(">") + 1]
                    if title in line:
                        line = f'{subject} <{DCT}title> "{line.split(title, 1)[1][1:-4]} (revised)" .\n'
                        line += f"{subject} <{CITO}cites> <{BASE}paper/{rng.randrange(papers)}> .\n"
                        written += 1
                    elif issued in line:
                        line = f'{subject} <{DCT}issued> "{rng.randint(2016, 2026)}"^^<{XSD}gYear> .\n'
            target.write(line)
            written += 1
        w = _Writer(target)
        roots = [(f"{ID}technique/{tid}", 0, cat) for tid, cat in ROOT_TECHNIQUES]
        writer = _Texts([(f"{BASE}technique/{i}", 1, "") for i in range(techniques)], roots)
        for i in range(papers, papers + int(papers * added)):
            new = f"{BASE}paper/{i}"
            w.iri(new, RDF + "type", BIBO + "Document")
            title = " ".join(rng.choice(WORDS) for _ in range(5)).capitalize() + f" ({i})"
            w.t(new, DCT + "title", _lit(title))
            w.t(new, DCT + "issued", _lit("2026", XSD + "gYear"))
            w.iri(new, DCT + "creator", f"{BASE}person/{rng.randrange(max(30, papers // 3))}")
            w.iri(new, CITO + "cites", f"{BASE}paper/{rng.randrange(papers)}")
            writer.paper(w, rng, new, title, f"{BASE}technique/{rng.randrange(max(1, techniques))}", None)
        written += w.count
    return written


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m bench.corpus",
        description="Write the deterministic synthetic corpus (N-Triples; gzip when OUT ends in .gz).",
    )
    parser.add_argument("papers", nargs="?", type=int, default=100_000,
                        help="how many papers (about 14 triples each; default 100000)")
    parser.add_argument("out", nargs="?", type=Path, help="where to write it (default bench/out/corpus-N.nt)")
    parser.add_argument("--seed", type=int, default=42, help="random seed (default 42)")
    parser.add_argument("--abstracts", action="store_true", help="give each abstract more words, for a search to find")
    args = parser.parse_args(argv)
    if args.papers < 1:
        parser.error("papers must be at least 1")
    target = args.out or Path(f"bench/out/corpus-{args.papers}.nt")
    info = generate(args.papers, seed=args.seed, out=target, abstracts=args.abstracts)
    print(f"{info.path}: {info.triples:,} triples, {info.papers:,} papers, {info.techniques:,} synthetic techniques, "
          f"{info.authors:,} authors, {info.repositories:,} repositories (deepest lineage chain {info.deepest_depth})")


if __name__ == "__main__":  # pragma: no cover
    main()
