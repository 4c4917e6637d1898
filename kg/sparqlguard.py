"""What a SPARQL text holds before any parser sees it, and limits that keep a parser alive.

pyoxigraph's SPARQL parser and optimiser recurse: 3,000 nested ``{}`` (6 KB of text) or
7,000 ``1+1+…`` terms overflow an 8 MiB stack and kill the process with SIGSEGV. So every
query a user can send is checked first by :func:`check_query`, a light lexer (strings,
IRIs and comments skipped, as the SPARQL grammar reads them) that bounds

- the size of the text (``QueryLimits.max_bytes``, 256 KiB by default), and
- its nesting depth: brackets ``{ ( [`` and runs of unary operators ``! ^ - +``
  (``QueryLimits.max_depth``, 64 by default; TechKG's own queries stay under 10),

and reports, in the same pass, what the text asks for beyond the store:

- ``SERVICE`` (federated queries: a request to another server) and ``LOAD`` (an update
  that fetches a URL), with their targets, so a server can refuse them;
- ``FROM`` / ``FROM NAMED`` dataset clauses, so the union default graph is used only
  when a query names no dataset of its own (:func:`names_dataset`).

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

#: What is not SPARQL code: comments, strings and IRIs (blanked before anything is
#: counted), and backslash escapes in prefixed names (``ex:a\\#b`` holds no comment).
_NOT_CODE = re.compile(
    r"""\#[^\n\r]*
      | '''(?:[^'\\]|\\.|'(?!''))*''' | \"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"
      | '(?:[^'\\\n\r]|\\.)*' | "(?:[^"\\\n\r]|\\.)*"
      | <[^<>"{}|^`\\\x00-\x20]*>
      | \\.""",
    re.VERBOSE | re.DOTALL,
)
_BRACKETS = re.compile(r"[{}()\[\]]")
_DELTA = {"{": 1, "(": 1, "[": 1, "}": -1, ")": -1, "]": -1}
#: Runs of prefix operators (``!!!x``, ``- - -1``, ``^^^p``): each nests one level.
_UNARY_RUN = re.compile(r"(?:[!^+\-](?!=)\s*){2,}")
_KEYWORD = re.compile(r"(?i)(?<![?$\w])(SERVICE|LOAD|FROM|PREFIX|BASE)(?![\w:])")
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
    #: The target of each SERVICE: an absolute IRI, or None for a variable or an IRI
    #: that cannot be resolved.
    services: list[str | None] = field(default_factory=list)
    #: The source of each LOAD (an update), as for services.
    loads: list[str | None] = field(default_factory=list)
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


def _blank(match: re.Match[str]) -> str:
    """Comments and strings become spaces, an IRI ``<___>`` and an escape ``__``: the
    same length, so offsets in the code are offsets in the text."""
    token = match.group()
    if token[0] == "<":
        return "<" + "_" * (len(token) - 2) + ">"
    return "_" * len(token) if token[0] == "\\" else " " * len(token)


def _depth(code: str) -> int:
    depth = deepest = 0
    for char in _BRACKETS.findall(code):
        depth = max(0, depth + _DELTA[char])
        deepest = max(deepest, depth)
    runs = [len(re.sub(r"\s", "", m.group())) for m in _UNARY_RUN.finditer(code)]
    return deepest + max(0, max(runs, default=1) - 1)


def scan(text: str, prefixes: Mapping[str, str] | None = None) -> Scan:
    """Lex ``text`` once: its nesting depth and its SERVICE, LOAD and FROM clauses.
    ``prefixes`` are predeclared (the query's own PREFIX declarations are added).

    Conservative where the grammar is ambiguous to a lexer: a word is taken for a
    keyword unless it is plainly part of a variable or a prefixed name."""
    code = _NOT_CODE.sub(_blank, text)
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
        if word == "SERVICE":
            result.services.append(resolved)
        elif word == "LOAD":
            result.loads.append(resolved)
        elif word == "FROM" and kind:
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
