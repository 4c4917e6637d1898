"""The few rewrites of a SPARQL query that servers need, each keeping its answers identical
(kg.store.remote applies them where a server's capabilities call for one):

- its ORDER BY moved outside a sub-select (:func:`order_outside`), for servers that
  cannot order by an aggregate's alias;
- a bound term written beside the property patterns that use it (:func:`inline_bindings`,
  :func:`constants`, :func:`values_as_constants`), or VALUES as FILTERs
  (:func:`values_as_filters`), for servers that ignore or misjoin VALUES there;
- sameTerm against a simple literal as the equality it means (:func:`same_term_as_equality`);
- a BIND moved after the OPTIONAL groups that precede it (:func:`binds_after_optionals`).

Strings, IRIs and comments are never touched (:func:`kg.sparqltext.code_only`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

import pyoxigraph as ox

from kg.sparqltext import (
    MODIFIER,
    WHERE_GROUP,
    QueryParts,
    Term,
    code_only,
    code_spans,
    group_end,
    query_parts,
    without_slice,
)

__all__ = [
    "binds_after_optionals",
    "constants",
    "inline_bindings",
    "order_outside",
    "same_term_as_equality",
    "values_as_constants",
    "values_after_unions",
    "values_as_filters",
]


_AGGREGATE = re.compile(r"(?i)\b(COUNT|SUM|MIN|MAX|AVG|SAMPLE|GROUP_CONCAT)\s*\(")


def _calls(code: str) -> list[tuple[int, int]]:
    """Spans of the aggregate calls in ``code``, parentheses included."""
    spans = []
    for m in _AGGREGATE.finditer(code):
        depth, i = 0, m.end() - 1
        for i in range(m.end() - 1, len(code)):
            depth += code[i] == "("
            depth -= code[i] == ")"
            if depth == 0:
                break
        spans.append((m.start(), i + 1))
    return spans


def _head_end(text: str, parts: QueryParts) -> int:
    """Where a SELECT's projection ends (before WHERE and its group)."""
    assert parts.group is not None
    head = code_only(text)[: parts.group[0]]
    where = re.search(r"(?i)\bWHERE\s*$", head)
    return where.start() if where else parts.group[0]


def order_outside(query: str) -> str:
    """A SELECT whose ORDER BY (with its LIMIT / OFFSET) and HAVING are moved out of the
    query into an outer one over it as a sub-select, so that they use plain variables:
    the same rows, in the same order. An aggregate in ORDER BY becomes a hidden alias of
    the sub-select; one in HAVING that the query projects becomes that alias, and HAVING a
    FILTER outside. Unchanged when there is nothing to move, or when what would move uses
    a variable the query does not project."""
    parts = query_parts(query)
    projection = parts.projection
    if parts.form != "SELECT" or parts.group is None or not projection:
        return query
    text, code = parts.text, code_only(parts.text)
    having = re.search(r"(?i)\bHAVING\b", code[parts.group[1] :])
    if parts.order_by is None and having is None:
        return query
    body, trailing = without_slice(parts)
    end = parts.order_by[0] if parts.order_by else len(body)
    order = text[parts.order_by[0] : parts.order_by[1]].strip() if parts.order_by else ""
    extra: list[str] = []
    order_code = code_only(order)
    for k, (x, y) in enumerate(reversed(_calls(order_code))):  # ORDER BY MIN(?v): a hidden alias
        extra.append(f"({order[x:y]} AS ?_order{k})")
        order = order[:x] + f"?_order{k}" + order[y:]
    condition = ""
    if having is not None:
        start = parts.group[1] + having.start()
        clause = text[start + len("HAVING") : end]
        aliases = {text[x:y].strip(): name for x, y, name in _aliases(text, parts)}
        for expression, name in sorted(aliases.items(), key=lambda item: -len(item[0])):
            clause = clause.replace(expression, f"?{name}")
        if _AGGREGATE.search(code_only(clause)):
            return query
        condition = f" FILTER({clause.strip()})"
        end = start
    used = set(re.findall(r"[?$]([A-Za-z0-9_]+)", code_only(order + condition)))
    missing = sorted(used - set(projection) - {f"_order{k}" for k in range(len(extra))})
    distinct = re.match(r"(?i)\s*SELECT\s+(DISTINCT|REDUCED)\b", code[parts.form_start :])
    if missing and (distinct or condition and set(missing) & set(re.findall(r"[?$](\w+)", condition))):
        return query
    extra += [f"?{v}" for v in missing]  # sorted by, not shown: group keys (or plain variables)
    head_end = _head_end(body, parts)
    inner = body[len(parts.prologue) : head_end] + " " + " ".join(extra) + " " + body[head_end:end]
    slice_ = (f" LIMIT {parts.limit}" if parts.limit is not None else "") + (
        f" OFFSET {parts.offset}" if parts.offset is not None else "")
    outer = " ".join("?" + v for v in projection)
    return (f"{parts.prologue}SELECT {outer} WHERE {{ {{\n{inner.rstrip()}\n{trailing}}}{condition} }}\n"
            f"{order}{slice_}\n")


def _aliases(text: str, parts: QueryParts) -> list[tuple[int, int, str]]:
    """The expressions a SELECT projects ``(expression AS ?name)``: their spans and names."""
    code = code_only(text)
    out = []
    for m in re.finditer(r"\(", code[parts.form_start : _head_end(text, parts)]):
        start = parts.form_start + m.start()
        depth = 0
        for i in range(start, len(code)):
            depth += code[i] == "("
            depth -= code[i] == ")"
            if depth == 0:
                break
        alias = re.search(r"(?is)^\((.*)\bAS\s*[?$]([A-Za-z0-9_]+)\s*\)$", code[start : i + 1])
        if alias:
            out.append((start + 1, start + 1 + len(alias.group(1)), alias.group(2)))
    return out


# -- bound terms written as constants ----------------------------------------------------

_EXCLUDED = re.compile(r"(?i)\b(VALUES|SELECT|GROUP\s+BY|ORDER\s+BY|HAVING|MINUS)\b")


def inline_bindings(query: str, bindings: Mapping[str, Term | Sequence[Term] | str]) -> str:
    """``query`` with each variable bound to a single term also written as that term in
    the WHERE groups' patterns and filters, for servers that do not use a VALUES binding
    where it matters (Virtuoso 7 evaluates a property path without it, and misjoins
    sub-selects beside it). The VALUES blocks stay, so the variable is still bound for
    the projection and every group that has one: the answers are those of the binding.
    The variable is left alone where a constant would change the meaning or the syntax:
    VALUES blocks, sub-select projections and their GROUP BY / ORDER BY / HAVING, ``AS
    ?v``, and MINUS blocks (where the variable decides what is shared). The term is
    serialised by pyoxigraph, as in VALUES."""
    single = _single(bindings)
    if not single:
        return query
    code = code_only(query)
    allowed = [False] * len(code)
    for m in WHERE_GROUP.finditer(code):
        opening = m.end() - 1
        allowed[opening + 1 : group_end(code, opening)] = [True] * (group_end(code, opening) - opening - 1)
    for m in _EXCLUDED.finditer(code):
        if not allowed[m.start()]:
            continue
        word = m.group(1).upper()
        if word in ("VALUES", "MINUS"):
            opening = code.find("{", m.end())
            end = group_end(code, opening) if opening >= 0 else len(code)
        elif word == "SELECT":  # a sub-select's projection, up to its WHERE group
            end = code.find("{", m.end())
        else:  # a sub-select's modifiers, up to the end of the sub-select
            end = code.find("}", m.end())
        end = len(code) if end < 0 else end
        allowed[m.start() : end] = [False] * (end - m.start())
    names = "|".join(re.escape(n) for n in single)
    out, last = [], 0
    for m in re.finditer(rf"(?i)(\bBOUND\s*\(\s*)?(?<![\w?$])[?$]({names})(?!\w)(\s*\))?", code):
        if not allowed[m.start()] or re.search(r"(?i)\bAS\s*$", code[max(0, m.start() - 8) : m.start()]):
            continue
        if m.group(1) and m.group(3):  # BOUND(?v) of a bound variable
            out += [query[last : m.start()], "true"]
        else:
            start = m.start(2) - 1
            out += [query[last:start], single[m.group(2)]]
            if m.group(3):
                out.append(query[m.end(2) : m.end()])
        last = m.end()
    out.append(query[last:])
    return "".join(out)


def _single(bindings: Mapping[str, Term | Sequence[Term] | str]) -> dict[str, str]:
    """The bindings that hold one term, serialised (a str is a term already serialised)."""
    out = {}
    for name, value in bindings.items():
        if isinstance(value, str):
            out[name] = value
            continue
        if isinstance(value, Sequence) and not isinstance(value, ox.Triple):
            if len(value) != 1:
                continue
            value = value[0]
        out[name] = str(value)
    return out


def constants(query: str, bindings: Mapping[str, Term | Sequence[Term] | str]
              ) -> tuple[str, dict[str, Term | Sequence[Term] | str]]:
    """``query`` with each single-term binding written as a constant instead of a VALUES
    block, for servers that misjoin VALUES (Virtuoso 7): in the WHERE groups as
    :func:`inline_bindings` does, in a CONSTRUCT template or DESCRIBE, and in the
    projection as ``(term AS ?v)``, so the answers still name it (inside a projected
    expression, as the term). The query's own GROUP BY, HAVING and ORDER BY name it as
    ``(term)`` (grouping by a constant keeps an empty answer empty). A sub-select no
    longer projects or groups by it (:func:`_subselect_constants`): its patterns hold
    the constant, so the join on the variable is a join on the constant, and the result
    is a strict SPARQL 1.1 query with the answers of the binding.
    Returns the text and the bindings left to bind with VALUES (lists of terms, and every
    binding of a ``SELECT *``, whose projection cannot name a constant, or of a query that
    assigns the variable itself with ``AS ?v``, names it in a MINUS block, or has a
    sub-select that projects nothing else)."""
    single = _single(bindings)
    parts = query_parts(query)
    if not single or parts.group is None or (parts.form == "SELECT" and parts.projection is None):
        return query, dict(bindings)
    code = code_only(query)
    names = "|".join(re.escape(n) for n in single)
    if re.search(rf"(?i)\bAS\s*[?$]({names})(?!\w)", code) or _in_minus(code, names):
        return query, dict(bindings)
    rest = {k: v for k, v in bindings.items() if k not in single}
    group_start, group_end = parts.group
    head = query[parts.form_start : group_start]
    head_code = code[parts.form_start : group_start]
    var = re.compile(rf"(?<![\w?$])[?$]({names})(?!\w)")
    if parts.form == "SELECT":
        new_head = _head_constants(head, head_code, single, var, lambda name: f"({single[name]} AS ?{name})")
    else:
        new_head = _substitute(head, head_code, var, lambda m: single[m.group(1)])
    inlined = inline_bindings("WHERE " + query[group_start : group_end + 1], {k: bindings[k] for k in single})[6:]
    body = _subselect_constants(inlined, single, var)
    if body is None:
        return query, dict(bindings)
    tail = query[group_end + 1 :]
    return query[: parts.form_start] + new_head + body + _constant_modifiers(tail, single, var), rest


def _in_minus(code: str, names: str) -> bool:
    """Whether a MINUS block of ``code`` mentions one of the variables ``names``: there the
    variable decides what is removed, which a constant cannot do."""
    for m in re.finditer(r"(?i)\bMINUS\s*\{", code):
        if re.search(rf"[?$]({names})(?!\w)", code[m.end() : group_end(code, m.end() - 1)]):
            return True
    return False


def _head_constants(head: str, head_code: str, single: Mapping[str, str], var: re.Pattern[str],
                    bare: Callable[[str], str]) -> str:
    """A SELECT's projection with each bound variable written ``bare(name)`` where it is
    projected itself (outside parentheses) and as its term inside a projected expression."""
    depth, depths = 0, []
    for ch in head_code:
        depth += ch == "("
        depth -= ch == ")"
        depths.append(depth)
    return _substitute(head, head_code, var,
                       lambda m: bare(m.group(1)) if depths[m.start()] == 0 else single[m.group(1)])


def _subselect_constants(body: str, single: Mapping[str, str], var: re.Pattern[str]) -> str | None:
    """``body`` (a WHERE group whose patterns hold the constants already) with every
    sub-select's projection, GROUP BY, HAVING and ORDER BY rid of the bound variables
    (see :func:`_constant_modifiers`); None where a sub-select would project nothing."""
    code = code_only(body)
    edits: list[tuple[int, int, str]] = []
    for m in re.finditer(r"(?i)\bSELECT\b", code):
        opening, depth = -1, 0
        for i in range(m.end(), len(code)):
            depth += code[i] == "("
            depth -= code[i] == ")"
            if code[i] == "{" and depth == 0:
                opening = i
                break
        if opening < 0:
            return None
        head = _head_constants(body[m.end() : opening], code[m.end() : opening], single, var, lambda name: "")
        if not re.search(r"[?$*]", code_only(head)):
            return None
        edits.append((m.end(), opening, head))
        end, depth = group_end(code, opening), 0
        for close in range(end + 1, len(code)):  # the sub-select's modifiers, up to its closing brace
            depth += code[close] == "{"
            depth -= code[close] == "}"
            if depth < 0:
                break
        edits.append((end + 1, close, _constant_modifiers(body[end + 1 : close], single, var)))
    out, last = [], 0
    for start, stop, text in sorted(edits):
        out += [body[last:start], text]
        last = stop
    return "".join(out) + body[last:]


def _constant_modifiers(tail: str, single: Mapping[str, str], var: re.Pattern[str]) -> str:
    """A query's solution modifiers with bound variables as constants: left out of GROUP BY
    and ORDER BY where other keys remain (a constant groups and sorts nothing; Virtuoso
    refuses to group by one), ``(term)`` where a GROUP BY has no other key (so an empty
    answer stays empty), an ORDER BY of nothing but them dropped; ``(term)`` in HAVING."""
    code = code_only(tail)
    marks = list(MODIFIER.finditer(code))
    out, last = [], 0
    for index, m in enumerate(marks):
        end = marks[index + 1].start() if index + 1 < len(marks) else len(code)
        word = m.group(1).upper().split()[0]
        clause, clause_code = tail[m.end() : end], code[m.end() : end]
        if not var.search(clause_code) or word in ("LIMIT", "OFFSET", "VALUES"):
            continue
        if word == "HAVING":
            new = _substitute(clause, clause_code, var, lambda h: f"({single[h.group(1)]})")
        elif var.sub("", clause_code).strip():
            new = _substitute(clause, clause_code, var, lambda h: "")
        elif word == "GROUP":
            new = _substitute(clause, clause_code, var, lambda h: f"({single[h.group(1)]})")
        else:  # ORDER BY nothing but constants
            out += [tail[last : m.start()]]
            last = end
            continue
        out += [tail[last : m.end()], new]
        last = end
    out.append(tail[last:])
    return "".join(out)


def _substitute(text: str, code: str, var: re.Pattern[str], make: Callable[[re.Match[str]], str]) -> str:
    out, last = [], 0
    for m in var.finditer(code):
        out += [text[last : m.start()], make(m)]
        last = m.end()
    return "".join(out) + text[last:]


_VALUES_BLOCK = re.compile(r"(?i) ?\bVALUES\s*\(([?$\w\s]+)\)\s*\{")


def _values_blocks(query: str, code: str) -> list[tuple[int, int, dict[str, str | None]]]:
    """The VALUES blocks of ``query``: their spans, and the term of each variable where the
    block has one row (None where it has more)."""
    blocks = []
    for m in _VALUES_BLOCK.finditer(code):
        opening = m.end() - 1
        end = group_end(code, opening)
        names = m.group(1).replace("$", "?").split()
        rows = [(a, b) for a, b in _row_spans(code, opening + 1, end)]
        terms: dict[str, str | None] = {n.lstrip("?"): None for n in names}
        if len(rows) == 1:
            a, b = rows[0]
            values = [query[x:y] for x, y in _term_spans(query, a, b)]
            if len(values) == len(names):
                terms = {n.lstrip("?"): v for n, v in zip(names, values, strict=True)}
        blocks.append((m.start(), end + 1, terms))
    return blocks


def values_as_constants(query: str) -> str:
    """``query`` with the single-row VALUES blocks that :func:`inject_values` wrote turned
    back into bindings and written as :func:`constants`. A variable is converted only when
    every block that binds it gives it the same one term; other blocks stay."""
    blocks = _values_blocks(query, code_only(query))
    found: dict[str, str | None] = {}
    for _, _, terms in blocks:
        for name, term in terms.items():
            found[name] = term if found.get(name, term) == term else None
    single = {n: t for n, t in found.items() if t is not None}
    if not single:
        return query
    out, last = [], 0
    for start, end, terms in blocks:
        if all(name in single for name in terms):
            out.append(query[last:start])
            last = end
    out.append(query[last:])
    text, rest = constants("".join(out), single)
    return query if rest else text


_SKIPPED = re.compile(r"(?i)(OPTIONAL|MINUS|SERVICE(?:\s+SILENT)?\s+\S+|FILTER|BIND|VALUES)\b")


def _certainly_bound(code: str, start: int, end: int, name: str) -> bool:
    """Whether every solution of the group ``code[start:end]`` (inside its braces) binds
    ``?name`` through its required parts: a triple pattern at its top level, a nested or
    GRAPH group that binds it, or a UNION whose every branch does. OPTIONAL, MINUS,
    SERVICE, FILTER, BIND, VALUES and sub-selects count for nothing (a cautious answer)."""
    var = re.compile(rf"[?$]{name}(?!\w)")
    i, branches = start, list[bool]()  # branches: whether each group of the UNION chain read binds it
    while i < end:
        if m := _SKIPPED.match(code, i):
            j = m.end()
            while j < end and code[j].isspace():
                j += 1
            if j < end and code[j] in "{(":
                j = group_end(code, j) + 1 if code[j] == "{" else _paren_end(code, j) + 1
            i = j
            continue
        if code[i] == "{":
            close = group_end(code, i)
            inner = code[i + 1 : close]
            branch = not re.match(r"(?is)\s*SELECT\b", inner) and _certainly_bound(code, i + 1, close, name)
            union = _UNION.match(code, close + 1)
            if branch and not branches and not union:
                return True
            branches.append(branch)
            if union is None:
                if all(branches):
                    return True
                branches = []
                i = close + 1
            else:
                i = union.end() - 1
            continue
        if code[i] == "(":
            i = _paren_end(code, i) + 1
            continue
        m = var.match(code, i)
        if m:
            return True
        i += 1
    return False


def _paren_end(code: str, opening: int) -> int:
    depth = 0
    for i in range(opening, len(code)):
        depth += code[i] == "("
        depth -= code[i] == ")"
        if depth == 0:
            return i
    return len(code) - 1


_UNION = re.compile(r"(?i)\s*UNION\s*\{")


def values_after_unions(query: str) -> str:
    """``query`` with each VALUES block of a group that also holds a UNION moved to the end
    of that group, where its variables are bound by the group's required parts anyway (then
    joining the block first or last gives the same solutions): for a server that ignores a
    VALUES block beside a UNION and an OPTIONAL (Virtuoso 7 answers as if it were not there)."""
    code = code_only(query)
    moves = []
    for start, end, terms in _values_blocks(query, code):
        opening = _enclosing_brace(code, start)
        close = group_end(code, opening)
        rest = code[opening + 1 : start] + " " * (end - start) + code[end:close]
        if opening < 0 or not re.search(r"(?i)\bUNION\b", rest) or not re.search(r"(?i)\bOPTIONAL\b", rest):
            continue
        blanked = code[: start] + " " * (end - start) + code[end:]
        if all(_certainly_bound(blanked, opening + 1, close, name) for name in terms):
            moves.append((start, end, close))
    for start, end, close in sorted(moves, reverse=True):
        block = query[start:end].strip()
        query = query[:start] + query[end:close] + " " + block + " " + query[close:]
    return query


def values_as_filters(query: str) -> str:
    """``query`` with each single-row VALUES block of IRIs written as ``FILTER(?v = <iri>)``
    in its group, for a server whose planner refuses both the VALUES and the constants
    (Virtuoso 7 on a query of many OPTIONALs about one bound subject). That is the same
    only where the group's own triple patterns (or its GRAPH groups') bind the variable
    (a filter tests, it does not bind), so the query is unchanged unless every block is
    of that kind."""
    code = code_only(query)
    blocks = _values_blocks(query, code)
    out, last = [], 0
    for start, end, terms in blocks:
        if not terms or any(t is None or not t.startswith("<") for t in terms.values()):
            return query
        opening = _enclosing_brace(code, start)
        own = list(code[opening + 1 : group_end(code, opening)])
        depth, groups = 0, []  # groups: whether each open brace hides what it holds
        for i, ch in enumerate(own):  # keep the group's top level (GRAPH groups' too), outside parentheses
            if ch == "{":
                groups.append(not re.search(r"(?i)\bGRAPH\s+\S+\s*$", code[opening + 1 : opening + 1 + i]))
            depth += ch == "("
            hidden = any(groups) or depth > 0 or start <= opening + 1 + i < end
            if ch == "}" and groups:
                groups.pop()
            depth -= ch == ")"
            if hidden or ch in "{}()":
                own[i] = " "
        text = "".join(own)
        if any(not re.search(rf"[?$]{name}(?!\w)", text) for name in terms):
            return query
        filters = " ".join(f"FILTER(?{name} = {term})" for name, term in terms.items())
        out += [query[last:start], f" {filters} "]
        last = end
    out.append(query[last:])
    return "".join(out)


def _enclosing_brace(code: str, position: int) -> int:
    """The offset of the innermost ``{`` still open at ``position``."""
    opened: list[int] = []
    for i in range(position):
        if code[i] == "{":
            opened.append(i)
        elif code[i] == "}" and opened:
            opened.pop()
    return opened[-1] if opened else -1


def _row_spans(code: str, start: int, end: int) -> list[tuple[int, int]]:
    """The ``( ... )`` rows of a VALUES block between ``start`` and ``end``: inner spans."""
    rows, i = [], start
    while i < end:
        if code[i] == "(":
            close = code.index(")", i)
            rows.append((i + 1, close))
            i = close
        i += 1
    return rows


def _term_spans(query: str, start: int, end: int) -> list[tuple[int, int]]:
    """The terms of one VALUES row of ``query``: runs between blanks that are code (a blank
    inside a string or an IRI belongs to its term)."""
    opaque = [True] * len(query)
    for a, b in code_spans(query):
        opaque[a:b] = [False] * (b - a)
    spans, i = [], start
    while i < end:
        if query[i].isspace() and not opaque[i]:
            i += 1
            continue
        j = i
        while j < end and not (query[j].isspace() and not opaque[j]):
            j += 1
        spans.append((i, j))
        i = j
    return spans



_XSD_STRING = "<http://www.w3.org/2001/XMLSchema#string>"
_SAME_TERM = re.compile(r"(?i)\bsameTerm\s*\(")
_OPERAND_VAR = r"[?$][A-Za-z0-9_]+"
_BOOLEAN = (r"\b(?:true|false)\b|[\"'](?:true|false|1|0)[\"']\^\^(?:<http://www\.w3\.org/2001/XMLSchema#boolean>"
            r"|xsd:boolean)")
_OPERAND_TERM = (_BOOLEAN + r"|"
                 r"(?:\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')"  # a boolean, a simple literal
                 r"(?:\^\^(?:<http://www\.w3\.org/2001/XMLSchema#string>|xsd:string))?"
                 r"|<[^<>\"{}|^`\\\s]*>|(?:[A-Za-z][\w-]*)?:[A-Za-z0-9_][\w-]*")  # an IRI
_SAME_TERM_ARGS = re.compile(
    rf"\s*(?:(?P<v1>{_OPERAND_VAR})\s*,\s*(?P<t1>{_OPERAND_TERM})|(?P<t2>{_OPERAND_TERM})\s*,\s*(?P<v2>{_OPERAND_VAR}))"
    r"\s*\)"
)


def same_term_as_equality(query: str) -> str:
    """``query`` with each ``sameTerm`` of a variable and an IRI, a simple literal or a
    boolean (in either order) written as the test it stands for (for a boolean: a boolean
    literal equal to it): ``?v = <iri>`` (which for an IRI
    is the same test), and for a literal: ``?v`` a literal without a language whose
    lexical form is the text and whose type is xsd:string, an error counting as false.
    For Virtuoso 7, whose sameTerm never matches a simple literal and matches nothing
    in a disjunction of two over stored values."""
    code = code_only(query)
    out, last = [], 0
    for m in _SAME_TERM.finditer(code):
        args = _SAME_TERM_ARGS.match(query, m.end())
        if args is None:
            continue
        var = args.group("v1") or args.group("v2")
        term = args.group("t1") or args.group("t2")
        out.append(query[last : m.start()])
        if re.fullmatch(_BOOLEAN, term):  # Virtuoso 7 may answer sameTerm of a boolean both ways at once
            value = "true" if term.strip("\"'").startswith(("true", "1")) else "false"
            out.append(f"COALESCE(isLiteral({var}) && DATATYPE({var}) = <http://www.w3.org/2001/XMLSchema#boolean> "
                       f"&& {var} = {value}, false)")
        elif term[0] in "\"'":
            lexical = term.split("^^")[0]
            out.append(f"COALESCE(isLiteral({var}) && LANG({var}) = \"\" && STR({var}) = {lexical} && "
                       f"({var} = {lexical} || DATATYPE({var}) = {_XSD_STRING}), false)")
        else:
            out.append(f"({var} = {term})")
        last = args.end()
    out.append(query[last:])
    return "".join(out)


_OPTIONAL = re.compile(r"(?i)\bOPTIONAL\s*\{")
_BIND = re.compile(r"(?i)\bBIND\s*\(")
#: What can give a value where a variable is unbound: a BIND using it is not sure to fail then.
_LENIENT = re.compile(r"(?i)\b(COALESCE|IF|BOUND|EXISTS)\b|\|\||&&")


def binds_after_optionals(query: str) -> str:
    """``query`` with each BIND that ends an OPTIONAL group moved right after that group,
    where that gives the same solutions: the expression uses only variables that nothing
    outside the group mentions, and fails (leaving the variable unbound) when one of them
    is unbound, as it is where the OPTIONAL does not match; and nothing before it (the
    group's own filters included) mentions the bound variable. The moved expression is
    guarded by ``BOUND`` of its variables (``IF(BOUND(?a), e, ?_unbound)``): the
    server this is for, Virtuoso 7, which drops the OPTIONALs that follow an OPTIONAL
    ending in a BIND, also gives CONCAT and STR of an unbound variable a value."""
    for _ in range(query.count("BIND") + query.count("bind") + 1):
        moved = _move_one_bind(query)
        if moved is None:
            return query
        query = moved
    return query


def _move_one_bind(query: str) -> str | None:
    code = code_only(query)
    for m in _OPTIONAL.finditer(code):
        opening = m.end() - 1
        close = group_end(code, opening)
        binds = [b for b in _BIND.finditer(code, opening, close) if _enclosing_brace(code, b.start()) == opening]
        if not binds:
            continue
        start, paren = binds[-1].start(), binds[-1].end() - 1
        depth, end = 0, paren
        for end in range(paren, close):
            depth += code[end] == "("
            depth -= code[end] == ")"
            if depth == 0:
                break
        if code[end + 1 : close].strip(" \t\r\n.") or not code[opening + 1 : start].strip():
            continue  # not the group's last element, or its only one
        alias = re.match(r"(?is)\((.*)\bAS\s*[?$](\w+)\s*\)$", code[paren : end + 1])
        if alias is None or _LENIENT.search(alias.group(1)):
            continue
        used = set(re.findall(r"[?$](\w+)", alias.group(1)))
        outside = code[:opening] + " " + code[close + 1 :]
        before = _without_heads(code[:opening])
        target = re.compile(rf"[?$]{alias.group(2)}(?!\w)")
        if not used or any(re.search(rf"[?$]{v}(?!\w)", outside) for v in used) \
                or target.search(before) or target.search(code[opening:start]):
            continue
        expression = query[paren + alias.start(1) : paren + alias.end(1)].strip()
        guard = " && ".join(f"BOUND(?{v})" for v in sorted(used))
        bind = f"BIND(IF({guard}, {expression}, ?_unbound_{alias.group(2)}) AS ?{alias.group(2)})"
        return query[:start] + query[end + 1 : close + 1] + " " + bind + query[close + 1 :]
    return None


def _without_heads(code: str) -> str:
    """``code`` without the projections of its SELECTs (up to each one's WHERE group)."""
    out, last = [], 0
    for m in re.finditer(r"(?i)\bSELECT\b", code):
        opening = code.find("{", m.end())
        out.append(code[last : m.start()])
        last = len(code) if opening < 0 else opening
    return "".join(out) + code[last:]
