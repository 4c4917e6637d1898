"""The result layer gives one answer on every store: typed literals in canonical form and
the parts of a GROUP_CONCAT in one order (kg/results.py)."""

from __future__ import annotations

import pyoxigraph as ox
import pytest

from kg.results import canonical_term, concatenated, ordered_cells
from kg.vocab import XSD


@pytest.mark.parametrize(("datatype", "text", "canonical"), [
    ("boolean", "1", "true"), ("boolean", "0", "false"), ("boolean", "true", "true"),
    ("decimal", "0.0", "0"), ("decimal", "1.50", "1.5"), ("decimal", "-2.000", "-2"), ("decimal", "0.25", "0.25"),
    ("integer", "007", "7"), ("integer", "+3", "3"), ("double", "1.0E0", "1.0E0"), ("string", "0.0", "0.0"),
    ("decimal", "not a number", "not a number"),
])
def test_typed_literals_read_in_their_canonical_form(datatype: str, text: str, canonical: str) -> None:
    term = canonical_term(ox.Literal(text, datatype=XSD[datatype]))
    assert isinstance(term, ox.Literal) and term.value == canonical and term.datatype == XSD[datatype]


def test_the_parts_of_a_group_concat_come_in_one_order() -> None:
    query = """SELECT ?t (GROUP_CONCAT(DISTINCT ?a; separator=", ") AS ?aliases)
                 (GROUP_CONCAT(?v; SEPARATOR="\\n") AS ?venues) (GROUP_CONCAT(?x) AS ?plain)
                 (CONCAT("x", GROUP_CONCAT(?y)) AS ?wrapped) WHERE { ?t ?p ?a } GROUP BY ?t"""
    assert concatenated(query) == {"aliases": ", ", "venues": "\n", "plain": " "}
    order = ordered_cells(query)
    assert order is not None
    row = order({"t": ox.NamedNode("urn:x:t"), "aliases": ox.Literal("NVIDIA, MIT CSAIL"),
                 "venues": ox.Literal("b\na", language="en"), "plain": ox.Literal("z y"),
                 "wrapped": ox.Literal("xz y")})
    assert row["aliases"] == ox.Literal("MIT CSAIL, NVIDIA") and row["venues"] == ox.Literal("a\nb", language="en")
    assert row["plain"] == ox.Literal("y z") and row["wrapped"] == ox.Literal("xz y")  # not a plain concatenation
    assert ordered_cells("SELECT ?t WHERE { ?t ?p ?o }") is None


def test_every_store_gives_a_group_concat_in_one_order(fresh_store) -> None:
    fresh_store.update("""INSERT DATA { GRAPH <urn:x:g> { <urn:x:t> <urn:x:alias> "Zeta", "alpha", "Mu" } }""")
    rows = fresh_store.select("SELECT (GROUP_CONCAT(?a; separator=', ') AS ?all) WHERE { ?t <urn:x:alias> ?a }")
    assert rows.rows[0]["all"] == ox.Literal("Mu, Zeta, alpha")
    streamed = fresh_store.stream("SELECT (GROUP_CONCAT(?a; separator=', ') AS ?all) WHERE { ?t <urn:x:alias> ?a }")
    assert list(streamed.rows) == [(ox.Literal("Mu, Zeta, alpha"),)]
