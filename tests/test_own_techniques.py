"""Techniques of the reader's own, and their facts on the catalog's, through the real ``kg``
command on a store of its own: every view shows them, every refusal names the problem and
the fix and writes nothing, kg validate agrees, kg undo takes a change back, kg build keeps
them, and the TOML export reads back the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def _json(kg_cli: Any, *args: str, store: Path) -> Any:
    return json.loads(kg_cli(*args, "-f", "json", store=store, check=True).stdout)


def _mine(kg_cli: Any, store: Path) -> int:
    graphs = {g["graph"]: g["triples"] for g in _json(kg_cli, "graph", "list", store=store)}
    return int(graphs.get("my-techniques", 0))


def _gpipe(kg_cli: Any, store: Path) -> None:
    kg_cli("technique", "add", "GPipe", "--new-category", "Pipeline parallelism", "--paper", "1811.06965",
           "--date", "2018", "--alias", "Pipeline parallelism (GPipe)", "--repo", "tensorflow/lingvo",
           "--set", "core_mechanism=Micro-batches flow through the stages; activations are recomputed",
           "--set", "S=Models too large for one accelerator", "--summary", "Synchronous pipeline parallelism.",
           store=store, check=True)


def test_a_technique_of_your_own_shows_in_every_view(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    store = built_store_path
    _gpipe(kg_cli, store)
    added = _json(kg_cli, "technique", "add", "PipeDream", "--category", "pipeline parallelism", "--paper",
                  "PipeDream: Generalized Pipeline Parallelism for DNN Training", "--parent", "GPipe:extends",
                  store=store)
    assert added["action"] == "added" and added["own"] is True and added["parents"] == ["GPipe (extends)"]
    card = _json(kg_cli, "show", "gpipe", store=store)
    assert card["name"] == "GPipe" and card["categoryLabel"] == "Pipeline parallelism" and card["mine"] is True
    assert card["date"] == "2018" and card["arxivId"] == "1811.06965"
    assert card["repository"] == "https://github.com/tensorflow/lingvo"
    assert ["Core mechanism", "Micro-batches flow through the stages; activations are recomputed"] in card["dimensions"]
    assert ["PipeDream", "extends", "added"] in card["children"]  # how the edge is known: added by you
    shown = kg_cli("show", "GPipe", store=store, check=True).stdout
    assert "Yours: you added it" in shown
    # Found by its alias, like any technique.
    assert _json(kg_cli, "show", "Pipeline parallelism (GPipe)", store=store)["id"] == "gpipe"
    # compare: "not recorded" only where a dimension was left empty
    rows = dict((label, values) for label, values in _json(kg_cli, "compare", "GPipe", "PipeDream",
                                                          store=store)["rows"])
    assert rows["Core mechanism"] == ["Micro-batches flow through the stages; activations are recomputed",
                                      "not recorded"]
    assert rows["S · Situation"] == ["Models too large for one accelerator", "not recorded"]
    assert rows["Lineage between them"] == ["—", "extends GPipe (added by you)"]
    lineage = _json(kg_cli, "lineage", "pipedream", store=store)
    assert lineage["ancestors"][0]["name"] == "GPipe" and lineage["ancestors"][0]["basis"] == "added"
    assert "added by you" in kg_cli("lineage", "pipedream", store=store, check=True).stdout
    listed = _json(kg_cli, "technique", "list", "--mine", store=store)
    assert [(r["id"], r["yours"]) for r in listed] == [("gpipe", "added"), ("pipedream", "added")]
    from kg.catalog import load_catalog

    assert len(_json(kg_cli, "technique", "list", store=store)) == len(load_catalog().techniques) + 2  # and yours
    # the exports mark them as yours
    graphml = tmp_path / "l.graphml"
    kg_cli("export", "lineage", "-o", str(graphml), store=store, check=True)
    import networkx as nx

    graph = nx.read_graphml(graphml)
    gpipe = graph.nodes["https://w3id.org/techkg/id/technique/gpipe"]
    assert gpipe["mine"] is True and graph.nodes["https://w3id.org/techkg/id/technique/gated-deltanet"]["mine"] is False
    mermaid = tmp_path / "l.mmd"
    kg_cli("export", "lineage", "-o", str(mermaid), store=store, check=True)
    assert '["GPipe (yours)"]' in mermaid.read_text(encoding="utf-8")
    nquads = tmp_path / "all.nq"
    kg_cli("export", "rdf", "--format", "nquads", "-o", str(nquads), store=store, check=True)
    assert ("<https://w3id.org/techkg/id/technique/gpipe> <https://w3id.org/techkg/ns#addedBy> "
            "<https://w3id.org/techkg/ns#reader> <https://w3id.org/techkg/graph/my-techniques>") in nquads.read_text()
    # the reading-list paper shows under it, and kg validate agrees with what was written
    papers = {p["title"]: p["status"] for p in _json(kg_cli, "show", "pipedream", store=store)["papers"]}
    assert papers == {"PipeDream: Generalized Pipeline Parallelism for DNN Training": "to-read"}
    assert kg_cli("validate", store=store).returncode == 0


@pytest.mark.parametrize(("args", "message", "hint"), [
    (["--category", "distributd"], "no category is called 'distributd'", "Did you mean distributed?"),
    (["--category", "distributed", "--parent", "Gated DeltNet:extends"], "no technique is called 'Gated DeltNet'",
     "Did you mean: Gated DeltaNet"),
    (["--category", "distributed", "--parent", "GDN:extend"], "'extend' is not a lineage relation: did you mean "
     "extends?", "refines, generalizes"),
    (["--category", "distributed", "--alias", "GDN"], "the alias 'GDN' is already used by Gated DeltaNet "
     "(gated-deltanet)", "--force"),
    (["--category", "distributed", "--paper", "1811.0696"], "'1811.0696' is not a well-formed arXiv id",
     "five digits"),
    (["--category", "distributed", "--paper", "arXiv:abc"], "'arXiv:abc' is not a well-formed arXiv id", ""),
    (["--category", "distributed", "--paper", "10.1145"], "'10.1145' is not a well-formed DOI", "10."),
    (["--category", "distributed", "--date", "2019-13"], "the date '2019-13' is not a date", "the month (2019-06)"),
    (["--category", "distributed", "--set", "core_mechansm=x"], "'core_mechansm' is not a dimension",
     "Did you mean core_mechanism?"),
    (["--category", "distributed", "--repo", "not a repo"], "is not a repository", "owner/name"),
    ([], "Zero Bubble needs a category", "--new-category"),
])
def test_bad_input_is_refused_with_the_fix_and_writes_nothing(kg_cli, built_store_path: Path, args: list[str],
                                                              message: str, hint: str) -> None:
    out = kg_cli("technique", "add", "Zero Bubble", *args, store=built_store_path)
    assert out.returncode == 1, out.stdout
    assert message in out.stderr and hint in out.stderr, out.stderr
    assert _mine(kg_cli, built_store_path) == 0
    assert "Traceback" not in out.stderr


def test_a_lineage_loop_is_refused_showing_the_loop(kg_cli, built_store_path: Path) -> None:
    store = built_store_path
    _gpipe(kg_cli, store)
    kg_cli("technique", "add", "PipeDream", "--category", "pipeline-parallelism", "--parent", "GPipe:extends",
           store=store, check=True)
    kg_cli("technique", "add", "PipeDream-2BW", "--category", "pipeline-parallelism", "--parent",
           "PipeDream:refines", store=store, check=True)
    before = _mine(kg_cli, store)
    out = kg_cli("technique", "edit", "GPipe", "--parent", "PipeDream-2BW:derivesFrom", store=store)
    assert out.returncode == 1
    assert "would close a loop in the lineage: GPipe → PipeDream-2BW → PipeDream → GPipe" in out.stderr
    assert "--drop-parent" in out.stderr and _mine(kg_cli, store) == before
    # A catalog technique cannot be put under a descendant of its own either.
    out = kg_cli("technique", "edit", "Gated DeltaNet", "--parent", "KDA:extends", store=store)
    assert out.returncode == 1 and "Gated DeltaNet → Kimi Delta Attention → Gated DeltaNet" in out.stderr


def test_a_forced_alias_is_kept_and_kg_validate_accepts_it(kg_cli, built_store_path: Path) -> None:
    store = built_store_path
    out = kg_cli("technique", "add", "Zero Bubble", "--category", "distributed", "--alias", "ZeRO", "--force",
                 store=store)
    assert out.returncode == 0, out.stderr
    assert "alias 'ZeRO' is also used by DeepSpeed ZeRO (zero) (--force)" in out.stdout
    assert kg_cli("validate", store=store).returncode == 0


def test_shacl_agrees_with_the_commands(built_store) -> None:
    """What the commands refuse, written around them, is what kg validate reports."""
    from kg.owntech import Change, add_technique
    from kg.validate import validate_store

    add_technique(built_store, Change(name="Zero Bubble", category="distributed", parents=["ZeRO:extends"]))
    assert validate_store(built_store) == []
    mine = "<https://w3id.org/techkg/graph/my-techniques>"
    zb, zero = "<https://w3id.org/techkg/id/technique/zero-bubble>", "<https://w3id.org/techkg/id/technique/zero>"
    built_store.update(f"""INSERT DATA {{ GRAPH {mine} {{ {zb} skos:altLabel "GDN"@en .
                             {zero} prov:wasDerivedFrom {zb} .
                             <https://example.org/p> a bibo:Document ; dcterms:title "x" ; bibo:doi "10.1145" }} }}""")
    messages = {v.message for v in validate_store(built_store, full=True)}
    assert any("is called GDN, which https://w3id.org/techkg/id/technique/gated-deltanet answers to" in m
               for m in messages), messages
    assert any("derives from itself through the lineage" in m for m in messages), messages
    assert "A DOI is written 10.<registrant>/<suffix>, e.g. 10.1145/3503221.3508418." in messages


def test_your_facts_on_a_catalog_technique_win_in_every_view(kg_cli, built_store_path: Path) -> None:
    store = built_store_path
    catalog = _json(kg_cli, "show", "KDA", store=store)
    out = _json(kg_cli, "technique", "edit", "KDA", "--date", "2025-11", "--alias", "Kimi DA", "--set",
                "limitations=A fixed-size state; my own words.", store=store)
    assert out["action"] == "changed" and out["own"] is False
    card = _json(kg_cli, "show", "Kimi DA", store=store)
    assert card["date"] == "2025-11" and card["amended"] is True and card["name"] == catalog["name"]
    assert dict(map(tuple, card["dimensions"]))["Limitations"] == "A fixed-size state; my own words."
    assert dict(map(tuple, card["dimensions"]))["Core mechanism"] == dict(map(tuple, catalog["dimensions"]))[
        "Core mechanism"]
    rows = dict((label, values) for label, values in _json(kg_cli, "compare", "KDA", "GDN", store=store)["rows"])
    assert rows["Limitations"][0] == "A fixed-size state; my own words." and rows["Category · date"][0].endswith(
        "2025-11")
    def rows_of(name: str) -> list[dict[str, str]]:
        answer = _json(kg_cli, "query", name, store=store)
        return [{k: v["value"] for k, v in b.items()} for b in answer["results"]["bindings"]]

    years = {r["year"] for r in rows_of("techniques-by-year") if "Kimi Delta Attention" in r["names"]}
    assert years == {"2025"}
    nodes = {r["id"]: r for r in rows_of("lineage-nodes")}
    assert nodes["kda"]["date"] == "2025-11" and "addedBy" not in nodes["kda"] and nodes["kda"]["summary"]
    # kg provenance shows both dates, each with its graph
    facts = [(r["graph"], str(r["value"])) for r in _json(kg_cli, "provenance", "KDA", store=store)
             if r["property"].endswith("/date")]
    assert sorted(facts) == [("catalog", catalog["date"]), ("my-techniques", "2025-11")]
    assert kg_cli("validate", store=store).returncode == 0
    # a rebuild of the catalog keeps them
    kg_cli("build", "--force", store=store, check=True)
    assert _json(kg_cli, "show", "KDA", store=store)["date"] == "2025-11"
    # an empty value takes yours back
    kg_cli("technique", "edit", "KDA", "--date", "", store=store, check=True)
    assert _json(kg_cli, "show", "KDA", store=store)["date"] == catalog["date"]


def test_remove_asks_first_and_kg_undo_brings_it_back(kg_cli, built_store_path: Path) -> None:
    store = built_store_path
    _gpipe(kg_cli, store)
    kg_cli("technique", "add", "PipeDream", "--category", "pipeline-parallelism", "--parent", "GPipe:extends",
           store=store, check=True)
    kg_cli("follow", "GPipe", store=store, check=True)
    asked = kg_cli("technique", "remove", "GPipe", store=store, input="")
    assert asked.returncode == 1 and "Not without confirmation" in asked.stderr and "--yes" in asked.stderr
    assert _json(kg_cli, "show", "gpipe", store=store)["name"] == "GPipe"
    gone = _json(kg_cli, "technique", "remove", "GPipe", "--yes", store=store)
    assert gone["action"] == "removed"
    assert gone["notes"] == ["PipeDream no longer derives from it", "you no longer follow it"]
    assert kg_cli("show", "gpipe", store=store).returncode == 1
    assert _json(kg_cli, "following", store=store)["techniques"] == []
    kg_cli("undo", store=store, check=True)
    assert _json(kg_cli, "show", "gpipe", store=store)["children"] == [["PipeDream", "extends", "added"]]
    assert [t["id"] for t in _json(kg_cli, "following", store=store)["techniques"]] == ["gpipe"]
    # removing from a catalog technique takes back only your facts
    kg_cli("technique", "edit", "GDN", "--alias", "GDN-2", store=store, check=True)
    kg_cli("technique", "remove", "GDN", "--yes", store=store, check=True)
    card = _json(kg_cli, "show", "GDN", store=store)
    assert "GDN-2" not in card["aliases"] and card["name"] == "Gated DeltaNet"


def test_backup_and_restore_carry_your_techniques_and_follows(kg_cli, built_store_path: Path,
                                                             tmp_path: Path) -> None:
    store = built_store_path
    _gpipe(kg_cli, store)
    kg_cli("follow", "GPipe", "GDN", store=store, check=True)
    backup = tmp_path / "b.nq.gz"
    kg_cli("backup", "-o", str(backup), store=store, check=True)
    fresh = tmp_path / "fresh"
    kg_cli("restore", str(backup), store=fresh, check=True)
    assert _json(kg_cli, "show", "gpipe", store=fresh)["mine"] is True
    assert {t["id"] for t in _json(kg_cli, "following", store=fresh)["techniques"]} == {"gpipe", "gated-deltanet"}


def test_export_and_import_round_trip_and_import_is_idempotent(kg_cli, built_store_path: Path,
                                                                built_store_dir: Path, tmp_path: Path) -> None:
    import shutil
    import tomllib

    store = built_store_path
    _gpipe(kg_cli, store)
    kg_cli("technique", "add", "PipeDream", "--category", "pipeline-parallelism", "--paper",
           "PipeDream: Generalized Pipeline Parallelism", "--parent", "GPipe:extends", store=store, check=True)
    kg_cli("technique", "edit", "KDA", "--date", "2025-11", "--set", "headline=My headline", store=store,
           check=True)
    mine = tmp_path / "mine.toml"
    kg_cli("technique", "export", "-o", str(mine), store=store, check=True)
    data = tomllib.loads(mine.read_text(encoding="utf-8"))
    assert [c["id"] for c in data["category"]] == ["pipeline-parallelism"]
    assert {t["id"] for t in data["technique"]} == {"gpipe", "pipedream", "kda"}
    assert data["edge"] == [{"parent": "gpipe", "child": "pipedream", "relation": "extends", "basis": "stated"}]
    assert kg_cli("technique", "export", "-o", str(mine), store=store).returncode == 1  # no silent overwrite
    # another store: the same techniques, the same cards
    other = tmp_path / "other"
    shutil.copytree(built_store_dir, other)
    report = _json(kg_cli, "technique", "import", str(mine), store=other)
    assert report["techniques"] == {"gpipe": "added", "pipedream": "added", "kda": "added"}
    for name in ("gpipe", "pipedream", "kda"):
        a, b = _json(kg_cli, "show", name, store=store), _json(kg_cli, "show", name, store=other)
        assert {k: v for k, v in a.items() if k != "kernel"} == {k: v for k, v in b.items() if k != "kernel"}
    again = _json(kg_cli, "technique", "import", str(mine), store=other)
    assert (again["added"], again["changed"], again["left_alone"]) == (0, 0, 3) and again["written"] is False
    # a change in the file is a change, and only that technique's
    mine.write_text(mine.read_text(encoding="utf-8").replace('date = "2018"', 'date = "2018-11"'), encoding="utf-8")
    changed = _json(kg_cli, "technique", "import", str(mine), store=other)
    assert changed["techniques"] == {"gpipe": "changed", "pipedream": "left alone", "kda": "left alone"}
    assert _json(kg_cli, "show", "gpipe", store=other)["date"] == "2018-11"
    table = kg_cli("technique", "import", str(mine), store=other, check=True).stdout
    assert "0 added, 0 changed, 3 left alone" in table


def test_a_bad_techniques_file_is_refused_with_its_line(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[[technique]]\nid = "x"\nname = "X"\ncategory = "distributed"\nfirst_author = "Me"\n',
                   encoding="utf-8")
    out = kg_cli("technique", "import", str(bad), store=built_store_path)
    assert out.returncode == 1 and f"{bad}:5" in out.stderr and "first_author" in out.stderr
    bad.write_text('[[technique]]\nid = "x"\nname = "X"\ncategory = "distributed"\n\n[[edge]]\nparent = "nope"\n'
                   'child = "x"\nrelation = "extends"\n', encoding="utf-8")
    out = kg_cli("technique", "import", str(bad), store=built_store_path)
    assert out.returncode == 1 and "no technique is called 'nope'" in out.stderr
    bad.write_text('[[technique]\nid = "x"\n', encoding="utf-8")
    out = kg_cli("technique", "import", str(bad), store=built_store_path)
    assert out.returncode == 1 and "not valid TOML" in out.stderr
    assert _mine(kg_cli, built_store_path) == 0


@pytest.mark.slow
def test_the_own_techniques_notebook_closes_the_reading_lists_gap(built_store_path: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    import nbformat
    from nbclient import NotebookClient

    if shutil.which("dot") is None:
        pytest.skip("Graphviz is not installed")
    notebook = Path(__file__).resolve().parent.parent / "notebooks" / "08-own-techniques.ipynb"
    nb = nbformat.read(notebook, as_version=4)
    monkeypatch.setenv("KG_STORE", str(built_store_path))  # the kernel inherits it
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs)
    assert "Your techniques: 7" in text and "would close a" in text and "Did you mean: PipeDream" in text
    assert "✓ the graph conforms to the SHACL shapes" in text
    [svg] = [o["data"]["image/svg+xml"] for o in outputs if "image/svg+xml" in o.get("data", {})]
    assert "Interleaved 1F1B" in svg and "yours" in svg


def test_exports_keep_follows_and_notes_private_but_not_your_techniques(kg_cli, built_store_path: Path,
                                                                        tmp_path: Path) -> None:
    store = built_store_path
    _gpipe(kg_cli, store)
    kg_cli("follow", "GPipe", store=store, check=True)
    kg_cli("reading", "note", "GPipe", "A private thought", store=store, check=True)
    public, private = tmp_path / "public.nq", tmp_path / "private.nq"
    kg_cli("export", "rdf", "--format", "nquads", "-o", str(public), store=store, check=True)
    kg_cli("export", "rdf", "--format", "nquads", "--include-private", "-o", str(private), store=store, check=True)
    text, everything = public.read_text(encoding="utf-8"), private.read_text(encoding="utf-8")
    follows = "<https://w3id.org/techkg/ns#reader> <https://w3id.org/techkg/ns#follows>"
    assert "graph/my-techniques>" in text and follows not in text and "A private thought" not in text
    assert follows in everything and "A private thought" in everything
