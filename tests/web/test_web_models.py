"""The pure logic behind the pages: card filters and their choices, kernel badges, and
the filters that turn text into markup."""

from __future__ import annotations

from typing import Any

import pytest

from kg.server.web.models import KERNEL_BADGES, CardFilters, facets, filter_cards, fold
from kg.server.web.pages import _linkify, _number


def card(ident: str, **fields: Any) -> dict[str, Any]:
    base = {"id": ident, "name": ident.title(), "nameZh": None, "aliases": [], "category": "attention",
            "categoryLabel": "Attention", "categoryPosition": 1, "organisations": [], "year": "2024",
            "kernel": "not run", "onPage": True}
    return base | fields


CARDS = [
    card("gdn", name="Gated DeltaNet", aliases=["GDN"], organisations=["NVIDIA", "MIT CSAIL"], kernel="verified"),
    card("kda", name="Kimi Delta Attention", aliases=["KDA", "Kimi Linear"], organisations=["Moonshot AI"],
         year="2025", kernel="failing"),
    card("moba", name="Mixture of Block Attention", aliases=["MoBA"], category="moe", categoryLabel="MoE",
         categoryPosition=2, organisations=["Moonshot AI"], year="2025", kernel="none"),
    card("mamba2", name="Mamba2", onPage=False, kernel="not run"),
    card("muon", name="Muon", nameZh="μ子优化器", category="optimizers", categoryLabel="Optimizers",
         categoryPosition=5, year="", kernel="not run"),
]


def ids(filters: CardFilters) -> list[str]:
    return [c["id"] for c in filter_cards(CARDS, filters)]


@pytest.mark.parametrize("filters, expected", [
    (CardFilters(), ["gdn", "kda", "moba", "muon"]),
    (CardFilters(all=True), ["gdn", "kda", "moba", "mamba2", "muon"]),
    (CardFilters(q="kimi linear"), ["kda"]),
    (CardFilters(q="  DELTA "), ["gdn", "kda"]),
    (CardFilters(q="μ子"), ["muon"]),
    (CardFilters(organisation="Moonshot AI"), ["kda", "moba"]),
    (CardFilters(organisation="Moonshot"), []),
    (CardFilters(year="2025", category="attention"), ["kda"]),
    (CardFilters(kernel="none"), ["moba"]),
    (CardFilters(kernel="failing"), ["kda"]),
    (CardFilters(kernel="not run"), ["muon"]),
    (CardFilters(kernel="not run", all=True), ["mamba2", "muon"]),
])
def test_filters_combine_and_search_names_aliases_and_chinese_names(filters: CardFilters,
                                                                    expected: list[str]) -> None:
    assert ids(filters) == expected


def test_filters_come_from_the_query_string_trimmed_and_bounded() -> None:
    filters = CardFilters.from_query({"q": "  x" * 300, "category": " moe ", "all": "1", "unknown": "y"})
    assert len(filters.q) == 200 and filters.category == "moe" and filters.all and filters.active
    assert not CardFilters.from_query({"all": "yes please"}).all and not CardFilters().active


def test_facets_count_each_choice_over_the_cards_shown() -> None:
    choices = facets(CARDS)
    assert choices["category"] == [("attention", "Attention", 2), ("moe", "MoE", 1), ("optimizers", "Optimizers", 1)]
    assert ("Moonshot AI", "Moonshot AI", 2) in choices["organisation"]
    assert choices["year"] == [("2025", "2025", 2), ("2024", "2024", 1)]
    assert choices["kernel"] == [("verified", "verified", 1), ("failing", "failing", 1), ("not run", "not run", 1),
                                 ("none", "none", 1)]
    assert ("not run", "not run", 2) in facets(CARDS, include_lineage_only=True)["kernel"]


def test_every_kernel_state_of_the_one_vocabulary_has_a_badge() -> None:
    from kg.wording import KernelState

    assert {k: v[:2] for k, v in KERNEL_BADGES.items()} == {
        "verified": ("verified", "ok"), "failing": ("failing", "bad"), "not run": ("not run", "warn"),
        "none": ("none", "muted")}
    assert set(KERNEL_BADGES) == {str(s) for s in KernelState}


def test_fold_ignores_case_and_accents() -> None:
    assert fold("Ünïcode ÉÀ") == "unicode ea" and fold(None) == ""


def test_links_are_made_only_from_http_urls_and_everything_else_is_escaped() -> None:
    html = str(_linkify('Paper: https://arxiv.org/abs/2412.06464, <script>alert(1)</script> javascript:alert(2) '
                        'https://x.example/a"onmouseover="b'))
    assert '<a href="https://arxiv.org/abs/2412.06464" rel="noopener noreferrer">' in html
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'href="javascript' not in html and "onmouseover=\"" not in html
    assert str(_linkify(None)) == ""


@pytest.mark.parametrize("value, text", [(5.662441253662109e-07, "5.66e-07"), (1e-05, "1.00e-05"), (0.125, "0.125"),
                                         (0.0, "0"), (3, "3"), (None, "—")])
def test_errors_and_tolerances_are_shown_with_three_significant_digits(value: object, text: str) -> None:
    assert _number(value) == text


def choice(ident: str, *, on_page: bool = True, aliases: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"id": ident, "name": ident.replace("-", " ").title(), "aliases": list(aliases),
            "categoryLabel": "Attention", "categoryPosition": 1, "onPage": on_page}


def test_a_large_lineage_lists_the_comparison_pages_techniques_and_the_ones_chosen() -> None:
    from kg.server.web.models import CHOICES_LISTED, listed_choices

    small = [choice("gdn"), choice("synthetic-1", on_page=False)]
    assert listed_choices(small) == small  # a small lineage lists every technique
    large = [choice("gdn"), choice("kda")] + [choice(f"synthetic-{i}", on_page=False) for i in range(CHOICES_LISTED)]
    assert [c["id"] for c in listed_choices(large, ["synthetic-7"])] == ["gdn", "kda", "synthetic-7"]


def test_the_pickers_find_a_technique_by_id_name_or_alias_those_starting_with_it_first() -> None:
    from kg.server.web.models import choice_matches

    choices = [choice("kimi-delta-attention", aliases=("KDA",)), choice("synthetic-delta", on_page=False),
               choice("gated-deltanet", aliases=("GDN",)), choice("mamba2")]
    assert [c["id"] for c in choice_matches(choices, "gdn")] == ["gated-deltanet"]
    assert [c["id"] for c in choice_matches(choices, "DELTA")] == ["kimi-delta-attention", "gated-deltanet",
                                                                    "synthetic-delta"]
    assert [c["id"] for c in choice_matches(choices, "ga")] == ["gated-deltanet"]
    assert len(choice_matches(choices, "a", limit=2)) == 2
