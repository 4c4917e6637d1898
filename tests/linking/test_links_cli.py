"""``kg link`` and ``kg links``: the listing's JSON rows and table, verdicts, the
threshold, and bad input refused with a did-you-mean."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def linked(kg_cli, built_store_path):
    kg_cli("link", store=built_store_path, check=True)
    return built_store_path


def test_kg_link_reports_what_it_linked_as_json(kg_cli, built_store_path) -> None:
    report = json.loads(kg_cli("link", "-f", "json", store=built_store_path, check=True).stdout)
    assert report["whole"] and report["links"] > 40 and report["statuses"]["manual"] == 40
    assert set(report["relations"]) <= {"introduces", "extends", "uses", "evaluates", "mentions"}


def test_json_rows_hold_paper_technique_relation_score_status_and_evidence(kg_cli, linked) -> None:
    rows = json.loads(kg_cli("links", "ZeRO", "-f", "json", store=linked, check=True).stdout)
    assert {r["title"] for r in rows} >= {"ZeRO-Offload: Democratizing Billion-Scale Model Training"}
    for row in rows:
        assert {"paper", "technique", "relation", "score", "status", "evidence"} <= set(row)
        assert 0 <= row["score"] <= 1 and row["status"] in ("auto", "accepted", "rejected", "manual")
        assert row["evidence"] and all(set(e) == {"field", "text", "source"} for e in row["evidence"])
    by_paper = {r["title"]: r for r in rows}
    offload = by_paper["ZeRO-Offload: Democratizing Billion-Scale Model Training"]
    assert offload["relation"] == "extends" and offload["evidence"][0]["source"] in ("catalog", "reading-list")


def test_the_table_reads_at_80_columns_as_records(kg_cli, linked) -> None:
    out = kg_cli("links", "ZeRO", store=linked, env={"COLUMNS": "80"}, check=True).stdout
    assert all(len(line) <= 80 for line in out.splitlines())
    assert "id:" in out and "evidence:" in out and "relation:" in out


def test_filters_by_relation_status_and_score(kg_cli, linked) -> None:
    manual = json.loads(kg_cli("links", "--status", "manual", "-f", "json", store=linked, check=True).stdout)
    assert len(manual) == 40 and all(r["relation"] == "introduces" for r in manual)
    extends = json.loads(kg_cli("links", "-r", "extends", "--min-score", "0.9", "-f", "json", store=linked,
                                check=True).stdout)
    assert extends and all(r["relation"] == "extends" and r["score"] >= 0.9 for r in extends)
    by_paper = json.loads(kg_cli("links", "ZeRO-Offload", "-f", "json", store=linked, check=True).stdout)
    assert {r["technique_name"] for r in by_paper} == {"DeepSpeed ZeRO"}


def test_a_verdict_lists_under_its_own_relation_and_status_not_the_linkers(kg_cli, linked) -> None:
    def ids(*args: str) -> set[str]:
        return {r["id"] for r in json.loads(kg_cli("links", *args, "-f", "json", store=linked, check=True).stdout)}

    ident = json.loads(kg_cli("links", "ZeRO", "-r", "extends", "-f", "json", store=linked, check=True).stdout)[0]["id"]
    assert ident in ids("-r", "extends") and ident in ids("--status", "auto")
    kg_cli("links", "accept", ident, "--as", "uses", store=linked, check=True)
    assert ident not in ids("-r", "extends") and ident in ids("-r", "uses")
    assert ident not in ids("--status", "auto") and ident in ids("--status", "accepted")
    assert ids("--status", "accepted") == {ident}
    assert ident in ids("-r", "uses", "--status", "accepted")


def test_accept_reject_and_add_from_the_command_line(kg_cli, linked) -> None:
    rows = json.loads(kg_cli("links", "ZeRO", "-r", "extends", "-f", "json", store=linked, check=True).stdout)
    ident = rows[0]["id"]
    accepted = json.loads(kg_cli("links", "accept", ident[:9], "--as", "uses", "-f", "json", store=linked,
                                 check=True).stdout)
    assert accepted["status"] == "accepted" and accepted["relation"] == "uses"
    rejected = kg_cli("links", "reject", ident, store=linked, check=True).stdout
    assert "rejected" in rejected and "will not come back" in " ".join(rejected.split())
    added = json.loads(kg_cli("links", "add", "GPipe", "Megatron TP", "--as", "evaluates", "--note", "compared",
                              "-f", "json", store=linked, check=True).stdout)
    assert added["status"] == "manual" and added["evidence"][0]["text"] == "compared"
    kg_cli("link", store=linked, check=True)
    again = json.loads(kg_cli("links", "--status", "rejected", "-f", "json", store=linked, check=True).stdout)
    assert [r["id"] for r in again] == [ident]


def test_unknown_techniques_papers_relations_and_ids_are_refused_with_a_did_you_mean(kg_cli, linked) -> None:
    technique = kg_cli("links", "add", "GPipe", "GQAX", "--as", "uses", store=linked)
    assert technique.returncode == 1 and "Did you mean" in technique.stderr and "Grouped-Query" in technique.stderr
    paper = kg_cli("links", "add", "Ring Atention with Blockwise", "GQA", "--as", "uses", store=linked)
    assert paper.returncode == 1 and "Did you mean" in paper.stderr and "Ring Attention" in paper.stderr
    relation = kg_cli("links", "add", "GPipe", "GQA", "--as", "usess", store=linked)
    assert relation.returncode != 0 and "usess" in relation.stderr
    ident = kg_cli("links", "accept", "ln-0000000000000000", store=linked)
    assert ident.returncode == 1 and "no link" in ident.stderr
    target = kg_cli("links", "Grouped Qery Atention", store=linked)
    assert target.returncode == 1 and "Grouped-Query Attention" in target.stderr
    catalog = kg_cli("links", "reject", json.loads(kg_cli("links", "GQA", "-s", "manual", "-f", "json",
                                                           store=linked, check=True).stdout)[0]["id"], store=linked)
    assert catalog.returncode == 1 and "catalog" in catalog.stderr


def test_the_threshold_is_shown_and_set(kg_cli, linked) -> None:
    assert json.loads(kg_cli("links", "threshold", "-f", "json", store=linked, check=True).stdout) == {
        "threshold": 0.5}
    changed = json.loads(kg_cli("links", "threshold", "0.9", "-f", "json", store=linked, check=True).stdout)
    assert changed["previous"] == 0.5 and changed["hidden"] > 0
    bad = kg_cli("links", "threshold", "1.5", store=linked)
    assert bad.returncode == 1 and "between 0 and 1" in bad.stderr


def test_every_link_comes_a_relation_at_a_time_in_the_order_of_one_listing(kg_cli, linked) -> None:
    import csv
    import io

    from kg.linking.listing import iter_links, list_links
    from kg.linking.model import RELATIONS
    from kg.store.embedded import OxigraphStore

    store = OxigraphStore(linked)
    try:
        told: list[str] = []
        parts = list(iter_links(store, progress=lambda relation, done: told.append(relation)))
        whole = list_links(store)
    finally:
        store.close()
    assert [{r.link.relation for r in part} for part in parts if part] == [
        {r} for r in RELATIONS if any(row.link.relation == r for row in whole)]
    assert [r.id for part in parts for r in part] == [r.id for r in whole]
    # the CLI writes the parts as they come, as one JSON array, one CSV and one table
    rows = json.loads(kg_cli("links", "-f", "json", store=linked, check=True).stdout)
    assert [r["id"] for r in rows] == [r.id for r in whole]
    table = list(csv.DictReader(io.StringIO(kg_cli("links", "-f", "csv", store=linked, check=True).stdout)))
    assert [r["id"] for r in table] == [r.id for r in whole]
    out = kg_cli("links", store=linked, env={"COLUMNS": "120"}, check=True).stdout
    assert f"{len(whole)} links" in out and all(r.id in out for r in whole[:5])
