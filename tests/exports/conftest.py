"""Fixtures of the export tests: a built store with private reading state planted in it,
a store whose catalog carries a hostile technique name and paper title, and a headless
Chromium for the browser checks."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import opened_copy

#: A name that tries every escaping mistake: markup, quotes, braces, entity-like text,
#: Mermaid/DOT syntax, LaTeX specials, a backslash and non-ASCII including Chinese.
HOSTILE = '<script>alert("x")</script> {b} "q" \'a\' & #35; |p| [s] 注意力 ünï `t` %d ~ \\n'
HOSTILE_TITLE = 'Gated {Delta} & <b>Networks</b> 100% "Mamba2" #1 a_b ~ 注意力'
NOTE_TEXT = "SECRET-NOTE-TEXT only the reader may see"
ROOT = Path(__file__).resolve().parents[2]


def open_store(path: Path) -> Any:
    from kg.store.embedded import OxigraphStore

    return OxigraphStore(path)


@pytest.fixture(scope="session")
def private_store_dir(built_store_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built store plus private state a leak would show: a note with its text, a
    custom status and a status change, written the way the app writes them."""
    from pyoxigraph import Literal, NamedNode, Triple

    from kg.graphs import READING
    from kg.reading import set_status
    from kg.vocab import ID, RDF, SCHEMA, TKG

    path = tmp_path_factory.mktemp("private") / "store"
    shutil.copytree(built_store_dir, path)
    store = open_store(path)
    gdn_paper = NamedNode("https://arxiv.org/abs/2412.06464")
    set_status(store, gdn_paper, "reading", via="cli")
    set_status(store, NamedNode("https://arxiv.org/abs/1706.03762"), "Skimmed twice", via="cli")
    note = ID["note/gdn-1"]
    with store.transaction("plant a note") as tx:
        tx.insert(READING, [Triple(note, RDF.type, TKG.Note), Triple(note, TKG.noteOf, gdn_paper),
                            Triple(note, SCHEMA.text, Literal(NOTE_TEXT))])
    store.close()
    return path


@pytest.fixture
def private_store(private_store_dir: Path, tmp_path: Path) -> Iterator[Any]:
    yield from opened_copy(private_store_dir, tmp_path / "store")


@pytest.fixture(scope="session")
def hostile_store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store built from a copy of the catalog in which Kimi Delta Attention is called
    :data:`HOSTILE` and its paper's title is :data:`HOSTILE_TITLE`."""
    from kg.build import build
    from kg.catalog import data_dir

    base = tmp_path_factory.mktemp("hostile")
    data = base / "data"
    shutil.copytree(data_dir(), data)
    techniques = data / "techniques" / "attention.toml"
    text = techniques.read_text(encoding="utf-8")
    assert text.count('name = "Kimi Delta Attention"') == 1
    techniques.write_text(text.replace('name = "Kimi Delta Attention"',
                                       "name = " + json.dumps(HOSTILE, ensure_ascii=False)), encoding="utf-8")
    papers = data / "papers.toml"
    text = papers.read_text(encoding="utf-8")
    start = text.index('key = "kimi-linear"')
    end = text.index("\n[[paper]]", start)
    entry = "\n".join(
        "title = " + json.dumps(HOSTILE_TITLE, ensure_ascii=False) if line.startswith("title = ") else line
        for line in text[start:end].splitlines())
    papers.write_text(text[:start] + entry + text[end:], encoding="utf-8")
    store = open_store(base / "store")
    build(store, data=data, validate=False)
    store.close()
    return base / "store"


@pytest.fixture
def hostile_store(hostile_store_dir: Path, tmp_path: Path) -> Iterator[Any]:
    yield from opened_copy(hostile_store_dir, tmp_path / "hostile-store")


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    """A fresh page that records console messages, page errors, dialogs and every request
    that leaves the page (there should be none)."""
    context = chromium.new_context(viewport={"width": 1440, "height": 900})
    pg = context.new_page()
    pg.events = {"console": [], "errors": [], "dialogs": [], "requests": []}  # type: ignore[attr-defined]
    pg.on("console", lambda m: pg.events["console"].append(f"{m.type}: {m.text}"))
    pg.on("pageerror", lambda e: pg.events["errors"].append(str(e)))

    def on_dialog(dialog: Any) -> None:
        pg.events["dialogs"].append(dialog.message)
        dialog.dismiss()

    pg.on("dialog", on_dialog)
    pg.on("request", lambda r: pg.events["requests"].append(r.url)
          if not r.url.startswith(("file:", "data:", "about:")) else None)
    yield pg
    context.close()
