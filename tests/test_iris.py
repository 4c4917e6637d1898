"""Stable IRIs: the same paper, repository or person always gets the same node."""

from __future__ import annotations

import pytest

from kg.iris import arxiv_iri, doi_iri, parse_arxiv_id, repo_iri, slugify


@pytest.mark.parametrize(
    ("raw", "expected_id", "version"),
    [
        ("2104.12255v1", "2104.12255", 1),
        ("2104.12255", "2104.12255", None),
        ("arXiv:1706.03762v7", "1706.03762", 7),
        ("https://arxiv.org/abs/2412.06464v3", "2412.06464", 3),
        ("http://arxiv.org/pdf/1911.02150v1.pdf", "1911.02150", 1),
        ("astro-ph/0601001", "astro-ph/0601001", None),
        ("quant-ph/0201082v1", "quant-ph/0201082", 1),
        ("math.GT/0309136", "math.GT/0309136", None),
        ("0704.0001", "0704.0001", None),
    ],
)
def test_arxiv_ids_normalise_to_one_versionless_iri(raw: str, expected_id: str, version: int | None) -> None:
    parsed = parse_arxiv_id(raw)
    assert parsed.id == expected_id
    assert parsed.version == version
    assert parsed.iri.value == f"https://arxiv.org/abs/{expected_id}"


@pytest.mark.parametrize("bad", ["abc", "2104.123", "1234.56789.1", "astro-ph/06", ""])
def test_malformed_arxiv_ids_are_rejected_with_the_value(bad: str) -> None:
    with pytest.raises(ValueError, match="arXiv identifier"):
        parse_arxiv_id(bad)


def test_versions_of_one_paper_share_a_node() -> None:
    assert arxiv_iri("2104.12255v1") == arxiv_iri("2104.12255v2") == arxiv_iri("arXiv:2104.12255")


def test_doi_and_github_iris_are_lowercased() -> None:
    assert doi_iri("doi:10.1145/3503221.3508418").value == "https://doi.org/10.1145/3503221.3508418"
    assert doi_iri("https://doi.org/10.1145/ABC").value == "https://doi.org/10.1145/abc"
    assert repo_iri("NVlabs/GatedDeltaNet").value == "https://github.com/nvlabs/gateddeltanet"
    assert repo_iri("https://github.com/NVlabs/GatedDeltaNet.git").value == "https://github.com/nvlabs/gateddeltanet"
    assert repo_iri("https://gitcode.com/Ascend/triton-ascend").value == "https://gitcode.com/Ascend/triton-ascend"


def test_slugs_are_ascii_and_stable_even_for_chinese_names() -> None:
    assert slugify("Songlin Yang") == "songlin-yang"
    assert slugify("Zoë Müller") == "zoe-muller"
    chinese = slugify("分布式训练")
    assert chinese.startswith("x-") and chinese == slugify("分布式训练")
