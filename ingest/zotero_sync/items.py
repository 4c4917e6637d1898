"""How a paper becomes a Zotero item and back: its item type, the graph classes of an item
type, creators, dates and arXiv ids.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pyoxigraph import NamedNode

from kg.iris import parse_arxiv_id
from kg.vocab import (
    BIBO,
    FABIO,
)

__all__ = ["arxiv_iri", "creator", "item_classes", "item_date", "zotero_item_type"]


# -- item types ----------------------------------------------------------------------------

_JOURNAL = re.compile(r"(?i)\b(journal|transactions|jmlr|vldb|letters|review|magazine)\b")


def zotero_item_type(info: Mapping[str, Any]) -> str:
    types = info.get("types", set())
    venue = str(info.get("venue") or "")
    if BIBO.Report in types:
        return "report"
    if FABIO.BlogPost in types:
        return "blogPost"
    if BIBO.Webpage in types:
        return "webpage"
    if venue and not re.search(r"(?i)arxiv|preprint", venue):
        return "journalArticle" if _JOURNAL.search(venue) else "conferencePaper"
    if info.get("arxiv") or FABIO.Preprint in types or re.search(r"(?i)arxiv|preprint", venue):
        return "preprint"
    return "journalArticle" if BIBO.AcademicArticle in types else "document"


def item_classes(item_type: str) -> list[NamedNode]:
    return {"preprint": [BIBO.AcademicArticle, FABIO.Preprint], "journalArticle": [BIBO.AcademicArticle],
            "conferencePaper": [BIBO.AcademicArticle], "report": [BIBO.Report], "blogPost": [FABIO.BlogPost],
            "webpage": [BIBO.Webpage], "computerProgram": [BIBO.Webpage]}.get(item_type, [])


def creator(name: str, group: bool, item_type: str) -> dict[str, str]:
    role = "programmer" if item_type == "computerProgram" else "author"
    if group or " " not in name.strip():
        return {"creatorType": role, "name": name}
    first, _, last = name.strip().rpartition(" ")
    return {"creatorType": role, "firstName": first, "lastName": last}


def item_date(value: str) -> str | None:
    m = re.match(r"^\s*(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?\s*$", value or "")
    if not m:
        m2 = re.search(r"\b(\d{4})\b", value or "")
        return m2.group(1) if m2 else None
    return "-".join(p for p in m.groups() if p)


def arxiv_iri(value: str) -> NamedNode | None:
    try:
        return parse_arxiv_id(value).iri
    except ValueError:
        return None
