"""Zotero libraries for tests, made the way their owners make them (Zotero's arXiv
translator, the zotero-reading-list plugin), written straight into the emulator."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ingest.emulators.zotero import Library
from kg.catalog import data_dir, load_catalog
from kg.readinglist import match_paper, parse_reading_list

PLUGIN_NAMES = {"read": "Read", "to-read": "To Read", "reading": "In Progress", "skipped": "Not Reading"}


def reading_list_items(path: Path | None = None) -> list[tuple[dict[str, Any], str]]:
    """The reading list as Zotero items a plugin user would have: (item, collection name)."""
    reading_list = parse_reading_list(path or data_dir() / "reading-list.md")
    papers = list(load_catalog(data_dir()).papers.values())
    out = []
    for number, entry in enumerate(reading_list.entries):
        paper = match_paper(entry.title, papers)
        stamp = f"2026-0{1 + number % 9}-1{number % 10}T08:00:00.000Z"
        item: dict[str, Any] = {"title": entry.title,
                                "extra": f"Read_Status: {PLUGIN_NAMES[entry.status]}\nRead_Status_Date: {stamp}"}
        if paper is not None and paper.arxiv:
            item.update(itemType="preprint", url=f"http://arxiv.org/abs/{paper.arxiv}v1",
                        archiveID=f"arXiv:{paper.arxiv}", repository="arXiv")
        elif paper is not None and paper.doi:
            item.update(itemType="conferencePaper", DOI=paper.doi)
        else:
            item.update(itemType="journalArticle", publicationTitle=entry.venue)
        if paper is not None and paper.first_author:
            first, _, last = paper.first_author.rpartition(" ")
            item["creators"] = [{"creatorType": "author", "firstName": first, "lastName": last}]
        out.append((item, entry.category))
    return out


def fill_with_reading_list(library: Library, path: Path | None = None) -> dict[str, str]:
    """Put the reading list into ``library``: one collection per category. Returns
    title → item key."""
    collections: dict[str, str] = {}
    keys: dict[str, str] = {}
    for item, category in reading_list_items(path):
        if category not in collections:
            collections[category] = library.create_collection(category)
        [key] = library.create_items([{**item, "collections": [collections[category]]}])
        keys[item["title"]] = key
    return keys
