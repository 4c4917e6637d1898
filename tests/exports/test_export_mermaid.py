"""Mermaid text, rendered by Mermaid's own library in headless Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from exports.lineage import LineageOptions, build_lineage
from exports.mermaid import label, render_mermaid
from tests.exports.conftest import HOSTILE, ROOT

MERMAID = ROOT / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not MERMAID.exists(), reason="run npm install (scripts/setup does) for mermaid")]

RENDER = """async (text) => {
  window.__injected = false;
  mermaid.initialize({startOnLoad: false, securityLevel: "strict", maxTextSize: 2000000});
  try {
    const {svg} = await mermaid.render("lineage", text);
    document.getElementById("out").innerHTML = svg;
  } catch (error) { return {ok: false, error: String(error)}; }
  const out = document.getElementById("out");
  return {ok: true, nodes: out.querySelectorAll("g.node").length,
          clusters: out.querySelectorAll("g.cluster").length,
          edgeLabels: [...out.querySelectorAll(".edgeLabel")].map(e => e.textContent.trim()).filter(Boolean),
          labels: [...out.querySelectorAll("g.node")].map(n => n.textContent),
          scripts: out.querySelectorAll("script").length, injected: window.__injected};
}"""


def render_in_browser(page: Any, text: str) -> dict[str, Any]:
    page.set_content("<!doctype html><meta charset='utf-8'><div id='out'></div>")
    page.add_script_tag(path=str(MERMAID))
    result: dict[str, Any] = page.evaluate(RENDER, text)
    return result


def test_full_lineage_renders_with_mermaid(built_store, page: Any, tmp_path: Path) -> None:
    text = render_mermaid(build_lineage(built_store))
    result = render_in_browser(page, text)
    assert result["ok"], result.get("error")
    assert result["nodes"] == 45 and result["clusters"] == 9
    assert {"refines", "combines", "inverts"} <= set(result["edgeLabels"])
    assert any(lbl.startswith("Gated DeltaNet") for lbl in result["labels"])
    page.locator("#out svg").screenshot(path=str(tmp_path / "mermaid.png"))
    assert page.events["errors"] == []


def test_papers_and_repositories_render_with_mermaid(built_store, page: Any) -> None:
    lineage = build_lineage(built_store, LineageOptions(root="GDN", with_papers=True, with_repositories=True))
    result = render_in_browser(page, render_mermaid(lineage))
    assert result["ok"], result.get("error")
    assert result["nodes"] == lineage.graph.number_of_nodes()


def test_a_hostile_name_shows_verbatim_and_injects_nothing(hostile_store, page: Any) -> None:
    text = render_mermaid(build_lineage(hostile_store, LineageOptions(root="KDA")))
    assert "<script>" not in text
    result = render_in_browser(page, text)
    assert result["ok"], result.get("error")
    assert result["scripts"] == 0 and result["injected"] is False and page.events["dialogs"] == []
    assert any(HOSTILE in lbl for lbl in result["labels"]), result["labels"]


def test_labels_escape_mermaid_syntax() -> None:
    escaped = label('a "b" <c> #d; {e} [f] |g|')
    assert not set('"<>{}[]|') & set(escaped)
    assert escaped.startswith("a #quot;b#quot; #lt;c#gt; #35;d;")


def test_the_architecture_map_in_the_docs_renders_with_mermaid(page: Any) -> None:
    """docs/architecture.md's picture (rendered on the repository page) is valid Mermaid."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    (picture,) = [block.split("```", 1)[0] for block in text.split("```mermaid\n")[1:]]
    result = render_in_browser(page, picture)
    assert result["ok"], result.get("error")
    assert result["clusters"] == 3 and result["nodes"] >= 12
    assert any("kg/answer.py" in lbl for lbl in result["labels"])
