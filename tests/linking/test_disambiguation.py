"""A name that is also a common string links a paper only where it means the technique: one
test per family of ambiguity (kg/data/link-context.toml and the generic rules)."""

from __future__ import annotations

from kg.linking.context import Judge, Rules, definitions, load_rules
from kg.linking.linker import Linker
from tests.linking.conftest import links_of, paper


def test_ssd_in_a_storage_or_detection_paper_is_not_mamba2(linker: Linker) -> None:
    storage = paper("Write amplification on flash", "We cut write amplification of NVMe SSDs in a key-value store.",
                    categories=["cs.DB"])
    detection = paper("Small objects", "We extend the SSD detector with feature fusion for object detection.",
                      categories=["cs.CV"])
    mamba = paper("Scans", "The SSD layer of Mamba-2 computes a state space model as a matrix product.",
                  categories=["cs.LG"])
    assert "mamba2" not in links_of(linker, storage) and "mamba2" not in links_of(linker, detection)
    assert "mamba2" in links_of(linker, mamba)


def test_muon_in_a_physics_paper_is_not_the_optimizer(linker: Linker) -> None:
    physics = paper("Muon g-2", "We measure the muon magnetic anomaly with polarized muons in a storage ring.",
                    categories=["hep-ex"])
    ml_for_physics = paper("Muon tracks", "A graph neural network links Muon hits from the detector into tracks.",
                           categories=["hep-ex", "cs.LG"])
    optimizer = paper("Orthogonal updates", "We train language models with the Muon optimizer instead of AdamW.",
                      categories=["cs.LG"])
    assert links_of(linker, physics) == {} and "muon" not in links_of(linker, ml_for_physics)
    assert links_of(linker, optimizer)["muon"].relation == "uses"


def test_a_transformer_in_the_power_grid_is_not_attention(linker: Linker) -> None:
    grid = paper("Transformer faults", "We classify faults of oil-immersed power transformers from dissolved gas "
                                       "analysis with a neural network.", categories=["eess.SY", "cs.LG"])
    model = paper("Long documents", "We train a transformer encoder on long documents.", categories=["cs.CL"])
    assert "transformer" not in links_of(linker, grid)
    assert "transformer" in links_of(linker, model)


def test_tp_as_true_positives_is_not_tensor_parallelism(linker: Linker) -> None:
    counts = paper("Detector metrics", "We report TP, FP and FN for every detector.", categories=["cs.CV"])
    defined = paper("Rivers", "Total phosphorus (TP) is predicted by a neural network.", categories=["cs.LG"])
    parallel = paper("Scaling", "We combine TP with pipeline parallelism on 1024 GPUs.", categories=["cs.DC"])
    assert "megatron-tp" not in links_of(linker, counts) and "megatron-tp" not in links_of(linker, defined)
    assert links_of(linker, parallel)["megatron-tp"].relation == "uses"


def test_triton_the_moon_or_the_inference_server_is_not_the_kernel_language(linker: Linker) -> None:
    moon = paper("Triton", "Triton, the largest moon of Neptune, has cryovolcanic plumes.", categories=["astro-ph.EP"])
    server = paper("Serving", "We serve the models with NVIDIA Triton Inference Server on GPUs.",
                   categories=["cs.DC"])
    kernels = paper("Fused kernels", "We write the fused attention kernels in Triton for GPUs.", categories=["cs.LG"])
    assert links_of(linker, moon) == {} and "triton" not in links_of(linker, server)
    assert "triton" in links_of(linker, kernels)


def test_an_acronym_defined_with_another_expansion_never_links(linker: Linker) -> None:
    flow = paper("Flows", "Conditional flow matching (CFM) trains flows; we extend CFM with couplings.",
                 categories=["cs.LG"])
    assert "categorical-flow-maps" not in links_of(linker, flow)
    assert definitions("We use grouped-query attention (GQA) and multi-level attention (MLA).") == {
        "GQA": "grouped-query attention", "MLA": "multi-level attention"}


def test_an_acronym_defined_as_the_technique_links_for_certain(linker: Linker) -> None:
    found = links_of(linker, paper("Decoding", "We adopt grouped-query attention (GQA) to shrink the cache.",
                                   categories=["cs.CL"]))
    assert found["gqa"].relation == "uses" and found["gqa"].score >= 0.75


def test_gqa_the_visual_question_answering_dataset_is_not_grouped_query_attention(linker: Linker) -> None:
    vqa = paper("Compositional questions", "We evaluate models on GQA and VQAv2 for visual question answering.",
                categories=["cs.CV"])
    assert "gqa" not in links_of(linker, vqa)


def test_an_acronym_outside_ml_needs_a_domain(linker: Linker) -> None:
    law = paper("Detentions", "Detentions under the MHA rose by a third.", categories=["stat.AP"])
    assert links_of(linker, law) == {}


def test_a_generic_phrase_does_not_link_and_an_ordinary_one_needs_an_ml_paper(linker: Linker) -> None:
    generic = paper("UEP: Portable Expert-Parallel Communication")
    driving = paper("Driver attention", "Drivers seldom pay full attention to the road.", categories=["cs.HC"])
    assert links_of(linker, generic) == {} and links_of(linker, driving) == {}


def test_a_switch_in_a_network_is_not_the_switch_transformer(linker: Linker) -> None:
    network = paper("Switch-based aggregation", "A programmable network switch sums gradients for data-parallel "
                                                "training.", categories=["cs.NI"])
    moe = paper("Routing", "Our Switch layers route each token to one expert.", categories=["cs.LG"])
    assert "switch-transformer" not in links_of(linker, network)
    assert "switch-transformer" in links_of(linker, moe)


def test_a_vetoing_cue_is_not_looked_for_where_the_name_itself_stands() -> None:
    rules = load_rules()
    judge = Judge(rules, {"t:eagle": ["EAGLE"]})
    from kg.linking.names import Alias

    eagle = Alias("EAGLE", "acronym", frozenset({"t:eagle"}))
    text = "EAGLE drafts tokens for speculative decoding"
    assert judge.judge(eagle, "t:eagle", text, frozenset({"cs.CL"}), {}, [(0, 5)]).ok
    assert not judge.judge(eagle, "t:eagle", text + " of bald eagles", frozenset({"cs.CL"}), {}, [(0, 5)]).ok


def test_a_techniques_own_distinctive_name_confirms_its_acronym(linker: Linker) -> None:
    found = links_of(linker, paper("Efficient recurrences", "Gated DeltaNet trains in chunks; GDN layers replace "
                                                            "attention in our hybrid."))
    assert "gated-deltanet" in found


def test_the_rules_file_loads_with_a_rule_for_every_family() -> None:
    rules: Rules = load_rules()
    for label in ("SSD", "Muon", "Transformer", "TP", "Triton", "Switch", "CFM", "GQA"):
        assert label in rules.by_label, label
    assert "Transformer" in rules.lowercase
