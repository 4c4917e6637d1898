"""Binding variables of a SPARQL query to RDF terms with ``VALUES`` blocks, and reading a
query's top-level structure.

``inject_values`` puts ``VALUES ?v { term }`` at the start of every ``WHERE`` group
(the query's own and every sub-select's) that uses ``?v``, so the bound value
constrains evaluation everywhere, as a constant would. The terms are serialised by
pyoxigraph, so a value can never change the shape of the query; nothing the user typed
is pasted into it.

The rest works on a query's top-level structure (:func:`query_parts`): its form, for
the Accept header, and a page of its results (:func:`paged`), where a server caps them.
The rewrites that some servers need are in :mod:`kg.sparqlrewrite`. Strings, IRIs and
comments are never touched.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import product

import pyoxigraph as ox

__all__ = [
    "MODIFIER",
    "WHERE_GROUP",
    "QueryParts",
    "Term",
    "code_only",
    "code_spans",
    "group_end",
    "inject_values",
    "paged",
    "query_form",
    "query_parts",
    "unsliced",
    "values_block",
    "without_slice",
]

_VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
WHERE_GROUP = re.compile(r"(?i)\b(WHERE|ASK)\s*\{")


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


#: Where a string, an IRI or a comment may start.
_OPENING = re.compile(r"[#\"'<]")
_IRI = re.compile(r"<[^<>\"{}|^`\\\s]*>")
#: The rest of a string, from after its opening quote(s) to after its closing one(s).
_STRING_REST = {quote: re.compile(rf"(?:[^\\]|\\.)*?{quote}", re.S) for quote in ('"""', "'''", '"', "'")}


def code_spans(query: str, *, iris: bool = False) -> list[tuple[int, int]]:
    """Spans of ``query`` that are SPARQL code, i.e. not strings, IRIs or comments
    (IRIs count as code when ``iris``; a ``#`` in one starts no comment either way). An
    unclosed string or comment runs to the end."""
    spans, start, i, n = [], 0, 0, len(query)
    while (found := _OPENING.search(query, i)) is not None:
        i = found.start()
        ch = query[i]
        if ch == "#":
            spans.append((start, i))
            end = query.find("\n", i)
            i = start = n if end < 0 else end
        elif ch in "\"'":
            spans.append((start, i))
            quote = query[i : i + 3] if query[i : i + 3] in ('"""', "'''") else ch
            rest = _STRING_REST[quote].match(query, i + len(quote))
            i = start = n if rest is None else rest.end()
        elif (iri := _IRI.match(query, i)) is not None:
            if not iris:
                spans.append((start, i))
                start = iri.end()
            i = iri.end()
        else:
            i += 1
    spans.append((start, n))
    return [(a, b) for a, b in spans if b > a]


def code_only(query: str, *, iris: bool = False) -> str:
    """``query`` with strings, IRIs and comments blanked out (same length, same offsets);
    IRIs are kept when ``iris``."""
    out = [" "] * len(query)
    for a, b in code_spans(query, iris=iris):
        out[a:b] = query[a:b]
    return "".join(out)


def group_end(code: str, opening: int) -> int:
    """The offset of the ``}`` that closes the ``{`` at ``opening`` (or of the ``)`` that
    closes a ``(`` there)."""
    start, stop = ("(", ")") if code[opening : opening + 1] == "(" else ("{", "}")
    depth = 0
    for i in range(opening, len(code)):
        if code[i] == start:
            depth += 1
        elif code[i] == stop:
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
    code = code_only(query)
    openings = [m.end() - 1 for m in WHERE_GROUP.finditer(code)]
    if not openings:
        return query.rstrip() + "\n" + values_block(bindings).strip() + "\n"
    groups = [(o, group_end(code, o)) for o in openings]
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


# -- a query's top-level structure ------------------------------------------------------

_PROLOGUE = re.compile(r"(?i)\s*(?:PREFIX\s+[A-Za-z0-9_.\-]*:|BASE)\s*")
_FORM = re.compile(r"(?i)\b(SELECT|CONSTRUCT|ASK|DESCRIBE)\b")
_DATASET = re.compile(r"(?i)\bFROM\b")
MODIFIER = re.compile(r"(?i)\b(GROUP\s+BY|HAVING|ORDER\s+BY|LIMIT|OFFSET|VALUES)\b")
_NUMBER = re.compile(r"\s*(\d+)")


@dataclass(frozen=True)
class QueryParts:
    """Offsets into a query's text: where its prologue ends, its form, its WHERE group
    (braces included) and the solution modifiers after it."""

    text: str
    form: str  # SELECT, CONSTRUCT, ASK or DESCRIBE
    form_start: int
    group: tuple[int, int] | None  # the query's own WHERE group, ``{`` to ``}`` inclusive
    order_by: tuple[int, int] | None  # ``ORDER BY ...`` up to the next modifier
    limit: int | None
    offset: int | None
    modifiers_end: int  # where LIMIT / OFFSET end (a trailing VALUES block follows)
    dataset: bool  # the query names its own dataset (FROM / FROM NAMED)

    @property
    def prologue(self) -> str:
        return self.text[: self.form_start]

    @property
    def projection(self) -> list[str] | None:
        """The variables a SELECT projects, in order (None for ``SELECT *`` and other forms)."""
        if self.form != "SELECT" or self.group is None:
            return None
        head = code_only(self.text)[self.form_start + len("SELECT") : self.group[0]]
        head = re.sub(r"(?i)\bWHERE\s*$", "", head.strip())
        head = re.sub(r"(?i)\bFROM\b.*$", "", head, flags=re.S)
        names, depth, i = [], 0, 0
        while i < len(head):
            ch = head[i]
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            elif ch in "?$" and (depth == 0 or re.search(r"(?i)\bAS\s*$", head[max(0, i - 6) : i])):
                m = re.match(r"[?$]([A-Za-z0-9_]+)", head[i:])
                if m:
                    names.append(m.group(1))
                    i += m.end()
                    continue
            elif ch == "*" and depth == 0:
                return None
            i += 1
        return names or None


def query_form(query: str) -> str:
    """SELECT, CONSTRUCT, ASK or DESCRIBE (SELECT when it cannot tell)."""
    m = _FORM.search(code_only(query))
    return m.group(1).upper() if m else "SELECT"


def query_parts(query: str) -> QueryParts:
    """The top-level structure of ``query`` (which may start with PREFIX declarations)."""
    code = code_only(query)
    pos = 0
    while m := _PROLOGUE.match(code, pos):
        if m.end() == pos:
            break
        pos = m.end()
    form_match = _FORM.search(code, pos)
    form = form_match.group(1).upper() if form_match else "SELECT"
    form_start = form_match.start() if form_match else pos
    cursor = form_match.end() if form_match else pos
    if form == "CONSTRUCT":  # skip the template, unless this is CONSTRUCT WHERE { ... }
        after = code[cursor:].lstrip()
        if after.startswith("{"):
            cursor = group_end(code, code.index("{", cursor)) + 1
    opening, depth = -1, 0
    for i in range(cursor, len(code)):
        if code[i] == "(":
            depth += 1
        elif code[i] == ")":
            depth -= 1
        elif code[i] == "{" and depth == 0:
            opening = i
            break
    group = (opening, group_end(code, opening)) if opening >= 0 else None
    dataset = bool(_DATASET.search(code[form_start : opening if opening >= 0 else len(code)]))
    order_by: tuple[int, int] | None = None
    limit = offset = None
    tail_start = group[1] + 1 if group else len(code)
    modifiers_end = tail_start
    marks = [(m.start(), m.end(), m.group(1).upper().split()[0]) for m in MODIFIER.finditer(code, tail_start)]
    for index, (start, end, word) in enumerate(marks):
        nxt = marks[index + 1][0] if index + 1 < len(marks) else len(code)
        if word == "VALUES":
            break
        if word in ("LIMIT", "OFFSET"):
            number = _NUMBER.match(code, end)
            if number and word == "LIMIT":
                limit = int(number.group(1))
            elif number:
                offset = int(number.group(1))
            modifiers_end = number.end() if number else end
        else:
            if word == "ORDER":
                order_by = (start, nxt)
            modifiers_end = nxt
    return QueryParts(query, form, form_start, group, order_by, limit, offset, modifiers_end, dataset)


def without_slice(parts: QueryParts) -> tuple[str, str]:
    """The query up to its modifiers with LIMIT and OFFSET cut out, and its trailing VALUES."""
    assert parts.group is not None
    text, end = parts.text, parts.group[1] + 1
    cuts = [m.span() for m in re.finditer(r"(?i)\b(?:LIMIT|OFFSET)\s*\d+", code_only(text)[: parts.modifiers_end])
            if m.start() >= end]
    kept, last = [], 0
    for a, b in cuts:
        kept.append(text[last:a])
        last = b
    kept.append(text[last : parts.modifiers_end])
    return "".join(kept).rstrip(), text[parts.modifiers_end :]


def unsliced(query: str) -> tuple[str, int | None, int | None]:
    """``query`` without its ORDER BY, LIMIT and OFFSET (the same solutions, unordered,
    uncut: what a count needs), and the LIMIT and OFFSET it had."""
    parts = query_parts(query)
    if parts.group is None:
        return query, parts.limit, parts.offset
    body, trailing = without_slice(parts)
    if parts.order_by is not None:
        body = body[: parts.order_by[0]]  # only LIMIT and OFFSET follow ORDER BY
    return f"{body}\n{trailing}", parts.limit, parts.offset


def paged(query: str, limit: int, offset: int) -> str:
    """``query`` (a SELECT or CONSTRUCT) cut to ``limit`` solutions from ``offset``, within
    its own LIMIT / OFFSET. A query with ORDER BY is ordered in a sub-select and sliced
    outside it: servers that cap results refuse to sort past their cap at one level."""
    parts = query_parts(query)
    if parts.group is None or parts.form not in ("SELECT", "CONSTRUCT"):
        raise ValueError("only SELECT and CONSTRUCT queries with a WHERE group can be paged")
    own_offset = parts.offset or 0
    start = own_offset + offset
    count = limit if parts.limit is None else max(0, min(limit, parts.limit - offset))
    body, trailing = without_slice(parts)
    if parts.order_by is None or parts.form != "SELECT":
        return f"{body}\nLIMIT {count} OFFSET {start}\n{trailing}".rstrip() + "\n"
    projection = parts.projection
    outer = " ".join("?" + v for v in projection) if projection else "*"
    inner = body[len(parts.prologue) :]
    return f"{parts.prologue}SELECT {outer} WHERE {{ {{\n{inner}\n{trailing}}} }}\nLIMIT {count} OFFSET {start}\n"
