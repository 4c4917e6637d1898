"""Following techniques: inferred until the reader chooses (and said so), chosen with kg follow,
dropped with kg unfollow, and what kg suggest reading seeds from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pyoxigraph import NamedNode

from kg.follows import Followed, follow, followed, forget, unfollow
from kg.iris import technique_iri


def _json(kg_cli: Any, *args: str, store: Path) -> Any:
    return json.loads(kg_cli(*args, "-f", "json", store=store, check=True).stdout)


def test_until_the_reader_chooses_what_they_follow_is_inferred_and_says_so(kg_cli, built_store_path: Path) -> None:
    store = built_store_path
    shown = _json(kg_cli, "following", store=store)
    assert shown["inferred"] is True
    inferred = {t["id"]: t["why"] for t in shown["techniques"]}
    # ZeRO's paper is on the reading list: the inference kg suggest reading always made
    assert inferred["zero"] == "its paper is on your reading list"
    table = kg_cli("following", store=store, check=True).stdout
    assert "inferred from your reading" in table and "kg follow TECHNIQUE chooses" in table


def test_follow_unfollow_and_back_to_inferred(kg_cli, built_store_path: Path) -> None:
    store = built_store_path
    chosen = _json(kg_cli, "follow", "GDN", "KDA", store=store)
    assert chosen["inferred"] is False and [t["id"] for t in chosen["techniques"]] == ["gated-deltanet", "kda"]
    assert all(t["since"] for t in chosen["techniques"])
    again = _json(kg_cli, "follow", "Gated DeltaNet", store=store)
    assert again["said"] == "You follow these already."
    dropped = _json(kg_cli, "unfollow", "GDN", store=store)
    assert [t["id"] for t in dropped["techniques"]] == ["kda"]
    kg_cli("unfollow", "KDA", store=store, check=True)
    empty = _json(kg_cli, "following", store=store)
    assert empty == {"inferred": False, "said": None, "techniques": []}  # following nothing is a choice too
    assert "You follow no technique" in kg_cli("following", store=store, check=True).stdout
    back = _json(kg_cli, "unfollow", "--all", store=store)
    assert back["inferred"] is True and back["techniques"]
    kg_cli("undo", "--yes", store=store, check=True)  # each change is undone like any change to your graphs
    assert _json(kg_cli, "following", store=store)["techniques"] == []
    bad = kg_cli("follow", "Gated DeltNet", store=store)
    assert bad.returncode == 1 and "Did you mean: Gated DeltaNet" in bad.stderr


def test_unfollowing_an_inferred_technique_keeps_the_rest_as_the_choice(built_store) -> None:
    before = followed(built_store)
    assert before.inferred and len(before) >= 2
    first = NamedNode(before.iris[0])
    gone, was_inferred = unfollow(built_store, [first])
    assert gone == [first.value] and was_inferred
    after = followed(built_store)
    assert not after.inferred and after.iris == before.iris[1:]
    assert forget(built_store) and followed(built_store).inferred


def test_followed_has_the_shape_the_news_reads(built_store) -> None:
    follow(built_store, [technique_iri("kda")])
    now = followed(built_store)
    assert isinstance(now, Followed) and now.inferred is False
    [kda] = list(now)
    assert (kda.iri, kda.name, kda.id) == (technique_iri("kda").value, "Kimi Delta Attention", "kda")
    assert kda.as_dict()["since"] is not None and technique_iri("kda").value in now


def test_suggest_reading_seeds_from_the_chosen_techniques(built_store) -> None:
    from kg.readnext import seeds

    inferred = seeds(built_store)
    follow(built_store, [technique_iri("kda")])
    from kg.follows import chosen

    picked = sorted(chosen(built_store) or {})
    chosen_seeds = seeds(built_store, followed=picked)
    assert chosen_seeds.get("https://arxiv.org/abs/2510.26692") == "Kimi Delta Attention's paper"
    # ZeRO was inferred (its paper is on the reading list) but is not chosen
    assert inferred.get("https://arxiv.org/abs/1910.02054") == "DeepSpeed ZeRO's paper"
    assert "https://arxiv.org/abs/1910.02054" not in chosen_seeds or not chosen_seeds[
        "https://arxiv.org/abs/1910.02054"].endswith("'s paper")
