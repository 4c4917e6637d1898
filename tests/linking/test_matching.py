"""The matcher: every name of every technique in one pass, in its spelling variants, on word
boundaries, the longest name where names overlap."""

from __future__ import annotations

from kg.linking.names import Alias, TechniqueLabels, aliases, classify, label_variants
from kg.linking.patterns import Matcher


def _matcher(*techniques: TechniqueLabels, lowercase: frozenset[str] = frozenset()) -> Matcher:
    return Matcher(aliases(techniques), lowercase=lowercase)


def _found(matcher: Matcher, text: str) -> list[tuple[str, str]]:
    return [(text[h.start:h.end], h.alias.label) for h in matcher.find(text)]


MOE = TechniqueLabels("t:moe", "moe", "Sparsely-Gated MoE",
                      ("Sparsely-Gated Mixture-of-Experts", "Switch Transformers"))
GQA = TechniqueLabels("t:gqa", "gqa", "Grouped-Query Attention", ("Grouped-Query Attention", "GQA"))


def test_hyphens_spaces_case_and_plurals_are_one_name() -> None:
    matcher = _matcher(MOE, GQA)
    for text in ("a sparsely gated mixture of experts", "A Sparsely-Gated Mixture-of-Experts layer",
                 "sparsely-gated mixture-of-expert", "sparsely_gated mixture/of experts"):
        assert _found(matcher, text) and _found(matcher, text)[0][1] == "Sparsely-Gated Mixture-of-Experts", text
    assert _found(matcher, "two Switch Transformer models") == [("Switch Transformer", "Switch Transformers")]


def test_a_shortened_word_of_a_name_is_also_found_written_out() -> None:
    balancing = TechniqueLabels("t:alf", "aux-loss-free-balancing", "Auxiliary-Loss-Free Load Balancing",
                                ("aux-loss-free",))
    matcher = _matcher(balancing)
    assert _found(matcher, "an auxiliary-loss-free strategy; aux-loss-free routing") == [
        ("auxiliary-loss-free", "auxiliary-loss-free"), ("aux-loss-free", "aux-loss-free")]


def test_acronyms_match_as_written_on_word_boundaries() -> None:
    matcher = _matcher(GQA)
    assert _found(matcher, "GQA cuts the cache; GQAs and GQA's heads") == [("GQA", "GQA"), ("GQAs", "GQA"),
                                                                            ("GQA", "GQA")]
    assert _found(matcher, "gqa in lower case, MGQA, GQAX and GQA2 are other words") == []


def test_the_longest_name_wins_where_names_overlap() -> None:
    gdn = TechniqueLabels("t:gdn", "gated-deltanet", "Gated DeltaNet", ("Gated DeltaNet",))
    deltanet = TechniqueLabels("t:dn", "deltanet", "DeltaNet", ("DeltaNet",))
    found = _found(_matcher(gdn, deltanet), "Gated DeltaNet beats DeltaNet")
    assert found == [("Gated DeltaNet", "Gated DeltaNet"), ("DeltaNet", "DeltaNet")]


def test_a_name_stands_beside_chinese_text_without_spaces() -> None:
    transformer = TechniqueLabels("t:tr", "transformer", "Transformer", ("Transformer",))
    assert _found(_matcher(transformer), "在Transformer内进行张量并行切分") == [("Transformer", "Transformer")]


def test_a_word_matches_in_lower_case_only_where_the_rules_say_so() -> None:
    transformer = TechniqueLabels("t:tr", "transformer", "Transformer", ("Transformer",))
    muon = TechniqueLabels("t:mu", "muon", "Muon", ("Muon",))
    matcher = _matcher(transformer, muon, lowercase=frozenset({"Transformer"}))
    assert _found(matcher, "transformers and muon flux") == [("transformers", "Transformer")]


def test_switches_is_a_verb_not_the_plural_of_switch() -> None:
    switch = TechniqueLabels("t:sw", "switch", "Switch", ("Switch",))
    assert _found(_matcher(switch), "Switches routing at run time") == []
    assert _found(_matcher(switch), "Two Switch models") == [("Switch", "Switch")]


def test_names_are_split_and_classified() -> None:
    assert label_variants("Full Attention / Transformer") == ["Full Attention", "Transformer"]
    assert label_variants("Muon (scaled for LLM training)") == ["Muon"]
    assert [classify(n) for n in ("GQA", "EAGLE-3", "DeltaNet", "ZeRO-1", "vLLM", "Mamba2", "Transformer",
                                  "Multi-Head Attention", "fully_shard")] == [
        "acronym", "acronym", "coined", "coined", "coined", "coined", "word", "phrase", "phrase"]


def test_an_id_is_a_name_only_where_it_is_not_a_plain_word() -> None:
    found = aliases([TechniqueLabels("t:z", "zero", "DeepSpeed ZeRO", ("ZeRO",), ("zero",)),
                     TechniqueLabels("t:g", "gated-deltanet", "Gated DeltaNet", ("Gated DeltaNet", "GDN"),
                                     ("gated-deltanet",))])
    labels = {a.label for a in found}
    assert "zero" not in labels and "gated-deltanet" not in labels  # the latter folds into "Gated DeltaNet"
    assert Alias("Gated DeltaNet", "phrase", frozenset({"t:g"})) in found
