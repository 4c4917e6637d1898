"""SPARQL errors that say what is wrong: an unknown prefix, an update where a query was
expected, or a syntax error shown at its place in the text (instead of the parser's list
of Unicode ranges it expected).

Pure functions over the query text; the stores, the CLI and the endpoint raise what they
return.
"""

from __future__ import annotations

import re

from kg.errors import QueryError
from kg.vocab import PREFIXES

__all__ = ["UPDATE_HINT", "is_update", "predeclared", "syntax_error", "undeclared_prefixes", "update_refused"]

# Strings, IRIs and comments, removed before looking for prefixed names or keywords.
_NOISE = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*"""|'
    r"'''(?:[^'\\]|\\.|'(?!''))*'''|"
    r'"(?:[^"\\\n]|\\.)*"|'
    r"'(?:[^'\\\n]|\\.)*'|"
    r"<[^<>\"{}|^`\\\x00-\x20]*>|"
    r"#[^\n]*"
)
_DECLARED = re.compile(r"\bPREFIX\s+([A-Za-z][\w.-]*)?:", re.IGNORECASE)
# A prefixed name: PN_PREFIX ':' (not a variable, a blank node, a language tag or a number).
_PREFIXED = re.compile(r"(?<![\w?$@_:.-])([A-Za-z][\w.-]*)?:(?=[\w%\\-]|\s|[;,.)\]}])")
_PROLOGUE = re.compile(r"\s*(?:(?:PREFIX\s+[\w.-]*:\s*<[^>]*>|BASE\s*<[^>]*>)\s*)*", re.IGNORECASE)
_UPDATE_WORDS = re.compile(r"(INSERT|DELETE|LOAD|CLEAR|CREATE|DROP|COPY|MOVE|ADD|WITH)\b", re.IGNORECASE)
_POSITION = re.compile(r"error at (\d+):(\d+):?\s*")

UPDATE_HINT = ("kg sparql only reads (SELECT, ASK, CONSTRUCT, DESCRIBE). To load a file of triples, "
               "use kg import rdf FILE --graph NAME.")


def predeclared() -> str:
    """The predeclared prefixes, as a reader writes them: ``tkg:, skos:, prov:, ...``."""
    return ", ".join(f"{name}:" for name in PREFIXES)


def _without_noise(sparql: str) -> str:
    # Keep IRIs in PREFIX declarations readable for the prologue match; blank out the rest.
    return _NOISE.sub(lambda m: "<>" if m.group(0).startswith("<") else " ", sparql)


def undeclared_prefixes(sparql: str) -> list[str]:
    """Prefixes the text uses but neither declares nor finds predeclared, in order of use."""
    text = _without_noise(sparql)
    declared = {m.group(1) or "" for m in _DECLARED.finditer(text)} | set(PREFIXES)
    used = [m.group(1) or "" for m in _PREFIXED.finditer(_DECLARED.sub(" ", text))]
    return list(dict.fromkeys(p for p in used if p not in declared))


def is_update(sparql: str) -> bool:
    """Whether the text is a SPARQL Update (INSERT, DELETE, LOAD, CLEAR, ...), not a query."""
    text = _without_noise(sparql)
    body = text[_PROLOGUE.match(text).end():]  # type: ignore[union-attr]  # the pattern always matches
    return bool(_UPDATE_WORDS.match(body))


def update_refused(command: str, *, instead: str) -> QueryError:
    """The error for an update sent to a command that only runs queries."""
    return QueryError(f"updates are not run by {command}; use {instead}", hint=UPDATE_HINT)


def syntax_error(sparql: str, detail: str, *, what: str = "query") -> QueryError:
    """A readable error for the parser's ``detail`` about ``sparql``."""
    unknown = undeclared_prefixes(sparql)
    if unknown:
        names = ", ".join(f"{p}:" for p in unknown)
        return QueryError(
            f"unknown prefix {names}" if len(unknown) == 1 else f"unknown prefixes {names}",
            hint=f"Predeclared prefixes: {predeclared()}. Declare another with PREFIX {unknown[0]}: <IRI>.",
        )
    if what == "query" and is_update(sparql):
        return QueryError("this is a SPARQL update, not a query", hint=UPDATE_HINT)
    where = _POSITION.match(detail)
    message = f"the SPARQL {what} is malformed"
    rest = detail[where.end():] if where else detail
    expected = _expected(rest)
    if where:
        line, column = int(where.group(1)), int(where.group(2))
        message += f" at line {line}, column {column}"
        lines = sparql.splitlines()
        if 1 <= line <= len(lines):
            form = _query_form(sparql) if what == "query" else None
            if form is not None:
                expected = f"a query starts with SELECT, CONSTRUCT, ASK or DESCRIBE, not {form or 'nothing'}"
            source, caret = _window(lines[line - 1], column - 1)
            message += f"{': ' + expected if expected else ''}\n  {source}\n  {' ' * caret}^"
            return QueryError(message, hint=f"Check the text at the caret. Predeclared prefixes: {predeclared()}.")
    return QueryError(f"{message}: {expected or rest}",
                      hint=f"Check the {what} against the SPARQL 1.1 grammar. Predeclared prefixes: {predeclared()}.")


def _query_form(sparql: str) -> str | None:
    """The first word after the prologue when it is no query form (``SELEC``), else None."""
    text = _without_noise(sparql)
    word = re.match(r"[^\s{(]*", text[_PROLOGUE.match(text).end():])  # type: ignore[union-attr]
    first = word.group(0) if word else ""
    return None if first.upper() in ("SELECT", "CONSTRUCT", "ASK", "DESCRIBE") else first


def _window(source: str, index: int, width: int = 72) -> tuple[str, int]:
    """At most ``width`` characters of a long line around ``index``, and the caret's place in them."""
    if len(source) <= width:
        return source, index
    start = min(max(index - width // 2, 0), len(source) - width)
    piece = source[start:start + width]
    if start:
        piece, index = "…" + piece[1:], index - start
    else:
        index -= start
    if start + width < len(source):
        piece = piece[:-1] + "…"
    return piece, index


def _expected(detail: str) -> str:
    """The parser's "expected one of ..." without character classes, or "" if nothing is left."""
    match = re.match(r"expected (?:one of )?(.*)", detail, re.DOTALL)
    if not match:
        return detail.strip() if "\\u{" not in detail else ""
    items = re.findall(r'"(?:[^"\\]|\\.)*"|\[[^\]]*\]|[A-Za-z][\w ]*', match.group(1))
    noise = ("Prefix not found", "_", "unreported")
    words = [i.strip() for i in items if not i.startswith("[") and i.strip() not in noise]
    if not words:
        return ""
    shown = ", ".join(words[:12]) + (", ..." if len(words) > 12 else "")
    return f"expected {shown}" if len(words) == 1 else f"expected one of {shown}"
