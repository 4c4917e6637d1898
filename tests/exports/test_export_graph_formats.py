"""GraphML, GEXF and Cytoscape.js JSON, read back by networkx and igraph, and the
contract every registered lineage format keeps."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import networkx as nx
import pytest

from exports import LINEAGE_FORMATS, format_for_path, lineage_format, render_lineage
from exports.lineage import Lineage, LineageOptions, build_lineage
from kg.errors import ExportError


@pytest.fixture
def lineage(private_store) -> Lineage:
    return build_lineage(private_store, LineageOptions(with_papers=True, with_repositories=True,
                                                       include_private=True))


def _same_edges(read: nx.MultiDiGraph, lineage: Lineage) -> None:
    def triples(g: nx.MultiDiGraph) -> list[tuple[str, str, str, str]]:
        return sorted((u, v, d["relation"], d["kind"]) for u, v, d in g.edges(data=True))

    assert triples(read) == triples(lineage.graph)


def test_graphml_reads_back_in_networkx_with_the_same_typed_attributes(lineage: Lineage, tmp_path: Path) -> None:
    path = tmp_path / "lineage.graphml"
    path.write_bytes(render_lineage(lineage, "graphml"))
    read = nx.read_graphml(path, force_multigraph=True)
    assert set(read.nodes) == set(lineage.graph.nodes)
    for node, data in lineage.graph.nodes(data=True):
        assert read.nodes[node] == data
    _same_edges(read, lineage)
    for u, v, data in read.edges(data=True):
        original = lineage.graph.edges[u, v, data["relation"]]
        assert {name: value for name, value in data.items() if name != "id"} == original
    gdn = read.nodes["https://w3id.org/techkg/id/technique/gated-deltanet"]
    assert isinstance(gdn["on_page"], bool) and isinstance(gdn["papers"], int)
    assert read.graph["private"] is True


def test_graphml_opens_in_igraph(lineage: Lineage, tmp_path: Path) -> None:
    import igraph

    path = tmp_path / "lineage.graphml"
    path.write_bytes(render_lineage(lineage, "graphml"))
    g = igraph.Graph.Read_GraphML(str(path))
    assert (g.vcount(), g.ecount()) == (lineage.graph.number_of_nodes(), lineage.graph.number_of_edges())
    kda = g.vs.find(name="Kimi Delta Attention")
    assert kda["category"] == "attention" and kda["kind"] == "technique"
    relations = {e["relation"] for e in g.es}
    assert {"refines", "combines", "introduces", "code"} <= relations


GRAPHOLOGY = Path(__file__).resolve().parents[2] / "node_modules" / "graphology-graphml"
_READ_WITH_GRAPHOLOGY = """
const {MultiGraph} = require('graphology');
const graphml = require('graphology-graphml');
const g = graphml.parse(MultiGraph, require('fs').readFileSync(process.argv[1], 'utf8'));
const relations = {};
g.forEachEdge((edge, a) => { relations[a.relation] = (relations[a.relation] || 0) + 1; });
console.log(JSON.stringify({nodes: g.order, edges: g.size, relations}));
"""


def test_graphml_edges_have_ids_of_their_own_and_graphology_reads_it(lineage: Lineage, tmp_path: Path) -> None:
    import collections
    import shutil
    import subprocess

    path = tmp_path / "lineage.graphml"
    path.write_bytes(render_lineage(lineage, "graphml"))
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    root = ET.parse(path).getroot()
    edge_ids = [e.get("id") for e in root.iter("{http://graphml.graphdrawing.org/xmlns}edge")]
    key_ids = [k.get("id") for k in root.findall("g:key", ns)]
    assert len(edge_ids) == len(set(edge_ids)) == lineage.graph.number_of_edges()
    assert len(key_ids) == len(set(key_ids))  # a node and an edge attribute may share a name, not an id
    relation = next(k.get("id") for k in root.findall("g:key", ns)
                    if k.get("attr.name") == "relation" and k.get("for") == "edge")
    assert all(e.find(f"g:data[@key='{relation}']", ns) is not None
               for e in root.iter("{http://graphml.graphdrawing.org/xmlns}edge"))
    if not GRAPHOLOGY.exists() or shutil.which("node") is None:
        pytest.skip("run npm install (scripts/setup does) for graphology")
    run = subprocess.run(["node", "-e", _READ_WITH_GRAPHOLOGY, str(path)], capture_output=True, text=True,
                         cwd=GRAPHOLOGY.parents[1], timeout=60)
    assert run.returncode == 0, run.stderr
    read = json.loads(run.stdout)
    expected = collections.Counter(key for *_, key in lineage.graph.edges(keys=True))
    assert (read["nodes"], read["edges"]) == (lineage.graph.number_of_nodes(), lineage.graph.number_of_edges())
    assert read["relations"] == dict(expected)


def test_gexf_reads_back_in_networkx_with_labels_attributes_and_colours(lineage: Lineage, tmp_path: Path) -> None:
    path = tmp_path / "lineage.gexf"
    path.write_bytes(render_lineage(lineage, "gexf"))
    read = nx.read_gexf(path)
    assert set(read.nodes) == set(lineage.graph.nodes)
    for node, data in lineage.graph.nodes(data=True):
        got = {k: v for k, v in read.nodes[node].items() if k != "viz"}
        assert got == data
    pairs = sorted((u, v, d["relation"]) for u, v, d in read.edges(data=True))
    assert pairs == sorted((u, v, d["relation"]) for u, v, d in lineage.graph.edges(data=True))
    colours = {read.nodes[n]["viz"]["color"]["r"] for n in read if read.nodes[n]["kind"] == "technique"}
    assert len(colours) >= 8  # coloured by category
    root = ET.parse(path).getroot()
    assert root.tag == "{http://gexf.net/1.3}gexf" and root.get("version") == "1.3"


def test_cytoscape_json_reads_back_in_networkx_and_keeps_categories_as_parents(lineage: Lineage) -> None:
    doc = json.loads(render_lineage(lineage, "cytoscape"))
    read = nx.cytoscape_graph(doc)
    nodes = {n for n, d in read.nodes(data=True) if d["kind"] != "category"}
    assert nodes == set(lineage.graph.nodes)
    categories = [d for _, d in read.nodes(data=True) if d["kind"] == "category"]
    assert len(categories) == 9
    kda = read.nodes["https://w3id.org/techkg/id/technique/kda"]
    assert kda["parent"] == "category:attention" and kda["name"] == "Kimi Delta Attention"
    _same_edges(read, lineage)
    assert doc["style"] and doc["layout"]["name"] in {"preset", "cose"}
    if doc["layout"]["name"] == "preset":
        assert all("position" in n for n in doc["elements"]["nodes"] if n["data"]["kind"] != "category")


@pytest.mark.parametrize("name", sorted(LINEAGE_FORMATS))
def test_every_registered_format_renders_a_root_lineage(built_store, name: str) -> None:
    lineage = build_lineage(built_store, LineageOptions(root="MLA"))
    data = render_lineage(lineage, name)
    spec = lineage_format(name)
    assert data
    if spec.binary:
        assert data.startswith(b"\x89PNG")
    else:
        text = data.decode("utf-8")
        assert text.endswith("\n")
        assert "DeepSeek Sparse Attention" in text or "deepseek" in text.lower()


def test_the_format_follows_the_file_name_or_is_refused_with_the_choices() -> None:
    assert format_for_path("docs/lineage.svg").name == "svg"
    assert format_for_path("x.GRAPHML").name == "graphml"
    with pytest.raises(ExportError) as error:
        format_for_path("lineage.xyz")
    assert "--format" in error.value.hint
    with pytest.raises(ExportError):
        lineage_format("visio")
