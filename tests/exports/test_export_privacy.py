"""Reading status and notes stay out of every export unless --include-private is given."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from exports import LINEAGE_FORMATS, render_lineage
from exports.bibtex import bibliography, render_bibtex
from exports.lineage import LineageOptions, build_lineage
from exports.privacy import PRIVATE_IRI_PREFIXES, PRIVATE_PREDICATES
from exports.rdf import render_rdf
from kg.graphs import READING
from kg.vocab import TKG
from tests.exports.conftest import NOTE_TEXT

#: Text that only private state would put into an export.
LEAKS = ("/id/status/", "readingStatus", "reading_read", "reading_to_read", "hasNote", NOTE_TEXT,
         "Skimmed twice", "readstatus", '"status"')
TEXT_FORMATS = sorted(name for name, spec in LINEAGE_FORMATS.items() if not spec.binary)


@pytest.mark.parametrize("name", TEXT_FORMATS)
def test_lineage_exports_leave_private_state_out(private_store, name: str) -> None:
    options = LineageOptions(with_papers=True, with_repositories=True)
    text = render_lineage(build_lineage(private_store, options), name).decode("utf-8")
    assert [leak for leak in LEAKS if leak in text] == []


def test_include_private_puts_reading_state_in(private_store) -> None:
    lineage = build_lineage(private_store, LineageOptions(with_papers=True, include_private=True))
    assert "reading_reading" in render_lineage(lineage, "graphml").decode()
    assert '"status":"reading"' in render_lineage(lineage, "html").decode()


@pytest.mark.parametrize(("fmt", "syntax"), [("nquads", ox.RdfFormat.N_QUADS), ("trig", ox.RdfFormat.TRIG),
                                             ("turtle", ox.RdfFormat.TURTLE)])
def test_rdf_exports_hold_no_private_triple(private_store, fmt: str, syntax) -> None:
    data = render_rdf(private_store, fmt)
    statements = list(ox.parse(data, format=syntax))
    assert statements
    for st in statements:
        assert st.predicate not in PRIVATE_PREDICATES, st
        for term in (st.subject, st.object):
            assert not (isinstance(term, ox.NamedNode) and term.value.startswith(PRIVATE_IRI_PREFIXES)), st
        assert not (st.predicate.value.endswith("#type") and st.object in (TKG.Note, TKG.ReadingEvent))
        if isinstance(st, ox.Quad):
            assert st.graph_name != READING
    text = data.decode()
    assert NOTE_TEXT not in text and "Skimmed" not in text
    assert "/id/status/" not in text and "id:status\\/" not in text
    everything = render_rdf(private_store, fmt, include_private=True)
    assert NOTE_TEXT in everything.decode()
    assert any(st.predicate == TKG.readingStatus for st in ox.parse(everything, format=syntax))


def test_jsonld_export_leaves_private_state_out(private_store) -> None:
    text = render_rdf(private_store, "jsonld").decode()
    assert NOTE_TEXT not in text and "/id/status/" not in text and "status/" not in text
    assert '"tkg:readingStatus":' not in text and '"tkg:hasNote":' not in text
    assert '"tkg:readingStatus":' in render_rdf(private_store, "jsonld", include_private=True).decode()


def test_bibliographies_leave_reading_status_out(private_store) -> None:
    text = render_bibtex(bibliography(private_store))
    assert [leak for leak in LEAKS if leak in text] == []
    assert "readstatus" in render_bibtex(bibliography(private_store, include_private=True))
