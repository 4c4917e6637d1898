"""Whether a name found in a paper means the technique: the disambiguation rules.

The rules come from ``kg/data/link-context.toml`` (its comments say how to add one) and
apply to a name whichever technique carries it, so the reader's own techniques get them
too. In order, for one name in one paper:

1. **Its own definition.** An acronym the paper defines ("conditional flow matching
   (CFM)", "TP (true positives)") means what the definition says: the technique only where
   the expansion is one of the technique's names, and then for certain.
2. **Vetoes.** A vetoing cue anywhere in the paper's texts ("storage" for SSD, "cosmic" for
   Muon), or an arXiv category / field of study where the name means something else
   (unless the paper is also listed in an ML category), rules the name out.
3. **Confirmation.** A confirming cue ("state space" for SSD) makes it certain; a name
   that requires one is ruled out without.
4. **Domain.** An acronym, a common word or an ordinary phrase the file marks ("Full
   Attention") needs the paper to be about ML or its systems: an ML category, or a domain
   cue in its text. A name the file marks generic (a kind of system, not the technique's
   own name) never links.

Cues are matched as whole words on the text with separators as spaces, never where the
name itself stands (so that "eagle" vetoes the bird, not EAGLE).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from kg.linking.names import Alias, fold
from kg.linking.patterns import normalise

__all__ = ["CERTAINTY", "Judge", "Rule", "Rules", "Verdict", "context_file", "definitions", "load_rules"]

#: How much a name's kind of support counts towards a link's score.
CERTAINTY: dict[str, float] = {"defined": 1.0, "distinctive": 1.0, "confirmed": 0.95, "domain": 0.8}
_DEFINED = re.compile(r"\(\s*([A-Z][A-Za-z0-9\-]{0,11}[A-Z0-9][A-Za-z0-9\-]{0,4})s?\s*[);,]")
_SHORT_FIRST = re.compile(r"(?<![A-Za-z0-9])([A-Z][A-Za-z0-9\-]{0,11}[A-Z0-9][A-Za-z0-9\-]{0,4})s?\s*"
                          r"\(\s*([^()]{3,120})\)")
_CLAUSE = re.compile(r"[.;:!?]\s|[()\[\]]")


class Cues:
    """A list of cues compiled to one regular expression."""

    def __init__(self, cues: Iterable[str]) -> None:
        parts = []
        for cue in cues:
            cue = cue.strip()
            if not cue:
                continue
            star = cue.endswith("*")
            body = re.escape(normalise(cue.rstrip("*"), lower=False)).replace(r"\ ", " +")
            body += r"[A-Za-z0-9]*" if star else ""
            parts.append(f"(?i:{body})" if cue == cue.lower() else body)
        self.pattern = (re.compile(r"(?<![A-Za-z0-9])(?:" + "|".join(parts) + r")(?![A-Za-z0-9])")
                        if parts else None)

    def spans(self, text: str) -> list[tuple[int, int]]:
        if self.pattern is None:
            return []
        return [m.span() for m in self.pattern.finditer(text)]

    def found(self, text: str, besides: Sequence[tuple[int, int]] = ()) -> bool:
        """Whether a cue stands in ``text`` (normalised) outside the spans ``besides``."""
        return any(not any(s < e2 and s2 < e for s2, e2 in besides) for s, e in self.spans(text))


@dataclass(frozen=True)
class Rule:
    """The rules for one name (see the context file)."""

    label: str
    confirm: Cues | None = None
    require_confirm: bool = False
    veto: Cues | None = None
    veto_categories: tuple[str, ...] = ()
    lowercase: bool = False
    #: an ordinary phrase ("Full Attention"): it needs an ML paper, as an acronym does
    domain: bool = False
    #: a description of a kind of system rather than the technique's own name: never links
    generic: bool = False


@dataclass
class Rules:
    domain_categories: frozenset[str] = frozenset()
    domain: Cues = field(default_factory=lambda: Cues(()))
    by_label: dict[str, Rule] = field(default_factory=dict)

    @property
    def lowercase(self) -> frozenset[str]:
        return frozenset(label for label, rule in self.by_label.items() if rule.lowercase)


def context_file() -> Path:
    from kg.catalog import data_dir

    return data_dir() / "link-context.toml"


def load_rules(path: Path | None = None) -> Rules:
    """The rules of ``path`` (default: the packaged ``kg/data/link-context.toml``)."""
    return _load(path or context_file())


@cache
def _load(path: Path) -> Rules:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    domain = data.get("domain", {})
    rules = Rules(frozenset(domain.get("categories", [])), Cues(domain.get("cues", [])))
    for item in data.get("alias", []):
        label = str(item["label"])
        rules.by_label[label] = Rule(
            label, Cues(item.get("confirm", [])) if item.get("confirm") else None,
            bool(item.get("require_confirm", False)), Cues(item.get("veto", [])) if item.get("veto") else None,
            tuple(item.get("veto_categories", [])), bool(item.get("lowercase", False)),
            bool(item.get("domain", False)), bool(item.get("generic", False)))
    return rules


def _category_matches(category: str, pattern: str) -> bool:
    if pattern.endswith((".", "-")):
        return category.startswith(pattern)
    return category == pattern or category.startswith(pattern + ".")


def _long_form(short: str, before: str) -> str | None:
    """The long form of ``short`` at the end of ``before`` (Schwartz and Hearst's rule: each
    letter of the short form, right to left, in the words before it, the first one starting
    a word), or None."""
    letters = [c.lower() for c in short if c.isalnum()]
    words = before.split()
    if not letters or not words:
        return None
    window = " ".join(words[-min(len(letters) + 5, 2 * len(letters)):])
    i = len(window) - 1
    for n in range(len(letters) - 1, -1, -1):
        c = letters[n]
        while i >= 0 and (window[i].lower() != c or (n == 0 and i > 0 and window[i - 1].isalnum())):
            i -= 1
        if i < 0:
            return None
        i -= 1
    return window[i + 1:].strip(" ,;:-")


def definitions(text: str) -> dict[str, str]:
    """Acronym → its long form, for every acronym ``text`` defines: "long form (ACR)" or
    "ACR (long form)"."""
    out: dict[str, str] = {}
    for m in _DEFINED.finditer(text):
        short = m.group(1)
        head = text[:m.start()]
        clause = _CLAUSE.split(head)[-1] if _CLAUSE.search(head) else head
        long = _long_form(short, clause)
        if long and len(long) > len(short):
            out.setdefault(short, long)
    for m in _SHORT_FIRST.finditer(text):
        short, inside = m.group(1), m.group(2)
        long = _long_form(short, inside.split(",")[0].split(";")[0])
        if long and len(long.split()) >= 2 and fold(long) == fold(inside.split(",")[0].split(";")[0]):
            out.setdefault(short, long)
    return out


@dataclass(frozen=True)
class Verdict:
    ok: bool
    certainty: str = "distinctive"
    reason: str = ""


class Judge:
    """Decides, for the names found in one paper, which mean a technique."""

    def __init__(self, rules: Rules, labels: Mapping[str, Sequence[str]]) -> None:
        """``labels``: each technique's names (IRI → names), for an acronym's definition."""
        self.rules = rules
        self.folded = {iri: {fold(n) for n in names} for iri, names in labels.items()}

    def judge(self, alias: Alias, technique: str, context: str, categories: frozenset[str],
              defined: Mapping[str, str], own: Sequence[tuple[int, int]], *, inside: bool = False) -> Verdict:
        """Whether ``alias`` names ``technique`` in a paper whose texts are ``context``
        (normalised, separators as spaces), listed in ``categories``, defining the acronyms
        of ``defined``; ``own``: where the alias stands in ``context``. ``inside``: the name
        stands inside another technique's name ("Transformer" in "Switch Transformer"),
        which settles the domain and confirms it, vetoes apart."""
        if alias.kind == "acronym" and alias.label in defined:
            long = fold(defined[alias.label])
            names = self.folded.get(technique, set())
            if any(long == n or long.endswith(" " + n) or n.endswith(" " + long) for n in names):
                return Verdict(True, "defined")
            return Verdict(False, reason=f"defined here as {defined[alias.label]!r}")
        rule = self.rules.by_label.get(alias.label)
        ml = bool(categories & self.rules.domain_categories)
        if rule is not None and rule.generic:
            return Verdict(False, reason="a generic description")
        if rule is not None:
            if rule.veto is not None and rule.veto.found(context, own):
                return Verdict(False, reason="a vetoing cue")
            if not ml and any(_category_matches(c, p) for c in categories for p in rule.veto_categories):
                return Verdict(False, reason="the paper's field")
            if inside or (rule.confirm is not None and rule.confirm.found(context, own)):
                return Verdict(True, "confirmed")
            if rule.require_confirm:
                return Verdict(False, reason="no confirming cue")
        if alias.kind in ("acronym", "word") or (rule is not None and rule.domain):
            if inside:
                return Verdict(True, "confirmed")
            if ml or self.rules.domain.found(context, own):
                return Verdict(True, "domain")
            return Verdict(False, reason="not an ML paper")
        return Verdict(True, "distinctive")
