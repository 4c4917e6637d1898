"""The labelled set (tests/linking/labelled.jsonl): every line finds its text, the written
lines are hard negatives, and the linker makes no link on any hard negative, at any score.
(Precision and recall are printed by python -m bench links, not asserted here.)"""

from __future__ import annotations

import json
from pathlib import Path

from bench.labelled import LABELLED, evaluate, load
from kg.linking.model import RELATIONS


def test_every_line_finds_its_text_and_names_known_techniques(techniques) -> None:
    examples = load()
    assert len(examples) == len(LABELLED.read_text(encoding="utf-8").splitlines())
    assert all(e.title for e in examples)
    ids = {t.id for t in techniques}
    for example in examples:
        assert set(example.links) <= ids, example.id
        assert set(example.links.values()) <= set(RELATIONS), example.id


def test_written_lines_are_hard_negatives_and_say_so() -> None:
    rows = [json.loads(line) for line in Path(LABELLED).read_text(encoding="utf-8").splitlines()]
    written = [r for r in rows if r.get("written")]
    assert written and all(r["source"] == "written" and r["hard_negative"] and not r["links"] for r in written)
    assert all(not r.get("written") for r in rows if r["source"] != "written")


def test_no_hard_negative_gets_a_link_at_any_score() -> None:
    examples = load()
    scores = evaluate(examples)
    assert scores.hard_negatives >= 40
    assert scores.hard_negative_links == []
