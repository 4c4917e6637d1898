"""BibTeX of the reading list and of a lineage: parsed by bibtexparser, with citation
keys that are assigned once, stored in the graph and never change."""

from __future__ import annotations

import re

import bibtexparser
import pytest
from pyoxigraph import NamedNode

from exports.bibtex import (
    EXPORTS_GRAPH,
    base_key,
    bibliography,
    latex_escape,
    protect_title,
    render_bibtex,
)
from exports.lineage import LineageOptions, build_lineage
from kg.build import build
from kg.graphs import CATALOG, PROVENANCE, graph_iri

GDN_PAPER = "https://arxiv.org/abs/2412.06464"
ZERO_PAPER = "https://arxiv.org/abs/1910.02054"


def parse(text: str) -> list[dict[str, str]]:
    parser = bibtexparser.bparser.BibTexParser(common_strings=True)
    entries: list[dict[str, str]] = bibtexparser.loads(text, parser).entries
    return entries


def test_reading_list_bibliography_parses_with_one_entry_per_paper(built_store) -> None:
    entries = bibliography(built_store)
    parsed = parse(render_bibtex(entries, header="test"))
    listed = built_store.select("SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p tkg:readingCategory ?c }")
    assert len(parsed) == int(listed.rows[0]["n"].value) == len(entries)
    assert len({e["ID"] for e in parsed}) == len(parsed)
    for entry in parsed:
        assert re.fullmatch(r"[a-z0-9]+(\d{4}|nd)[a-z0-9]*", entry["ID"]), entry["ID"]
        assert entry["title"] and entry["ENTRYTYPE"] in {"misc", "techreport", "inproceedings", "article"}
        assert entry.get("year") or entry.get("date") == "XXXX", entry["ID"]


def test_arxiv_papers_carry_eprint_and_eprinttype(built_store) -> None:
    lineage = build_lineage(built_store, LineageOptions(root="GDN", direction="up"))
    papers = [p.iri for t in lineage.techniques() for p in lineage.papers.get(t, [])]
    parsed = {e["ID"]: e for e in parse(render_bibtex(bibliography(built_store, papers=papers)))}
    gdn = parsed["yang2024gated"]
    assert gdn["eprint"] == "2412.06464" and gdn["eprinttype"] == "arxiv"  # Zotero reads eprint only with it
    assert "archiveprefix" not in gdn  # the older name of eprinttype: biber refuses the two together
    assert gdn["url"] == "https://arxiv.org/abs/2412.06464"
    assert gdn["ENTRYTYPE"] == "inproceedings" and gdn["year"] == "2025"  # ICLR 2025, on arXiv in 2024
    assert gdn["author"] == "Songlin Yang and others"
    assert gdn["title"] == "Gated Delta Networks: Improving {Mamba2} with Delta Rule"


def test_papers_added_to_the_list_one_by_one_are_in_the_bibliography(built_store) -> None:
    from kg.reading import add_paper

    add_paper(built_store, NamedNode("https://arxiv.org/abs/2501.00001"), "read")
    add_paper(built_store, NamedNode("https://w3id.org/techkg/id/paper/my-notes"), "to-read", title="My notes")
    on_list = built_store.select("SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p tkg:readingStatus ?s }")
    entries = {e.paper: e for e in bibliography(built_store)}
    assert len(entries) == int(on_list.rows[0]["n"].value) == 55
    untitled = entries["https://arxiv.org/abs/2501.00001"]
    assert untitled.fields["title"] == "{arXiv}:2501.00001" and untitled.fields["eprinttype"] == "arxiv"
    assert untitled.key == "anon2025"  # the year from its arXiv id, not "nd"
    assert entries["https://w3id.org/techkg/id/paper/my-notes"].fields["title"] == "My notes"


def test_an_entry_says_others_only_where_the_author_list_is_unknown(built_store) -> None:
    arxiv = graph_iri("arxiv")
    gdn = NamedNode(GDN_PAPER)
    built_store.update(f"""INSERT DATA {{ GRAPH {arxiv} {{ {gdn} bibo:authorList <urn:x:authors> .
        <urn:x:authors> rdf:_1 <urn:x:a1> ; rdf:_2 <urn:x:a2> ; rdf:_3 <urn:x:a3> .
        <urn:x:a1> foaf:name "Songlin Yang" . <urn:x:a2> foaf:name "Jan Kautz" . <urn:x:a3> foaf:name "Ali Hatamizadeh"
    }} }}""")
    mqa = "https://arxiv.org/abs/1911.02150"
    entries = {e.paper: e.fields for e in bibliography(built_store, papers=[GDN_PAPER, mqa, ZERO_PAPER])}
    assert entries[GDN_PAPER]["author"] == "Songlin Yang and Jan Kautz and Ali Hatamizadeh"  # the whole list
    assert entries[mqa]["author"] == "Noam Shazeer"  # a sole author, as the catalog records
    assert entries[ZERO_PAPER]["author"] == "Samyam Rajbhandari and others"  # only the first author is known


def test_keys_are_stored_once_and_survive_edits_and_rebuilds(built_store) -> None:
    first = {e.paper: e.key for e in bibliography(built_store)}
    stored = built_store.select(f"SELECT ?p ?k WHERE {{ GRAPH {EXPORTS_GRAPH} {{ ?p tkg:citationKey ?k }} }}")
    assert {r["p"].value: r["k"].value for r in stored} == first
    assert built_store.ask(f"ASK {{ GRAPH {PROVENANCE} {{ {EXPORTS_GRAPH} prov:wasGeneratedBy ?a . "
                           f"?a rdfs:label \"kg export bibtex\" }} }}")
    paper = NamedNode(GDN_PAPER)
    built_store.update(f"DELETE WHERE {{ GRAPH {CATALOG} {{ {paper} dcterms:title ?t }} }} ; "
                       f"INSERT DATA {{ GRAPH {CATALOG} {{ {paper} dcterms:title \"Zebra stripes\" }} }}")
    build(built_store, validate=False)  # a rebuild restores the title; keys stay put
    again = {e.paper: e.key for e in bibliography(built_store)}
    assert again == first


def test_a_clashing_key_gets_a_letter_and_old_keys_do_not_move(built_store) -> None:
    lineage = build_lineage(built_store, LineageOptions(root="GDN", direction="up"))
    papers = [p.iri for t in lineage.techniques() for p in lineage.papers.get(t, [])]
    keys = {e.paper: e.key for e in bibliography(built_store, papers=papers)}
    twin = NamedNode("https://example.org/paper/twin")
    built_store.update(f"""INSERT DATA {{ GRAPH {CATALOG} {{
        {twin} a bibo:Document ; dcterms:title "Gated attention for everyone" ; dcterms:issued "2024"^^xsd:gYear ;
          tkg:firstAuthor <https://w3id.org/techkg/id/person/songlin-yang> ;
          tkg:usesTechnique <https://w3id.org/techkg/id/technique/gated-deltanet> }} }}""")
    entries = {e.paper: e.key for e in bibliography(built_store, papers=[*papers, twin.value])}
    assert entries[twin.value] == "yang2024gateda"
    assert {p: entries[p] for p in keys} == keys


def test_reading_status_goes_into_the_bibliography_only_on_request(private_store) -> None:
    public = render_bibtex(bibliography(private_store, papers=[GDN_PAPER]))
    private = render_bibtex(bibliography(private_store, papers=[GDN_PAPER], include_private=True))
    assert "readstatus" not in public and "reading" not in public.lower().replace("reading list", "")
    assert parse(private)[0]["readstatus"] == "reading"


@pytest.mark.parametrize(("kwargs", "key"), [
    ({"author": "Songlin Yang", "team": None, "year": "2024", "title": "Gated Delta Networks"}, "yang2024gated"),
    ({"author": None, "team": "DeepSeek-AI", "year": "2025", "title": "The DeepSeek-V3 report"},
     "deepseekai2025deepseek"),
    ({"author": "Łukasz Kaiser", "team": None, "year": None, "title": "On a model"}, "kaiserndmodel"),
    ({"author": "李明", "team": None, "year": "2023", "title": "注意力"}, "anon2023"),
])
def test_base_keys_follow_author_year_word(kwargs: dict, key: str) -> None:
    assert base_key(**kwargs) == key


def test_latex_specials_are_escaped_and_braces_stay_balanced() -> None:
    escaped = protect_title('A {b} & 100% $x$ #1 a_b ~ ^ \\ DeltaNet')
    assert escaped == (r"A \{b\} \& 100\% \$x\$ \#1 a\_b \textasciitilde{} \textasciicircum{} "
                       r"\textbackslash{} {DeltaNet}")
    assert latex_escape("注意力") == "注意力"
    entry = parse(f"@misc{{k,\n  title = {{{escaped}}},\n}}\n")[0]
    assert entry["title"] == escaped
