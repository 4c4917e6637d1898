"""What a SPARQL text asks of other hosts (``SERVICE`` calls, ``LOAD`` sources), decided
on the parsed query, and the rule that refuses those a server does not allow.

pyoxigraph runs ``SERVICE`` and ``LOAD`` with its own HTTP client and offers no option
to turn them off, so a server must know, before pyoxigraph sees a text, whether it holds
either. A lexer cannot know: whether ``<`` opens an IRI or compares two values, where a
prefixed name ends (``ex:.SERVICE``), what is a string, depends on the grammar. So the
decision is taken on the parse tree of a real SPARQL parser, rdflib's (its grammar, with
prefixed names resolved as its algebra resolves them): every ``ServiceGraphPattern`` and
every ``Load`` in it, wherever they are nested (subqueries, ``EXISTS``, ``OPTIONAL``,
an update's ``WHERE``).

Only a text that holds the letters ``service`` or ``load`` (in any case) anywhere can hold
either keyword, and pyoxigraph decodes no ``\\u`` escapes outside strings and IRIs, so any
other text needs no parse. rdflib's grammar is given the text as it is (its own
``parseQuery`` would decode ``\\u`` escapes everywhere first, which pyoxigraph does not).
A text that does hold the letters and that rdflib cannot parse is treated as calling a
host it does not name: refused where the server restricts ``SERVICE`` and ``LOAD``.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from kg.sparqlguard import QueryRefused, run_deep

__all__ = ["Outbound", "host_allowed", "outbound", "refuse_outbound"]

_MENTIONS = re.compile(r"(?i)service|load")
_CODEPOINT = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")
#: rdflib's grammar (pyparsing) recurses once per triple of a block, and more per level of
#: nesting: the limit while it parses (on :func:`run_deep`'s deep stack).
_RECURSION = 1_000_000


@dataclass
class Outbound:
    """The hosts a text would contact: each target an absolute IRI, or None for one that
    is a variable, cannot be resolved, or was not found because the text did not parse."""

    services: list[str | None] = field(default_factory=list)
    loads: list[str | None] = field(default_factory=list)
    #: Why the text could not be checked (rdflib's message), when it could not.
    unparsed: str | None = None

    def __bool__(self) -> bool:
        return bool(self.services or self.loads or self.unparsed)


def outbound(text: str, prefixes: Mapping[str, str] | None = None, *, update: bool = False) -> Outbound:
    """The ``SERVICE`` and ``LOAD`` targets of ``text`` (a query, or with ``update`` an
    update), from its parse tree; ``prefixes`` are predeclared, as pyoxigraph is given them."""
    if _MENTIONS.search(text) is None:
        return Outbound()
    try:
        return run_deep(functools.partial(_from_parse_tree, text, dict(prefixes or {}), update))
    except Exception as exc:  # any failure of the parser: the text stays unchecked
        message = " ".join(str(exc).split())[:200] or type(exc).__name__
        return Outbound(unparsed=message)


def _from_parse_tree(text: str, prefixes: dict[str, str], update: bool) -> Outbound:
    from rdflib.plugins.sparql.algebra import translatePName, translatePrologue, traverse
    from rdflib.plugins.sparql.parser import Query, UpdateUnit
    from rdflib.plugins.sparql.parserutils import CompValue

    found = Outbound()

    def visit(node: Any) -> None:
        if isinstance(node, CompValue):
            if node.name == "ServiceGraphPattern":
                found.services.append(_target(node.get("term")))
            elif node.name == "Load":
                found.loads.append(_target(node.get("iri")))

    with _deep_recursion():
        if update:
            unit = UpdateUnit.parse_string(text, parse_all=True)[0]
            prologue = None
            for declared, request in zip(unit.prologue or [], unit.request or [], strict=False):
                prologue = translatePrologue(declared, None, prefixes, prologue)
                traverse(traverse(request, visitPost=functools.partial(translatePName, prologue=prologue)),
                         visitPre=visit)
        else:
            parsed = Query.parse_string(text, parse_all=True)
            prologue = translatePrologue(parsed[0], None, prefixes)
            traverse(traverse(parsed[1], visitPost=functools.partial(translatePName, prologue=prologue)),
                     visitPre=visit)
    return found


def _target(term: Any) -> str | None:
    from rdflib.term import URIRef

    if not isinstance(term, URIRef):
        return None  # a variable
    iri = _CODEPOINT.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), str(term))  # as pyoxigraph reads an IRI
    return iri if urlsplit(iri).scheme else None


_RECURSION_LOCK = threading.Lock()
#: [parses running, the recursion limit before the first of them].
_RAISED = [0, 1000]


@contextlib.contextmanager
def _deep_recursion() -> Iterator[None]:
    """Python's recursion limit raised while rdflib parses (in a thread with a deep stack)."""
    with _RECURSION_LOCK:
        if _RAISED[0] == 0:
            _RAISED[1] = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_RAISED[1], _RECURSION))
        _RAISED[0] += 1
    try:
        yield
    finally:
        with _RECURSION_LOCK:
            _RAISED[0] -= 1
            if _RAISED[0] == 0:
                sys.setrecursionlimit(_RAISED[1])


def host_allowed(target: str | None, allowed: tuple[str, ...]) -> bool:
    """Whether an http(s) ``target`` names a host (or host:port) of ``allowed``."""
    if target is None:
        return False
    parts = urlsplit(target)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    host = parts.hostname.lower()
    with_port = f"{host}:{parts.port or (443 if parts.scheme == 'https' else 80)}"
    return any(entry.lower().strip("[]") in (host, with_port) or entry.lower() == with_port for entry in allowed)


def refuse_outbound(found: Outbound, allowed: tuple[str, ...], *, what: str = "query") -> None:
    """Refuse (:class:`QueryRefused`) SERVICE and LOAD unless every target is on the
    ``allowed`` list (``kg serve --allow-service``). The message never says anything about
    a target beyond that it is not allowed."""
    if found.unparsed is not None:
        raise QueryRefused(
            f"the {what} mentions SERVICE or LOAD, and the server's check could not parse it: {found.unparsed}",
            reason="service",
            hint="Fix the syntax. The server reads every query that holds the word service or load (in a "
            "name or a string too) before it runs it, and runs none it cannot read.")
    for keyword, targets in (("SERVICE", found.services), ("LOAD", found.loads)):
        if not targets:
            continue
        if not allowed:
            raise QueryRefused(
                f"{keyword} is off on this server: it does not send requests to other hosts",
                reason=keyword.lower(),
                hint="Start the server with `kg serve --allow-service HOST` to allow the hosts it may contact.")
        for target in targets:
            if not host_allowed(target, allowed):
                raise QueryRefused(
                    f"{keyword} may only contact the hosts given to --allow-service"
                    + ("" if target is not None else " (and needs a constant http(s) IRI)"),
                    reason=keyword.lower(), hint="Allowed: " + ", ".join(allowed) + ".")
