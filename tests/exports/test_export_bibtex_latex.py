"""BibTeX that LaTeX accepts: entry types by venue, a year on every dated entry, and no
warning from ``bibtex`` with ``plain`` nor from ``biber --tool --validate-datamodel``."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import bibtexparser
import pytest

from exports.bibtex import Venue, bibliography, parse_venue, render_bibtex

BIBTEX = shutil.which("bibtex")
BIBER = shutil.which("biber")


def _parse(text: str) -> dict[str, dict[str, str]]:
    parser = bibtexparser.bparser.BibTexParser(common_strings=True)
    return {e["ID"]: e for e in bibtexparser.loads(text, parser).entries}


def _all_papers(store) -> list[str]:
    rows = store.select("SELECT DISTINCT ?p WHERE { ?p a bibo:Document ; dcterms:title ?t } ORDER BY ?p")
    return [r["p"].value for r in rows.rows]


def _bibtex_warnings(bib: str, folder: Path) -> list[str]:
    assert BIBTEX, "bibtex is missing: scripts/setup installs texlive-binaries and texlive-base"
    (folder / "refs.bib").write_text(bib, encoding="utf-8")
    (folder / "doc.aux").write_text("\\relax\n\\citation{*}\n\\bibstyle{plain}\n\\bibdata{refs}\n")
    run = subprocess.run([BIBTEX, "doc"], cwd=folder, capture_output=True, text=True, timeout=120)
    assert run.returncode in (0, 1), run.stdout + run.stderr  # 1: warnings only; 2 and up: errors
    assert "error message" not in run.stdout, run.stdout
    assert (folder / "doc.bbl").stat().st_size > 0
    return [line for line in run.stdout.splitlines() if line.startswith("Warning--")]


def _biber_warnings(bib: str, folder: Path) -> list[str]:
    assert BIBER, "biber is missing: scripts/setup installs biber and texlive-bibtex-extra"
    (folder / "refs.bib").write_text(bib, encoding="utf-8")
    run = subprocess.run([BIBER, "--tool", "--validate-datamodel", "--nolog", "refs.bib"], cwd=folder,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    return [line for line in (run.stdout + run.stderr).splitlines() if line.startswith(("WARN", "ERROR"))]


@pytest.mark.slow
@pytest.mark.parametrize("which", ["reading list", "every paper"])
def test_bibtex_with_plain_and_biber_give_no_warnings(built_store, tmp_path: Path, which: str) -> None:
    papers = None if which == "reading list" else _all_papers(built_store)
    bib = render_bibtex(bibliography(built_store, papers=papers), header="TechKG test bibliography")
    assert _bibtex_warnings(bib, tmp_path) == []
    assert _biber_warnings(bib, tmp_path) == []


@pytest.mark.slow
def test_latex_specials_in_titles_pass_bibtex_and_biber(hostile_store, tmp_path: Path) -> None:
    bib = render_bibtex(bibliography(hostile_store, papers=_all_papers(hostile_store)))
    assert _bibtex_warnings(bib, tmp_path) == []
    assert _biber_warnings(bib, tmp_path) == []
    assert "{b} &" not in (tmp_path / "doc.bbl").read_text(encoding="utf-8")


def test_entry_types_follow_the_venue(built_store) -> None:
    entries = _parse(render_bibtex(bibliography(built_store, papers=_all_papers(built_store))))
    by_title = {re.sub(r"[{}]", "", e["title"]): e for e in entries.values()}
    gdn = by_title["Gated Delta Networks: Improving Mamba2 with Delta Rule"]
    assert gdn["ENTRYTYPE"] == "inproceedings" and gdn["year"] == "2025"
    assert gdn["booktitle"] == "International Conference on Learning Representations (ICLR)"
    switch = next(e for t, e in by_title.items() if t.startswith("Switch Transformers"))
    assert (switch["ENTRYTYPE"], switch["journal"], switch["volume"]) == (
        "article", "Journal of Machine Learning Research", "23")
    sonic = next(e for t, e in by_title.items() if t.startswith("SonicMoE"))
    assert sonic["ENTRYTYPE"] == "misc" and sonic["howpublished"] == "arXiv:2512.14080"
    assert sonic["eprint"] == "2512.14080" and sonic["eprinttype"] == "arxiv"
    reports = [e for e in entries.values() if e["ENTRYTYPE"] == "techreport"]
    assert reports and all(e["institution"] for e in reports)
    assert any(e["institution"] == "DeepSeek-AI" for e in reports)
    kinds = {e["ENTRYTYPE"] for e in entries.values()}
    assert kinds == {"inproceedings", "article", "misc", "techreport"}
    misc = sum(e["ENTRYTYPE"] == "misc" for e in entries.values())
    assert misc < len(entries) / 2


def test_every_entry_has_a_year_unless_no_source_dates_it(built_store) -> None:
    entries = _parse(render_bibtex(bibliography(built_store, papers=_all_papers(built_store))))
    undated = {k for k, e in entries.items() if "year" not in e}
    assert all(entries[k]["date"] == "XXXX" and entries[k]["ENTRYTYPE"] == "misc" for k in undated)
    assert len(undated) <= 3  # documentation and software without a dated release
    listed = _parse(render_bibtex(bibliography(built_store)))
    assert all(re.fullmatch(r"\d{4}", e["year"]) for e in listed.values())


def test_entries_without_authors_sort_by_a_key(built_store) -> None:
    entries = _parse(render_bibtex(bibliography(built_store)))
    authorless = [e for e in entries.values() if "author" not in e]
    assert authorless and all(e["key"] and e["ENTRYTYPE"] == "misc" for e in authorless)


@pytest.mark.parametrize(("text", "venue"), [
    ("ICLR'24", Venue("conference", "International Conference on Learning Representations (ICLR)", "2024")),
    ("ICML 2024", Venue("conference", "International Conference on Machine Learning (ICML)", "2024")),
    ("NeurIPS 2019", Venue("conference", "Advances in Neural Information Processing Systems (NeurIPS)", "2019")),
    ("SC 2021", Venue("conference", "International Conference for High Performance Computing, Networking, "
                                    "Storage and Analysis (SC)", "2021")),
    ("USENIX ATC 2021", Venue("conference", "USENIX Annual Technical Conference (USENIX ATC)", "2021")),
    ("OSDI'26", Venue("conference", "USENIX Symposium on Operating Systems Design and Implementation (OSDI)",
                      "2026")),
    ("JMLR vol. 23 (2022)", Venue("journal", "Journal of Machine Learning Research", "2022", "23")),
    ("JMLR'22", Venue("journal", "Journal of Machine Learning Research", "2022")),
    ("VLDB 2020", Venue("journal", "Proceedings of the VLDB Endowment", "2020")),
    ("Proceedings of the 52nd Annual International Symposium on Computer Architecture · 2025",
     Venue("conference", "Proceedings of the 52nd Annual International Symposium on Computer Architecture", "2025")),
    ("arXiv preprint", Venue("arxiv", "")),
    ("arXiv'25", Venue("arxiv", "", "2025")),
    ("arXiv preprint (technical report)", Venue("report", "")),
    ("Technical report (PDF on Hugging Face)", Venue("report", "Technical report (PDF on Hugging Face)")),
    ("GitHub release (DeepSeek Open Source Week)", Venue("other", "GitHub release (DeepSeek Open Source Week)")),
    ("unknown venue", Venue("other", "")),
    ("SCALE workshop notes", Venue("conference", "SCALE workshop notes")),
])
def test_parse_venue(text: str, venue: Venue) -> None:
    assert parse_venue(text) == venue
