"""`kg query` and the rest of `kg` on a remote store, through the real console script."""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pyoxigraph as ox

RESULTS = "http://www.w3.org/2005/sparql-results#"


def test_query_list_shows_every_named_query_with_its_description(kg_cli) -> None:
    out = kg_cli("query", "--list", check=True).stdout
    for name in ("ancestors", "compare-techniques", "stale-repositories", "reading-progress"):
        assert name in out
    listing = json.loads(kg_cli("query", "--list", "-f", "json", check=True).stdout)
    assert len(listing) >= 15 and all(q["description"] for q in listing)
    compare = next(q for q in listing if q["name"] == "compare-techniques")
    assert compare["params"][0]["type"] == "technique[]" and compare["params"][0]["required"]
    shown = kg_cli("query", "stale-repositories", "--show", check=True).stdout
    assert "--param months" in shown and "monthsSincePush" in shown


def test_query_runs_with_params_in_every_results_format(kg_cli, built_store_path: Path) -> None:
    table = kg_cli("query", "ancestors", "--param", "technique=KDA", store=built_store_path, check=True).stdout
    assert "Gated DeltaNet" in table and "refines" in table and "id:technique/gated-deltanet" in table
    doc = json.loads(kg_cli("query", "ancestors", "-p", "technique=KDA", "-f", "json", store=built_store_path,
                            check=True).stdout)
    assert "ancestor" in doc["head"]["vars"] and len(doc["results"]["bindings"]) == 3
    rows = list(csv.DictReader(io.StringIO(kg_cli("query", "compare-techniques", "-p", "technique=GDN",
                                                  "-p", "technique=KDA,Mamba2", "-f", "csv",
                                                  store=built_store_path, check=True).stdout)))
    assert len(rows) == 42 and {r["name"] for r in rows} == {"Gated DeltaNet", "Kimi Delta Attention", "Mamba2"}
    tsv = kg_cli("query", "reading-progress", "-f", "tsv", store=built_store_path, check=True).stdout
    assert tsv.splitlines()[0].startswith("?category\t?papers")
    xml = kg_cli("query", "descendants", "-p", "technique=MQA", "-f", "xml", store=built_store_path, check=True).stdout
    literals = {e.text for e in ET.fromstring(xml).iter(f"{{{RESULTS}}}literal")}
    assert {"Grouped-Query Attention", "Multi-Head Latent Attention"} <= literals  # MQA → GQA → MLA


def test_construct_queries_give_turtle_or_json_ld(kg_cli, built_store_path: Path) -> None:
    ttl = kg_cli("query", "lineage-subgraph", "-p", "technique=KDA", store=built_store_path, check=True).stdout
    triples = list(ox.parse(ttl.encode(), format=ox.RdfFormat.TURTLE))
    assert any(t.predicate.value.endswith("#refines") for t in triples)
    jsonld = kg_cli("query", "lineage-subgraph", "-p", "technique=KDA", "-f", "jsonld", store=built_store_path,
                    check=True).stdout
    assert len(list(ox.parse(jsonld.encode(), format=ox.RdfFormat.JSON_LD))) == len(triples)
    wrong = kg_cli("query", "lineage-subgraph", "-p", "technique=KDA", "-f", "csv", store=built_store_path)
    assert wrong.returncode == 1 and "turtle" in wrong.stderr


def test_bad_parameters_name_the_parameter_and_its_type(kg_cli, built_store_path: Path) -> None:
    missing = kg_cli("query", "ancestors", store=built_store_path)
    assert missing.returncode == 1 and "'technique'" in missing.stderr and "technique name" in missing.stderr
    typed = kg_cli("query", "stale-repositories", "-p", "months=half", "-f", "json", store=built_store_path)
    error = json.loads(typed.stdout)
    assert typed.returncode == 1 and error["type"] == "ParameterError" and "integer" in error["error"]
    shape = kg_cli("query", "ancestors", "-p", "technique", store=built_store_path)
    assert shape.returncode == 1 and "NAME=VALUE" in shape.stderr
    unknown = kg_cli("query", "ancestorz", store=built_store_path)
    assert unknown.returncode == 1 and "ancestors" in unknown.stderr and "Traceback" not in unknown.stderr


def test_build_queries_and_imports_run_unchanged_on_a_remote_store(kg_cli, oxigraph, tmp_path: Path) -> None:
    remote = oxigraph.spec
    built = json.loads(kg_cli("--store", remote, "build", "--format", "json", check=True).stdout)
    assert built["techniques"] == 39 and built["violations"] == [] and built["store"] == f"{oxigraph.base}/query"
    again = json.loads(kg_cli("build", "--format", "json", "--no-validate", store=remote, check=True).stdout)
    assert again["changed_graphs"] == [] and again["triples"] == built["triples"]
    lineage = json.loads(kg_cli("lineage", "MQA", "-f", "json", "--direction", "down", store=remote, check=True).stdout)
    assert [c["name"] for c in lineage["descendants"]] == ["Grouped-Query Attention"]
    rows = json.loads(kg_cli("query", "reading-progress", "-f", "json", store=remote, check=True).stdout)
    assert sum(int(b["papers"]["value"]) for b in rows["results"]["bindings"]) == 53
    assert "to-read → read" in kg_cli("reading", "set", "GPipe", "read", store=remote, check=True).stdout
    dump = tmp_path / "extract.nt.gz"
    import gzip

    with gzip.open(dump, "wt", encoding="utf-8") as fh:
        fh.write("".join(f'<http://example.org/s{i}> <http://example.org/p> "{i}" .\n' for i in range(500)))
    loaded = json.loads(kg_cli("import", "rdf", str(dump), "--graph", "extract", "--json", store=remote,
                               check=True).stdout)
    assert loaded["triples"] == 500
    stats = json.loads(kg_cli("stats", "-f", "json", store=remote, check=True).stdout)
    assert {"import/extract", "catalog", "reading"} <= {g["graph"] for g in stats["graphs"]}


def test_an_unreachable_remote_store_fails_with_a_hint(kg_cli) -> None:
    from tests.servers import free_port

    port = free_port()
    out = kg_cli("stats", store=f"http://127.0.0.1:{port}/query")
    assert out.returncode == 1 and "cannot reach the SPARQL endpoint" in out.stderr
    assert "hint:" in out.stderr and "Traceback" not in out.stderr


def test_a_construct_query_as_turtle_writes_no_escaped_slash(kg_cli, built_store_path) -> None:  # type: ignore[no-untyped-def]
    import pyoxigraph as ox

    out = kg_cli("query", "lineage-subgraph", "-p", "technique=KDA", "-f", "turtle", store=built_store_path,
                 check=True).stdout
    assert "\\/" not in out and "technique:kda " in out and "tkg:refines technique:gated-deltanet" in out
    assert len(list(ox.parse(out.encode(), format=ox.RdfFormat.TURTLE))) > 5
