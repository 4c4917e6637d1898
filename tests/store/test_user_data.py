"""The user's data is safe: each way it could be lost (issue #13's list, in its order)
as a test, run through the real ``kg`` command on a real store."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from kg.build import default_reading_list
from tests.store.lists import my_list, titles


def _json(kg_cli, *args: str, store: Path) -> object:
    return json.loads(kg_cli(*args, "-f", "json", store=store, check=True).stdout)


def _graphs(kg_cli, store: Path) -> dict[str, int]:
    return {g["graph"]: g["triples"] for g in _json(kg_cli, "graph", "list", store=store)}  # type: ignore[union-attr]


# 1. kg import rdf replaced the reading state or the catalog without a word


def test_import_rdf_refuses_techkgs_own_graphs_and_points_to_an_import_graph(
    kg_cli, built_store_path: Path, tmp_path: Path
) -> None:
    dump = tmp_path / "x.nt"
    dump.write_text('<http://example.org/a> <http://example.org/p> "1" .\n', encoding="utf-8")
    before = _graphs(kg_cli, built_store_path)
    for name in ("reading", "catalog", "reading-list", "provenance", "zotero-sync",
                 "https://w3id.org/techkg/graph/reading"):
        out = kg_cli("import", "rdf", str(dump), "--graph", name, store=built_store_path)
        assert out.returncode == 1, name
        assert "never replaces it" in out.stderr and "--graph import/" in out.stderr
    assert _graphs(kg_cli, built_store_path) == before
    loaded = json.loads(kg_cli("import", "rdf", str(dump), "--graph", "import/reading", "--json",
                               store=built_store_path, check=True).stdout)
    assert loaded["graph"].endswith("/graph/import/reading")
    assert _graphs(kg_cli, built_store_path)["reading"] == before["reading"]


def test_graph_list_shows_owners_and_drop_asks_and_keeps_package_graphs(
    kg_cli, built_store_path: Path, tmp_path: Path
) -> None:
    dump = tmp_path / "orkg.nt"
    dump.write_text('<http://example.org/a> <http://example.org/p> "1" .\n', encoding="utf-8")
    kg_cli("import", "rdf", str(dump), store=built_store_path, check=True)
    rows = {r["graph"]: r for r in _json(kg_cli, "graph", "list", store=built_store_path)}  # type: ignore[union-attr]
    assert {g: rows[g]["kind"] for g in ("catalog", "ontology", "reading", "reading-list", "import/orkg")} == {
        "catalog": "package", "ontology": "package", "reading": "user", "reading-list": "user",
        "import/orkg": "source"}
    assert rows["catalog"]["source"].count(".toml") >= 5 and "reading-list" not in rows["catalog"]["source"]
    asked = kg_cli("graph", "drop", "import/orkg", store=built_store_path, input="")
    assert asked.returncode == 1 and "--yes" in asked.stderr and "import/orkg" in _graphs(kg_cli, built_store_path)
    assert kg_cli("graph", "drop", "catalog", "--yes", store=built_store_path).returncode == 1
    assert kg_cli("graph", "drop", "provenance", "--yes", store=built_store_path).returncode == 1
    dropped = _json(kg_cli, "graph", "drop", "orkg", "--yes", store=built_store_path)
    assert dropped["graph"] == "import/orkg" and dropped["triples"] == 1  # type: ignore[index]
    assert "import/orkg" not in _graphs(kg_cli, built_store_path)
    # dropping your own graph asks too, and keeps a snapshot that kg undo puts back
    reading = _graphs(kg_cli, built_store_path)["reading"]
    mine = _json(kg_cli, "graph", "drop", "reading", "--yes", store=built_store_path)
    assert mine["snapshot"] and "reading" not in _graphs(kg_cli, built_store_path)  # type: ignore[index]
    kg_cli("undo", store=built_store_path, check=True)
    assert _graphs(kg_cli, built_store_path)["reading"] == reading


# 2. a truncated reading list replaced the user's


def test_a_truncated_reading_list_is_refused_and_nothing_is_written(kg_cli, built_store_path: Path,
                                                                    tmp_path: Path) -> None:
    truncated = tmp_path / "t.md"
    truncated.write_text("\n".join(default_reading_list().read_text(encoding="utf-8").splitlines()[:40]) + "\n",
                         encoding="utf-8")
    before = _graphs(kg_cli, built_store_path)
    out = kg_cli("import", "reading-list", str(truncated), store=built_store_path)
    assert out.returncode == 1
    assert "header states 53 entries, 8 read, 45 to read" in " ".join(out.stderr.split())
    assert "Nothing was written" in out.stderr and "--accept-counts" in out.stderr
    assert _graphs(kg_cli, built_store_path) == before
    assert len(_json(kg_cli, "reading", "list", store=built_store_path)) == 53  # type: ignore[arg-type]
    # on purpose, it is imported: the list is what the file says, and nothing stale stays
    report = _json(kg_cli, "import", "reading-list", str(truncated), "--accept-counts", store=built_store_path)
    assert report["entries"] == len(titles(truncated)) and len(report["removed"]) > 0  # type: ignore[index]
    assert len(_json(kg_cli, "reading", "list", store=built_store_path)) == report["papers"]  # type: ignore[index]


# 3. kg build went back to the bundled list


def test_build_keeps_the_users_list_its_statuses_and_categories(kg_cli, built_store_path: Path,
                                                                tmp_path: Path) -> None:
    mine = my_list(tmp_path / "my.md", read=13, drop=2,
                   rename=("LLM Training / RL Training", "My RL reading"))
    kg_cli("import", "reading-list", str(mine), store=built_store_path, check=True)

    def state() -> tuple[int, int, set[str]]:
        rows = _json(kg_cli, "reading", "list", store=built_store_path)
        read = _json(kg_cli, "reading", "list", "--status", "read", store=built_store_path)
        categories = {c for r in rows for c in r["categories"]}  # type: ignore[union-attr]
        return len(rows), len(read), categories  # type: ignore[arg-type]

    imported = state()
    assert imported[0] == len(titles(mine)) == 51  # no stale rows from the bundled list
    assert imported[1] == 13 and "My RL reading" in imported[2] and "LLM Training / RL Training" not in imported[2]
    kg_cli("build", store=built_store_path, check=True)
    kg_cli("build", "--force", store=built_store_path, check=True)
    assert state() == imported
    # kg build -r replaces it on purpose (the bundled list again), and kg undo brings mine back
    kg_cli("build", "-r", str(default_reading_list()), store=built_store_path, check=True)
    assert state()[:2] == (53, 8)
    kg_cli("undo", store=built_store_path, check=True)
    assert state() == imported


def test_replacing_the_list_keeps_statuses_and_notes_of_papers_that_stay(kg_cli, built_store_path: Path,
                                                                         tmp_path: Path) -> None:
    kg_cli("reading", "set", "GPipe", "reading", store=built_store_path, check=True)
    mine = my_list(tmp_path / "my.md", read=8, drop=2)
    kg_cli("import", "reading-list", str(mine), store=built_store_path, check=True)
    rows = {r["title"]: r for r in _json(kg_cli, "reading", "list", store=built_store_path)}  # type: ignore[union-attr]
    gpipe = next(r for t, r in rows.items() if t.startswith("GPipe"))
    assert gpipe["status"] == "reading"
    assert sum(bool(r["has_note"]) for r in rows.values()) >= 5


# 4. statuses were not validated


def test_a_status_typo_an_empty_status_and_an_unknown_paper_are_refused(kg_cli, built_store_path: Path) -> None:
    before = _graphs(kg_cli, built_store_path)
    typo = kg_cli("reading", "set", "GPipe", "REED", store=built_store_path)
    assert typo.returncode == 1 and "did you mean read?" in typo.stderr and "--custom" in typo.stderr
    empty = kg_cli("reading", "set", "GPipe", "", store=built_store_path)
    assert empty.returncode == 1 and "cannot be empty" in empty.stderr
    unknown = kg_cli("reading", "set", "9999.99999", "read", store=built_store_path)
    assert unknown.returncode == 1 and "--add" in unknown.stderr
    assert _graphs(kg_cli, built_store_path) == before
    assert kg_cli("reading", "set", "GPipe", "In Progress", store=built_store_path, check=True)
    custom = _json(kg_cli, "reading", "set", "GPipe", "On hold", "--custom", store=built_store_path)
    assert custom["status"] == "on-hold"  # type: ignore[index]
    added = _json(kg_cli, "reading", "set", "9999.99999", "read", "--add", store=built_store_path)
    assert added["added"] is True  # type: ignore[index]
    assert kg_cli("validate", store=built_store_path).returncode == 0
    papers = _json(kg_cli, "sparql", "SELECT ?p WHERE { ?p tkg:needsMetadata true ; tkg:arxivId \"9999.99999\" }",
                   store=built_store_path)
    assert len(papers["results"]["bindings"]) == 1  # type: ignore[index]


def test_validate_flags_a_blank_status_and_a_paper_the_graph_does_not_hold(built_store) -> None:
    from kg.graphs import READING
    from kg.validate import validate_store

    # what the old kg reading set stored for '' and for 9999.99999
    built_store.update(f"""INSERT DATA {{ GRAPH {READING} {{
        <https://w3id.org/techkg/id/status/x-da39a3ee5e> a tkg:ReadingStatus ; skos:prefLabel "" .
        <https://arxiv.org/abs/9999.99999> tkg:readingStatus <https://w3id.org/techkg/id/status/read> . }} }}""")
    focus = {v.focus for v in validate_store(built_store)}
    assert {"https://w3id.org/techkg/id/status/x-da39a3ee5e", "https://arxiv.org/abs/9999.99999"} <= focus


# 5. a whole export imported into a fresh store did not build


def test_a_whole_export_imported_into_a_fresh_store_builds_and_validates(kg_cli, built_store_path: Path,
                                                                         tmp_path: Path) -> None:
    # a store in everyday use: built by the CLI (kernel registry), the user's own list,
    # statuses and notes, an import graph
    kg_cli("build", store=built_store_path, check=True)
    kg_cli("import", "reading-list", str(my_list(tmp_path / "my.md", read=11, drop=2)), store=built_store_path,
           check=True)
    kg_cli("reading", "set", "GPipe", "On hold", "--custom", store=built_store_path, check=True)
    extra = tmp_path / "extract.nt"
    extra.write_text('<http://example.org/a> <http://example.org/p> "1" .\n', encoding="utf-8")
    kg_cli("import", "rdf", str(extra), store=built_store_path, check=True)
    export = tmp_path / "all.nq"
    kg_cli("export", "rdf", "--format", "nquads", "-o", str(export), store=built_store_path, check=True)
    fresh = tmp_path / "fresh"
    loaded = json.loads(kg_cli("import", "rdf", str(export), "--json", store=fresh, check=True).stdout)
    assert loaded["skipped_provenance"] > 0
    built = kg_cli("build", store=fresh)
    assert built.returncode == 0, built.stdout + built.stderr
    validated = kg_cli("validate", store=fresh)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    # the export is a source now, in an import graph; the user's own graphs come back with kg restore
    assert "import/all" in _graphs(kg_cli, fresh)


def test_violations_in_an_import_are_blamed_on_the_import_not_the_catalog(kg_cli, built_store_path: Path,
                                                                          tmp_path: Path) -> None:
    dump = tmp_path / "extract.nt"
    dump.write_text('<https://w3id.org/techkg/id/technique/kda> <http://purl.org/dc/terms/date> "2019"'
                    '^^<http://www.w3.org/2001/XMLSchema#gYear> .\n', encoding="utf-8")
    kg_cli("import", "rdf", str(dump), store=built_store_path, check=True)
    out = kg_cli("validate", store=built_store_path)
    assert out.returncode == 1
    hint = " ".join(out.stderr.split())
    assert "import/extract" in hint and "kg graph drop" in hint and "catalog files" in hint


# 8. a build with nothing changed redid everything


def test_a_build_with_nothing_changed_writes_nothing(kg_cli, built_store_path: Path) -> None:
    first = _json(kg_cli, "build", store=built_store_path)
    view = (built_store_path / "readers" / "CURRENT").read_text()
    again = _json(kg_cli, "build", store=built_store_path)
    assert again["up_to_date"] is True and again["violations"] == []  # type: ignore[index]
    assert again["triples"] == first["triples"]  # type: ignore[index]
    assert (built_store_path / "readers" / "CURRENT").read_text() == view  # not even a writer was opened


# 9. wrong facts


def test_stats_counts_lineage_edges_not_children(kg_cli, built_store_path: Path) -> None:
    counts = _json(kg_cli, "stats", store=built_store_path)["counts"]  # type: ignore[index]
    edges = _json(kg_cli, "sparql", "SELECT (COUNT(?d) AS ?n) WHERE { ?d a prov:Derivation }",
                  store=built_store_path)["results"]["bindings"][0]["n"]["value"]  # type: ignore[index]
    children = _json(kg_cli, "sparql", "SELECT (COUNT(DISTINCT ?c) AS ?n) WHERE { ?c prov:wasDerivedFrom ?p }",
                     store=built_store_path)["results"]["bindings"][0]["n"]["value"]  # type: ignore[index]
    assert counts["lineage_edges"] == int(edges) > int(children)  # techniques with two parents count twice


def test_provenance_cites_the_catalog_file_that_defines_the_technique(kg_cli, built_store_path: Path) -> None:
    rows = _json(kg_cli, "provenance", "KDA", store=built_store_path)
    files = {s.rsplit("/", 1)[-1] for r in rows for s in r["source"]}  # type: ignore[index]
    assert files == {"attention.toml", "lineage.toml"}  # lineage facts come from lineage.toml


def test_one_kernel_state_vocabulary_in_cli_web_and_analytics(kg_cli, built_store_path: Path) -> None:
    from kg.server.web.models import technique_cards
    from kg.store.embedded import OxigraphStore
    from kg.wording import KernelState

    states = {str(s) for s in KernelState}
    kg_cli("build", "--force", store=built_store_path, check=True)  # records the kernel registry too
    card = _json(kg_cli, "show", "KDA", store=built_store_path)
    listed = {r["technique"]: r["status"] for r in _json(kg_cli, "kernels", "list", store=built_store_path)}  # type: ignore[union-attr]
    compared = _json(kg_cli, "compare", "KDA", "GDN", store=built_store_path)
    kernel_row = next(values for label, values in compared["rows"] if label == "Reference kernel")  # type: ignore[index]
    with OxigraphStore.open_reader(built_store_path) as store:
        web = {c["id"]: c["kernel"] for c in technique_cards(store)}
    assert card["kernel"] == listed["kda"] == web["kda"] == kernel_row[0] == "not run"  # type: ignore[index]
    assert set(listed.values()) | set(web.values()) | set(kernel_row) <= states
    assert listed["ascend-c"] == web["ascend-c"] == "none"


def test_one_reading_summary_in_the_cli_and_on_web_cards(kg_cli, built_store_path: Path) -> None:
    from kg.server.web.models import technique_cards
    from kg.store.embedded import OxigraphStore

    compared = _json(kg_cli, "compare", "KDA", "GDN", "Muon", store=built_store_path)
    reading = dict(zip(compared["columns"], next(v for label, v in compared["rows"] if label == "Reading"),  # type: ignore[index]
                       strict=True))
    with OxigraphStore.open_reader(built_store_path) as store:
        badges = {c["name"]: c["readingBadge"] for c in technique_cards(store)}
    assert reading and all(badges[name] == text for name, text in reading.items())
    assert "no paper on the reading list" in reading.values() or any(" of " in t for t in reading.values())


def test_analytics_authors_are_people_and_teams_by_name(kg_cli, built_store_path: Path) -> None:
    out = json.loads(kg_cli("analytics", "authors", "--json", "--top", "100", store=built_store_path,
                            check=True).stdout)
    authors = out["authors"]
    assert authors and not any(a["author"].startswith(("http://", "https://")) for a in authors)
    assert {a["kind"] for a in authors} <= {"person", "team", "organisation"}


# 1b. a file that names graphs (N-Quads, TriG, JSON-LD, N3 formulas) never writes into them

PLANTED = "urn:planted:"


def _naming_every_graph(syntax: str, graphs: list[str]) -> bytes:
    """A file in ``syntax`` that puts one planted statement in each of ``graphs`` (as far as
    the syntax can name a graph: N3 quotes it in a formula, the others state plain triples)."""
    import pyoxigraph as ox

    from kg.cli.importing import rdf_format

    fmt, _ = rdf_format(Path("x"), syntax)
    assert isinstance(fmt, ox.RdfFormat)
    p = ox.NamedNode(PLANTED + "p")
    statements = [(ox.NamedNode(f"{PLANTED}{i}"), ox.Literal(g), ox.NamedNode(g)) for i, g in enumerate(graphs)]
    if syntax == "n3":
        return "\n".join(f'{{ {s} {p} {o} }} {p} {g} .' for s, o, g in statements).encode()
    if fmt.supports_datasets:
        return ox.serialize([ox.Quad(s, p, o, g) for s, o, g in statements], format=fmt) or b""
    return ox.serialize([ox.Triple(s, p, o) for s, o, _g in statements], format=fmt) or b""


def _contents(store, graphs: list[str]) -> dict[str, set[str]]:  # type: ignore[no-untyped-def]
    import pyoxigraph as ox

    return {g: {str(t) for t in store.triples(ox.NamedNode(g))} for g in graphs}


def _planted_anywhere_but(store, target: str) -> list[str]:  # type: ignore[no-untyped-def]
    rows = store.select(f"SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{ ?s ?p ?o FILTER(STRSTARTS(STR(?s), '{PLANTED}') "
                        f"|| STRSTARTS(STR(?p), '{PLANTED}')) }} }}").rows
    return sorted(str(r["g"]) for r in rows if r["g"].value != target and "/import/planted-" not in r["g"].value)


@pytest.mark.parametrize("backend", ["embedded", "remote"])
def test_every_syntax_folds_whatever_graphs_it_names_into_the_import_graph(
        backend: str, built_store_path: Path, tmp_path: Path) -> None:
    """Every syntax kg import rdf reads, against every graph TechKG owns (kg.graphs.OWNERS,
    so a new user graph is covered as it is added) and another import graph: a first load
    and a replacement both put every statement in the import graph and nothing elsewhere."""
    import pyoxigraph as ox

    from kg.cli.importing import SYNTAXES, rdf_format
    from kg.graphs import IMPORT_PREFIX, OWNERS, PROVENANCE
    from kg.store.base import Activity
    from kg.store.embedded import OxigraphStore
    from kg.store.remote import RemoteStore
    from tests.servers import oxigraph_server

    protected = [g.value for g in OWNERS] + [IMPORT_PREFIX + "someone-else"]
    with contextlib.ExitStack() as stack:
        if backend == "embedded":
            store = stack.enter_context(OxigraphStore(built_store_path))
        else:
            server = stack.enter_context(oxigraph_server())
            store = stack.enter_context(RemoteStore.from_spec(server.spec))
        others = [g for g in protected if ox.NamedNode(g) != PROVENANCE]
        before = _contents(store, others)
        for syntax in SYNTAXES:
            target = ox.NamedNode(IMPORT_PREFIX + "planted-" + syntax)
            for round_ in ("first load", "replacement"):
                graphs = protected if round_ == "first load" else protected[::-1][:-1]
                path = tmp_path / f"{syntax}-{round_.replace(' ', '-')}.data"
                path.write_bytes(_naming_every_graph(syntax, graphs))
                fmt, _ = rdf_format(path, syntax)
                store.load_file(path, graph=target, fmt=fmt, gzipped=False,  # type: ignore[arg-type]
                                activity=Activity("kg import rdf"))
                where = (syntax, round_)
                assert _planted_anywhere_but(store, target.value) == [], where
                assert _contents(store, others) == before, where
                assert {str(r["o"].value) for r in store.select(
                    f"SELECT ?o WHERE {{ GRAPH {target} {{ ?s <{PLANTED}p> ?o FILTER(isLiteral(?o)) }} }}"
                ).rows} == set(graphs) - ({PROVENANCE.value} if fmt.supports_datasets else set()), where
                assert set(store.named_graphs()) - {ox.NamedNode(g) for g in protected} - {PROVENANCE} == {
                    ox.NamedNode(IMPORT_PREFIX + "planted-" + s) for s in SYNTAXES[:SYNTAXES.index(syntax) + 1]}, where


def test_a_graph_name_with_a_space_is_a_message_not_a_traceback(kg_cli, built_store_path: Path) -> None:
    out = kg_cli("graph", "drop", "reading ", "--yes", store=built_store_path)
    said = " ".join(out.stderr.split())
    assert out.returncode == 1 and "is not a graph name" in said and "Did you mean 'reading'?" in said
    assert "Traceback" not in out.stderr and "reading" in _graphs(kg_cli, built_store_path)
