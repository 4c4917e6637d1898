"""The catalog agrees with the checked fact table (``../shared/reference/facts.md``).

The table's two parts are read as they are written: Part A has one row per technique of
the comparison page, Part B one row per paper of the reading list. Each cell that can be
compared with a catalog value is: identifiers, titles, first authors, dates and years,
venues, repositories, and lineage parents; a cell the table marks unknown (``?``) must
stay unknown in the catalog."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from kg.catalog import Catalog, Paper, Technique, load_catalog
from tests.conftest import SHARED

FACTS = SHARED / "reference" / "facts.md"
ARXIV = re.compile(r"^(\d{4}\.\d{4,5})\b")
MONTHS = {m: i for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), start=1)}
#: Lineage parents the fact table names in words of its own rather than by the parent's
#: name: (parent, child) → the words of the table's cell that stand for the parent.
READINGS = {
    ("transformer", "gqa"): "Multi-head attention",
    ("transformer", "mla"): "MHA KV cache",
    ("switch-transformer", "aux-loss-free-balancing"): "Auxiliary-loss MoE load balancing",
    ("sparsely-gated-moe", "latentmoe"): "Standard (fine-grained) MoE",
    ("switch-transformer", "expert-choice"): "Token-choice top-k MoE routing",
    ("transformer", "attention-residuals"): "Standard PreNorm residual connections",
}


@dataclass
class Row:
    cells: dict[str, str]

    def __getitem__(self, key: str) -> str:
        return self.cells[key]


def _table(heading: str) -> list[Row]:
    text = FACTS.read_text(encoding="utf-8")
    part = text.split(heading, 1)[1]
    lines = []
    for line in part.splitlines()[1:]:
        if line.startswith("## "):
            break
        if line.startswith("|"):
            lines.append([c.strip() for c in line.strip().strip("|").split(" | ")])
    header, rows = lines[0], lines[2:]
    return [Row(dict(zip(header, r, strict=True))) for r in rows]


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog()


def _unknown(cell: str) -> bool:
    return cell.startswith(("?", "none", "None"))


def _dates(cell: str) -> list[str]:
    """Every date a cell gives, as YYYY, YYYY-MM or YYYY-MM-DD, in order."""
    found: list[tuple[int, str]] = []
    for m in re.finditer(r"\b(\d{4}-\d{2}(?:-\d{2})?)\b", cell):
        found.append((m.start(), m.group(1)))
    for m in re.finditer(r"\b(\d{1,2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\w* (\d{4})\b", cell):
        found.append((m.start(), f"{m.group(3)}-{MONTHS[m.group(2)]:02d}-{int(m.group(1)):02d}"))
    for m in re.finditer(r"(?<![\d.-])(\d{4})(?![\d-])", cell):
        found.append((m.start(), m.group(1)))
    return [d for _, d in sorted(found)]


def _compatible(ours: str, theirs: str) -> bool:
    return ours.startswith(theirs) or theirs.startswith(ours)


def _names(catalog: Catalog, name: str) -> list[str]:
    person = catalog.names.people.get(catalog.names.person(name))
    return [name, *(person.aliases if person else [])]


def _technique(catalog: Catalog, row: Row) -> Technique:
    wanted = row["arXiv id / primary URL"]
    name = row["technique (canonical name)"]
    for tech in catalog.on_page():
        paper = catalog.papers.get(tech.paper or "")
        m = ARXIV.match(wanted)
        if paper is not None and m and paper.arxiv == m.group(1):
            return tech
    short = name.split(" (")[0].casefold()
    inside = re.findall(r"\(([^)]*)\)", name)
    for tech in catalog.on_page():
        names = {n.casefold() for n in [tech.name, *tech.aliases]}
        if short in names or any(i.casefold() in names for i in inside):
            return tech
    raise AssertionError(f"no catalog technique for facts row {row['#']} ({name})")


def _paper(catalog: Catalog, row: Row) -> Paper | None:
    m = ARXIV.match(row["arXiv id"])
    for paper in catalog.papers.values():
        if m and paper.arxiv == m.group(1):
            return paper
    wanted = row["exact title"].casefold()
    listed = row["paper (reading-list name)"].split(" (")[0].casefold()
    for paper in catalog.papers.values():
        titles = {t.casefold() for t in [paper.title, *paper.also_known_as]}
        if wanted in titles or listed in titles:
            return paper
    return None


def _title_agrees(paper: Paper, cell: str) -> bool:
    stated = re.sub(r" \((?:README now|v2 retitled|earlier arXiv title).*\)$", "", cell)
    return stated in (paper.title, *paper.also_known_as)


PART_A = _table("## Part A") if FACTS.exists() else []
PART_B = _table("## Part B") if FACTS.exists() else []


def test_the_fact_table_is_read_whole() -> None:
    assert len(PART_A) == 39 and len(PART_B) == 53


@pytest.mark.parametrize("row", PART_A, ids=lambda r: f"A{r['#']}")
def test_each_technique_agrees_with_its_row(catalog: Catalog, row: Row) -> None:
    tech = _technique(catalog, row)
    paper = catalog.papers.get(tech.paper or "")
    source = row["arXiv id / primary URL"]
    m = ARXIV.match(source)
    if m:
        assert paper is not None and paper.arxiv == m.group(1), f"{tech.id}: arXiv id"
    elif source.startswith("http"):
        url = source.split()[0]
        assert paper is not None and paper.url == url, f"{tech.id}: primary URL {url}"
        assert paper.arxiv is None, f"{tech.id}: the table confirms no arXiv id"
    else:
        assert paper is None or paper.arxiv is None, f"{tech.id}: the table confirms no arXiv id"
    if paper is not None and not _unknown(row["exact title"]):
        assert _title_agrees(paper, row["exact title"]), f"{tech.id}: title {paper.title!r}"
    who = tech.first_author or tech.team
    assert who is not None and any(n in row["first author / team"] for n in _names(catalog, who)), \
        f"{tech.id}: first author or team {who!r} vs {row['first author / team']!r}"
    dates = _dates(row["date"])
    if _unknown(row["date"]):
        assert tech.date is None, f"{tech.id}: the table gives no date, the catalog {tech.date}"
    else:
        assert tech.date is not None and _compatible(tech.date, dates[0]), \
            f"{tech.id}: date {tech.date} vs {row['date']!r}"
        assert any(tech.date == d for d in dates) or len(tech.date) <= len(dates[0]), \
            f"{tech.id}: the day {tech.date} is not the table's ({row['date']!r})"
    if _unknown(row["organisation"]):
        assert tech.organisations == [], f"{tech.id}: the table confirms no organisation"
    repo = row["official code repo"]
    if _unknown(repo):
        assert tech.repository is None, f"{tech.id}: the table confirms no repository"
    else:
        stated = repo.split()[0]
        ours = (tech.repository or "").removeprefix("https://github.com/").removeprefix("https://")
        assert ours.casefold() in (stated.casefold(), f"gitcode.com/{stated}".casefold()), \
            f"{tech.id}: repository {tech.repository} vs {repo!r}"


@pytest.mark.parametrize("row", PART_A, ids=lambda r: f"A{r['#']}")
def test_each_lineage_parent_is_the_one_the_table_names(catalog: Catalog, row: Row) -> None:
    tech = _technique(catalog, row)
    cell = row["lineage parent(s)"].casefold()
    for edge in (e for e in catalog.edges if e.child == tech.id):
        parent = catalog.techniques[edge.parent]
        reading = READINGS.get((edge.parent, edge.child))
        names = [reading] if reading else [parent.name, *parent.aliases]
        assert any(re.search(rf"(?<!\w){re.escape(n.casefold())}(?!\w)", cell) for n in names), \
            f"{tech.id} derives from {parent.id} in the catalog; the table says {row['lineage parent(s)']!r}"
        if row["lineage parent(s)"].startswith("(inferred"):
            assert edge.basis == "inferred", f"{parent.id} -> {tech.id} is inferred in the table"


@pytest.mark.parametrize("row", PART_B, ids=lambda r: f"B{r['#']}")
def test_each_reading_list_paper_agrees_with_its_row(catalog: Catalog, row: Row) -> None:
    paper = _paper(catalog, row)
    assert paper is not None, f"no catalog paper for facts row {row['#']}"
    m = ARXIV.match(row["arXiv id"])
    assert paper.arxiv == (m.group(1) if m else None), f"{paper.key}: arXiv id {paper.arxiv}"
    doi = re.search(r"DOI (10\.\S+?)\)?$", row["arXiv id"])
    assert paper.doi == (doi.group(1) if doi else None), f"{paper.key}: DOI {paper.doi}"
    if _unknown(row["exact title"]):
        assert paper.year is None and paper.venue is None and paper.first_author is None
        return
    assert _title_agrees(paper, row["exact title"]), f"{paper.key}: title {paper.title!r}"
    who = paper.first_author or paper.team
    if _unknown(row["first author"]):
        assert paper.first_author is None, f"{paper.key}: the table confirms no first author"
    else:
        assert who is not None and any(n in row["first author"] for n in _names(catalog, who)), \
            f"{paper.key}: first author {who!r} vs {row['first author']!r}"
    assert paper.year == int(_dates(row["year"])[0]), f"{paper.key}: year {paper.year} vs {row['year']!r}"
    if _unknown(row["venue"]):
        assert paper.venue is None, f"{paper.key}: the table confirms no venue"
    else:
        assert paper.venue is not None and paper.venue.split()[0].casefold() in row["venue"].casefold(), \
            f"{paper.key}: venue {paper.venue!r} vs {row['venue']!r}"
