"""The self-contained interactive page, driven in headless Chromium like a reader would."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from exports.html import page_parts, render_page, script_json
from exports.lineage import LineageOptions, build_lineage
from tests.exports.conftest import HOSTILE

pytestmark = pytest.mark.browser
GDN = "https://w3id.org/techkg/id/technique/gated-deltanet"
MLA = "https://w3id.org/techkg/id/technique/mla"


def open_page(page: Any, html: str, tmp_path: Path, name: str = "lineage.html") -> Path:
    path = tmp_path / name
    path.write_text(html, encoding="utf-8")
    page.goto(path.as_uri())
    page.wait_for_function("window.TechKGLineage && TechKGLineage.views.length === 1")
    return path


def click_node(page: Any, iri: str) -> None:
    """A real mouse click on the node's place on the canvas."""
    point = page.evaluate("""(id) => {
        const cy = TechKGLineage.views[0].cy, node = cy.getElementById(id);
        cy.fit(); const p = node.renderedPosition(), box = cy.container().getBoundingClientRect();
        return {x: box.left + p.x, y: box.top + p.y}; }""", iri)
    page.mouse.move(point["x"], point["y"])
    page.mouse.click(point["x"], point["y"])


def test_page_is_self_contained(built_store) -> None:
    html = render_page(build_lineage(built_store))
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", html)
    assert "https://cdn" not in html and "unpkg.com" not in html
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


def test_page_shows_every_technique_and_loads_nothing(built_store, page: Any, tmp_path: Path) -> None:
    open_page(page, render_page(build_lineage(built_store)), tmp_path)
    assert page.get_attribute(".tkg-stats", "data-techniques") == "45"
    assert page.inner_text(".tkg-stats").startswith("45 techniques · 28 lineage relations")
    assert page.evaluate("TechKGLineage.views[0].cy.nodes('.technique').length") == 45
    assert page.locator(".tkg-chip").count() == 9
    page.screenshot(path=str(tmp_path / "lineage-page.png"))
    assert page.events["requests"] == [] and page.events["errors"] == []
    assert not [m for m in page.events["console"] if m.startswith(("error", "warning"))]


def test_search_finds_a_technique_and_enter_opens_its_card(built_store, page: Any, tmp_path: Path) -> None:
    open_page(page, render_page(build_lineage(built_store)), tmp_path)
    page.fill(".tkg-search input", "gdn")
    results = page.locator(".tkg-result")
    assert results.first.inner_text().startswith("Gated DeltaNet")
    page.keyboard.press("Enter")
    card = page.locator(".tkg-card")
    card.wait_for(state="visible")
    assert card.get_attribute("data-technique") == GDN
    assert page.locator(".tkg-card-title").inner_text() == "Gated DeltaNet"
    page.fill(".tkg-search input", "no such technique at all")
    assert "No technique matches" in page.inner_text(".tkg-results")


def test_clicking_a_node_opens_its_card_with_papers_repository_and_kernel(built_store, page: Any,
                                                                          tmp_path: Path) -> None:
    open_page(page, render_page(build_lineage(built_store)), tmp_path)
    click_node(page, MLA)
    card = page.locator(".tkg-card")
    card.wait_for(state="visible")
    assert card.get_attribute("data-technique") == MLA
    text = card.inner_text()
    assert "Multi-Head Latent Attention" in text
    assert "DeepSeek-V2" in text  # its paper
    assert "github.com/deepseek-ai" in text.lower()
    assert "Kernel" in text and page.locator(".tkg-kernel").inner_text()
    link = page.locator(".tkg-papers a").first.get_attribute("href")
    assert link.startswith("https://arxiv.org/abs/")
    assert "Full Attention / Transformer" in page.inner_text(".tkg-lineage")
    page.screenshot(path=str(tmp_path / "lineage-card.png"))


def test_hover_highlights_the_lineage_and_fades_the_rest(built_store, page: Any, tmp_path: Path) -> None:
    open_page(page, render_page(build_lineage(built_store)), tmp_path)
    point = page.evaluate("""(id) => { const cy = TechKGLineage.views[0].cy; cy.fit();
        const p = cy.getElementById(id).renderedPosition(), b = cy.container().getBoundingClientRect();
        return {x: b.left + p.x, y: b.top + p.y}; }""", GDN)
    page.mouse.move(point["x"], point["y"])
    faded = page.evaluate("""() => { const cy = TechKGLineage.views[0].cy;
        return Object.fromEntries(cy.nodes('.technique').map(n => [n.data('slug'), n.hasClass('faded')])); }""")
    assert not any(faded[s] for s in ("gated-deltanet", "deltanet", "mamba2", "kda"))
    assert faded["triton"] and faded["mla"]
    page.mouse.move(5, 5)
    assert page.evaluate("TechKGLineage.views[0].cy.nodes('.faded').length") == 0


def test_category_filter_hides_and_shows_a_category(built_store, page: Any, tmp_path: Path) -> None:
    open_page(page, render_page(build_lineage(built_store)), tmp_path)
    chip = page.locator('.tkg-chip[data-category="rl-post-training"]')
    chip.click()
    assert chip.get_attribute("aria-pressed") == "false"
    assert page.evaluate("TechKGLineage.views[0].visibleTechniques()") == 45 - 10
    page.fill(".tkg-search input", "GRPO")
    assert page.locator(".tkg-result").count() == 0
    chip.click()
    assert page.evaluate("TechKGLineage.views[0].visibleTechniques()") == 45


def test_a_hostile_name_is_shown_as_text_and_runs_nothing(hostile_store, page: Any, tmp_path: Path) -> None:
    lineage = build_lineage(hostile_store, LineageOptions(with_papers=True))
    html = render_page(lineage)
    assert "<script>alert" not in html
    open_page(page, html, tmp_path)
    page.fill(".tkg-search input", "注意力")
    assert page.locator(".tkg-result-name").first.inner_text() == HOSTILE
    page.keyboard.press("Enter")
    assert page.locator(".tkg-card-title").inner_text() == HOSTILE
    assert page.evaluate("document.querySelectorAll('script').length") == 4  # data, cytoscape, page, mount
    assert page.events["dialogs"] == [] and page.events["errors"] == []


def test_page_parts_are_reusable_by_another_page(built_store) -> None:
    parts = page_parts(build_lineage(built_store, LineageOptions(root="KDA")))
    assert parts.data["counts"]["techniques"] == 4 and parts.data["cards"]
    assert any("TechKGLineage" in code for code in parts.scripts) and ".tkg-app" in parts.css
    assert "<" not in script_json({"x": "</script><!--"})
