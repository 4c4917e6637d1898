"""Binding variables of a SPARQL query to RDF terms with ``VALUES`` blocks.

``inject_values`` puts ``VALUES ?v { term }`` at the start of every ``WHERE`` group
(the query's own and every sub-select's) that uses ``?v``, so the bound value
constrains evaluation everywhere, as a constant would. The terms are serialised by
pyoxigraph, so a value can never change the shape of the query; nothing the user typed
is pasted into it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import product

import pyoxigraph as ox

__all__ = ["inject_values", "values_block"]

_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_WHERE = re.compile(r"(?i)\b(WHERE|ASK)\s*\{")


Term = ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple


def values_block(bindings: Mapping[str, Term | Sequence[Term]]) -> str:
    """A VALUES block; a sequence of terms gives one row per term (per combination)."""
    names = list(bindings)
    for name in names:
        if not _VAR.match(name):
            raise ValueError(f"{name!r} is not a SPARQL variable name")
    variables = " ".join("?" + n for n in names)
    columns = [list(v) if isinstance(v, Sequence) else [v] for v in bindings.values()]
    rows = " ".join("(" + " ".join(str(t) for t in row) + ")" for row in product(*columns))
    return f" VALUES ({variables}) {{ {rows} }} "


def _code_spans(query: str) -> list[tuple[int, int]]:
    """Spans of ``query`` that are SPARQL code, i.e. not strings, IRIs or comments."""
    spans, start, i, n = [], 0, 0, len(query)
    while i < n:
        ch = query[i]
        if ch == "#":
            spans.append((start, i))
            end = query.find("\n", i)
            i = n if end < 0 else end
            start = i
            continue
        if ch in "\"'":
            spans.append((start, i))
            triple = query[i : i + 3] in ('"""', "'''")
            quote = query[i : i + 3] if triple else ch
            j = i + len(quote)
            while j < n:
                if query[j] == "\\":
                    j += 2
                    continue
                if query.startswith(quote, j):
                    j += len(quote)
                    break
                j += 1
            i = start = j
            continue
        if ch == "<":
            m = re.match(r"<[^<>\"{}|^`\\\s]*>", query[i:])
            if m:
                spans.append((start, i))
                i = start = i + m.end()
                continue
        i += 1
    spans.append((start, n))
    return [(a, b) for a, b in spans if b > a]


def _code_only(query: str) -> str:
    """``query`` with strings, IRIs and comments blanked out (same length, same offsets)."""
    out = [" "] * len(query)
    for a, b in _code_spans(query):
        out[a:b] = query[a:b]
    return "".join(out)


def _group_end(code: str, opening: int) -> int:
    """The offset of the ``}`` that closes the ``{`` at ``opening``."""
    depth = 0
    for i in range(opening, len(code)):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return len(code)


def inject_values(query: str, bindings: Mapping[str, Term | Sequence[Term]]) -> str:
    """``query`` with ``bindings`` as VALUES blocks in every WHERE (or ASK) group that
    mentions the variable outside its nested sub-selects (a sub-select's projection
    counts). A group that does not use a variable gets no block for it: there it would
    only multiply rows. A variable no group mentions goes to the query's own group."""
    if not bindings:
        return query
    values_block(bindings)  # checks the names
    code = _code_only(query)
    openings = [m.end() - 1 for m in _WHERE.finditer(code)]
    if not openings:
        return query.rstrip() + "\n" + values_block(bindings).strip() + "\n"
    groups = [(o, _group_end(code, o)) for o in openings]
    placed: set[str] = set()
    inserts: dict[int, list[str]] = {}
    for start, end in groups:
        own = list(code[start + 1 : end])
        for inner_start, inner_end in groups:
            if start < inner_start and inner_end <= end:
                own[inner_start - start : inner_end - start] = " " * (inner_end - inner_start)
        text = "".join(own)
        names = [n for n in bindings if re.search(rf"[?$]{n}\b", text)]
        inserts[start + 1] = names
        placed.update(names)
    inserts[groups[0][0] + 1] += [n for n in bindings if n not in placed]
    out, last = [], 0
    for pos in sorted(inserts):
        if inserts[pos]:
            out += [query[last:pos], values_block({n: bindings[n] for n in bindings if n in inserts[pos]})]
            last = pos
    out.append(query[last:])
    return "".join(out)
