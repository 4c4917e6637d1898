"""The numbers the analytics report equal the same numbers computed by SPARQL on the graph."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kg.graphs import own_first
from kg.vocab import LINEAGE_RELATIONS

STATUS = "https://w3id.org/techkg/id/status/"
RELATIONS = " ".join(f"tkg:{r}" for r in LINEAGE_RELATIONS)
#: ?a wrote ?p: as a creator or as a member of its ordered author list.
AUTHORED = """{ ?p dcterms:creator ?a } UNION
              { ?p bibo:authorList ?l . ?l ?m ?a FILTER(STRSTARTS(STR(?m), STR(rdf:_))) }"""


@pytest.fixture(scope="module")
def graph(analysed_store_dir: Path, analysed_db: Path) -> Iterator[Any]:
    from kg.store.embedded import OxigraphStore

    store = OxigraphStore(analysed_store_dir)
    yield store
    store.close()


def sparql(store: Any, query: str) -> list[dict[str, Any]]:
    return store.select(query).records()


def sql(con: Any, query: str) -> list[tuple[Any, ...]]:
    return con.execute(query).fetchall()


def analysis(con: Any, name: str, **params: Any) -> list[dict[str, Any]]:
    from kg.analytics.analyses import ANALYSES, _params, run_query

    analysis_name = name.split(".")[0]
    return run_query(con, name, _params(ANALYSES[analysis_name][1], params)).rows


def test_table_sizes_match_the_graph(graph: Any, duckdb_conn: Any) -> None:
    counts = {
        "papers": "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x a bibo:Document }",
        "authors": "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x a foaf:Person }",
        "techniques": "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x a tkg:Technique }",
        "repositories": "SELECT (COUNT(DISTINCT ?x) AS ?n) "
        "WHERE { ?x a schema:SoftwareSourceCode }",
        "repository_snapshots": "SELECT (COUNT(DISTINCT ?x) AS ?n) "
        "WHERE { ?x a tkg:RepositorySnapshot }",
        "citations": "SELECT (COUNT(*) AS ?n) "
        "WHERE { SELECT DISTINCT ?a ?b WHERE { ?a cito:cites ?b } }",
        "reading_events": "SELECT (COUNT(DISTINCT ?x) AS ?n) "
        "WHERE { { ?x a tkg:ReadingEvent } UNION { ?x a tkg:ReadingRemoval } }",
        "reading_state": "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x tkg:readingStatus ?s }",
        "verification_runs": "SELECT (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x a tkg:VerificationRun }",
        "lineage_edges": f"""SELECT (COUNT(*) AS ?n) WHERE {{ SELECT DISTINCT ?c ?r ?p WHERE {{
                              VALUES ?r {{ {RELATIONS} }} ?c ?r ?p }} }}""",
    }
    for table, query in counts.items():
        expected = sparql(graph, query)[0]["n"]
        assert expected > 0, table
        assert sql(duckdb_conn, f"SELECT count(*) FROM {table}")[0][0] == expected, table


def test_papers_per_year_match_sparql(graph: Any, duckdb_conn: Any) -> None:
    rows = sparql(
        graph,
        """SELECT ?year (COUNT(DISTINCT ?p) AS ?n) WHERE { ?p a bibo:Document ; dcterms:issued ?d .
                              BIND(xsd:integer(SUBSTR(STR(?d), 1, 4)) AS ?year) } GROUP BY ?year""",
    )
    expected = {r["year"]: r["n"] for r in rows}
    got = {r["year"]: r["papers"] for r in analysis(duckdb_conn, "papers.per_year")}
    assert got == expected and len(got) >= 10


def test_reading_progress_per_section_matches_sparql(graph: Any, duckdb_conn: Any) -> None:
    rows = sparql(
        graph,
        f"""SELECT ?label ?slug (COUNT(DISTINCT ?p) AS ?n) WHERE {{
                              ?p tkg:readingStatus ?s ; tkg:readingCategory/skos:prefLabel ?label .
                              {own_first("?p", "readingStatus", "?s", "own")}
                              BIND(REPLACE(STR(?s), "^.*/", "") AS ?slug)
           }} GROUP BY ?label ?slug""",
    )
    expected: dict[str, Counter[str]] = defaultdict(Counter)
    for r in rows:
        expected[r["label"]][r["slug"]] = r["n"]
    got = {r["category"]: r for r in analysis(duckdb_conn, "progress.categories", by="reading")}
    assert set(expected) <= set(got)
    for label, statuses in expected.items():
        row = got[label]
        assert row["papers"] == sum(statuses.values())
        assert (row["read"], row["reading"], row["to_read"], row["skipped"]) == (
            statuses["read"],
            statuses["reading"],
            statuses["to-read"],
            statuses["skipped"],
        )


def test_reads_per_month_match_sparql(graph: Any, duckdb_conn: Any) -> None:
    rows = sparql(
        graph,
        f"""SELECT ?p (MIN(?t) AS ?at) WHERE {{
        {{ ?e a tkg:ReadingEvent ; tkg:paper ?p ; tkg:status <{STATUS}read> ; prov:atTime ?t }}
        UNION
        {{ ?p tkg:readingStatus <{STATUS}read> ; tkg:statusChangedAt ?t .
           {own_first("?p", "readingStatus", f"<{STATUS}read>", "own")}
           {own_first("?p", "statusChangedAt", "?t", "ownAt")}
           FILTER NOT EXISTS {{
             ?e2 a tkg:ReadingEvent ; tkg:paper ?p ; tkg:status <{STATUS}read> }} }}
      }} GROUP BY ?p""",
    )
    expected = Counter(str(r["at"])[:7] for r in rows)
    timeline = analysis(duckdb_conn, "progress.timeline", period="month")
    assert {str(r["period"])[:7]: r["read"] for r in timeline if r["read"]} == dict(expected)
    assert timeline[-1]["cumulative"] == len(rows)
    current = sparql(graph, f"""SELECT (COUNT(?p) AS ?n) WHERE {{ ?p tkg:readingStatus <{STATUS}to-read> .
                                   {own_first("?p", "readingStatus", f"<{STATUS}to-read>", "own")}
                                   FILTER EXISTS {{ ?p tkg:statusChangedAt ?t }} }}""")
    assert timeline[-1]["to_read"] == current[0]["n"]  # the last period ends with today's statuses
    assert expected["2026-01"] >= 2  # GPipe and ZeRO, read in January by the fixture


def test_lineage_counts_match_property_paths(graph: Any, duckdb_conn: Any) -> None:
    fan = sparql(
        graph,
        f"""SELECT ?parent (COUNT(DISTINCT ?child) AS ?n) WHERE {{
                               VALUES ?r {{ {RELATIONS} }} ?child ?r ?parent }} GROUP BY ?parent""",
    )
    expected_fan = {r["parent"]: r["n"] for r in fan}
    got_fan = dict(
        sql(duckdb_conn, "SELECT parent, count(DISTINCT child) FROM lineage_edges GROUP BY parent")
    )
    assert got_fan == expected_fan
    top = analysis(duckdb_conn, "lineage.most_derived_from", top=5)
    ids = dict(sql(duckdb_conn, "SELECT name, technique FROM techniques"))
    for row in top:
        technique = ids[row["technique"]]
        n = sparql(
            graph,
            f"SELECT (COUNT(DISTINCT ?d) AS ?n) WHERE {{ ?d prov:wasDerivedFrom+ <{technique}> }}",
        )
        assert row["descendants"] == n[0]["n"] > 0
    summary = analysis(duckdb_conn, "lineage.summary")[0]
    roots = sparql(
        graph,
        f"""SELECT (COUNT(DISTINCT ?p) AS ?n) WHERE {{ VALUES ?r {{ {RELATIONS} }} ?c ?r ?p
              FILTER NOT EXISTS {{ VALUES ?r2 {{ {RELATIONS} }} ?p ?r2 ?q }} }}""",
    )
    assert summary["roots"] == roots[0]["n"]


def test_the_deepest_synthetic_chain_is_at_least_as_deep_as_generated(
    duckdb_conn: Any, tmp_path: Path
) -> None:
    from bench.corpus import generate
    from tests.analytics.conftest import CORPUS_PAPERS

    info = generate(CORPUS_PAPERS, seed=42, out=tmp_path / "again.nt")
    depth = sql(
        duckdb_conn,
        f"SELECT max(max_distance) FROM lineage_closure WHERE technique = '{info.deepest}'",
    )
    assert depth[0][0] >= info.deepest_depth
    chains = analysis(duckdb_conn, "lineage.longest_chains", top=1)
    assert chains[0]["length"] >= info.deepest_depth


def test_papers_per_author_match_sparql(graph: Any, duckdb_conn: Any) -> None:
    rows = sparql(
        graph,
        f"SELECT ?name (COUNT(DISTINCT ?p) AS ?n) "
        f"WHERE {{ {AUTHORED} ?a foaf:name ?name }} GROUP BY ?name",
    )
    expected = {r["name"]: r["n"] for r in rows}
    top = analysis(duckdb_conn, "authors.authors", top=15)
    assert top and all(row["papers"] == expected[row["author"]] for row in top)
    assert top[0]["papers"] == max(expected.values())


#: ?org: the name of the organisation ?o is counted under, the top of its schema:parentOrganization chain.
CANONICAL = """?o schema:parentOrganization* ?top . FILTER NOT EXISTS { ?top schema:parentOrganization ?above }
               ?top foaf:name ?org"""


def test_co_authorship_between_organisations_matches_sparql(graph: Any, duckdb_conn: Any) -> None:
    rows = sparql(
        graph,
        f"SELECT DISTINCT ?p ?org WHERE {{ {AUTHORED} ?a schema:affiliation ?o . {CANONICAL} }}",
    )
    orgs: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        orgs[r["p"]].add(r["org"])
    expected: Counter[tuple[str, str]] = Counter()
    for names in orgs.values():
        for a in names:
            for b in names:
                if a < b:
                    expected[(a, b)] += 1
    got = {
        (r["organisation"], r["with_organisation"]): r["papers"]
        for r in analysis(duckdb_conn, "authors.co_authorship", top=100_000)
    }
    # Pairs are ordered by IRI in SQL and by name here: compare them unordered.
    assert {frozenset(k): v for k, v in got.items()} == {
        frozenset(k): v for k, v in expected.items()
    }
    assert sum(expected.values()) > 0


def test_star_growth_between_snapshots_matches_sparql(graph: Any, duckdb_conn: Any) -> None:
    rows = sparql(
        graph,
        """SELECT ?name ?t ?stars WHERE { ?r tkg:snapshot ?s ; schema:name ?name .
                              ?s prov:generatedAtTime ?t ; tkg:stars ?stars } ORDER BY ?name ?t""",
    )
    series: dict[str, list[int]] = defaultdict(list)
    for r in rows:
        series[r["name"]].append(r["stars"])
    expected = {name: s[-1] - s[0] for name, s in series.items() if len(s) >= 2}
    got = {
        r["repository"]: r["growth"]
        for r in analysis(duckdb_conn, "adoption.most_active", top=100_000)
    }
    assert got == expected and expected


def test_kernel_status_matches_the_technique_cards(graph: Any, duckdb_conn: Any) -> None:
    from kg.views import kernel_status

    expected = kernel_status(graph)
    names = dict(sql(duckdb_conn, "SELECT name, technique FROM techniques"))
    rows = analysis(duckdb_conn, "kernels.techniques", all=False)
    assert len(rows) == 39
    for row in rows:
        assert row["status"] == expected[names[row["technique"]]], row["technique"]
    statuses = Counter(r["status"] for r in rows)
    assert (statuses["verified"], statuses["failing"], statuses["none"]) == (1, 1, 1)
    coverage = analysis(duckdb_conn, "kernels.coverage", all=False)
    assert sum(r["techniques"] for r in coverage) == 39
    assert sum(r["not run"] for r in coverage) == statuses["not run"] == 36


def test_papers_per_organisation_match_sparql(graph: Any, duckdb_conn: Any) -> None:
    rows = sparql(
        graph,
        f"""SELECT ?org (COUNT(DISTINCT ?p) AS ?n) WHERE {{
              {{ {AUTHORED} ?a schema:affiliation ?o }}
              UNION {{ ?t tkg:primaryPaper ?p ; tkg:organization ?o }}
              {CANONICAL} }} GROUP BY ?org""",
    )
    expected = {r["org"]: r["n"] for r in rows}
    got = analysis(duckdb_conn, "papers.per_organisation", top=100_000)
    assert {r["organisation"]: r["papers"] for r in got} == expected
