"""The names a technique is known by, and what kind of name each one is.

A technique's English name, aliases and id (``skos:prefLabel``, ``skos:altLabel``,
``skos:notation``), from whichever graph gives them (the catalog, or the reader's own
techniques), become :class:`Alias` records. A name is split where the catalog joins two
(``"Full Attention / Transformer"``) and loses a parenthetical remark (``"Muon (scaled for
LLM training)"``). Each is one kind:

- ``phrase``: several words (``"Grouped-Query Attention"``, ``"Megatron TP"``): matched in
  any case, with a hyphen, an underscore or a slash for a space, singular or plural;
- ``acronym``: one token in capitals (``"GQA"``, ``"TP"``, ``"EAGLE-3"``): matched as written;
- ``coined``: one token with capitals inside it or digits (``"DeltaNet"``, ``"ZeRO-1"``,
  ``"vLLM"``, ``"Mamba2"``): matched as written, and needing no other sign;
- ``word``: one capitalised word (``"Transformer"``, ``"Muon"``, ``"Triton"``): matched
  as written (in lower case too where the context file says so).

Acronyms and words are common strings: :mod:`kg.linking.context` decides where they mean
the technique. An id counts as a name only where it is not one plain word (``zero``,
``situ``, ``transformer`` would match ordinary text): ``gated-deltanet`` is the phrase
"gated deltanet"; ``ppo`` is left out.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Alias", "TechniqueLabels", "aliases", "classify", "fold", "label_variants"]

#: Shortened words of technique names, written out in as many papers.
_SHORT = {"aux": "auxiliary", "attn": "attention", "param": "parameter", "params": "parameters"}
_SHORT_WORD = re.compile(r"(?<![A-Za-z])(?:aux|attn|params?)(?=[\s\-_])", re.IGNORECASE)
_SPACES = str.maketrans({c: " " for c in "-‐‑‒–—_/\t\n\r\u00a0"})


def fold(text: str) -> str:
    """A name as the phrase matcher compares it: lower case, one space between words
    (hyphens, underscores and slashes are spaces)."""
    return " ".join(text.translate(_SPACES).split()).casefold()


@dataclass(frozen=True)
class TechniqueLabels:
    """A technique and the names it is known by (its preferred English name first)."""

    iri: str
    id: str
    name: str
    labels: tuple[str, ...]
    notations: tuple[str, ...] = ()


@dataclass(frozen=True)
class Alias:
    """One name, the techniques it names, and how it is matched."""

    label: str
    kind: str
    techniques: frozenset[str]

    @property
    def exact(self) -> bool:
        """Matched with its own capitals (acronyms, coined names, words)."""
        return self.kind != "phrase"


def label_variants(label: str) -> list[str]:
    """``"Full Attention / Transformer"`` → both names; ``"Muon (scaled for LLM training)"``
    → ``"Muon"``; ``"aux-loss-free"`` → it and ``"auxiliary-loss-free"``."""
    out = []
    plain = re.sub(r"\s*\([^)]*\)", "", label).strip()
    for part in re.split(r"\s+/\s+", plain):
        part = part.strip(" ,;:")
        if part:
            out.append(part)
            # A shortened word is written out as often ("aux-loss-free" and "auxiliary-loss-free").
            long = _SHORT_WORD.sub(lambda m: _SHORT[m.group(0).lower()], part)
            if long != part:
                out.append(long)
    return list(dict.fromkeys(out))


def _tokens(label: str) -> list[str]:
    return [t for t in re.split(r"[\s\-‐‑_/]+", label) if t]


def classify(label: str) -> str:
    """The kind of a name (see the module's docstring)."""
    tokens = _tokens(label)
    if not tokens:
        return "phrase"
    head = [t for t in tokens if not t.isdigit()]
    if len(head) != 1:  # several words (a version number alone does not make a phrase)
        return "phrase"
    token = head[0]
    letters = [c for c in token if c.isalpha()]
    if not letters:
        return "phrase"
    if all(c.isupper() for c in letters):
        return "acronym" if len(letters) >= 2 else "phrase"
    if any(c.isupper() for c in letters[1:]) or any(c.isdigit() for c in token) or len(tokens) > 1:
        return "coined"  # DeltaNet, vLLM, ZeRO, Mamba2, Mamba-2
    if token[0].isupper() or token.islower():
        return "word"
    return "coined"


def _notation_name(notation: str) -> str | None:
    """An id as a name: ``gated-deltanet`` → ``gated deltanet``; a single plain word → None."""
    if not re.search(r"[\s\-_]", notation.strip()):
        return None
    return notation.strip()


def aliases(techniques: Iterable[TechniqueLabels]) -> list[Alias]:
    """Every distinct name of ``techniques`` with the techniques it names. A phrase is keyed
    by its folded form, other kinds by their spelling; a name shorter than two characters
    is left out."""
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    written: dict[tuple[str, str], str] = {}
    for technique in techniques:
        names: list[str] = []
        for label in technique.labels:
            names += label_variants(label)
        names += [n for n in (_notation_name(x) for x in technique.notations) if n]
        for name in names:
            if len(name.replace(" ", "")) < 2:
                continue
            kind = classify(name)
            key = (kind, fold(name) if kind == "phrase" else name)
            found[key].add(technique.iri)
            written.setdefault(key, name)
    return [Alias(written[key], key[0], frozenset(iris)) for key, iris in sorted(found.items())]


def display_names(techniques: Sequence[TechniqueLabels]) -> dict[str, str]:
    """IRI → preferred name."""
    return {t.iri: t.name for t in techniques}
