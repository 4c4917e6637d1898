"""Citations on the web workbench and in the lineage exports."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from ingest.citations import ingest_citations
from kg.suggestions import lineage_report
from tests.web.conftest import form_key, workbench  # noqa: F401 - a fixture


@pytest.fixture
def cited(built_store, source):
    ingest_citations(built_store, source)
    return built_store


def test_the_technique_page_shows_methodology_citations_and_pending_suggestions(cited, workbench) -> None:  # noqa: F811
    suggestion = next(s for s in lineage_report(cited).suggestions if s.child.id == "diffusionnft")
    with workbench(cited) as base, httpx.Client(base_url=base) as client:
        page = client.get("/techniques/grpo").text
        cited_by = page[page.index("Cited by (methodology)"):page.index("Suggested lineage")]
        assert "DiffusionNFT" in cited_by and "DanceGRPO" in cited_by and "influential" in cited_by
        assert "We extend GRPO&#39;s group-relative advantage" in cited_by
        assert f'data-id="{suggestion.id}"' in page and 'value="accept"' in page and 'value="reject"' in page
        assert '<option value="extends" selected>' in page
        plain = client.get("/techniques/muon").text
        assert "The citations suggest no new lineage edge" in plain


def test_accepting_on_the_page_adds_the_edge_as_the_reader_s(cited, workbench) -> None:  # noqa: F811
    suggestion = next(s for s in lineage_report(cited).suggestions if s.child.id == "diffusionnft")
    with workbench(cited) as base, httpx.Client(base_url=base) as client:
        key = form_key(client.get("/techniques/grpo").text)
        form = {"id": suggestion.id, "verdict": "accept", "relation": "refines", "key": key,
                "next": "/techniques/grpo#citations"}
        own = {"Origin": base}  # a browser sends its page's origin with the form
        assert client.post("/suggestions/decide", data={**form, "key": "forged"}, headers=own).status_code == 403
        assert client.post("/suggestions/decide", data=form, headers={"Origin": "https://evil.example"}
                           ).status_code == 403
        assert suggestion.id in {s.id for s in lineage_report(cited).suggestions}  # nothing written yet
        done = client.post("/suggestions/decide", data=form, headers=own)
        assert done.status_code == 303 and done.headers["location"] == "/techniques/grpo#citations"
        page = client.get("/techniques/grpo").text
        descendants = page[page.index("<h2>Descendants</h2>"):page.index('id="citations"')]
        assert "DiffusionNFT" in descendants and "added by you" in descendants and "refines" in descendants
        assert f'data-id="{suggestion.id}"' not in page
        other = next(s for s in lineage_report(cited).suggestions)
        answer = client.post("/suggestions/decide", data={"id": other.id, "verdict": "reject", "key": key},
                             headers={**own, "Accept": "application/json"})
        assert answer.json()["verdict"] == "rejected"
        unknown = client.post("/suggestions/decide", data={"id": "sg-00000000", "verdict": "reject", "key": key},
                              headers=own)
        assert unknown.status_code == 404
    assert lineage_report(cited).suggestions == []


def test_the_lineage_page_draws_suggested_edges_dashed(cited, workbench) -> None:  # noqa: F811
    with workbench(cited) as base, httpx.Client(base_url=base) as client:
        page = client.get("/lineage").text
    data = json.loads(re.search(r'<script[^>]*id="techkg-lineage-data"[^>]*>(.*?)</script>', page, re.S).group(1))
    suggested = [e for e in data["elements"]["edges"] if e["data"]["kind"] == "suggested"]
    assert {(e["data"]["relation"], e["data"]["suggestion"][:3]) for e in suggested} == {("extends", "sg-"),
                                                                                         ("derivesFrom", "sg-")}
    assert all("suggested" in e["classes"] for e in suggested) and data["counts"]["suggested"] == 2
    style = {s["selector"]: s["style"] for s in data["style"]}
    assert style["edge.suggested"]["line-style"] == "dashed"


def test_the_exports_mark_edges_with_their_citation_evidence(cited, kg_cli, tmp_path, built_store) -> None:
    from exports import render_lineage
    from exports.lineage import LineageOptions, build_lineage

    lineage = build_lineage(cited, LineageOptions(with_citations=True))
    edges = {(u.rsplit("/", 1)[-1], v.rsplit("/", 1)[-1], d["kind"]): d for u, v, d in lineage.graph.edges(data=True)}
    assert edges[("gated-deltanet", "kda", "lineage")]["citations"] == "confirmed"
    assert "refines the gating" in edges[("gated-deltanet", "kda", "lineage")]["evidence"]
    assert edges[("zero", "fsdp1", "lineage")]["citations"] == "lacking"
    assert edges[("grpo", "diffusionnft", "suggested")]["relation"] == "extends"
    dot = render_lineage(lineage, "dot").decode()
    assert 'label="suggested extends"' in dot and 'style="dashed", color="#bf8700"' in dot
    mermaid = render_lineage(lineage, "mermaid").decode()
    assert '-.->|"suggested extends"|' in mermaid
    graphml = render_lineage(lineage, "graphml").decode()
    assert 'attr.name="citations"' in graphml and ">confirmed<" in graphml
    plain = build_lineage(cited)
    assert not any(d["kind"] == "suggested" for *_e, d in plain.graph.edges(data=True))


def test_kg_export_lineage_takes_with_citations(kg_cli, emulator, built_store_path, tmp_path) -> None:
    kg_cli("ingest", "citations", "--api-url", emulator.url, "--delay", "0", store=built_store_path, check=True)
    out = tmp_path / "lineage.graphml"
    kg_cli("export", "lineage", "--with-citations", "-o", str(out), store=built_store_path, check=True)
    text = out.read_text()
    assert "suggested" in text and "confirmed" in text
