"""What a SPARQL text holds before any parser sees it, and limits that keep a parser alive.

pyoxigraph's SPARQL parser and optimiser recurse: 3,000 nested ``{}`` (6 KB of text) or
7,000 ``1+1+…`` terms overflow an 8 MiB stack and kill the process with SIGSEGV. So every
query a user can send is checked first by :func:`check_query`, which bounds

- the size of the text (``QueryLimits.max_bytes``, 256 KiB by default), and
- its nesting depth: brackets ``{ ( [`` and runs of unary operators ``! ^ - +``
  (``QueryLimits.max_depth``, 64 by default; TechKG's own queries stay under 10),

and reports, in the same pass, the ``FROM`` / ``FROM NAMED`` dataset clauses, so the
union default graph is used only when a query names no dataset of its own
(:func:`names_dataset`).

The depth is counted by a reader that follows the grammar where a lexer would guess:
``<`` after a value inside an expression (``FILTER(1<((2))>0)``) compares, as pyoxigraph's
parser reads it, so the brackets after it are counted; anywhere else it opens an IRI. It
tracks which brackets open an expression (after ``FILTER``, ``BIND``, a function's name, in a
``SELECT``, ``GROUP BY``, ``ORDER BY`` or ``HAVING`` clause, and any bracket inside one) and
which a group, a collection, a path or a blank node. Strings, comments and IRIs found that way
are left out of the count. What a text asks of other hosts (``SERVICE``, ``LOAD``) is decided
on its parse tree, by :mod:`kg.sparqloutbound`.

What passes the check is parsed by :func:`run_deep`: in a thread whose stack
(512 MiB, reserved rather than used) holds the deepest query the limits allow, with a
wide margin. ``kg serve`` also parses in worker processes, so a parser bug cannot take
the server down either.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar
from urllib.parse import urljoin, urlsplit

from kg.errors import QueryError

__all__ = [
    "DEEP_STACK",
    "QueryLimits",
    "QueryRefused",
    "Scan",
    "check_query",
    "names_dataset",
    "run_deep",
    "scan",
]

T = TypeVar("T")

#: The stack of threads that parse and run queries: the text the limits allow needs at
#: most about a fifth of it (measured: 1.2 KB of stack per level of ``1+1+…``).
DEEP_STACK = 512 << 20

_SPACE = re.compile(r"\s+")
_COMMENT = re.compile(r"#[^\n\r]*")
_STRING = re.compile(
    r"""'''(?:[^'\\]|\\.|'(?!''))*''' | \"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
      | '(?:[^'\\\n\r]|\\.)*' | "(?:[^"\\\n\r]|\\.)*(?:")""",
    re.VERBOSE | re.DOTALL,
)
_IRI = re.compile(r"<[^<>\"{}|^`\\\x00-\x20]*>")
_VARIABLE = re.compile(r"[?$]\w+")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?")
_LANGUAGE = re.compile(r"@[A-Za-z]+(?:-[A-Za-z0-9]+)*")
#: A prefixed name or blank node label (it holds a colon), or a bare word: a keyword, a
#: function's name, ``a``, ``true``.
_NAME = re.compile(r"(?:[^\W\d][\w.\-]*)?:(?:[\w:%\-]|\\.|\.(?=[\w:%\-]|\\.))*|[^\W\d][\w\-]*")
#: Words after which a clause's brackets are expressions (``SELECT (… AS ?x)``, ``ORDER BY (…)``).
_EXPRESSION_CLAUSES = frozenset({"SELECT", "BY", "HAVING"})
#: Words that end such a clause.
_CLAUSE_ENDS = frozenset({"WHERE", "FROM", "LIMIT", "OFFSET", "VALUES", "ORDER", "GROUP", "HAVING"})
#: Words before ``(`` that do not make it an expression (a row of VALUES, a collection after ``a``).
_NOT_CALLS = frozenset({"VALUES", "A", "GRAPH", "SERVICE", "SILENT", "NAMED", "FROM", "WHERE", "MINUS",
                        "OPTIONAL", "UNION", "EXISTS", "CONSTRUCT", "DESCRIBE", "DATA", "INSERT", "DELETE",
                        "WITH", "USING", "INTO", "TO", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY"})
_BRACKETS = re.compile(r"[{}()\[\]]")
_DELTA = {"{": 1, "(": 1, "[": 1, "}": -1, ")": -1, "]": -1}
#: Runs of prefix operators (``!!!x``, ``- - -1``, ``^^^p``): each nests one level.
_UNARY_RUN = re.compile(r"(?:[!^+\-](?!=)\s*){2,}")
_KEYWORD = re.compile(r"(?i)(?<![?$\w])(FROM|PREFIX|BASE)(?![\w:])")
#: The characters before a word (read backwards) that make it part of a prefixed name
#: or a blank node label; looked at over at most 256 characters.
_NAME_BEFORE = re.compile(r"[\w.\-:%]*")
_MODIFIER = re.compile(r"\s*(?i:(SILENT|NAMED)(?![\w:]))?\s*")
_TARGET = re.compile(r"<[^<>\"{}|^`\\\x00-\x20]*>|[?$]\w+|(?:[^\W\d_][\w.\-]*)?:(?:[\w:%\-]|\\.|\.(?=[\w:%\-]))*")


@dataclass(frozen=True)
class QueryLimits:
    """How large and how deeply nested a SPARQL text may be."""

    max_bytes: int = 256 * 1024
    max_depth: int = 64

    def __post_init__(self) -> None:
        if self.max_bytes <= 0 or self.max_depth <= 0:
            raise ValueError("max_bytes and max_depth must be positive")


class QueryRefused(QueryError):
    """A query refused before parsing: too large, too deeply nested, or asking for
    something the server does not allow. ``reason`` names which (``size``, ``depth``,
    ``service``, ``load``)."""

    def __init__(self, message: str, *, reason: str, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.reason = reason


@dataclass
class Scan:
    """What one pass of the lexer found in a SPARQL text."""

    #: The deepest nesting (brackets plus runs of unary operators).
    depth: int = 0
    #: The IRIs of FROM and FROM NAMED clauses (None where unresolvable).
    from_default: list[str | None] = field(default_factory=list)
    from_named: list[str | None] = field(default_factory=list)

    @property
    def names_dataset(self) -> bool:
        return bool(self.from_default or self.from_named)


def _resolve(kind: str, value: str, prefixes: Mapping[str, str], base: str | None) -> str | None:
    if kind == "iri":
        iri = value[1:-1]
        if base and not urlsplit(iri).scheme:
            iri = urljoin(base, iri)
        return iri if urlsplit(iri).scheme else None
    if kind == "pname":
        prefix, _, local = value.partition(":")
        namespace = prefixes.get(prefix)
        return namespace + re.sub(r"\\(.)", r"\1", local) if namespace is not None else None
    return None


def _code(text: str) -> str:
    """``text`` with its strings and comments turned into spaces and each IRI into
    ``<___>``, of the same length (offsets in the code are offsets in the text), read as the
    grammar reads it: ``<`` right after a value inside an expression is a comparison, and
    what follows it is code; anywhere else ``<`` opens an IRI."""
    out: list[str] = []
    #: What each open bracket opened: "e" an expression, "(" a collection, path or row, "{", "[".
    opened: list[str] = []
    last = before = ""  # the last two significant tokens ("value", "name", "open", "op" or a WORD)
    clause = False  # inside a SELECT / GROUP BY / ORDER BY / HAVING clause
    pos, size = 0, len(text)

    def took(kind: str, piece: str) -> None:
        nonlocal last, before
        out.append(piece)
        before, last = last, kind

    while pos < size:
        char = text[pos]
        found: re.Match[str] | None
        if char.isspace():
            found = _SPACE.match(text, pos)
            assert found is not None
            out.append(found.group())
            pos = found.end()
            continue
        if char == "#":
            found = _COMMENT.match(text, pos)
            assert found is not None
            out.append(" " * len(found.group()))
            pos = found.end()
            continue
        if char in "\"'":
            found = _STRING.match(text, pos)
            if found is not None:
                took("value", " " * len(found.group()))
                pos = found.end()
                continue
        if char == "<":
            comparing = bool(opened) and opened[-1] == "e" and last in ("value", "name")
            found = None if comparing else _IRI.match(text, pos)
            if found is not None:
                took("value", "<" + "_" * (len(found.group()) - 2) + ">")
                pos = found.end()
                continue
            took("op", char)
            pos += 1
            continue
        if char == "\\":
            piece = text[pos:pos + 2]
            took("op", "_" * len(piece))
            pos += len(piece)
            continue
        if char in "({[":
            if char == "(":
                expression = (bool(opened) and opened[-1] == "e") or (clause and (not opened or opened[-1] == "{"))
                if not expression and last not in ("value", "name", "open", "op", "") and last not in _NOT_CALLS:
                    expression = True  # FILTER (, BIND (, regex (, ASC (
                if not expression and last == "name" and before in ("FILTER", "BY", "HAVING"):
                    expression = True  # FILTER ex:f(…), ORDER BY ex:f(…)
                opened.append("e" if expression else "(")
            else:
                opened.append(char)
                if char == "{":
                    clause = False
            took("open", char)
            pos += 1
            continue
        if char in ")}]":
            if opened:
                opened.pop()
            if char == "}":
                clause = False
            took("value" if char in ")]" else "op", char)
            pos += 1
            continue
        for pattern, kind in ((_VARIABLE, "value"), (_NUMBER, "value"), (_LANGUAGE, "value"), (_NAME, "name")):
            found = pattern.match(text, pos)
            if found is not None and found.group():
                word = found.group()
                if kind == "name" and ":" not in word:
                    kind = word.upper()
                    if kind in ("TRUE", "FALSE"):
                        kind = "value"
                    elif kind in _EXPRESSION_CLAUSES:
                        clause = True
                    elif kind in _CLAUSE_ENDS:
                        clause = False
                took(kind, word)
                pos = found.end()
                break
        else:
            took("op", char)
            pos += 1
    return "".join(out)


def _depth(code: str) -> int:
    depth = deepest = 0
    for char in _BRACKETS.findall(code):
        depth = max(0, depth + _DELTA[char])
        deepest = max(deepest, depth)
    runs = [len(re.sub(r"\s", "", m.group())) for m in _UNARY_RUN.finditer(code)]
    return deepest + max(0, max(runs, default=1) - 1)


def scan(text: str, prefixes: Mapping[str, str] | None = None) -> Scan:
    """Read ``text`` once: its nesting depth and its FROM clauses.
    ``prefixes`` are predeclared (the query's own PREFIX declarations are added).

    Conservative where the grammar is ambiguous to a lexer: a word is taken for a
    keyword unless it is plainly part of a variable or a prefixed name."""
    code = _code(text)
    result = Scan(depth=_depth(code))
    known = dict(prefixes or {})
    base: str | None = None
    for match in _KEYWORD.finditer(code):
        start = match.start()
        if start and code[start - 1] in ".-:%":
            before = _NAME_BEFORE.match(code[max(0, start - 256):start][::-1])
            if before is not None and ":" in before.group():
                continue  # ex:a.service, _:b.from
        word = match.group(1).upper()
        modifier = _MODIFIER.match(code, match.end())
        assert modifier is not None
        target = _TARGET.match(text, modifier.end())
        value = target.group() if target else ""
        kind = "iri" if value.startswith("<") else "var" if value[:1] in ("?", "$") else "pname" if value else ""
        if word == "PREFIX":
            if kind == "pname" and value.endswith(":"):
                after = _MODIFIER.match(code, target.end())  # type: ignore[union-attr]
                iri = _TARGET.match(text, after.end()) if after else None
                if iri is not None and iri.group().startswith("<"):
                    known[value[:-1]] = _resolve("iri", iri.group(), {}, base) or iri.group()[1:-1]
            continue
        if word == "BASE":
            if kind == "iri":
                base = _resolve("iri", value, {}, base) or base
            continue
        resolved = _resolve(kind, value, known, base) if kind else None
        named = (modifier.group(1) or "").upper()
        if word == "FROM" and kind:
            (result.from_named if named == "NAMED" else result.from_default).append(resolved)
    return result


def check_query(text: str, limits: QueryLimits | None = None, prefixes: Mapping[str, str] | None = None,
                *, what: str = "query") -> Scan:
    """Refuse ``text`` (:class:`QueryRefused`) when it is larger or more deeply nested
    than ``limits`` allow; otherwise return its :class:`Scan`."""
    limits = limits or QueryLimits()
    size = len(text.encode("utf-8"))
    if size > limits.max_bytes:
        raise QueryRefused(
            f"the {what} is {size:,} bytes, more than the limit of {limits.max_bytes:,} bytes",
            reason="size",
            hint="Send a shorter query: bind long lists of values with a named query's parameters "
            "or split the work into several queries (kg serve: --max-query-size raises the limit).",
        )
    found = scan(text, prefixes)
    if found.depth > limits.max_depth:
        raise QueryRefused(
            f"the {what} nests {found.depth} levels deep (brackets and unary operators), more than "
            f"the limit of {limits.max_depth}",
            reason="depth",
            hint="Flatten the query: join groups instead of nesting them, and drop redundant "
            "brackets (kg serve: --max-query-depth raises the limit).",
        )
    return found


def names_dataset(text: str) -> bool:
    """Whether the query has a ``FROM`` or ``FROM NAMED`` clause of its own."""
    if _MAYBE_FROM.search(text) is None:
        return False
    return scan(text).names_dataset


def run_deep(fn: Callable[[], T]) -> T:
    """``fn()`` in a thread with a :data:`DEEP_STACK` stack; its result or its exception."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    with _STACK_LOCK:
        previous = threading.stack_size(DEEP_STACK)
        try:
            thread = threading.Thread(target=target, name="kg-deep-parse", daemon=True)
            thread.start()
        finally:
            threading.stack_size(previous)
    thread.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


_STACK_LOCK = threading.Lock()
_MAYBE_FROM = re.compile(r"(?i)(?<![\w:?$])from(?![\w:])")
