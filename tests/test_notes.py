"""kg reading note through the real kg command: write, edit (in $EDITOR too), show, delete
(asking first), undo; kg reading list shows a note shortened in a table, whole in JSON and CSV."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path
from typing import Any

LONG = ("GPipe splits the model into stages and the batch into micro-batches; the bubble is (p-1)/(m+p-1) of "
        "the time, so more micro-batches shrink it, and activations are recomputed in the backward pass.")


def _json(kg_cli: Any, *args: str, store: Path) -> Any:
    return json.loads(kg_cli(*args, "-f", "json", store=store, check=True).stdout)


def _listed(kg_cli: Any, store: Path, title: str) -> dict[str, Any]:
    return next(r for r in _json(kg_cli, "reading", "list", store=store) if r["title"].startswith(title))


def test_a_note_is_written_shown_listed_edited_and_deleted(kg_cli, built_store_path: Path, tmp_path: Path) -> None:
    store = built_store_path
    added = _json(kg_cli, "reading", "note", "GPipe", LONG + "\n\nSecond <thought> & more.", store=store)
    assert added["action"] == "added" and added["paper"] == "https://arxiv.org/abs/1811.06965"
    shown = _json(kg_cli, "reading", "note", "1811.06965", "--show", store=store)["notes"]
    assert [n["text"] for n in shown] == [LONG + "\nSecond <thought> & more."]
    # the reading list: whole in JSON and CSV, shortened in the table
    assert _listed(kg_cli, store, "GPipe")["note"] == LONG + "\nSecond <thought> & more."
    rows = list(csv.DictReader(io.StringIO(kg_cli("reading", "list", "-f", "csv", store=store, check=True).stdout)))
    assert next(r for r in rows if r["title"].startswith("GPipe"))["note"] == LONG + "\nSecond <thought> & more."
    table = kg_cli("reading", "list", "--category", "Distributed", store=store, env={"COLUMNS": "400"},
                   check=True).stdout
    assert "GPipe splits the model into stages and the…" in table and "recomputed" not in table
    # --edit with the new text, then in $EDITOR
    edited = _json(kg_cli, "reading", "note", "GPipe", "Bubble: (p-1)/(m+p-1).", "--edit", store=store)
    assert edited["action"] == "edited" and edited["text"] == "Bubble: (p-1)/(m+p-1)."
    editor = tmp_path / "editor.py"
    editor.write_text("import pathlib, sys\np = pathlib.Path(sys.argv[1])\n"
                      "p.write_text(p.read_text().strip() + ' Fewer with more micro-batches.\\n')\n", encoding="utf-8")
    out = kg_cli("reading", "note", "GPipe", "--edit", store=store, env={"EDITOR": f"{sys.executable} {editor}"})
    assert out.returncode == 0, out.stderr
    assert _listed(kg_cli, store, "GPipe")["note"] == "Bubble: (p-1)/(m+p-1). Fewer with more micro-batches."
    no_editor = kg_cli("reading", "note", "GPipe", "--edit", store=store, env={"EDITOR": "", "VISUAL": ""})
    assert no_editor.returncode == 1 and "$EDITOR" in no_editor.stderr
    # --delete asks first; kg undo brings it back
    asked = kg_cli("reading", "note", "GPipe", "--delete", store=store, input="")
    assert asked.returncode == 1 and "Not without confirmation" in asked.stderr
    kg_cli("reading", "note", "GPipe", "--delete", "--yes", store=store, check=True)
    assert _json(kg_cli, "reading", "note", "GPipe", "--show", store=store)["notes"] == []
    assert _listed(kg_cli, store, "GPipe")["note"] is None
    kg_cli("undo", store=store, check=True)
    assert _listed(kg_cli, store, "GPipe")["note"] == "Bubble: (p-1)/(m+p-1). Fewer with more micro-batches."


def test_notes_are_timestamped_events_of_the_reading_graph(kg_cli, built_store_path: Path) -> None:
    store = built_store_path
    kg_cli("reading", "note", "GPipe", "first", store=store, check=True)
    kg_cli("reading", "note", "GPipe", "second", "--edit", store=store, check=True)
    answer = json.loads(kg_cli("sparql", """SELECT ?action ?text ?via ?at WHERE {
        GRAPH <https://w3id.org/techkg/graph/reading> { ?e a tkg:NoteEvent ; tkg:noteAction ?action ;
        rdf:value ?text ; tkg:via ?via ; prov:atTime ?at } } ORDER BY ?at""", "-f", "json", store=store,
                               check=True).stdout)
    events = [(b["action"]["value"], b["text"]["value"], b["via"]["value"]) for b in answer["results"]["bindings"]]
    assert events == [("added", "<p>first</p>", "cli"), ("edited", "<p>second</p>", "cli")]
    assert kg_cli("validate", store=store).returncode == 0


def test_which_note_when_a_paper_has_several_and_bad_input(kg_cli, built_store_path: Path) -> None:
    store = built_store_path
    kg_cli("reading", "note", "GPipe", "one", store=store, check=True)
    kg_cli("reading", "note", "GPipe", "two", store=store, check=True)
    which = kg_cli("reading", "note", "GPipe", "three", "--edit", store=store)
    assert which.returncode == 1 and "has 2 notes: which one to edit?" in which.stderr and "--number" in which.stderr
    kg_cli("reading", "note", "GPipe", "three", "--edit", "--number", "2", store=store, check=True)
    assert sorted(n["text"] for n in _json(kg_cli, "reading", "note", "GPipe", "--show", store=store)["notes"]) == [
        "three", "two"]
    assert "a note cannot be empty" in kg_cli("reading", "note", "GPipe", "  ", store=store).stderr
    missing = kg_cli("reading", "note", "No such paper at all", "x", store=store)
    assert missing.returncode == 1 and "no paper matches" in missing.stderr
    nothing = kg_cli("reading", "note", "GPipe", store=store)
    assert nothing.returncode == 1 and "write the note's text" in nothing.stderr
