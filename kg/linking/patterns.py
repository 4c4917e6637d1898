"""The multi-pattern matcher: every name of every technique found in one pass over a text.

Two Aho-Corasick automata (``pyahocorasick``) read a normalised copy of the text of the
same length, so that a hit's offsets are the original text's: hyphens, underscores,
slashes and line breaks become spaces in both copies, and one copy is also in lower
case. Phrases are looked for in the lower-case copy ("Mixture-of-Experts" and "mixture of
experts" are one), acronyms, coined names and words in the other, with their own capitals.
A phrase ending in ``s`` is also looked for without it, and every hit may end in a plural
or possessive (``s``, ``es``, ``'s``). A hit counts only on word boundaries (a letter or
digit on either side rules it out; a CJK character does not, Chinese text having no
spaces), and where hits overlap the longest leftmost one wins ("Gated DeltaNet" over
"DeltaNet").
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import ahocorasick

from kg.linking.names import Alias, fold

__all__ = ["Hit", "Matcher", "is_word_char", "normalise"]

_SEPARATORS = str.maketrans({c: " " for c in "-‐‑‒–—_/\t\n\r\u00a0\u2009\u202f"})
_SUFFIXES = ("'s", "’s", "es", "s")
_EXACT_SUFFIXES = ("'s", "’s", "s")


def is_word_char(c: str) -> bool:
    """A letter or digit that joins a word (CJK ideographs and kana do not: they stand
    next to Latin names without a space)."""
    if not c.isalnum():
        return False
    code = ord(c)
    return not (0x2E80 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF or 0xAC00 <= code <= 0xD7AF
                or 0xFF00 <= code <= 0xFFEF)


def normalise(text: str, *, lower: bool) -> str:
    """``text`` with separators as spaces (and in lower case with ``lower``), of the same
    length, so that an offset in one is an offset in the other. The last texts asked about
    are remembered: the matcher and the context rules read the same ones in turn."""
    return _lowered(text) if lower else _spaced(text)


@functools.lru_cache(maxsize=64)
def _spaced(text: str) -> str:
    return text.translate(_SEPARATORS)


@functools.lru_cache(maxsize=64)
def _lowered(text: str) -> str:
    out = _spaced(text)
    low = out.lower()
    if len(low) == len(out):
        return low
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in out)


@dataclass(frozen=True)
class Hit:
    """A name found at ``start:end`` of the text (the suffix it took included)."""

    start: int
    end: int
    alias: Alias


class Matcher:
    """Finds the names of ``names`` in texts."""

    def __init__(self, names: Sequence[Alias], *, lowercase: frozenset[str] = frozenset()) -> None:
        """``lowercase``: the words (as written) that also match in lower case."""
        self.aliases = list(names)
        self._folded = ahocorasick.Automaton()
        self._exact = ahocorasick.Automaton()
        for alias in self.aliases:
            if alias.exact:
                key = normalise(alias.label, lower=False)
                self._add(self._exact, key, alias)
                if alias.label in lowercase:
                    self._add(self._folded, key.lower(), alias)
            else:
                key = fold(alias.label)
                self._add(self._folded, key, alias)
                if key.endswith("s") and len(key) > 4 and not key.endswith("ss"):
                    self._add(self._folded, key[:-1], alias)
        for automaton in (self._folded, self._exact):
            if len(automaton):
                automaton.make_automaton()

    @staticmethod
    def _add(automaton: ahocorasick.Automaton, key: str, alias: Alias) -> None:
        """Under ``key``: the aliases it stands for, and its length."""
        if key in automaton:
            found: tuple[int, list[Alias]] = automaton.get(key)
            if alias not in found[1]:
                found[1].append(alias)
        else:
            automaton.add_word(key, (len(key), [alias]))

    def find_all(self, text: str) -> list[Hit]:
        """Every name in ``text`` on word boundaries, overlapping ones included."""
        hits: list[Hit] = []
        for automaton, lower in ((self._folded, True), (self._exact, False)):
            if not len(automaton):
                continue
            norm = normalise(text, lower=lower)
            # A name matched with its own capitals takes a plural "s" or a possessive, not
            # "es": "Switches" is a verb more often than the plural of Switch.
            suffixes = _SUFFIXES if lower else _EXACT_SUFFIXES
            for last, (length, found) in automaton.iter(norm):
                span = _bounded(norm, last, length, suffixes)
                if span is not None:
                    hits += [Hit(span[0], span[1], alias) for alias in found]
        return hits

    def find(self, text: str) -> list[Hit]:
        """The names in ``text``, left to right, without overlaps."""
        hits = self.find_all(text)
        if len(hits) < 2:
            return hits
        hits.sort(key=lambda h: (h.start, -(h.end - h.start)))
        kept: list[Hit] = []
        end = -1
        for hit in hits:
            if hit.start >= end:
                kept.append(hit)
                end = hit.end
            elif hit.start == kept[-1].start and hit.end == kept[-1].end and all(
                    k.alias != hit.alias for k in kept if k.start == hit.start):
                kept.append(hit)  # the same span under two names (of two techniques) stays for each
        return kept


def _bounded(norm: str, last: int, length: int, suffixes: tuple[str, ...]) -> tuple[int, int] | None:
    """The span of a key of ``length`` ending at ``last`` if it stands on word boundaries
    (with a plural or possessive ending taken in), else None."""
    start = last + 1 - length
    if start > 0 and is_word_char(norm[start - 1]):
        return None
    end = last + 1
    if end < len(norm) and is_word_char(norm[end]):
        for suffix in suffixes:
            stop = end + len(suffix)
            if norm.startswith(suffix, end) and (stop == len(norm) or not is_word_char(norm[stop])):
                return start, stop
        return None
    return start, end
