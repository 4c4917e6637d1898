"""The search index's fields (tantivy), and how much each counts in a search.

Text fields are stemmed English (``en_stem``: "routers" finds "routing"); ids, names kept
whole (``raw``) are matched exactly, as filters and facets are. The text of every field a
result shows is stored, so a search answers from the index alone, without the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tantivy

__all__ = ["BOOSTS", "FACETS", "SCHEMA_VERSION", "SEARCHED", "SNIPPET_FIELDS", "build_schema"]

#: Changed whenever the fields change: an index of another version is made again.
SCHEMA_VERSION = "2"
#: Abstracts are most of the text: they are indexed without stemming, which costs a fifth
#: of the index build at 700k papers; titles, TLDRs and notes are stemmed ("routers" finds
#: "routing"), and a prefix (``rout*``) finds every form in any field.
ABSTRACT_TOKENIZER = "default"
#: The fields a plain word is looked for in, and how much a match in each counts.
BOOSTS: dict[str, float] = {"title": 3.0, "alt": 2.0, "ids": 3.0, "abstract": 1.0, "tldr": 1.2, "notes": 1.5,
                            "authors": 1.0}
SEARCHED: tuple[str, ...] = tuple(BOOSTS)
#: Where a result's snippet comes from, in order of preference.
SNIPPET_FIELDS: tuple[str, ...] = ("abstract", "tldr", "notes", "title", "alt")
#: The fields counted per value for a result page's facets.
FACETS: tuple[str, ...] = ("kind", "status", "year", "category", "technique")


def build_schema() -> tantivy.Schema:
    import tantivy

    b = tantivy.SchemaBuilder()
    b.add_text_field("iri", stored=True, tokenizer_name="raw")
    b.add_text_field("kind", stored=True, tokenizer_name="raw", fast=True)
    for name in ("title", "alt", "tldr", "notes"):
        b.add_text_field(name, stored=True, tokenizer_name="en_stem")
    b.add_text_field("abstract", stored=True, tokenizer_name=ABSTRACT_TOKENIZER)
    b.add_text_field("authors", stored=True)
    b.add_text_field("ids", stored=True, tokenizer_name="raw")
    for name in ("status", "technique", "category"):
        b.add_text_field(name, stored=True, tokenizer_name="raw", fast=True)
    b.add_integer_field("year", stored=True, indexed=True, fast=True)
    b.add_integer_field("citations", stored=True, indexed=True, fast=True)
    b.add_boolean_field("mine", stored=True, indexed=True, fast=True)
    b.add_text_field("graphs", stored=True, tokenizer_name="raw")
    # A technique's id, names and aliases folded (kg.search.query.fold): --technique looks it up.
    b.add_text_field("keys", stored=False, tokenizer_name="raw")
    for name in ("date", "venue", "arxiv", "doi"):
        b.add_text_field(name, stored=True, tokenizer_name="raw")
    return b.build()
