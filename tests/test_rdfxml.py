"""RDF/XML imports refuse entity bombs before pyoxigraph expands them: nested entities,
parameter and external entities, external DTDs; the flat namespace entities ontology
editors write still import."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyoxigraph as ox
import pytest

from kg import rdfxml

GRAPH = "https://w3id.org/techkg/graph/import/bomb"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"


def _bomb(levels: int, width: int = 10) -> str:
    """The "billion laughs": each entity is ``width`` copies of the one before."""
    decls = ['<!ENTITY lol0 "lol">']
    decls += [f'<!ENTITY lol{i} "{"".join(f"&lol{i - 1};" for _ in range(width))}">' for i in range(1, levels + 1)]
    return (f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n  {chr(10).join(decls)}\n]>\n'
            f'<rdf:RDF xmlns:rdf="{RDF}" xmlns:ex="http://example.org/">\n'
            f'  <rdf:Description rdf:about="http://example.org/a"><ex:p>&lol{levels};</ex:p></rdf:Description>\n'
            '</rdf:RDF>\n')


def _count(kg_cli, store: Path) -> int:  # type: ignore[no-untyped-def]
    query = f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{GRAPH}> {{ ?s ?p ?o }} }}"
    out = json.loads(kg_cli("sparql", query, "-f", "json", store=store, check=True).stdout)
    return int(out["results"]["bindings"][0]["n"]["value"])


def test_an_rdfxml_entity_bomb_is_refused_by_kg_import_and_nothing_is_loaded(
        kg_cli, built_store_path: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bomb = tmp_path / "bomb.rdf"
    bomb.write_text(_bomb(8), encoding="utf-8")  # ~1 KB that pyoxigraph would make 300 MB of text
    assert bomb.stat().st_size < 1500
    started = time.monotonic()
    result = kg_cli("import", "rdf", str(bomb), "--graph", "bomb", store=built_store_path)
    assert result.returncode == 1, result.stdout
    assert "refusing the RDF/XML" in result.stderr and "refers to other entities" in result.stderr
    assert "bomb.rdf" in result.stderr
    assert time.monotonic() - started < 60
    assert _count(kg_cli, built_store_path) == 0


@pytest.mark.parametrize(("doctype", "why"), [
    ('<!DOCTYPE rdf:RDF [ <!ENTITY x SYSTEM "file:///etc/passwd"> ]>', "external entity"),
    ('<!DOCTYPE rdf:RDF SYSTEM "http://127.0.0.1:9/evil.dtd">', "external DTD"),
    ('<!DOCTYPE rdf:RDF [ <!ENTITY % p "<!ENTITY x \'y\'>"> %p; ]>', "parameter entity"),
    ('<!DOCTYPE rdf:RDF [ <!ENTITY big "' + "x" * 5000 + '"> ]>', "5,000 characters"),
])
def test_entities_that_read_files_or_grow_are_refused(doctype: str, why: str) -> None:
    doc = (f'<?xml version="1.0"?>\n{doctype}\n<rdf:RDF xmlns:rdf="{RDF}" xmlns:ex="http://example.org/">'
           '<rdf:Description rdf:about="http://example.org/a"><ex:p>v</ex:p></rdf:Description></rdf:RDF>')
    with pytest.raises(rdfxml.RDFXMLRefused, match=why):
        list(rdfxml.parse(doc.encode(), ox.RdfFormat.RDF_XML, source="doc.rdf"))


def test_many_flat_entities_used_many_times_stop_at_the_expansion_cap() -> None:
    entity = "y" * 4000
    doc = (f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [ <!ENTITY e "{entity}"> ]>\n'
           f'<rdf:RDF xmlns:rdf="{RDF}" xmlns:ex="http://example.org/"><rdf:Description rdf:about="http://example.org/a">'
           + "<ex:p>&e;</ex:p>" * 5000 + "</rdf:Description></rdf:RDF>")  # 20 MB of text from ~80 KB
    with pytest.raises(rdfxml.RDFXMLRefused, match="expand to more than"):
        list(rdfxml.parse(doc.encode(), ox.RdfFormat.RDF_XML))


def test_the_namespace_entities_ontology_editors_write_still_import(
        kg_cli, built_store_path: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    onto = tmp_path / "onto.rdf"
    onto.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n  <!ENTITY ex "http://example.org/">\n'
        '  <!ENTITY owl "http://www.w3.org/2002/07/owl#">\n]>\n'
        f'<rdf:RDF xmlns:rdf="{RDF}" xmlns:ex="&ex;">\n'
        '  <rdf:Description rdf:about="&ex;a"><rdf:type rdf:resource="&owl;Class"/><ex:p>one</ex:p>'
        '</rdf:Description>\n</rdf:RDF>\n', encoding="utf-8")
    kg_cli("import", "rdf", str(onto), "--graph", "bomb", store=built_store_path, check=True)
    assert _count(kg_cli, built_store_path) == 2
    query = f"ASK {{ GRAPH <{GRAPH}> {{ <http://example.org/a> a <http://www.w3.org/2002/07/owl#Class> }} }}"
    assert json.loads(kg_cli("sparql", query, "-f", "json", store=built_store_path, check=True).stdout)["boolean"]


def test_an_unknown_xml_encoding_is_a_message_not_a_traceback(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    odd = tmp_path / "odd.rdf"
    odd.write_text('<?xml version="1.0" encoding="x-unknown-42"?>\n<rdf:RDF '
                   'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/>\n', encoding="utf-8")
    out = kg_cli("import", "rdf", str(odd), "--graph", "odd", store=built_store_path)
    said = " ".join(out.stderr.split())
    assert out.returncode == 1 and "x-unknown-42" in said and "not a known encoding" in said
    assert "Traceback" not in out.stderr
