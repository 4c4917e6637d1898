"""A page of a grouped query found from its small side: the page key first, the rest for
that page only.

A named query such as ``bibliography`` or ``lineage-papers`` groups its rows by a few
variables (``GROUP BY ?paper``) and fills each row from many ``OPTIONAL`` blocks (title,
venue, authors, status, ...). Sorting every group to keep the first hundred makes the
store fill in every row of the whole result first. Here a page takes two queries:

1. the *narrow* query: the same groups, with only the page key's values (its plain group
   variables and its ``MIN``/``MAX``/``SAMPLE`` aggregates) and without the ``OPTIONAL``
   blocks that nothing of the key needs, which picks the page's groups in key order;
2. the query itself, restricted to those groups by one ``VALUES`` block of their group
   variables in its own WHERE group, which fills in their rows.

Where a sub-select gives the key's leading values (reading-queue's categories), the narrow
query is read for a few of them at a time until the page is full (:func:`seek`); where it
reads many groups, each small block is joined by hashing rather than looked up for each
group (:func:`hashed`). The page's ``VALUES`` block also opens each ``OPTIONAL`` block
that names the groups, so that the store fills in those blocks for the page alone.

An ``OPTIONAL`` block is left out of the narrow query only where that cannot change a
group or a key value: it shares no variable with the rest of the query but the group
variables, and every aggregate the key uses ignores repeated rows. A query this cannot
be shown safe for (no GROUP BY, a key or a HAVING from an aggregate that repeated rows
change) is not narrowed: :func:`narrow` returns None and the page is found as before.

A query that is not grouped (``new-since``: a union of dated items, each labelled by
``OPTIONAL`` blocks and BINDs after it) is found from the leading part of its key that its
required patterns bind (:func:`by_prefix`): the rows of those patterns alone, the first
``limit + 1`` of them by that part of the key and every tie of the last, then the blocks
and BINDs for those rows alone, which a ``VALUES`` block of them stands in for the
patterns. Where the store reads every row (``everything``: every store does, in
GraphStore.page), this is how such a page is found; where the query makes those leading
values itself (new-since's dates, from ``STR``), the store orders the patterns' rows and
hands over only the first few (:func:`_store_ordered`).

A whole answer (no page) of a grouped query whose groups are many and wide (a named query
``# whole: in lots``) is read the same way, a lot of groups at a time (:func:`whole`), so
that the store never holds every group at once.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from pyoxigraph import Literal

from kg.paging import SortKey, key_function, paged_query, projection, sort_value, without_order
from kg.results import Term
from kg.sparqltext import MODIFIER, code_only, group_end, query_parts

__all__ = ["Narrowed", "Prefixed", "by_prefix", "hashed", "leading", "narrow", "narrow_prefix", "page", "restricted",
           "seek", "whole"]

#: One page of a query: (variables, at most ``limit + 1`` rows in key order) for the text
#: and the cursor's values given.
Picker = Callable[[str, "Sequence[Term | None] | None"], "tuple[list[str], Iterator[tuple[Term | None, ...]]]"]

#: The most rows a page's query is restricted to by their leading key values (ties included).
RESTRICT_MOST = 5000

#: Where no sub-select gives the values of the key's leading variable, a page is read for a few
#: of them at a time (:func:`seek`) where its query has at least SEEK_LEAST rows and at most
#: SEEK_MOST values; else the narrow query is read whole.
SEEK_LEAST = 5000
SEEK_MOST = 20_000

#: A narrow query joins an ``OPTIONAL`` block by hashing where the rows before it are at
#: least HASH_LEAST and the block holds at most HASH_RATIO rows for each (:func:`hashed`).
HASH_LEAST = 5000
HASH_RATIO = 4

#: The groups whose rows one query reads for a whole answer (:func:`whole`): at 700k papers,
#: a lot of the bibliography's 2,000 papers takes 0.9 s, of 20,000 12 s.
WHOLE_GROUPS = 2000

#: Every row of a text, in any order: (variables, rows).
Everything = Callable[[str], "tuple[list[str], Iterator[tuple[Term | None, ...]]]"]

_VARIABLE = re.compile(r"[?$]([A-Za-z0-9_]+)")
#: Aggregates whose value does not change when a group's rows repeat.
_REPEAT_SAFE = re.compile(r"(?is)^\(\s*(MIN|MAX|SAMPLE)\s*\((?P<inner>.*)\)\s+AS\s+[?$](?P<name>\w+)\s*\)$")
_OPTIONAL = re.compile(r"(?i)\bOPTIONAL\s*\{")
_MINUS = re.compile(r"(?i)\bMINUS\s*\{")
_SUBSELECT = re.compile(r"(?i)\{\s*SELECT\b")
_AGGREGATE = re.compile(r"(?i)\b(COUNT|SUM|MIN|MAX|AVG|SAMPLE|GROUP_CONCAT)\s*\(\s*(DISTINCT\b)?")
_CALL = re.compile(r"(?i)\b(FILTER|BIND)\s*(\(|(?:NOT\s+)?EXISTS\s*\{)")


@dataclass(frozen=True)
class Narrowed:
    """The narrow query of a grouped query and its group variables."""

    text: str
    groups: tuple[str, ...]


@dataclass(frozen=True)
class Prefixed:
    """A query that is not grouped, split where its first ``OPTIONAL`` block or BIND
    starts: ``text`` reads the rows of the required patterns before that point (the values
    of ``carried``: the key's leading part ``prefix``, then every other variable of theirs
    that the query reads after them). A page's query is ``opening``, a ``VALUES`` block of
    those values for the page's rows, and ``rest``: the rest of its group and what follows
    it, which fills in the rows from those values alone."""

    text: str
    prefix: tuple[SortKey, ...]
    carried: tuple[str, ...]
    opening: str
    rest: str


def _items(head: str) -> list[str]:
    """The projection ``head`` split into items: ``?v`` or ``(expression AS ?v)``."""
    items, depth, start = [], 0, None
    for i, ch in enumerate(head):
        if ch == "(":
            if depth == 0:
                start = i
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0 and start is not None:
                items.append(head[start : i + 1])
                start = None
        elif depth == 0 and ch in "?$":
            m = _VARIABLE.match(head, i)
            if m:
                items.append(m.group(0))
    return items


def _names(text: str) -> set[str]:
    return set(_VARIABLE.findall(text))


def _blank_subselects(code: str) -> str:
    """``code`` with each nested sub-select's WHERE group blanked (its projection stays)."""
    out = list(code)
    for m in _SUBSELECT.finditer(code):
        inner = code.find("{", m.end())
        if inner < 0:
            continue
        end = group_end(code, inner)
        out[inner + 1 : end] = " " * (end - inner - 1)
    return "".join(out)


def _own_optionals(code: str, start: int, end: int, opening: re.Pattern[str] = _OPTIONAL) -> list[tuple[int, int]]:
    """The spans of the ``OPTIONAL`` blocks (or those ``opening`` starts: ``MINUS``) of the
    group between ``start`` and ``end`` in ``code``: its own, not those inside a nested group."""
    found = []
    depth = 0
    for i in range(start, end):
        if depth == 0 and (m := opening.match(code, i)) and (i == 0 or not code[i - 1].isalnum()):
            found.append((i, group_end(code, m.end() - 1) + 1))
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
    return [b for b in found if not any(a < b[0] and b[1] <= z for a, z in found)]


def _clauses(tail: str) -> dict[str, slice]:
    """Where each clause of ``tail`` (what follows a query's WHERE group) lies, by its first
    word: GROUP, HAVING, ORDER, LIMIT, OFFSET, VALUES."""
    marks = [(m.start(), m.group(1).upper().split()[0]) for m in MODIFIER.finditer(tail)]
    return {word: slice(at, marks[i + 1][0] if i + 1 < len(marks) else len(tail)) for i, (at, word) in enumerate(marks)}


def _own_calls(code: str, own: str) -> list[tuple[str, int, int]]:
    """The group's own ``FILTER`` and ``BIND`` calls: (FILTER or BIND, start, end) in
    ``code``, found in ``own`` (the group's text with its nested groups blanked)."""
    return [(m.group(1).upper(), m.start(), group_end(code, m.end() - 1) + 1) for m in _CALL.finditer(own)]


def _bind_target(call: str) -> str | None:
    """The variable a ``BIND(... AS ?v)`` call binds."""
    m = re.search(r"(?i)\bAS\s*[?$](\w+)\s*\)$", call)
    return m.group(1) if m else None


def _is_subselect(code: str, block: int) -> bool:
    """Whether the group that opens first after ``block`` (an ``OPTIONAL`` block's start) is
    a sub-select."""
    return re.match(r"(?i)\s*SELECT\b", code[code.index("{", block) + 1 :]) is not None


def _blanked(code: str, spans: Sequence[tuple[int, int]]) -> str:
    out = list(code)
    for a, z in spans:
        out[a:z] = " " * (z - a)
    return "".join(out)


def _nested_blanked(code: str, start: int, end: int) -> str:
    """``code`` with the inside of each group between ``start`` and ``end`` blanked, its
    braces kept: what is left there is the group's own level."""
    at = start
    while (at := code.find("{", at)) >= 0 and at < end:
        close = group_end(code, at)
        code = code[: at + 1] + " " * (close - at - 1) + code[close:]
        at = close
    return code


def _values(names: Sequence[str], rows: Iterable[Sequence[Term | None]]) -> str:
    """A ``VALUES`` block of ``names`` with one row per item of ``rows`` (None: UNDEF)."""
    body = " ".join("(" + " ".join("UNDEF" if v is None else str(v) for v in row) + ")" for row in rows)
    return f"\n  VALUES ({' '.join('?' + n for n in names)}) {{ {body} }}\n"


def narrow_prefix(query: str, key: Sequence[SortKey]) -> Prefixed | None:
    """``query`` (not grouped) split at its first ``OPTIONAL`` block or BIND (see
    :class:`Prefixed`), or None where the parts cannot be shown to give its rows: a
    required pattern follows that point, a FILTER of its own group reads what a block or a
    BIND gives, a block is a sub-select (read whole again for each page), no part of the
    key is bound by the required patterns, or (a ``SELECT DISTINCT``) the query does not show
    every variable the parts share. A ``SELECT DISTINCT`` reads the required part's rows
    distinct: each is then a row of its own in the query's answer."""
    parts = query_parts(query)
    if parts.form != "SELECT" or parts.group is None or parts.dataset:
        return None
    code = code_only(query)
    opening, closing = parts.group
    if set(_clauses(code[closing + 1 :])) - {"ORDER"}:  # grouped, cut or with VALUES after it
        return None
    head = code[parts.form_start + len("SELECT") : opening]
    if re.match(r"(?i)^\s*REDUCED\b", head) or "(" in head:
        return None
    distinct = re.match(r"(?i)^\s*DISTINCT\b", head) is not None
    blocks = _own_optionals(code, opening + 1, closing)
    if not blocks or any(_is_subselect(code, a) for a, _ in blocks):
        return None
    optional = set().union(*(_names(_blank_subselects(code[a:z])) for a, z in blocks))
    calls = _own_calls(code, _nested_blanked(_blanked(code, blocks), opening + 1, closing)[:closing])
    binds = [(a, z) for kind, a, z in calls if kind == "BIND"]
    first = min(a for a, _ in [*blocks, *binds])
    if _blanked(code, [*blocks, *((a, z) for _, a, z in calls)])[first:closing].strip():
        return None  # a required pattern after a block: the blocks do not come last
    required = _names(_blank_subselects(code[opening + 1 : first]))
    targets = {v for a, z in binds if (v := _bind_target(code[a:z]))}
    filters = [(a, z) for kind, a, z in calls if kind == "FILTER" and a > first]
    if any(_names(code[a:z]) & ((optional - required) | targets) for a, z in filters):
        return None  # the rows it keeps could change without the blocks
    prefix: list[SortKey] = []
    for part in key:
        if part.variable not in required or part.variable in targets:
            break
        prefix.append(part)
    if not prefix:
        return None
    uses = _names(head) | _names(_blank_subselects(code[first:closing]))
    carried = [k.variable for k in prefix] + sorted((required & uses) - {k.variable for k in prefix})
    if distinct and not set(carried) <= _names(head):
        return None  # rows of the required part that the query shows alike could leave a page short
    text = (query[: parts.form_start] + "SELECT " + "DISTINCT " * distinct + " ".join("?" + v for v in carried)
            + " WHERE {"
            + query[opening + 1 : first] + "\n".join(query[a:z] for a, z in filters) + "\n}")
    return Prefixed(text, tuple(prefix), tuple(carried), query[: opening + 1], query[first:])


def narrow(query: str, key: Sequence[SortKey]) -> Narrowed | None:
    """The narrow query of ``query`` for the page ``key`` (see the module's text), or None."""
    parts = query_parts(query)
    if parts.form != "SELECT" or parts.group is None or parts.dataset:
        return None
    code = code_only(query)
    opening, closing = parts.group
    tail = code[closing + 1 :]
    clauses = _clauses(tail)
    if "GROUP" not in clauses or {"LIMIT", "OFFSET", "VALUES"} & set(clauses):
        return None
    by = re.sub(r"(?i)^\s*GROUP\s+BY", "", tail[clauses["GROUP"]]).split()
    if not by or any(not _VARIABLE.fullmatch(token) for token in by):
        return None
    # A HAVING is kept, with what it reads, where repeated rows cannot change it: every
    # aggregate in it is a MIN, MAX or SAMPLE, or reads DISTINCT values.
    at = clauses.get("HAVING", slice(0, 0))
    having = query[closing + 1 :][at]
    if any(m.group(1).upper() not in ("MIN", "MAX", "SAMPLE") and not m.group(2)
           for m in _AGGREGATE.finditer(tail[at])):
        return None
    groups = tuple(token[1:] for token in by)
    head = code[parts.form_start + len("SELECT") : opening]
    head = re.sub(r"(?i)\bWHERE\s*$", "", head.strip())
    if re.match(r"(?i)^(DISTINCT|REDUCED)\b", head):
        return None
    wanted = {k.variable for k in key}
    kept_items, needed = [], set(groups) | _names(having)
    for item in _items(head):
        if item.startswith(("?", "$")):
            if item[1:] in groups:
                kept_items.append(item)
            elif item[1:] in wanted:
                return None  # a key variable that is neither grouped nor aggregated
            continue
        m = _REPEAT_SAFE.match(item)
        name = m.group("name") if m else (_VARIABLE.findall(item) or [""])[-1]
        if name not in wanted:
            continue
        if m is None:
            return None
        kept_items.append(item)
        needed |= _names(m.group("inner"))
    if not wanted <= set(groups) | {(_VARIABLE.findall(i) or [""])[-1] for i in kept_items}:
        return None
    body_start = opening + 1
    blocks = _own_optionals(code, body_start, closing)
    rest = _blanked(code, blocks)[body_start:closing]
    own = _nested_blanked(rest, 0, len(rest))  # the group's own BINDs, not those of nested groups
    if any(re.search(rf"(?i)\bAS\s*[?$]{g}\b", own) for g in groups):
        return None  # a VALUES block of the groups could not come before that BIND
    # Kept: the blocks and the group's own BINDs that what the key, the groups and the required
    # patterns read depends on, and what those read in turn. A block is left out where it shares
    # nothing but group variables with what is kept (it only repeats rows); a BIND where nothing
    # kept reads its value (reading-list's venue; lineage-nodes' values of your own, whose
    # repository a block of stars reads, itself left out).
    binds = [(body_start + a, body_start + z) for kind, a, z in _own_calls(code[body_start:closing], own)
             if kind == "BIND"]
    elements = [*blocks, *binds]
    names = [_names(_blank_subselects(code[a:z])) for a, z in elements]
    targets = [None] * len(blocks) + [_bind_target(code[a:z]) for a, z in binds]
    read = needed | _names(_blank_subselects(_blanked(code, elements)[body_start:closing]))
    if not set(groups) <= read:
        return None  # a group variable that only an OPTIONAL binds
    kept: set[int] = set()
    while grown := [i for i, n in enumerate(names) if i not in kept and (
            targets[i] in read if i >= len(blocks) else not n & read <= set(groups))]:
        kept.update(grown)
        read = read.union(*(names[i] for i in grown))
    dropped = [span for i, span in enumerate(elements) if i not in kept]
    if all(i in kept for i in range(len(blocks))):
        return None
    text = _blanked(query, dropped)
    text = (text[: parts.form_start] + "SELECT " + " ".join(kept_items) + " WHERE " + text[opening : closing + 1]
            + "\nGROUP BY " + " ".join("?" + g for g in groups) + "\n" + (having.strip() + "\n" if having else ""))
    return Narrowed(text, groups)


def restricted(query: str, groups: Sequence[str], rows: Sequence[Sequence[Term | None]]) -> str:
    """``query`` with one ``VALUES`` block of ``groups`` (one row per item of ``rows``, each
    a term or None for UNDEF) first in its own WHERE group, where the store starts from it
    (:func:`narrow` refuses a query whose own group BINDs a group variable).

    Where every group value is bound, the block also opens each of the group's own
    ``OPTIONAL`` blocks that names a group variable (but for one that is a sub-select,
    which must stand alone in its group). That changes no row: each row of the
    group binds the group variables to one of those values, so a row of the block with
    other values could never join it. But it lets the store fill the block for the page's
    groups alone: Oxigraph otherwise joins a block with a ``FILTER`` or a path of several
    patterns (a paper's ordered authors) by hashing all of its rows, which took 4.6 s of a
    5.6 s page of ``bibliography`` at 100k papers, against 0.06 s this way."""
    parts = query_parts(query)
    assert parts.group is not None
    block = _values(groups, rows)
    opening, closing = parts.group
    inserts = [(opening + 1, block)]
    if all(v is not None for row in rows for v in row):
        code = code_only(query)
        for a, z in _own_optionals(code, opening + 1, closing):
            if _is_subselect(code, a):
                continue  # OPTIONAL { SELECT ... }: a sub-select stands alone in its group
            if _names(_blank_subselects(code[a:z])) & set(groups):
                inserts.append((code.index("{", a) + 1, block))
        inserts += _subselect_inserts(code, opening, closing, groups, rows)
    for at, text in sorted(inserts, reverse=True):
        query = query[:at] + text + query[at:]
    return query


def _subselect_inserts(code: str, opening: int, closing: int, groups: Sequence[str],
                       rows: Sequence[Sequence[Term | None]]) -> list[tuple[int, str]]:
    """Where a ``VALUES`` block of the page's groups goes inside each outermost sub-select
    of the WHERE group between ``opening`` and ``closing`` that projects group variables as
    they are, and what block: of those variables alone. A sub-select is read whole, apart
    from the rows it is joined with (bibliography's listed papers: 0.5 s of each page at
    700k papers); restricted this way, it reads the page's groups alone. That changes no
    row: each row of the query binds the group variables to one of the page's values, and
    the sub-select gives the same rows for those. Left out where rows could change: a sub-select
    with LIMIT or OFFSET, or that groups without those variables (or aggregates over all
    its rows); and a variable that the sub-select BINDs (reading-queue-technique's roles)."""
    found: list[tuple[int, str]] = []
    end = opening
    for m in _SUBSELECT.finditer(code, opening + 1, closing):
        if m.start() < end:
            continue  # inside the sub-select before: its variables are its own
        end = group_end(code, m.start())
        inner = code.index("{", m.end())
        inner_end = group_end(code, inner)
        head, where, tail = code[m.end() : inner], code[inner : inner_end + 1], code[inner_end + 1 : end]
        clauses = _clauses(tail)
        if {"LIMIT", "OFFSET"} & set(clauses):
            continue
        star = re.match(r"(?i)^\s*(DISTINCT\s+|REDUCED\s+)?\*", head) is not None
        plain = [g for g in groups if (star or re.search(rf"(?<![\w(])[?$]{g}(?!\w)", _depth_zero_text(head)))
                 and not re.search(rf"(?i)\bAS\s*[?$]{g}\b", where)]  # a VALUES block cannot come before its BIND
        if not plain:
            continue
        grouped = re.sub(r"(?i)^\s*GROUP\s+BY", "", tail[clauses["GROUP"]]).split() if "GROUP" in clauses else None
        if grouped is not None and not {"?" + g for g in plain} <= set(grouped):
            continue
        if grouped is None and _AGGREGATE.search(head):
            continue
        at = [list(groups).index(g) for g in plain]
        values = list(dict.fromkeys(tuple(row[i] for i in at) for row in rows))
        found.append((inner + 1, _values(plain, values)))
    return found


def _depth_zero_text(head: str) -> str:
    """``head`` (a projection) with what is inside parentheses blanked: its plain variables."""
    out, depth = [], 0
    for ch in head:
        depth += ch == "("
        out.append(ch if depth == 0 else " ")
        depth -= ch == ")"
    return "".join(out)


def leading(narrowed: Narrowed, key: Sequence[SortKey]) -> tuple[str, tuple[SortKey, ...]] | None:
    """A query for the values of the key's leading group variables, where a sub-select of
    the narrow query's own group binds them (reading-queue's categories), in any order; and
    those parts of the key. None where there is none."""
    parts = query_parts(narrowed.text)
    assert parts.group is not None
    code = code_only(narrowed.text)
    opening, closing = parts.group
    at = opening + 1
    while (at := code.find("{", at)) >= 0 and at < closing:
        end = group_end(code, at)
        inner = re.match(r"(?i)\s*SELECT\b(.*?)\bWHERE\b", code[at + 1 : end], re.S)
        joined = (code[:at].rstrip()[-1:] in ("{", ".", "}")  # not after OPTIONAL, UNION, MINUS, GRAPH ...
                  and not re.match(r"(?i)\s*UNION\b", code[end + 1 :]))
        if inner and joined and not re.match(r"(?i)\s*(DISTINCT|REDUCED)?\s*\*", inner.group(1)):
            projected = {(_VARIABLE.findall(item) or [""])[-1] for item in _items(inner.group(1))}
            prefix: list[SortKey] = []
            for part in key:
                if part.variable not in projected or part.variable not in narrowed.groups:
                    break
                prefix.append(part)
            if prefix:
                return (narrowed.text[: parts.form_start] + "SELECT DISTINCT "
                        + " ".join("?" + k.variable for k in prefix) + " WHERE " + narrowed.text[at : end + 1],
                        tuple(prefix))
        at = end + 1
    return None


def _lead_values(narrowed: Narrowed, key: Sequence[SortKey], everything: Everything,
                 ) -> tuple[str, tuple[SortKey, ...]] | None:
    """Where the key starts with a group variable, a query for its values in the narrow
    query's rows, or more (at most :data:`SEEK_MOST` + 1 of them), and that part of the key:
    its WHERE group without what only takes rows away (its own MINUS blocks and FILTERs:
    read-without-note's notes) or adds columns, but not that variable (the OPTIONAL blocks
    that do not name it). A value no row has only leaves a read of the page empty. None where
    that group has fewer than :data:`SEEK_LEAST` rows: read whole, it is cheap, and a
    restriction could lead the store to a worse plan (fact-provenance's graphs: 1 s)."""
    if not key or key[0].variable not in narrowed.groups:
        return None
    parts = query_parts(narrowed.text)
    assert parts.group is not None
    code = code_only(narrowed.text)
    opening, closing = parts.group
    lead = key[0].variable
    cut = [*_own_optionals(code, opening + 1, closing, _MINUS),
           *((a, z) for a, z in _own_optionals(code, opening + 1, closing) if lead not in _names(code[a:z]))]
    own = _nested_blanked(_blanked(code, cut), opening + 1, closing)[:closing]
    cut += [(a, z) for kind, a, z in _own_calls(code, own) if kind == "FILTER" and a > opening]
    head, group = narrowed.text[: parts.form_start], _blanked(narrowed.text, cut)[opening : closing + 1]
    if _count(everything, head, group, SEEK_LEAST) < SEEK_LEAST:
        return None
    return f"{head}SELECT DISTINCT ?{lead} WHERE {_naming(group, lead)}\nLIMIT {SEEK_MOST + 1}", (key[0],)


def _naming(group: str, variable: str) -> str:
    """``group``, a WHERE group of triple patterns alone, with only the patterns that name
    ``?variable``: the values of the variable in the whole group, and more. The patterns that
    only narrow them are the costly part (read-without-note's read papers and their titles:
    0.76 s at 700k papers, where the times of every status change take 0.06 s). A group with
    anything else in it (a block, a BIND, VALUES) is kept whole."""
    code = code_only(group)
    inner = code[code.index("{") + 1 : code.rindex("}")]
    if re.search(r"(?i)[{}()]|\b(BIND|VALUES|FILTER|GRAPH|SERVICE)\b", inner):
        return group
    start = group.index("{") + 1
    ends = [start + m.end() for m in re.finditer(r"\.(?=\s|$)", inner)]
    statements = [group[a:z] for a, z in zip([start, *ends], [*ends, start + len(inner)], strict=True)]
    named = re.compile(rf"[?$]{re.escape(variable)}\b")
    kept = [text for text in statements if named.search(code_only(text))]
    if not kept or len(kept) == len([t for t in statements if t.strip()]):
        return group
    return "{" + "".join(text if text.rstrip().endswith(".") else text + " ." for text in kept) + "\n}"


def _count(everything: Everything, head: str, group: str, most: int) -> int:
    """How many rows the WHERE group ``group`` holds, counted up to ``most`` (``head``: the
    query's prologue, its prefixes)."""
    _, rows = everything(f"{head}SELECT (COUNT(*) AS ?n) WHERE {{ SELECT * WHERE {group} LIMIT {most} }}")
    value = next(rows)[0]
    return int(value.value) if isinstance(value, Literal) else 0


def hashed(text: str, everything: Everything) -> str:
    """The narrow query ``text`` with each ``OPTIONAL`` block of plain patterns that holds
    at most :data:`HASH_RATIO` rows for each row of the patterns before the blocks read as a
    sub-select of its own, which the store reads once and joins by hashing, rather than
    looking it up for each row (the titles of 245,000 listed papers at 700k: 18 s against
    8 s). A block with more rows than that is looked up, as for a small reading list in a
    big store. Both counts stop at the bound, so asking costs little."""
    parts = query_parts(text)
    assert parts.group is not None
    code = code_only(text)
    opening, closing = parts.group
    blocks = _own_optionals(code, opening + 1, closing)
    plain = [(a, z) for a, z in blocks if re.fullmatch(r"\{[^{}]*\}", code[code.index("{", a) : z])
             and not re.search(r"(?i)\b(FILTER|BIND|VALUES|OPTIONAL|MINUS|SERVICE|GRAPH)\b", code[a + 8 : z])]
    if not plain:
        return text

    head = text[: parts.form_start]
    rows = _count(everything, head, _blanked(text, blocks)[opening : closing + 1], 100 * HASH_LEAST * HASH_RATIO)
    if rows < HASH_LEAST:
        return text
    out = text
    for a, z in sorted(plain, reverse=True):
        body = text[text.index("{", a) : z]
        if _count(everything, head, body, HASH_RATIO * rows + 1) <= HASH_RATIO * rows:
            out = out[:a] + f"OPTIONAL {{ SELECT * WHERE {body} }}" + out[z:]
    return out


def seek(narrowed: Narrowed, key: Sequence[SortKey], limit: int, after: Sequence[Term | None] | None,
         pick: Picker, everything: Everything) -> tuple[list[str], Iterator[tuple[Term | None, ...]]] | None:
    """The narrow query's page (as ``pick`` gives it), read for a few values of the key's
    leading part at a time, in order, where :func:`leading` or :func:`_lead_values` finds
    those values: the first category's queued papers, then the next's, until the page is
    full, rather than every queued paper. None where it finds none, where they are more than
    :data:`SEEK_MOST`, or where the values cannot narrow the query."""
    found = leading(narrowed, key) or _lead_values(narrowed, key, everything)
    if found is None:
        return None
    text, prefix = found
    variables, rows = everything(text)
    ahead = key_function(prefix, variables)
    # Restricted by the parts bound in every value, those before the cursor too: a row of a
    # VALUES block joins a value whose part is unbound (and binds it), so such a part cannot
    # tell values apart. Rows of other values sharing the named parts are left out here.
    values = sorted(rows, key=ahead)
    if len(values) > SEEK_MOST:
        return None  # too many to read a few at a time: the narrow query whole is cheaper
    named = [i for i in range(len(prefix)) if all(row[i] is not None for row in values)]
    if not named:
        return None
    if after is not None:  # from the cursor's value on
        bound = ahead(list(after[: len(prefix)]))
        values = [row for row in values if not ahead(row) < bound]
    got: list[tuple[Term | None, ...]] = []
    start, step, columns = 0, 1, None
    while start < len(values) and len(got) <= limit:
        chunk = values[start : start + step]
        start, step = start + step, step * 2
        text = restricted(narrowed.text, [prefix[i].variable for i in named],
                          list(dict.fromkeys(tuple(row[i] for i in named) for row in chunk)))
        columns, page = pick(text, after)
        picked = list(page)
        at = [columns.index(k.variable) for k in prefix]
        wanted = set(chunk)
        kept = [row for row in picked if tuple(row[i] for i in at) in wanted]
        if len(kept) < len(picked) and len(picked) > limit:
            return None  # rows of other values took the page's places: read it whole
        got += kept  # each chunk's values come after the last one's: the rows stay in key order
    if columns is None:
        return None
    return columns, iter(got[: limit + 1])


def by_prefix(query: str, key: Sequence[SortKey], limit: int, after: Sequence[Term | None] | None,
              pick: Picker, everything: Everything) -> tuple[list[str], Iterator[tuple[Term | None, ...]]] | None:
    """One page of a query that is not grouped, found from the leading part of its key (see
    the module's text), or None where :func:`narrow_prefix` cannot narrow it."""
    prefixed = narrow_prefix(query, key)
    if prefixed is None:
        return None
    most = max(RESTRICT_MOST, 20 * (limit + 1))  # ties of the page's last leading part
    variables, later = _store_ordered(prefixed, limit + most + 1, after, everything) or \
        _keyed(prefixed, *everything(prefixed.text))
    ahead = key_function(prefixed.prefix, variables)
    tied: list[tuple[Term | None, ...]] = []
    if after is not None:  # the rows that tie with the cursor's leading part: the full key decides
        row: list[Term | None] = [None] * len(variables)
        for part, value in zip(prefixed.prefix, after, strict=False):
            row[variables.index(part.variable)] = value
        bound = ahead(row)
        tied = [r for k, r in later if k == bound]
        later = [(k, r) for k, r in later if bound < k]
    first = heapq.nsmallest(limit + 1, later, key=lambda kr: kr[0])
    if first:
        cut = first[-1][0]
        tied += [r for k, r in later if not cut < k]
    if not tied:
        return projection(query), iter(())
    if len(tied) > most:
        return None  # a key whose leading part ties for most rows: the whole query is cheaper
    at = [variables.index(v) for v in prefixed.carried]
    values = _values(prefixed.carried, (tuple(r[i] for i in at) for r in tied))
    return pick(prefixed.opening + values + prefixed.rest, after)


_Keyed = tuple[list[str], list[tuple[tuple[object, ...], tuple[Term | None, ...]]]]


def _keyed(prefixed: Prefixed, variables: list[str], rows: Iterable[tuple[Term | None, ...]]) -> _Keyed:
    """Each row with its leading key, worked out once."""
    ahead = key_function(prefixed.prefix, variables)
    return variables, [(ahead(r), r) for r in rows]


def _store_ordered(prefixed: Prefixed, most: int, after: Sequence[Term | None] | None, everything: Everything,
                   ) -> _Keyed | None:
    """The first ``most`` rows of ``prefixed.text`` by its leading key (from the cursor's
    leading values on, ties included), each with that key, as the store orders and cuts
    them; None where the store cannot be trusted to: a leading value the query does not
    make itself (Oxigraph reads a stored IRI or long string back from disk at each
    comparison: 40 s for 100,000 IRIs), or rows out of this module's order. Where ``most``
    rows come back and the last one ties with the page's, the caller finds too many ties."""
    code = code_only(prefixed.text)
    if not all(re.search(rf"(?i)\bAS\s*[?$]{k.variable}\b", code) for k in prefixed.prefix):
        return None
    start = None if after is None else list(after[: len(prefixed.prefix)])
    variables, keyed = _keyed(prefixed, *everything(paged_query(prefixed.text, prefixed.prefix, most - 1, start,
                                                                ties=True)))
    if any(b[0] < a[0] for a, b in zip(keyed, keyed[1:], strict=False)):
        return None
    return variables, keyed


def _plain(query: str, key: Sequence[SortKey]) -> Narrowed | None:
    """A query that is not grouped, as :func:`seek` reads it (its page, a few values of the
    key's leading variable at a time: lineage-paper-links' techniques), or None where a
    restriction of that variable could change its rows: it aggregates, is cut (LIMIT,
    OFFSET) or ends in a VALUES block, its own group BINDs the variable, or it does not
    show it as it is."""
    parts = query_parts(query)
    if parts.form != "SELECT" or parts.group is None or parts.dataset or not key:
        return None
    code = code_only(query)
    opening, closing = parts.group
    head = code[parts.form_start + len("SELECT") : opening]
    lead = key[0].variable
    if set(_clauses(code[closing + 1 :])) - {"ORDER"} or _AGGREGATE.search(head) or \
            not re.search(rf"(?<![\w(])[?$]{lead}(?!\w)", _depth_zero_text(head)) or \
            re.search(rf"(?i)\bAS\s*[?$]{lead}\b", _nested_blanked(code, opening + 1, closing)[opening:closing]):
        return None
    return Narrowed(query, (lead,))


def whole(query: str, key: Sequence[SortKey], everything: Everything,
          ) -> tuple[list[str], Iterator[tuple[Term | None, ...]]] | None:
    """Every row of a grouped query in ``key`` order (groups that tie on it by their group
    values), in flat memory: the narrow query's key values of every group first, then the
    rows of WHOLE_GROUPS groups at a time (:func:`restricted`; a grouped query has one row
    for each group), put in the groups' order. None where the query cannot be narrowed.
    Oxigraph holds every group of a query until it has read them all: the whole
    bibliography at 700k papers took 4.2 GB, and 0.79 GB this way (in 129 s against 87 s)."""
    narrowed = narrow(query, key)
    if narrowed is None:
        return None
    variables, rows = everything(hashed(narrowed.text, everything))
    at = [variables.index(g) for g in narrowed.groups]
    ahead = key_function(key, variables)

    def order(row: tuple[Term | None, ...]) -> tuple[object, ...]:
        return ahead(row), tuple(sort_value(row[i]) for i in at)

    groups = list(dict.fromkeys(tuple(r[i] for i in at) for r in sorted(rows, key=order)))
    text = without_order(query)

    def rows_of() -> Iterator[tuple[Term | None, ...]]:
        for first in range(0, len(groups), WHOLE_GROUPS):
            lot = groups[first : first + WHOLE_GROUPS]
            shown, found = everything(restricted(text, narrowed.groups, lot))
            where = [shown.index(g) for g in narrowed.groups]
            place = {group: n for n, group in enumerate(lot)}
            yield from sorted(found, key=lambda r: place.get(tuple(r[i] for i in where), len(lot)))

    return projection(query), rows_of()


def page(query: str, key: Sequence[SortKey], limit: int, after: Sequence[Term | None] | None,
         pick: Picker, everything: Everything,
         ) -> tuple[list[str], Iterator[tuple[Term | None, ...]]] | None:
    """One page of ``query`` found from its small side (see the module's text): ``pick``
    finds a page of a text (the narrow query, then the query for the page's groups alone);
    ``everything`` reads every row of a text. None when the query cannot be narrowed."""
    narrowed = narrow(query, key)
    if narrowed is None:
        plain = _plain(query, key)
        return by_prefix(query, key, limit, after, pick, everything) or \
            (None if plain is None else seek(plain, key, limit, after, pick, everything))
    variables, rows = seek(narrowed, key, limit, after, pick, everything) or \
        pick(hashed(narrowed.text, everything), after)
    at = [variables.index(g) for g in narrowed.groups]
    chosen = list(dict.fromkeys(tuple(row[i] for i in at) for row in rows))
    if not chosen:
        return projection(query), iter(())
    variables, rows = pick(restricted(query, narrowed.groups, chosen), None)
    return variables, iter(sorted(rows, key=key_function(key, variables)))
