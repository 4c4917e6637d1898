"""kg suggest lineage proposes edges to and from the reader's own techniques, from the same
citation evidence as for the catalog's (their primary papers are read from the union)."""

from __future__ import annotations

from ingest.citations import ingest_citations
from kg.owntech import Change, add_technique
from kg.suggestions import lineage_report


def test_suggestions_reach_techniques_of_your_own_both_ways(built_store, source) -> None:
    ingest_citations(built_store, source)
    add_technique(built_store, Change(name="Chunkwise delta training", category="attention", date="2025",
                                      paper="10.5555/techkg.delta-study"))
    add_technique(built_store, Change(name="Bias-only routing", category="moe", date="2025",
                                      paper="10.5555/techkg.bias-routing"))
    found = {(s.child.id, s.parent.id): s for s in lineage_report(built_store).suggestions}
    # from yours: its paper uses Gated DeltaNet's method (an influential citation)
    from_mine = found[("chunkwise-delta-training", "gated-deltanet")]
    assert {e.kind for e in from_mine.evidence} >= {"methodology", "influential"}
    # to yours: LatentMoE's paper follows the method of your technique's paper
    to_mine = found[("latentmoe", "bias-only-routing")]
    assert "Following Loss-Free Balancing" in (to_mine.evidence[0].sentence or "")
    # and the same rules as for the catalog's: its paper's one citation of Loss-Free Balancing's is a
    # methodology intent in wording of use ("uses the expert bias update of [7]"), which proposes nothing
    assert ("bias-only-routing", "aux-loss-free-balancing") not in found
