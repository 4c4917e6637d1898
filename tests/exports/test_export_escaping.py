"""A technique name with markup, quotes, braces, syntax and Chinese survives every export
verbatim, and breaks none of the tools that read them."""

from __future__ import annotations

import json
import shutil
import subprocess
import xml.etree.ElementTree as ET

import bibtexparser
import networkx as nx
import pyoxigraph as ox
import pytest
from pyld import jsonld

from exports import render_lineage
from exports.bibtex import bibliography, protect_title, render_bibtex
from exports.dot import render_dot
from exports.lineage import Lineage, LineageOptions, build_lineage
from exports.rdf import render_rdf
from tests.exports.conftest import HOSTILE, HOSTILE_TITLE

KDA = "https://w3id.org/techkg/id/technique/kda"


@pytest.fixture
def lineage(hostile_store) -> Lineage:
    lineage = build_lineage(hostile_store, LineageOptions(root="KDA", direction="up", with_papers=True))
    assert lineage.graph.nodes[KDA]["name"] == HOSTILE
    return lineage


def test_graphml_and_gexf_keep_the_name_exactly(lineage: Lineage, tmp_path) -> None:
    for fmt, read in (("graphml", nx.read_graphml), ("gexf", nx.read_gexf)):
        path = tmp_path / f"l.{fmt}"
        path.write_bytes(render_lineage(lineage, fmt))
        ET.parse(path)  # well-formed XML
        assert read(path).nodes[KDA]["name"] == HOSTILE


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_dot_renders_the_name_without_warnings(lineage: Lineage, fmt: str) -> None:
    proc = subprocess.run(["dot", f"-T{fmt}"], input=render_dot(lineage).encode(), capture_output=True, check=False)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr.decode()
    if fmt == "svg":
        texts = [t.text for t in ET.fromstring(proc.stdout).iter("{http://www.w3.org/2000/svg}text")]
        assert HOSTILE in texts


def test_cytoscape_json_keeps_the_name_exactly(lineage: Lineage) -> None:
    doc = json.loads(render_lineage(lineage, "cytoscape"))
    node = next(n for n in doc["elements"]["nodes"] if n["data"]["id"] == KDA)
    assert node["data"]["name"] == HOSTILE


def test_html_page_carries_the_name_only_as_escaped_data(lineage: Lineage) -> None:
    html = render_lineage(lineage, "html").decode()
    assert "<script>alert" not in html and HOSTILE not in html
    data = html.split('id="techkg-lineage-data">', 1)[1].split("</script>", 1)[0]
    assert json.loads(data)["cards"][KDA]["name"] == HOSTILE


def test_rdf_and_jsonld_keep_the_name_exactly(lineage: Lineage, hostile_store) -> None:
    name = ox.Literal(HOSTILE, language="en")
    turtle = set(ox.parse(render_rdf(hostile_store, "turtle", graph="catalog"), format=ox.RdfFormat.TURTLE))
    assert any(t.object == name for t in turtle)
    nquads = jsonld.to_rdf(json.loads(render_lineage(lineage, "jsonld")), {"format": "application/n-quads"})
    assert any(q.object == name for q in ox.parse(nquads.encode(), format=ox.RdfFormat.N_QUADS))


def test_bibtex_escapes_the_title_and_still_parses(hostile_store) -> None:
    lineage = build_lineage(hostile_store, LineageOptions(root="KDA", direction="up"))
    papers = [p.iri for p in lineage.papers[KDA]]
    text = render_bibtex(bibliography(hostile_store, papers=papers), header=f"lineage of {HOSTILE} @misc{{x,")
    entries = bibtexparser.loads(text).entries
    assert len(entries) == len(papers)
    assert entries[0]["title"] == protect_title(HOSTILE_TITLE)
    assert r"\{Delta\}" in entries[0]["title"] and r"100\%" in entries[0]["title"]
