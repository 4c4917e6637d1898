"""The README's tour, byte for byte: each deterministic, offline command of the tour runs
through the real ``kg`` console script at 80 columns, in order, on one fresh store, and
prints exactly what ``tests/golden/tour/`` recorded (stdout, stderr and the exit code).

This is the check that a change of structure changed no behaviour. Where a change of
behaviour is meant, record the files again and review their diff::

    KG_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_readme_tour.py

Only what really differs from run to run is masked (:func:`masked`), each with a
placeholder of the same width so that the tables stay as they were printed:

- date-times from the clock (``2026-05-01T12:34:56Z``, ``2026-05-01 12:34``): when the
  build, a status change or a graph's write happened;
- today's date and the Monday of this week, in the one step that counts by the clock
  (``kg analytics progress``: added dates and weeks);
- how long a step took (``in 0.7 s``);
- the checkout's own folder (a source file's ``file://`` IRI in ``kg provenance``) and
  the temporary folder the tour runs in.

The store is named by a relative path (``--store store``) from inside the temporary
folder, so that messages naming it read the same wherever the test runs.
"""

from __future__ import annotations

import datetime as dt
import difflib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

GOLDEN = Path(__file__).resolve().parent / "golden" / "tour"
UPDATE = os.environ.get("KG_UPDATE_GOLDEN") == "1"

#: (name, arguments after ``kg --store store``, whether its output counts by today's date).
STEPS: list[tuple[str, list[str], bool]] = [
    ("version", ["--version"], False),
    ("build", ["build"], False),
    ("stats", ["stats"], False),
    ("show", ["show", "GDN"], False),
    ("lineage", ["lineage", "MLA", "--direction", "both"], False),
    ("compare", ["compare", "GDN", "KDA", "Mamba2"], False),
    ("compare-markdown", ["compare", "GDN", "KDA", "Mamba2", "--markdown"], False),
    ("sparql-csv", ["sparql", "SELECT ?t WHERE { ?t tkg:refines ?p }", "-f", "csv"], False),
    ("validate", ["validate"], False),
    ("provenance-json", ["provenance", "KDA", "-f", "json"], False),
    ("reading-list", ["reading", "list", "--status", "to-read", "--category", "Overlap"], False),
    ("reading-set", ["reading", "set", "GPipe", "read"], False),
    ("reading-set-typo", ["reading", "set", "GPipe", "REED"], False),
    ("reading-set-custom", ["reading", "set", "GPipe", "On hold", "--custom"], False),
    ("reading-set-add", ["reading", "set", "2501.00001", "to-read", "--add"], False),
    ("reading-list-json", ["reading", "list", "--status", "to-read", "-f", "json"], False),
    ("graph-list", ["graph", "list"], False),
    ("query-list", ["query", "--list"], False),
    ("query-list-verbose", ["query", "--list", "--verbose"], False),
    ("query-ancestors", ["query", "ancestors", "--param", "technique=KDA"], False),
    ("query-compare-csv", ["query", "compare-techniques", "-p", "technique=GDN,KDA,Mamba2", "-f", "csv"], False),
    ("query-queue-lineage", ["query", "reading-queue-lineage", "-p", "technique=ZeRO"], False),
    ("query-subgraph-jsonld", ["query", "lineage-subgraph", "-p", "technique=GDN", "-f", "jsonld"], False),
    ("query-bibliography-page", ["query", "bibliography", "--limit", "5"], False),
    ("query-lineage-papers-sparql", ["query", "lineage-papers", "-p", "technique=GDN", "-f", "csv"], False),
    ("suggest-lineage", ["suggest", "lineage"], False),
    ("suggest-reading", ["suggest", "reading", "--technique", "GDN", "--limit", "10"], False),
    ("kernels-list", ["kernels", "list"], False),
    ("export-lineage-mermaid", ["export", "lineage", "-o", "-", "-f", "mermaid"], False),
    ("export-lineage-dot-root", ["export", "lineage", "--root", "KDA", "--direction", "up", "-o", "-", "-f", "dot"],
     False),
    ("export-lineage-graphml", ["export", "lineage", "--category", "moe", "--with-papers", "-o", "-", "-f", "graphml"],
     False),
    ("export-rdf-kernels", ["export", "rdf", "--graph", "kernels", "-f", "turtle", "-o", "-"], False),
    ("export-bibtex", ["export", "bibtex", "-o", "-"], False),
    ("analytics-build", ["analytics", "build"], False),
    ("analytics-progress", ["analytics", "progress", "--period", "week"], True),
    ("analytics-papers", ["analytics", "papers"], False),
    ("analytics-lineage", ["analytics", "lineage"], False),
    ("analytics-adoption", ["analytics", "adoption", "--stale-days", "180"], False),
    ("analytics-authors", ["analytics", "authors"], False),
    ("analytics-kernels", ["analytics", "kernels"], False),
    ("analytics-sql", ["analytics", "sql", "SELECT year, count(*) FROM papers GROUP BY year ORDER BY year"], False),
    ("query-bibliography-duckdb", ["query", "bibliography", "--limit", "5"], False),
    ("query-lineage-papers-duckdb", ["query", "lineage-papers", "-p", "technique=GDN", "-f", "csv"], False),
    ("query-reading-queue-json", ["query", "reading-queue", "-f", "json", "--limit", "3"], False),
    ("query-sparql-only", ["query", "reading-queue", "--sparql", "--limit", "3"], False),
]


def _golden(index: int, name: str) -> Path:
    return GOLDEN / f"{index:02d}-{name}.txt"


_DATETIME = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z")
_SHORT_DATETIME = re.compile(r"\b\d{4}-\d{2}-\d{2} \d{2}:\d{2}\b")
_DURATION = re.compile(r"\bin \d+(?:\.\d+)? s\b")


def masked(text: str, *, folder: Path, clock: bool) -> str:
    """``text`` with what differs from run to run replaced (see the module's docstring)."""
    text = text.replace(str(folder), "<tmp>").replace(str(ROOT), "<repo>")
    text = _DATETIME.sub("YYYY-MM-DDThh:mm:ssZ", text)
    text = _SHORT_DATETIME.sub("YYYY-MM-DD hh:mm", text)
    text = _DURATION.sub("in N s", text)
    if clock:
        today = dt.datetime.now(dt.UTC).date()
        for day in (today, today - dt.timedelta(days=today.weekday())):
            text = text.replace(day.isoformat(), "YYYY-MM-DD")
    return text


@pytest.fixture(scope="module")
def tour(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Every step's transcript, in order, masked."""
    folder = tmp_path_factory.mktemp("tour")
    exe = Path(sys.executable).with_name("kg")
    env = {k: v for k, v in os.environ.items() if k not in ("KG_STORE", "KG_ANALYTICS_DB", "KG_CONTACT")}
    env.update({"COLUMNS": "80", "XDG_DATA_HOME": str(folder / "xdg")})
    out = []
    for _name, args, clock in STEPS:
        proc = subprocess.run([str(exe), "--store", "store", *args], cwd=folder, env=env, capture_output=True,
                              text=True, timeout=300)
        transcript = (f"$ kg {' '.join(args)}\n--- exit {proc.returncode}\n--- stdout\n{proc.stdout}"
                      f"--- stderr\n{proc.stderr}")
        out.append(masked(transcript, folder=folder, clock=clock))
    return out


@pytest.mark.parametrize("index", range(len(STEPS)), ids=[name for name, _, _ in STEPS])
def test_the_tour_prints_what_it_printed_before(tour: list[str], index: int) -> None:
    path = _golden(index, STEPS[index][0])
    if UPDATE:
        GOLDEN.mkdir(parents=True, exist_ok=True)
        path.write_text(tour[index], encoding="utf-8")
    assert path.exists(), f"no golden file {path.name}: record it with KG_UPDATE_GOLDEN=1"
    expected = path.read_text(encoding="utf-8")
    if tour[index] != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(keepends=True), tour[index].splitlines(keepends=True),
                                            f"golden/{path.name}", "now"))
        pytest.fail(f"kg {' '.join(STEPS[index][1])} printed something else:\n{diff}")


def test_every_golden_file_is_a_step_of_the_tour() -> None:
    expected = {_golden(i, name).name for i, (name, _, _) in enumerate(STEPS)}
    assert {p.name for p in GOLDEN.glob("*.txt")} == expected


def test_the_masks_leave_the_data_alone(tmp_path: Path) -> None:
    text = "issued 2024-12-09 · changed 2026-05-01T12:34:56Z · 2026-05-01 12:34 · built in 0.7 s · see 0.7 s"
    assert masked(text, folder=tmp_path, clock=False) == (
        "issued 2024-12-09 · changed YYYY-MM-DDThh:mm:ssZ · YYYY-MM-DD hh:mm · built in N s · see 0.7 s")
