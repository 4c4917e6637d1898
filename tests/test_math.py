"""Formulas in the catalog: $...$ LaTeX that KaTeX typesets on the workbench and that reads
as plain notation in a terminal, a CSV or a page without scripts."""

from __future__ import annotations

import re

import pytest

from kg.catalog import load_catalog
from kg.views import plain_math


@pytest.mark.parametrize(("tex", "plain"), [
    (r"State $S_t = S_{t-1}\,\alpha_t(I - \beta_t k_t k_t^\top)$: a gate $\alpha$.",
     "State S_t = S_{t-1} α_t(I − β_t k_tᵀ k_tᵀ)".replace("k_tᵀ k_tᵀ", "k_t k_tᵀ") + ": a gate α."),
    (r"$\operatorname{softmax}(QK^\top/\sqrt{d_k} + \text{mask})\,V$", "softmax(QKᵀ/√d_k + mask) V"),
    (r"$0.2 \sqrt{\max(m, n)}$", "0.2 √(max(m, n))"),
    (r"$O(L^2)$ and $\lVert M \rVert_F$ and $\lfloor i g / h \rfloor$", "O(L²) and ‖M‖_F and ⌊i g / h⌋"),
    (r"$S \in \mathbb{R}^{n \times e}$", "S ∈ ℝ^{n × e}"),
    ("no formula, $5 would be one", "no formula, $5 would be one"),
])
def test_plain_math(tex: str, plain: str) -> None:
    assert plain_math(tex) == plain


def test_every_catalog_formula_reads_plainly_and_is_balanced() -> None:
    texts = [v for t in load_catalog().techniques.values() for v in [t.summary, *t.dimensions.values()]]
    with_math = [t for t in texts if "$" in t]
    assert len(with_math) >= 20
    for text in with_math:
        assert text.count("$") % 2 == 0, text
        plain = plain_math(text)
        assert "$" not in plain and not re.search(r"\\[A-Za-z]", plain), plain


def test_the_page_filter_keeps_the_tex_for_katex_and_shows_the_plain_notation() -> None:
    from kg.server.web.pages import _prose

    html = str(_prose(r"See $a_i \cdot b$ and https://arxiv.org/abs/2412.06464 <b>bold</b>"))
    assert r'<span class="math" data-tex="a_i \cdot b">a_i·b</span>' in html
    assert '<a href="https://arxiv.org/abs/2412.06464"' in html and "&lt;b&gt;bold&lt;/b&gt;" in html
    hostile = str(_prose('$x" onmouseover="alert(1)$'))
    assert "onmouseover=&#34;" in hostile or "onmouseover=&quot;" in hostile
    assert '" onmouseover="' not in hostile
