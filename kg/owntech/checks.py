"""The checks on what a reader types about a technique, each with an error that names the
problem and the fix: dates, relations, dimensions, paper identifiers, repositories and
``TECHNIQUE:RELATION`` parents. Pure functions: nothing here reads the store."""

from __future__ import annotations

import datetime as dt
import re
from difflib import get_close_matches

from kg.errors import KGError
from kg.iris import normalize_doi, parse_arxiv_id, repo_iri
from kg.owntech.model import VALUES
from kg.tomlfiles import DATE, SLUG
from kg.vocab import LINEAGE_RELATIONS

__all__ = [
    "PaperSpec",
    "check_date",
    "check_repository",
    "check_slug",
    "parse_paper",
    "parse_parent",
    "parse_relation",
    "parse_setting",
    "value_key",
]

#: Other words for the values' keys (after folding case, spaces, dots and hyphens to "_").
_KEY_ALIASES = {
    "s": "situation", "t": "target", "a": "action", "r": "result",
    "star_situation": "situation", "star_target": "target", "star_action": "action", "star_result": "result",
    "suited_for": "suits", "suitedfor": "suits", "headline_result": "headline", "definition": "summary",
    "mechanism": "core_mechanism", "kv_layout": "kv_state_layout", "state_layout": "kv_state_layout",
    "code": "availability", "code_availability": "availability", "compute": "compute_memory",
    "parallelism": "parallel_dimension", "limits": "limitations",
}


def check_slug(ident: str) -> str:
    """A technique's or category's id: a lowercase slug."""
    if not SLUG.match(ident):
        raise KGError(f"the id {ident!r} is not a lowercase slug",
                      hint="Use lowercase letters, digits, '-' and '.', starting with a letter or digit "
                      "(e.g. pipedream-2bw).")
    return ident


def check_date(value: str) -> str:
    """``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``, a real date."""
    text = value.strip()
    m = DATE.match(text)
    problem = None
    if m is None:
        problem = "is not YYYY, YYYY-MM or YYYY-MM-DD"
    else:
        year, month, day = int(m.group(1)), m.group(2), m.group(3)
        try:
            dt.date(year, int(month or 1), int(day or 1))
        except ValueError as exc:
            problem = f"is not a date ({exc})"
    if problem:
        raise KGError(f"the date {value!r} {problem}",
                      hint="Give the year (2019), the month (2019-06) or the day (2019-06-12); "
                      "leave it out when it is not known.")
    return text


def value_key(name: str) -> str:
    """The key of a dimension (or headline, summary, date note) as a person may write it:
    ``core_mechanism``, ``Core mechanism``, ``core-mechanism``, ``star.situation``, ``S``."""
    folded = re.sub(r"[\s.\-/·]+", "_", name.strip().casefold()).strip("_")
    folded = re.sub(r"^(dimensions|dimension|star)_(?=\w)", lambda m: "star_" if m.group(1) == "star" else "",
                    folded)
    folded = _KEY_ALIASES.get(folded, folded)
    if folded in VALUES:
        return folded
    by_label = {re.sub(r"[\s.\-/·]+", "_", v.label.casefold()).strip("_"): k for k, v in VALUES.items()}
    if folded in by_label:
        return by_label[folded]
    close = get_close_matches(folded, [*VALUES, *by_label], n=3, cutoff=0.6)
    guess = [by_label.get(c, c) for c in close]
    raise KGError(f"{name!r} is not a dimension of the comparison page",
                  hint=("Did you mean " + ", ".join(dict.fromkeys(guess)) + "? " if guess else "")
                  + "Dimensions: " + ", ".join(VALUES) + ".")


def parse_setting(setting: str) -> tuple[str, str]:
    """``DIMENSION=TEXT`` → (key, text); an empty TEXT clears the reader's value."""
    name, sep, value = setting.partition("=")
    if not sep or not name.strip():
        raise KGError(f"--set {setting!r} is not DIMENSION=TEXT",
                      hint="Example: --set core_mechanism='Microbatches flow through stages' "
                      "(--set core_mechanism= clears your text).")
    return value_key(name), value.strip()


def parse_relation(relation: str) -> str:
    """A lineage relation, forgiving case and hyphens (``ports-to`` is portsTo)."""
    wanted = relation.strip()
    by_fold = {r.casefold(): r for r in LINEAGE_RELATIONS}
    by_fold.update({r.casefold().replace("-", ""): r for r in LINEAGE_RELATIONS})
    key = wanted.casefold().replace("-", "").replace("_", "").replace(" ", "")
    if key in by_fold:
        return by_fold[key]
    close = get_close_matches(wanted.casefold(), list(by_fold), n=2, cutoff=0.6)
    guess = ", ".join(dict.fromkeys(by_fold[c] for c in close))
    raise KGError(f"{relation!r} is not a lineage relation" + (f": did you mean {guess}?" if guess else ""),
                  hint="Use one of: " + ", ".join(LINEAGE_RELATIONS)
                  + " (docs/catalog-format.md says what each means).")


def parse_parent(spec: str) -> tuple[str, str]:
    """``TECHNIQUE:RELATION`` → (technique name, relation)."""
    name, sep, relation = spec.rpartition(":")
    if not sep or not name.strip() or not relation.strip():
        raise KGError(f"--parent {spec!r} is not TECHNIQUE:RELATION",
                      hint="Name the parent and how this technique derives from it, e.g. --parent GPipe:extends; "
                      "relations: " + ", ".join(LINEAGE_RELATIONS) + ".")
    return name.strip(), parse_relation(relation)


def check_repository(value: str) -> str:
    """A GitHub ``owner/name`` or a repository URL, as its IRI."""
    try:
        return repo_iri(value.strip()).value
    except ValueError as exc:
        raise KGError(f"the repository {value!r} is not a repository: {exc}",
                      hint="Give GitHub's owner/name (NVIDIA/Megatron-LM) or the repository's https URL.") from None


def _check_arxiv_number(value: str, ident: str) -> None:
    """A new-style id's month is 01-12, and its number has four digits up to 1412, five since 1501."""
    m = re.fullmatch(r"(\d{2})(\d{2})\.(\d+)", ident)
    if m is None:
        return
    month, digits = int(m.group(2)), len(m.group(3))
    wanted = 5 if int(m.group(1) + m.group(2)) >= 1501 else 4
    if not 1 <= month <= 12 or digits != wanted:
        number = "five digits (since 2015)" if wanted == 5 else "four digits (before 2015)"
        raise KGError(f"{value!r} is not a well-formed arXiv id",
                      hint=f"A new-style id is YYMM.NNNNN: the month 01-12, then {number}, e.g. 1811.06965.")


class PaperSpec:
    """What ``--paper`` names: an arXiv id, a DOI, or words of a title."""

    def __init__(self, kind: str, value: str) -> None:
        self.kind, self.value = kind, value

    @property
    def iri(self) -> str | None:
        if self.kind == "arxiv":
            return f"https://arxiv.org/abs/{self.value}"
        if self.kind == "doi":
            return f"https://doi.org/{self.value}"
        return self.value if self.kind == "iri" else None

    def __repr__(self) -> str:
        return f"PaperSpec({self.kind!r}, {self.value!r})"


_LOOKS_ARXIV = re.compile(r"^(?:arxiv:|https?://(?:export\.)?arxiv\.org/)|^\d{4}\.\d", re.IGNORECASE)
_LOOKS_DOI = re.compile(r"^(?:doi:|https?://(?:dx\.)?doi\.org/|10\.\d)", re.IGNORECASE)


def parse_paper(value: str) -> PaperSpec:
    """Read ``--paper``: an arXiv id (``1811.06965``, ``arXiv:1811.06965v2``, an abs URL), a
    DOI (``10.1145/...``, ``doi:...``, a doi.org URL), another http(s) IRI, or a title. A value
    that looks like an arXiv id or a DOI but is not one is refused, never read as a title."""
    text = value.strip()
    if not text:
        raise KGError("--paper is empty", hint="Give an arXiv id, a DOI or words of the paper's title.")
    if _LOOKS_ARXIV.match(text):
        try:
            ident = parse_arxiv_id(text).id
        except ValueError as exc:
            raise KGError(f"{value!r} is not a well-formed arXiv id", hint=str(exc)[0].upper() + str(exc)[1:] + ".") \
                from None
        _check_arxiv_number(value, ident)
        return PaperSpec("arxiv", ident)
    if _LOOKS_DOI.match(text):
        try:
            doi = normalize_doi(text)
        except ValueError as exc:
            raise KGError(f"{value!r} is not a well-formed DOI", hint=str(exc)[0].upper() + str(exc)[1:] + ".") \
                from None
        if not re.fullmatch(r"10\.\d{4,9}/\S+", doi):
            raise KGError(f"{value!r} is not a well-formed DOI",
                          hint="A DOI is 10.<registrant>/<suffix>, e.g. 10.1145/3341301.3359646.")
        return PaperSpec("doi", doi)
    if text.startswith(("http://", "https://")):
        return PaperSpec("iri", text)
    return PaperSpec("title", text)
