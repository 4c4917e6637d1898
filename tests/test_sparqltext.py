"""Variables are bound with VALUES blocks that no value can break out of."""

from __future__ import annotations

import pyoxigraph as ox

from kg.sparqltext import code_only, inject_values


def test_every_where_group_gets_the_binding_but_strings_iris_and_comments_do_not() -> None:
    query = ('SELECT ?x WHERE { ?x <http://a/WHERE> "WHERE {" . # WHERE {\n'
             "  { SELECT ?y WHERE { ?y ?p ?x } } }")
    out = inject_values(query, {"x": ox.NamedNode("http://example.org/x")})
    assert out.count("VALUES (?x)") == 2
    assert '<http://a/WHERE> "WHERE {" . # WHERE {' in out


def test_a_sub_select_that_does_not_use_the_variable_gets_no_block(fresh_store) -> None:
    fresh_store.update("""INSERT DATA { GRAPH <http://g> {
        <http://t1> <http://uses> <http://paper> . <http://t2> <http://uses> <http://paper> .
        <http://paper> <http://status> "read" } }""")
    query = """SELECT ?t ?paper ?status WHERE {
        ?t <http://uses> ?paper .
        OPTIONAL { SELECT ?paper ?status WHERE { ?paper <http://status> ?status } } }"""
    both = [ox.NamedNode("http://t1"), ox.NamedNode("http://t2")]
    out = inject_values(query, {"t": both})
    assert out.count("VALUES (?t)") == 1 and out.index("VALUES (?t)") < out.index("OPTIONAL")
    rows = fresh_store.select(query, {"t": both})
    assert sorted((r["t"].value, r["status"].value) for r in rows) == [("http://t1", "read"), ("http://t2", "read")]


def test_a_variable_no_group_uses_is_bound_in_the_query_s_own_group() -> None:
    out = inject_values("SELECT ?x WHERE { { SELECT ?y WHERE { ?y ?p ?o } } }", {"x": ox.Literal("a")})
    assert out.startswith('SELECT ?x WHERE { VALUES (?x) { ("a") }') and out.count("VALUES") == 1


def test_a_hostile_value_stays_one_term(fresh_store) -> None:
    fresh_store.update('INSERT DATA { GRAPH <http://g> { <http://s> <http://p> "a" } }')
    hostile = ox.Literal('x" } } ; DROP ALL ; SELECT * WHERE { ?s ?p ?o . FILTER("1')
    rows = fresh_store.select("SELECT ?s WHERE { ?s <http://p> ?v }", {"v": hostile})
    assert len(rows) == 0
    iri_like = ox.Literal("a> } UNION { ?s ?p ?o } #")
    assert len(fresh_store.select("SELECT ?s WHERE { ?s <http://p> ?v }", {"v": iri_like})) == 0
    assert fresh_store.count() == 1
    matching = fresh_store.select("SELECT ?s WHERE { ?s <http://p> ?v }", {"v": ox.Literal("a")})
    assert [r["s"].value for r in matching] == ["http://s"]


def test_a_query_without_where_keyword_gets_a_trailing_values_clause(fresh_store) -> None:
    fresh_store.update('INSERT DATA { GRAPH <http://g> { <http://s> <http://p> "a" } }')
    out = inject_values("SELECT ?s { ?s <http://p> ?v }", {"v": ox.Literal("a")})
    assert out.rstrip().endswith('VALUES (?v) { ("a") }')
    assert len(fresh_store.select("SELECT ?s { ?s <http://p> ?v }", {"v": ox.Literal("a")})) == 1
    assert fresh_store.ask("ASK { ?s <http://p> ?v }", {"v": ox.Literal("b")}) is False


def test_values_beside_a_union_and_an_optional_move_to_the_group_end_where_the_union_binds_them(fresh_store) -> None:
    from kg.sparqlrewrite import values_after_unions
    from kg.sparqltext import inject_values

    fresh_store.update("""INSERT DATA { GRAPH <urn:x:g> {
        <urn:x:a> <urn:x:paper> <urn:x:p1> . <urn:x:p2> <urn:x:uses> <urn:x:b> . <urn:x:c> <urn:x:paper> <urn:x:p3> .
        <urn:x:p1> <urn:x:title> "one" } }""")
    query = """SELECT ?t ?p ?title WHERE { { ?t <urn:x:paper> ?p } UNION { ?p <urn:x:uses> ?t }
                 OPTIONAL { ?p <urn:x:title> ?title } }"""
    bound = inject_values(query, {"t": [ox.NamedNode("urn:x:a"), ox.NamedNode("urn:x:b")]})
    moved = values_after_unions(bound)
    assert moved != bound and moved.index("VALUES") > moved.index("OPTIONAL")
    assert sorted(map(str, fresh_store.select(moved).rows)) == sorted(map(str, fresh_store.select(bound).rows))
    assert len(fresh_store.select(moved)) == 2
    # A branch that does not bind the variable: the block stays where it is.
    loose = inject_values(query.replace("?p <urn:x:uses> ?t", "?p <urn:x:uses> ?other"),
                          {"t": [ox.NamedNode("urn:x:a")]})
    assert values_after_unions(loose) == loose


def test_strings_iris_and_comments_are_blanked_whatever_their_quotes_and_escapes() -> None:
    query = ('SELECT ?a WHERE { ?a <http://x/#y> "say \\"{\\"" , \'it\\\'s {\' , """a "{" b""" , \'\'\'{\'\'\' '
             '. # a } comment\n ?a ?b 1.5 . FILTER(?b < 2 && ?b > <http://z>) }')
    code = code_only(query)
    assert len(code) == len(query)
    assert code.split() == ["SELECT", "?a", "WHERE", "{", "?a", ",", ",", ",", ".", "?a", "?b", "1.5", ".",
                            "FILTER(?b", "<", "2", "&&", "?b", ">", ")", "}"]
    assert code_only(query, iris=True).split()[5] == "<http://x/#y>"  # an IRI kept, its '#' no comment
    assert code_only("GRAPH <http://a#b> { ?s ?p ?o } GRAPH <http://c> {}", iris=True).count("GRAPH") == 2
    assert code_only('?a "unclosed { ?b').split() == ["?a"]  # a string left open runs to the end
