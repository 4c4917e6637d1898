"""SPARQL errors in words: unknown prefixes, updates sent as queries, syntax errors at their place."""

from __future__ import annotations

import pytest

from kg.errors import QueryError
from kg.sparqlerrors import is_update, syntax_error, undeclared_prefixes


@pytest.mark.parametrize(
    ("text", "unknown"),
    [
        ("SELECT ?x WHERE { ?x foo:bar ?y }", ["foo"]),
        ("SELECT ?x WHERE { ?x tkg:refines/skos:notation ?n }", []),
        ("PREFIX ex: <http://example.org/> SELECT * WHERE { ?x ex:a ?y }", []),
        ('SELECT * WHERE { ?x ?p "foo:bar" . ?x ?q <urn:x:y> } # bar:baz', []),
        ("SELECT * WHERE { _:b ?p ?o FILTER(?o = 12) }", []),
        ('SELECT * WHERE { ?x ?p "1"^^xsd:integer ; a:b ?o ; c:d ?q }', ["a", "c"]),
        ("SELECT * WHERE { ?x :local ?y }", [""]),
        ("PREFIX : <http://example.org/> SELECT * WHERE { ?x :local ?y }", []),
        ('SELECT * WHERE { ?x ?p """multi\nline foo:bar""" }', []),
    ],
)
def test_undeclared_prefixes(text: str, unknown: list[str]) -> None:
    assert undeclared_prefixes(text) == unknown


@pytest.mark.parametrize(
    ("text", "update"),
    [
        ("INSERT DATA { <a:b> <a:c> <a:d> }", True),
        ("PREFIX ex: <http://example.org/>\n# a comment\ndelete where { ?s ex:p ?o }", True),
        ("WITH <urn:g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }", True),
        ("CLEAR GRAPH <urn:g>", True),
        ("SELECT ?insert WHERE { ?insert ?p ?o }", False),
        ("# INSERT is only a comment\nASK { ?s ?p ?o }", False),
        ("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", False),
    ],
)
def test_is_update(text: str, update: bool) -> None:
    assert is_update(text) is update


def test_unknown_prefix_error_lists_the_predeclared_ones() -> None:
    error = syntax_error("SELECT ?x WHERE { ?x foo:bar ?y }", "error at 1:29: expected one of Prefix not found")
    assert isinstance(error, QueryError)
    assert error.message == "unknown prefix foo:"
    assert error.hint and "tkg:" in error.hint and "PREFIX foo: <IRI>" in error.hint


def test_character_classes_are_left_out_of_what_was_expected() -> None:
    detail = ("error at 1:27: expected one of \",\", \".\", \"}\", ['0' ..= '9' | '\\u{00B7}'], ['A' ..= 'Z'], [_]")
    error = syntax_error("SELECT ?x WHERE { ?x ?p ?y", detail)
    assert "\\u{" not in error.message
    assert 'expected one of ",", ".", "}"' in error.message
    lines = error.message.splitlines()
    assert lines[1] == "  SELECT ?x WHERE { ?x ?p ?y" and lines[2] == "  " + " " * 26 + "^"


def test_a_misspelt_query_form_is_named() -> None:
    error = syntax_error("SELEC ?x WHERE { ?x ?p ?y }", "error at 1:10: expected CONSTRUCT")
    assert "not SELEC" in error.message and "CONSTRUCT" in error.message


def test_a_long_line_is_shown_around_the_caret() -> None:
    text = "SELECT * WHERE { " + " ".join(f"?s{i} ?p{i} ?o{i} ." for i in range(20)) + " FILTER(?o1 > ) }"
    column = text.index(") }") + 1
    error = syntax_error(text, f"error at 1:{column}: expected one of ABS, STR")
    source, caret = error.message.splitlines()[1:3]
    assert len(source) <= 76 and source[caret.index("^")] == ")"
