"""The rewrites remote servers need (kg.sparqltext) keep a query's answers: checked on the
embedded store, where the original and the rewritten query both run, over every named
query; and the staged writes (kg.store.staging) keep a transaction's meaning."""

from __future__ import annotations

import re
from pathlib import Path

import pyoxigraph as ox
import pytest

import queries
from kg.sparqlrewrite import (
    binds_after_optionals,
    constants,
    order_outside,
    same_term_as_equality,
    values_as_filters,
)
from kg.sparqltext import inject_values, paged, query_form, query_parts
from kg.store import staging
from kg.vocab import RDF, TKG

EX = "http://example.org/"
KDA = ox.NamedNode("https://w3id.org/techkg/id/technique/kda")

PARAMS = {"technique": "KDA", "paper": "1910.02054", "category": "attention", "string": "a", "integer": "1",
          "decimal": "1.5", "boolean": "true", "date": "2020-01-01", "datetime": "2020-01-01T00:00:00Z",
          "status": "to-read", "iri": "https://w3id.org/techkg/id/technique/kda"}
OVERRIDES = {"descendants": {"technique": "Transformer"}, "reading-queue-lineage": {"technique": "ZeRO"},
             "compare-techniques": {"technique": "GDN,KDA,Mamba2"}, "reading-queue": {"section": "Overlap"},
             "repositories": {"minStars": "0"}}


def canonical(result: object) -> object:
    if isinstance(result, (bool, type(None))):
        return result
    if isinstance(result, list):
        return sorted(str(t) for t in result)
    return sorted(str(sorted((k, str(v)) for k, v in row.items())) for row in result)  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", [q.name for q in queries.all_queries()])
def test_bindings_written_as_constants_give_the_answers_of_values_blocks(built_store, name: str) -> None:
    from kg.resolve import Resolver

    named = queries.get(name)
    raw = {p.name: PARAMS[p.type] for p in named.params if p.required}
    raw.update({k: v for k, v in OVERRIDES.get(name, {}).items() if named.param(k)})
    text, bindings = queries.prepare(named, raw, Resolver(built_store))
    rewritten, rest = constants(text, bindings)
    if any(not isinstance(v, list) or len(v) == 1 for v in bindings.values()):
        assert rewritten != text
    got = built_store.query(rewritten, rest or None)  # a strict SPARQL 1.1 query
    assert canonical(got) == canonical(built_store.query(text, bindings))


def test_a_bound_variable_leaves_sub_select_heads_and_groups_for_its_constant() -> None:
    query = """SELECT ?t ?n ?m WHERE { ?t a <http://x/T> . FILTER(BOUND(?t))
      { SELECT ?t (COUNT(*) AS ?n) WHERE { ?t <http://x/p>* ?o } GROUP BY ?t }
      OPTIONAL { SELECT ?t ?o (COUNT(?t) AS ?m) WHERE { ?t <http://x/q> ?o } GROUP BY ?o ?t HAVING(COUNT(?t) > 0) } }"""
    text, rest = constants(query, {"t": KDA})
    assert rest == {}
    assert text.startswith(f"SELECT ({KDA} AS ?t) ?n ?m")
    assert f"{KDA} a <http://x/T> . FILTER(true)" in text
    assert f"SELECT  (COUNT(*) AS ?n) WHERE {{ {KDA} <http://x/p>* ?o }} GROUP BY ({KDA})" in text
    assert f"SELECT  ?o (COUNT({KDA}) AS ?m)" in text and f"GROUP BY ?o  HAVING(COUNT(({KDA})) > 0)" in text
    ox.Store().query(text)  # strict SPARQL 1.1: no sub-select projects the outer constant's name


def test_minus_aliases_and_empty_sub_selects_keep_their_values_blocks() -> None:
    for query in ("SELECT ?x WHERE { ?t ?p ?x MINUS { ?t <http://x/q> ?z } }",
                  "SELECT ?x WHERE { ?y ?p ?x BIND(?y AS ?t) }",
                  "SELECT ?x WHERE { ?x ?p ?o { SELECT ?t WHERE { ?t ?p ?x } } }"):
        assert constants(query, {"t": KDA}) == (query, {"t": KDA}), query


def test_lists_and_select_star_keep_their_values_blocks() -> None:
    many = [KDA, ox.NamedNode(EX + "b")]
    assert constants("SELECT ?x WHERE { ?t ?p ?x }", {"t": many}) == ("SELECT ?x WHERE { ?t ?p ?x }", {"t": many})
    assert constants("SELECT * WHERE { ?t ?p ?x }", {"t": KDA})[1] == {"t": KDA}


def test_strings_iris_and_comments_are_never_rewritten() -> None:
    query = 'SELECT ?x WHERE { ?t <http://x/?t> "?t" . # ?t\n ?t ?p ?x }'
    text, _ = constants(query, {"t": KDA})
    assert '<http://x/?t> "?t" . # ?t\n' in text and text.count(str(KDA)) == 2


def test_query_parts_find_form_group_order_and_slice() -> None:
    query = "PREFIX a: <http://a/>\n# SELECT in a comment\nSELECT ?x (MAX(?y) AS ?m) WHERE { ?x a:p ?y } " \
            "GROUP BY ?x ORDER BY DESC(?m) LIMIT 5 OFFSET 2"
    parts = query_parts(query)
    assert (parts.form, parts.limit, parts.offset, parts.projection) == ("SELECT", 5, 2, ["x", "m"])
    assert query[parts.order_by[0] : parts.order_by[1]].strip() == "ORDER BY DESC(?m)"  # type: ignore[index]
    assert parts.prologue.startswith("PREFIX a:") and not parts.dataset
    assert query_parts("SELECT ?s FROM <http://g> WHERE { ?s ?p ?o }").dataset
    assert query_form("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }") == "CONSTRUCT"
    assert query_form("PREFIX x: <http://SELECT/> ASK { ?s ?p ?o }") == "ASK"


def test_pages_of_a_query_add_up_to_its_answer(fresh_store) -> None:
    fresh_store.update("INSERT DATA { GRAPH <http://g> { " + " ".join(
        f'<{EX}s{i:02d}> <{EX}p> {i} .' for i in range(23)) + " } }")
    for query in (f"SELECT ?s WHERE {{ ?s <{EX}p> ?v }}",
                  f"SELECT ?s ?v WHERE {{ ?s <{EX}p> ?v }} ORDER BY DESC(?v) LIMIT 17 OFFSET 3",
                  f"CONSTRUCT {{ ?s <{EX}q> ?v }} WHERE {{ ?s <{EX}p> ?v }}"):
        whole = fresh_store.query(query)
        pages: list[object] = []
        for offset in range(0, 30, 5):
            page = fresh_store.query(paged(query, 5, offset))
            pages += list(page) if isinstance(page, list) else page.rows  # type: ignore[union-attr]
        expected = list(whole) if isinstance(whole, list) else whole.rows  # type: ignore[union-attr]
        assert pages == expected or sorted(map(str, pages)) == sorted(map(str, expected))
        assert len(pages) == len(expected)


def test_order_by_moves_outside_and_keeps_rows_and_order(fresh_store) -> None:
    fresh_store.update("INSERT DATA { GRAPH <http://g> { " + " ".join(
        f'<{EX}s{i % 4}> <{EX}p> {i} .' for i in range(12)) + " } }")
    query = f"""SELECT ?s (SAMPLE(?v) AS ?any) (MAX(?v) AS ?top) WHERE {{ ?s <{EX}p> ?v }}
                GROUP BY ?s ORDER BY (!BOUND(?top)) DESC(?top) LIMIT 3"""
    moved = order_outside(query)
    assert moved != query and moved.rstrip().endswith("ORDER BY (!BOUND(?top)) DESC(?top) LIMIT 3")
    assert [r["s"] for r in fresh_store.query(moved)] == [r["s"] for r in fresh_store.query(query)]
    unprojected = f"SELECT ?s WHERE {{ ?s <{EX}p> ?v }} ORDER BY DESC(?v) LIMIT 5"  # sorted by a hidden variable
    assert [r["s"] for r in fresh_store.query(order_outside(unprojected))] == [
        r["s"] for r in fresh_store.query(unprojected)]
    distinct = f"SELECT DISTINCT ?s WHERE {{ ?s <{EX}p> ?v }} ORDER BY ?v"
    assert order_outside(distinct) == distinct  # a hidden variable would change what DISTINCT keeps
    having = f"SELECT ?s (COUNT(*) AS ?n) WHERE {{ ?s <{EX}p> ?v }} GROUP BY ?s HAVING (COUNT(*) > 2) ORDER BY ?s"
    moved = order_outside(having)
    assert "FILTER((?n > 2))" in moved and "HAVING" not in moved
    assert [(r["s"], r["n"]) for r in fresh_store.query(moved)] == [(r["s"], r["n"]) for r in fresh_store.query(having)]


def _graph(store, g: str) -> list[str]:
    return sorted(re.sub(r"_:\S+", "_:b", str(t)) for t in store.triples(ox.NamedNode(g)))


def test_a_staged_plan_gives_what_the_single_update_gives(fresh_store, tmp_path: Path) -> None:
    from kg.store.embedded import OxigraphStore

    g, h = ox.NamedNode(EX + "g"), ox.NamedNode(EX + "h")
    seed = f"INSERT DATA {{ GRAPH {g} {{ <{EX}old> <{EX}p> 1 }} GRAPH {h} {{ <{EX}keep> <{EX}p> 2 }} }}"
    triples = [ox.Triple(ox.NamedNode(f"{EX}s{i}"), ox.NamedNode(EX + "p"), ox.Literal(str(i))) for i in range(25)]
    blank = ox.BlankNode()
    triples += [ox.Triple(ox.NamedNode(EX + "s0"), ox.NamedNode(EX + "b"), blank),
                ox.Triple(blank, ox.NamedNode(EX + "c"), ox.Literal("deep"))]
    body = "\n".join(f"{t.subject} {t.predicate} {t.object} ." for t in triples)
    operations = [f"DROP SILENT GRAPH {g}", f"INSERT DATA {{ GRAPH {g} {{\n{body}\n}} }}",
                  f"DELETE WHERE {{ GRAPH {h} {{ <{EX}keep> ?p ?o }} }}",
                  f"INSERT {{ GRAPH {h} {{ ?s <{EX}copied> ?o }} }} WHERE {{ GRAPH {g} {{ ?s <{EX}p> ?o }} }}",
                  f'INSERT DATA {{ GRAPH {h} {{\n{g} <{EX}about> "g" .\n}} }}']
    whole = OxigraphStore(None)
    whole.update(seed)
    whole.update(" ;\n".join(operations))
    fresh_store.update(seed)
    before = {graph: _graph(fresh_store, graph.value) for graph in (g, h)}
    plan = staging.plan(operations, [g, h], limit=4, lease_seconds=60)
    assert len(plan.steps) > 7
    for step in plan.steps:  # nothing anyone reads changes before the swap
        fresh_store.update(step)
        assert {graph: _graph(fresh_store, graph.value) for graph in (g, h)} == before
    fresh_store.update(plan.swap)
    for graph in (g, h):
        assert _graph(fresh_store, graph.value) == _graph(whole, graph.value)
    assert len(fresh_store.select(f"SELECT ?v WHERE {{ <{EX}s0> <{EX}b>/<{EX}c> ?v }}")) == 1
    assert not [x for x in fresh_store.named_graphs() if x.value.startswith(staging.STAGING)]


def test_retarget_moves_graph_positions_only() -> None:
    g, s = ox.NamedNode(EX + "g"), ox.NamedNode("urn:techkg:staging:x")
    op = f'DELETE {{ GRAPH {g} {{ ?a ?b ?c }} }} WHERE {{ GRAPH {g} {{ {g} ?b "{g}" }} }} ; MOVE SILENT {g} TO {g}'
    assert staging.retarget(op, {g: s}) == (f'DELETE {{ GRAPH {s} {{ ?a ?b ?c }} }} WHERE {{ GRAPH {s} '
                                            f'{{ {g} ?b "{g}" }} }} ; MOVE SILENT {s} TO {s}')
    with pytest.raises(ValueError, match="prefixed name"):
        staging.plan(["DELETE WHERE { GRAPH tkg:g { ?s ?p ?o } }"], [g], 10, 60)


def test_retarget_moves_every_graph_position_after_an_iri_with_a_fragment() -> None:
    # a '#' in an IRI (rdf:type, TechKG's own terms) starts no comment: the graphs after it on
    # the line are staged too, or the transaction would write them directly
    g, s = ox.NamedNode(EX + "g"), ox.NamedNode("urn:techkg:staging:x")
    op = (f"DELETE {{ GRAPH {g} {{ ?a {RDF.type} ?o }} }} INSERT {{ GRAPH {g} {{ ?a {TKG.readingStatus} ?o }} }} "
          f"WHERE {{ GRAPH {g} {{ ?a ?b ?o }} }}")
    out = staging.retarget(op, {g: s})
    assert out.count(str(s)) == 3 and str(g) not in out


def test_chunks_keep_triples_that_share_a_blank_node_together() -> None:
    b1, b2 = ox.BlankNode(), ox.BlankNode()
    p = ox.NamedNode(EX + "p")
    triples = [ox.Triple(ox.NamedNode(f"{EX}{i}"), p, ox.Literal(str(i))) for i in range(5)]
    triples += [ox.Triple(b1, p, b2), ox.Triple(ox.NamedNode(EX + "x"), p, b1), ox.Triple(b2, p, ox.Literal("z"))]
    chunks = list(staging.chunks(triples, 2))
    assert sum(map(len, chunks)) == len(triples)
    assert any({b1.value, b2.value} <= {getattr(t.subject, "value", "") for t in c} | {
        getattr(t.object, "value", "") for t in c} and len(c) == 3 for c in chunks)


def test_values_blocks_survive_pages_and_constants_together(fresh_store) -> None:
    fresh_store.update(f"INSERT DATA {{ GRAPH <http://g> {{ <{EX}a> <{EX}p> <{EX}b> . <{EX}b> <{EX}p> <{EX}c> }} }}")
    query = f"SELECT ?x WHERE {{ ?t <{EX}p>* ?x }} ORDER BY ?x"
    text, rest = constants(query, {"t": ox.NamedNode(EX + "a")})
    assert rest == {} and [r["x"].value for r in fresh_store.query(paged(inject_values(text, rest), 2, 1))] == [
        EX + "b", EX + "c"]


def test_values_blocks_turn_back_into_the_constants_of_their_bindings() -> None:
    from kg.sparqlrewrite import values_as_constants

    for name, bindings in (("ancestors", {"technique": KDA}), ("reading-queue-lineage", {"technique": [KDA]})):
        text = queries.get(name).text
        expected, _ = constants(text, bindings)
        assert " ".join(values_as_constants(inject_values(text, bindings)).split()) == " ".join(expected.split())
    listed = inject_values("SELECT ?x WHERE { ?t ?p ?x }", {"t": [KDA, ox.NamedNode(EX + "b")]})
    assert values_as_constants(listed) == listed
    spaced = 'SELECT ?x WHERE { VALUES (?t ?u) { ("a b" <urn:c>) } ?t ?p ?u }'
    assert values_as_constants(spaced) == 'SELECT ?x WHERE { "a b" ?p <urn:c> }'


def test_same_term_written_as_equality_matches_exactly_the_same_terms() -> None:
    values = ('"a" "a"@en "A" "a"^^<urn:dt> "a"^^<http://www.w3.org/2001/XMLSchema#string> <urn:a> <urn:b> '
              '1 "1"')
    store = ox.Store()
    for test in ['sameTerm(?v, "a")', 'sameTerm("a", ?v)', "sameTerm(?v, <urn:a>) || sameTerm(?v, <urn:b>)",
                 '!(sameTerm(?v, "a"^^xsd:string) || sameTerm(?v, "1"))', 'sameTerm(?v, "a"@en)']:
        query = ("PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> "
                 f"SELECT ?v WHERE {{ VALUES ?v {{ {values} }} FILTER({test}) }}")
        rewritten = same_term_as_equality(query)
        assert ("sameTerm" in rewritten) == ("@en" in test)  # a language-tagged literal is left alone
        assert sorted(map(str, (r["v"] for r in store.query(rewritten)))) == \
            sorted(map(str, (r["v"] for r in store.query(query)))), test
    text = 'SELECT * WHERE { ?s ?p "sameTerm(?v, \\"a\\")" } # sameTerm(?v, "b")'
    assert same_term_as_equality(text) == text


@pytest.mark.parametrize("name", [q.name for q in queries.all_queries()])
def test_binds_moved_after_their_optionals_and_filters_for_values_give_the_same_answers(built_store,
                                                                                         name: str) -> None:
    from kg.resolve import Resolver

    named = queries.get(name)
    raw = {p.name: PARAMS[p.type] for p in named.params if p.required}
    raw.update({k: v for k, v in OVERRIDES.get(name, {}).items() if named.param(k)})
    text, bindings = queries.prepare(named, raw, Resolver(built_store))
    valued = inject_values(text, bindings)
    expected = canonical(built_store.query(valued))
    assert canonical(built_store.query(binds_after_optionals(valued))) == expected
    assert canonical(built_store.query(values_as_filters(valued))) == expected


def test_a_bind_leaves_its_optional_only_where_it_fails_without_the_optionals_match() -> None:
    moved = "SELECT * WHERE { ?p a ?c OPTIONAL { ?p <urn:q> ?st . BIND(STR(?st) AS ?s) } OPTIONAL { ?p <urn:r> ?o } }"
    assert binds_after_optionals(moved) == \
        "SELECT * WHERE { ?p a ?c OPTIONAL { ?p <urn:q> ?st .  } BIND(IF(BOUND(?st), STR(?st), ?_unbound_s) AS ?s) " \
        "OPTIONAL { ?p <urn:r> ?o } }"
    for kept in ("SELECT * WHERE { ?p a ?c OPTIONAL { ?p <urn:q> ?st BIND(COALESCE(?st, 1) AS ?s) } }",  # lenient
                 "SELECT * WHERE { ?p a ?c OPTIONAL { ?p <urn:q> ?st BIND(STR(?c) AS ?s) } }",  # an outer variable
                 "SELECT * WHERE { ?p a ?c OPTIONAL { ?p <urn:q> ?st FILTER(?s != 1) BIND(STR(?st) AS ?s) } }",
                 "SELECT * WHERE { ?p a ?s OPTIONAL { ?p <urn:q> ?st BIND(STR(?st) AS ?s) } }",  # bound before
                 "SELECT * WHERE { ?p a ?c OPTIONAL { ?p <urn:q> ?st BIND(STR(?st) AS ?s) ?p <urn:r> ?o } }"):
        assert binds_after_optionals(kept) == kept, kept


def test_values_become_filters_only_where_the_group_binds_the_variable() -> None:
    iri = "<https://w3id.org/techkg/id/technique/kda>"
    bound = f"SELECT ?x WHERE {{ VALUES (?t) {{ ({iri}) }} ?t <urn:p> ?x }}"
    assert values_as_filters(bound).split() == f"SELECT ?x WHERE {{ FILTER(?t = {iri}) ?t <urn:p> ?x }}".split()
    graph = f"SELECT ?x WHERE {{ VALUES (?t) {{ ({iri}) }} GRAPH ?g {{ ?t <urn:p> ?x }} }}"
    assert "FILTER(?t = " in values_as_filters(graph)
    for kept in (f"SELECT ?x WHERE {{ VALUES (?t) {{ ({iri}) }} OPTIONAL {{ ?t <urn:p> ?x }} }}",  # only optionally
                 f"SELECT ?x WHERE {{ VALUES (?t) {{ ({iri}) }} BIND(?t AS ?x) }}",  # never bound by a pattern
                 'SELECT ?x WHERE { VALUES (?t) { ("a") } ?t <urn:p> ?x }',  # a literal: = is not sameTerm
                 f"SELECT ?x WHERE {{ VALUES (?t) {{ ({iri}) (<urn:b>) }} ?t <urn:p> ?x }}"):  # two rows
        assert values_as_filters(kept) == kept, kept
