"""The relation a paper's wording gives its link: explicit wording first, then the method
signal (uses), else mentions; titles have patterns of their own."""

from __future__ import annotations

import pytest

from kg.linking.linker import Linker
from kg.linking.model import Evidence, strongest
from kg.linking.relations import read_relation, sentence_bounds
from tests.linking.conftest import links_of, paper


def _reading(text: str, name: str = "GQA", field: str = "abstract") -> str:
    start = text.index(name)
    return read_relation(text, start, start + len(name), field).relation


@pytest.mark.parametrize("text, relation", [
    ("We propose GQA, which interpolates between the two.", "introduces"),
    ("We introduce a new attention called GQA.", "introduces"),
    ("In this paper, we extend GQA to mixture-of-experts layers.", "extends"),
    ("Our method builds on GQA.", "extends"),
    ("The model is trained with GQA on 64 GPUs.", "uses"),
    ("We adopt GQA in every layer.", "uses"),
    ("Our model is GQA-based.", "uses"),
    ("It is compared against GQA and MQA.", "evaluates"),
    ("Our method outperforms GQA.", "evaluates"),
    ("We use attention variants such as GQA.", "uses"),
    ("Prior methods such as GQA shrink the cache.", "mentions"),
    ("Unlike GQA, our scheme keeps every head.", "mentions"),
    ("We observe that GQA heads specialise.", "uses"),
    ("GQA shrinks the cache of large models.", "mentions"),
    ("我们提出 GQA 来缩小缓存", "introduces"),
    ("基于 GQA 实现推理", "uses"),
])
def test_the_wording_around_a_name_gives_the_relation(text: str, relation: str) -> None:
    assert _reading(text) == relation


def test_the_nearest_cue_wins() -> None:
    assert _reading("We propose a method that is compared with GQA.") == "evaluates"
    assert _reading("We propose a GQA-based attention.") == "uses"


def test_a_title_that_opens_with_the_name_introduces_it_and_a_new_name_made_of_it_extends_it() -> None:
    assert _reading("GQA: Training Generalized Models", field="title") == "introduces"
    assert _reading("ZeRO-Offload: Democratizing Training", "ZeRO", field="title") == "extends"
    assert _reading("Attention Residuals", "Attention Residuals", field="title") == "introduces"
    assert _reading("Fast decoding with GQA", field="title") == "uses"


def test_a_why_text_or_a_tag_reads_as_uses_and_a_sentence_without_signal_as_mentions() -> None:
    assert _reading("Pairs GQA with paging", field="reading-list-why") == "uses"
    assert _reading("GQA", field="zotero-tag") == "uses"
    assert _reading("GQA is popular.", field="citation-context") == "mentions"


def test_sentences_end_at_full_stops_but_not_at_abbreviations() -> None:
    text = "Heads are grouped, e.g. in GQA. Next sentence."
    start = text.index("GQA")
    left, right = sentence_bounds(text, start, start + 3)
    assert text[left:right] == "Heads are grouped, e.g. in GQA."


def test_a_link_takes_the_strongest_relation_its_evidence_reads_and_a_noisy_or_score() -> None:
    items = [Evidence("title", "t", "g", "uses", 0.8), Evidence("abstract", "a", "g", "introduces", 0.6),
             Evidence("abstract", "b", "g", "mentions", 0.5)]
    relation, score = strongest(items)
    assert relation == "introduces" and score == pytest.approx(1 - 0.2 * 0.4, abs=1e-3)
    weak = [Evidence("title", "t", "g", "uses", 0.9), Evidence("reading-list-category", "c", "g", "introduces", 0.2)]
    assert strongest(weak)[0] == "uses"  # an item a third as strong as the best does not choose


def test_a_paper_introducing_a_compound_name_extends_the_technique_inside_it(linker: Linker) -> None:
    found = links_of(linker, paper("Switch Transformers: Scaling to Trillion Parameter Models"))
    assert found["switch-transformer"].relation == "introduces"
    assert found["transformer"].relation == "extends"


def test_a_comparison_governs_the_phrase_a_name_only_qualifies() -> None:
    assert _reading("DPO matches or beats existing methods, exceeding PPO-based RLHF.", "PPO") == "evaluates"
    assert _reading("Unlike GQA-style models, ours keeps every head.") == "mentions"
    assert _reading("We propose a GQA-based attention.") == "uses"


def test_a_new_name_opened_by_a_word_of_its_own_extends_the_known_one() -> None:
    text = "To fix this bias, we introduce Dr. GRPO, an unbiased optimization method."
    assert _reading(text, "GRPO") == "extends"
    assert _reading("We introduce GRPO, a variant of PPO.", "GRPO") == "introduces"
    assert _reading("In this paper we present The GRPO recipe.", "GRPO") == "introduces"


def test_what_extends_another_technique_in_a_paper_that_introduces_is_the_new_one() -> None:
    text = ("We introduce Kimi Linear, a hybrid linear attention architecture. Its core is Kimi Delta Attention "
            "(KDA), which extends Gated DeltaNet with a finer-grained gating mechanism.")
    assert _reading(text, "Kimi Delta Attention") == "introduces"
    survey = "Kimi Delta Attention (KDA), which extends Gated DeltaNet, is one of many recent designs."
    assert _reading(survey, "Kimi Delta Attention") == "mentions"


def test_the_name_a_paper_gives_its_own_work_speaks_for_it_as_we_does(linker: Linker) -> None:
    found = links_of(linker, paper(
        "DeepSeek-V3 Technical Report",
        "We present DeepSeek-V3, a strong Mixture-of-Experts (MoE) language model. Furthermore, DeepSeek-V3 "
        "pioneers an auxiliary-loss-free strategy for load balancing.", categories=["cs.CL"]))
    assert found["aux-loss-free-balancing"].relation == "uses"
    other = links_of(linker, paper("A survey", "An auxiliary-loss-free strategy for load balancing was proposed.",
                                   categories=["cs.CL"]))
    assert other["aux-loss-free-balancing"].relation == "mentions"


def test_a_paper_whose_own_name_is_made_of_a_techniques_name_extends_it(linker: Linker) -> None:
    found = links_of(linker, paper("DanceGRPO: Unleashing GRPO on Visual Generation"))
    assert found["grpo"].relation == "extends"
    assert any(e.relation == "extends" and e.field == "title" for e in found["grpo"].evidence)
    plain = links_of(linker, paper("Unleashing GRPO on Visual Generation", categories=["cs.CV"]))
    assert plain["grpo"].relation == "uses"
