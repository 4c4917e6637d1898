"""Names that mean one thing: one node per organisation and per person, units and teams
linked to their organisation, analytics grouped by the canonical organisation, and the
lineage facts the checked sources state."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg.catalog import load_catalog
from kg.errors import CatalogError
from kg.iris import org_iri, person_iri, technique_iri


def _values(store, query: str) -> set[str]:
    return {str(term.value) for row in store.select(query).rows for term in row.values() if term is not None}


def test_deepseek_is_one_organisation_and_its_team_belongs_to_it(built_store) -> None:
    organisations = _values(built_store, "SELECT ?n WHERE { ?o a foaf:Organization ; foaf:name ?n }")
    assert "DeepSeek" in organisations and "DeepSeek-AI" not in organisations
    deepseek = org_iri("DeepSeek")
    team = built_store.select("SELECT ?t WHERE { ?t a foaf:Group ; foaf:name \"DeepSeek-AI\" }").rows
    assert len(team) == 1
    assert built_store.ask(f"ASK {{ {team[0]['t']} schema:parentOrganization {deepseek} }}")
    # Every technique that names DeepSeek or DeepSeek-AI points at the one node.
    for tid in ("mla", "dsa", "grpo", "aux-loss-free-balancing"):
        assert built_store.ask(f"ASK {{ {technique_iri(tid)} tkg:organization {deepseek} }}"), tid
    assert not built_store.ask(f"ASK {{ ?t tkg:organization {org_iri('DeepSeek-AI')} }}")


def test_googles_units_stay_distinct_and_are_linked_to_google(built_store) -> None:
    google = org_iri("Google")
    for unit in ("Google Brain", "Google Research"):
        node = org_iri(unit)
        assert node != google
        assert built_store.ask(f"ASK {{ {node} a foaf:Organization ; schema:parentOrganization {google} }}")
    assert built_store.ask(f"ASK {{ {technique_iri('transformer')} tkg:organization {org_iri('Google Brain')} }}")


def test_liger_kernels_first_author_is_one_person(built_store) -> None:
    people = _values(built_store, "SELECT ?n WHERE { ?p a foaf:Person ; foaf:name ?n FILTER(CONTAINS(?n, 'Hsu')) }")
    assert people == {"Pin-Lun Hsu"}
    hsu = person_iri("Pin-Lun Hsu")
    assert built_store.ask(f"ASK {{ {technique_iri('liger-kernel')} tkg:firstAuthor {hsu} }}")
    assert built_store.ask(f"ASK {{ <https://arxiv.org/abs/2410.10989> tkg:firstAuthor {hsu} }}")
    assert "Pin-Lun (Byron) Hsu" in _values(built_store, f"SELECT ?a WHERE {{ {hsu} skos:altLabel ?a }}")


def test_every_organisation_name_maps_to_one_node() -> None:
    catalog = load_catalog()
    names = {o for t in catalog.techniques.values() for o in t.organisations}
    assert "DeepSeek-AI" not in names and "DeepSeek" in names
    by_slug: dict[str, set[str]] = {}
    for name in names:
        by_slug.setdefault(name.casefold().replace("-ai", "").replace(" ", ""), set()).add(name)
    assert all(len(v) == 1 for v in by_slug.values()), by_slug


def test_lineage_has_the_parents_the_checked_facts_state(built_store) -> None:
    def relation(parent: str, child: str) -> set[str]:
        return _values(built_store, f"""SELECT ?r WHERE {{ ?d a prov:Derivation ; prov:entity {technique_iri(parent)} ;
                                          tkg:relation ?r . {technique_iri(child)} prov:qualifiedDerivation ?d }}""")

    assert relation("gqa", "mla")
    assert relation("ppo", "tunix")


def test_ultraep_replaces_history_based_balancing_as_the_checked_facts_say_not_deepep() -> None:
    parents = {e.parent: e for e in load_catalog().edges if e.child == "ultraep"}
    assert set(parents) == {"eplb"}  # facts.md: EPLB-style balancers -> exact-load per-microbatch rebalancing
    assert parents["eplb"].relation == "replaces" and "history-based" in (parents["eplb"].note or "")


def _rewrite(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_an_alias_given_to_two_organisations_is_an_error(catalog_copy: Path) -> None:
    _rewrite(catalog_copy / "organisations.toml", 'name = "Google Brain"',
             'name = "Google Brain"\naliases = ["Google"]')
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    assert "organisations.toml" in str(err.value) and "'Google'" in str(err.value) and err.value.line


def test_a_unit_of_an_unknown_organisation_is_an_error(catalog_copy: Path) -> None:
    _rewrite(catalog_copy / "organisations.toml", 'part_of = "ByteDance"', 'part_of = "Bytedanse"')
    with pytest.raises(CatalogError) as err:
        load_catalog(catalog_copy)
    assert "Bytedanse" in str(err.value) and err.value.hint and "[[organisation]]" in err.value.hint
