"""The ML citation graph the citation tests serve from the Semantic Scholar emulator.

The catalog's papers (by their arXiv ids, with the catalog's titles) cite each other as
their authors would, with context sentences and intents of the kind Semantic Scholar
extracts, plus a few papers TechKG does not know yet (synthetic DOIs under the 10.5555
test prefix, and one arXiv paper the arXiv recordings hold, 1605.08386).

What is planted, for the tests to find:

- existing lineage confirmed by citations: KDA refines Gated DeltaNet (methodology,
  influential), GQA generalizes MQA (methodology), DanceGRPO ports GRPO (methodology);
- new lineage: DiffusionNFT extends GRPO (methodology, influential, "we extend GRPO"),
  and LatentMoE derives from Auxiliary-Loss-Free Load Balancing through a sentence that
  names it ("Following Loss-Free Balancing, ...") in a citation of another paper;
- citations that are no evidence: Muon cites the Transformer and ZeRO for background
  only, without wording that makes it lineage;
- reading material: candidate papers citing Gated DeltaNet's paper for its method, one
  co-cited with it, one recommended for it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ingest.emulators.semanticscholar import SemanticScholarEmulator
from kg.catalog import load_catalog

#: Synthetic papers TechKG does not know (DOIs under the 10.5555 test prefix).
CANDIDATES = {
    "delta-study": ("10.5555/techkg.delta-study", "Chunkwise gated delta rules for long-context retrieval", 2025),
    "bias-routing": ("10.5555/techkg.bias-routing", "Bias-only routing for sparse experts", 2025),
    "cocited": ("10.5555/techkg.cocited", "State tracking in linear recurrent models", 2024),
    "survey": ("10.5555/techkg.survey", "A survey of efficient sequence models", 2025),
    "recommended": ("10.5555/techkg.recommended", "Hardware-efficient linear attention kernels", 2025),
}
#: Abstracts of some candidates (synthetic, our own words), for what a reader triages by.
ABSTRACTS = {
    "delta-study": "We study how the chunkwise form of gated delta rules behaves on retrieval over long contexts, and "
                   "find that the gate's decay sets how far back a fact can still be recalled.",
}
#: A paper the arXiv recordings hold: it becomes a candidate under its arXiv IRI.
ARXIV_CANDIDATE = "1605.08386"


@dataclass(frozen=True)
class Planted:
    child: str
    parent: str
    relation: str


PLANTED_NEW = (Planted("diffusionnft", "grpo", "extends"),
               Planted("latentmoe", "aux-loss-free-balancing", "derivesFrom"))
PLANTED_CONFIRMED = (Planted("kda", "gated-deltanet", "refines"), Planted("gqa", "mqa", "generalizes"),
                     Planted("dancegrpo", "grpo", "portsTo"))


def arxiv_of(technique: str) -> str:
    catalog = load_catalog()
    paper = catalog.papers[catalog.techniques[technique].paper or ""]
    assert paper.arxiv, technique
    return f"ARXIV:{paper.arxiv}"


def build(emu: SemanticScholarEmulator) -> dict[str, str]:
    """Fill ``emu`` with the graph; returns technique id / candidate key -> paperId."""
    catalog = load_catalog()
    ids: dict[str, str] = {}
    for technique in catalog.techniques.values():
        paper = catalog.papers.get(technique.paper or "")
        if paper is None or not paper.arxiv:
            continue
        ids[technique.id] = emu.add_paper(paper.title, year=paper.year, venue=paper.venue or "arXiv.org",
                                          authors=[paper.first_author] if paper.first_author else [],
                                          arxiv=paper.arxiv, publication_date=paper.date)
    for key, (doi, title, year) in CANDIDATES.items():
        ids[key] = emu.add_paper(title, year=year, venue="arXiv.org", authors=["A. Reader", "B. Writer"], doi=doi,
                                 abstract=ABSTRACTS.get(key))
    ids["arxiv-candidate"] = emu.add_paper("Theano: A Python framework for fast computation of mathematical "
                                           "expressions", year=2016, arxiv=ARXIV_CANDIDATE,
                                           authors=["The Theano Development Team"])
    cite = emu.cite
    # Confirmed lineage.
    cite(ids["kda"], ids["gated-deltanet"], influential=True, contexts=[
        ("KDA refines the gating of Gated DeltaNet with a fine-grained, channel-wise forget gate.", ["methodology"]),
        ("Gated DeltaNet [12] combines the delta rule with scalar gating.", ["background"])])
    cite(ids["gqa"], ids["mqa"], influential=True, contexts=[
        ("We generalize multi-query attention to an intermediate number of key-value heads.", ["methodology"])])
    cite(ids["gqa"], ids["transformer"], contexts=[
        ("Multi-head attention [1] computes one key and value per head.", ["background"])])
    cite(ids["dancegrpo"], ids["grpo"], contexts=[
        ("DanceGRPO adapts GRPO to visual generation with diffusion and rectified flow models.", ["methodology"])])
    # New lineage.
    cite(ids["diffusionnft"], ids["grpo"], influential=True, contexts=[
        ("We extend GRPO's group-relative advantage to the forward process of diffusion models.", ["methodology"]),
        ("Policy gradient methods such as PPO and GRPO [3] dominate RL fine-tuning.", ["background"])])
    cite(ids["latentmoe"], ids["bias-routing"], contexts=[
        ("Following Loss-Free Balancing, we keep a per-expert bias that steers the router without an auxiliary "
         "loss.", ["methodology"])])
    # No evidence.
    cite(ids["muon"], ids["transformer"], contexts=[("Transformers are usually trained with AdamW.", ["background"])])
    cite(ids["muon"], ids["zero"])
    # Reading material around Gated DeltaNet.
    cite(ids["delta-study"], ids["gated-deltanet"], influential=True, contexts=[
        ("We use the chunkwise algorithm of Gated DeltaNet for training.", ["methodology"])])
    cite(ids["bias-routing"], ids["aux-loss-free-balancing"], contexts=[
        ("Our router uses the expert bias update of [7].", ["methodology"])])
    cite(ids["survey"], ids["gated-deltanet"], contexts=[("Gated DeltaNet [4] is a gated linear RNN.", ["background"])])
    cite(ids["survey"], ids["cocited"], contexts=[("Linear recurrences track state [5].", ["background"])])
    cite(ids["kda"], ids["cocited"], contexts=[("State tracking needs negative eigenvalues [9].", ["result"])])
    cite(ids["gated-deltanet"], ids["arxiv-candidate"])
    cite(ids["gated-deltanet"], ids["mqa"], contexts=[("Queries share keys as in MQA [2].", ["background"])])
    emu.recommend(ids["gated-deltanet"], [ids["recommended"], ids["kda"]])
    return ids
