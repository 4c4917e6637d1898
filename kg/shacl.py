"""SHACL shapes compiled to SPARQL, so that validation runs inside the store.

``kg validate`` used to copy the whole graph into rdflib and run pySHACL over it: its
memory grows with the graph (about a gigabyte at a million triples), and most of its time
goes into re-parsing the SPARQL of the constraints on every run. The shapes TechKG uses are
a small part of SHACL Core, and each of their constraints is one SPARQL query that selects
the focus nodes (and values) violating it, so here every constraint becomes such a query,
prepared once, and the store answers it over the union of its graphs without copying
anything. pySHACL stays the reference: a test checks that both report the same violations
on the built graph and on broken variants of it.

At millions of triples a lookup per triple is what costs (a random read each, once the
store outgrows the cache), so the queries scan and group instead: sh:maxCount and
sh:uniqueLang group the path's triples by subject; a value test selects the failing values
first and only then checks that their subject is a focus node; sh:class, sh:minCount and
sh:hasValue are anti-joins (MINUS), asked as lookups (FILTER NOT EXISTS) only where few
rows are tested (:attr:`Constraint.lookup`); a SPARQL constraint runs only for the focus
nodes that hold the triples it requires of ``$this``.

Supported: node shapes with ``sh:targetClass`` (instances of the class and of its
subclasses) or ``sh:targetSubjectsOf``; property shapes with a single-IRI ``sh:path``;
``sh:minCount``, ``sh:maxCount``, ``sh:datatype``, ``sh:class``, ``sh:pattern`` (with
``sh:flags``), ``sh:in``, ``sh:languageIn``, ``sh:uniqueLang``, ``sh:nodeKind``,
``sh:minInclusive`` / ``sh:maxInclusive``, ``sh:hasValue``, ``sh:or`` of such shapes (on values and on focus
nodes) and SPARQL-based constraints (``sh:sparql`` with ``sh:select`` and ``$this``). A
shapes file that uses anything else raises :class:`UnsupportedShape` instead of being
silently half-checked.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import pyoxigraph as ox

from kg.vocab import RDF

__all__ = ["Constraint", "UnsupportedShape", "compile_shapes"]

SH = "http://www.w3.org/ns/shacl#"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_LANGSTRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
#: Bumped whenever the compiled queries change meaning, so that cached results are not reused.
COMPILER_VERSION = "3"

_COMPONENTS = {
    "minCount", "maxCount", "datatype", "class", "pattern", "flags", "in", "languageIn", "uniqueLang",
    "nodeKind", "minInclusive", "maxInclusive", "or", "hasValue",
}
_IGNORED = {"message", "name", "description", "severity", "deactivated", "order", "group"}


Term = ox.NamedNode | ox.BlankNode | ox.Literal


class UnsupportedShape(ValueError):
    """The shapes file uses a part of SHACL this compiler does not translate."""


@dataclass(frozen=True)
class Constraint:
    """One compiled constraint: a SELECT whose rows are violations.

    Each row binds ``?this`` (the focus node) and may bind ``?value`` and ``?missing`` (for
    messages of SPARQL constraints). ``classes`` and ``predicates`` are what its answer
    depends on (besides rdfs:subClassOf), so a change to graphs holding none of them
    cannot change its answer."""

    id: str
    shape: str
    path: str | None
    message: str
    severity: str
    query: str
    classes: frozenset[str] = field(default_factory=frozenset)
    predicates: frozenset[str] = field(default_factory=frozenset)
    #: For SPARQL-based constraints: the focus nodes' query; ``query`` then holds $this,
    #: to be pre-bound to each of them with :func:`prebind`.
    focus: str | None = None
    #: The same question asked with a lookup per row (FILTER NOT EXISTS) instead of an
    #: anti-join (MINUS), for when ``probe`` (a pattern) has few solutions: MINUS reads the
    #: whole of its right-hand side, however few rows it is to take out of, and a lookup
    #: per row is much slower than that scan when there are many rows.
    lookup: str | None = None
    probe: str | None = None


class _Shapes:
    """The shapes graph, read through small helpers."""

    def __init__(self, text: str) -> None:
        self.store = ox.Store()
        self.store.load(text, format=ox.RdfFormat.TURTLE)

    def objects(self, subject: ox.NamedNode | ox.BlankNode, local: str) -> list[Term]:
        return [q.object for q in self.store.quads_for_pattern(subject, ox.NamedNode(SH + local), None)
                if not isinstance(q.object, ox.Triple)]

    def one(self, subject: ox.NamedNode | ox.BlankNode, local: str) -> Term | None:
        values = self.objects(subject, local)
        if len(values) > 1:
            raise UnsupportedShape(f"{subject} has {len(values)} values of sh:{local}")
        return values[0] if values else None

    def items(self, head: Term) -> list[Term]:
        out = []
        node = head
        nil = RDF.nil
        while node != nil:
            if not isinstance(node, ox.NamedNode | ox.BlankNode):
                raise UnsupportedShape(f"malformed RDF list at {node}")
            first = [q.object for q in self.store.quads_for_pattern(node, RDF.first, None)
                     if not isinstance(q.object, ox.Triple)]
            rest = [q.object for q in self.store.quads_for_pattern(node, RDF.rest, None)
                    if not isinstance(q.object, ox.Triple)]
            if len(first) != 1 or len(rest) != 1:
                raise UnsupportedShape(f"malformed RDF list at {node}")
            out.append(first[0])
            node = rest[0]
        return out

    def predicates(self, subject: ox.NamedNode | ox.BlankNode) -> set[str]:
        return {q.predicate.value for q in self.store.quads_for_pattern(subject, None, None)}


def _text(term: Term | None) -> str | None:
    return term.value if isinstance(term, ox.Literal) else None


def _integer(term: Term | None, what: str) -> int | None:
    if term is None:
        return None
    if not isinstance(term, ox.Literal):
        raise UnsupportedShape(f"sh:{what} must be an integer")
    return int(term.value)


def _string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


# -- value-node conditions ----------------------------------------------------------------


def _value_ok(shapes: _Shapes, node: ox.NamedNode | ox.BlankNode, var: str,
              classes: set[str]) -> list[tuple[str, str]]:
    """(component, SPARQL expression that is true when ``var`` conforms) for each
    value-level component of ``node``."""
    out: list[tuple[str, str]] = []
    datatype = shapes.one(node, "datatype")
    if datatype is not None:
        if datatype.value == RDF_LANGSTRING:
            out.append(("datatype", f"(isLiteral({var}) && LANG({var}) != \"\")"))
        else:
            out.append(("datatype", f"(isLiteral({var}) && DATATYPE({var}) = {datatype} && LANG({var}) = \"\")"))
    for cls in shapes.objects(node, "class"):
        classes.add(cls.value)
        out.append(("class", f"EXISTS {{ {var} rdf:type ?class_ . VALUES ?class_ {{ %SUBCLASSES:{cls.value}% }} }}"))
    pattern = shapes.one(node, "pattern")
    if pattern is not None:
        flags = _text(shapes.one(node, "flags"))
        args = f"STR({var}), {_string(pattern.value)}" + (f", {_string(flags)}" if flags else "")
        out.append(("pattern", f"(!isBlank({var}) && REGEX({args}))"))
    allowed = shapes.one(node, "in")
    if allowed is not None:
        terms = shapes.items(allowed)
        out.append(("in", "(" + " || ".join(f"sameTerm({var}, {t})" for t in terms) + ")" if terms else "false"))
    languages = shapes.one(node, "languageIn")
    if languages is not None:
        tags = [_text(t) or "" for t in shapes.items(languages)]
        out.append(("languageIn", "(isLiteral(" + var + ") && ("
                    + " || ".join(f"langMatches(LANG({var}), {_string(t)})" for t in tags) + "))"))
    kind = shapes.one(node, "nodeKind")
    if kind is not None:
        tests = {"IRI": f"isIRI({var})", "Literal": f"isLiteral({var})", "BlankNode": f"isBlank({var})",
                 "BlankNodeOrIRI": f"(isBlank({var}) || isIRI({var}))",
                 "IRIOrLiteral": f"(isIRI({var}) || isLiteral({var}))",
                 "BlankNodeOrLiteral": f"(isBlank({var}) || isLiteral({var}))"}
        local = kind.value.removeprefix(SH)
        if local not in tests:
            raise UnsupportedShape(f"sh:nodeKind {kind}")
        out.append(("nodeKind", tests[local]))
    for component, op in (("minInclusive", ">="), ("maxInclusive", "<=")):
        bound = shapes.one(node, component)
        if bound is not None:
            out.append((component, f"COALESCE({var} {op} {bound}, false)"))
    alternatives = shapes.one(node, "or")
    if alternatives is not None:
        parts = []
        for alt in shapes.items(alternatives):
            if not isinstance(alt, ox.NamedNode | ox.BlankNode):
                raise UnsupportedShape("sh:or members must be shapes")
            unknown = {p for p in shapes.predicates(alt) if p.startswith(SH)} - {
                SH + c for c in ("datatype", "class", "pattern", "flags", "in", "languageIn", "nodeKind",
                                 "minInclusive", "maxInclusive")}
            if unknown:
                raise UnsupportedShape(f"sh:or member uses {', '.join(sorted(unknown))} on values")
            conds = [expr for _c, expr in _value_ok(shapes, alt, var, classes)]
            parts.append("(" + (" && ".join(conds) or "true") + ")")
        out.append(("or", "(" + " || ".join(parts) + ")" if parts else "false"))
    return out


# -- compiling -------------------------------------------------------------------------


@dataclass
class _Target:
    """The focus nodes of a node shape: ``pattern`` lists them (binding ?this);
    ``member`` is a FILTER that keeps ?this only if it is one. A constraint on values
    scans the triples of its path and checks membership only for the values that fail,
    which is much cheaper than walking every focus node when most values conform."""

    pattern: str
    member: str
    classes: set[str]
    predicates: set[str]


def _target(shapes: _Shapes, shape: ox.NamedNode | ox.BlankNode) -> _Target | None:
    groups, classes, predicates = [], set(), set()
    for cls in shapes.objects(shape, "targetClass"):
        classes.add(cls.value)
        groups.append(f"{{ ?this rdf:type ?cls_ . VALUES ?cls_ {{ %SUBCLASSES:{cls.value}% }} }}")
    for pred in shapes.objects(shape, "targetSubjectsOf"):
        predicates.add(pred.value)
        groups.append(f"{{ ?this {pred} ?any_ }}")
    for local in ("targetNode", "targetObjectsOf"):
        if shapes.objects(shape, local):
            raise UnsupportedShape(f"sh:{local}")
    if not groups:
        return None
    union = " UNION ".join(groups)
    return _Target("{ SELECT DISTINCT ?this WHERE { " + union + " } }", f"FILTER EXISTS {{ {union} }}",
                   classes, predicates)


def compile_shapes(text: str) -> list[Constraint]:
    """Every constraint of the shapes in ``text`` (Turtle), as a SPARQL query."""
    shapes = _Shapes(text)
    out: list[Constraint] = []
    node_shapes = sorted({q.subject for q in shapes.store.quads_for_pattern(
        None, RDF.type, ox.NamedNode(SH + "NodeShape"))}, key=str)
    for shape in node_shapes:
        assert isinstance(shape, ox.NamedNode | ox.BlankNode)
        target = _target(shapes, shape)
        if target is None:
            continue
        unknown = {p for p in shapes.predicates(shape) if p.startswith(SH)} - {
            SH + c for c in ("targetClass", "targetSubjectsOf", "property", "sparql", "or", "message",
                             "name", "description", "severity")}
        if unknown:
            raise UnsupportedShape(f"{shape} uses {', '.join(sorted(unknown))}")
        severity = (shapes.one(shape, "severity") or ox.NamedNode(SH + "Violation")).value.removeprefix(SH)
        for prop in shapes.objects(shape, "property"):
            assert isinstance(prop, ox.NamedNode | ox.BlankNode)
            out += _property_constraints(shapes, shape, prop, target, severity)
        for sparql in shapes.objects(shape, "sparql"):
            assert isinstance(sparql, ox.NamedNode | ox.BlankNode)
            out.append(_sparql_constraint(shapes, shape, sparql, target, severity))
        alternatives = shapes.one(shape, "or")
        if alternatives is not None:
            out.append(_node_or(shapes, shape, alternatives, target, severity))
    return out


def _path(shapes: _Shapes, prop: ox.NamedNode | ox.BlankNode) -> ox.NamedNode:
    path = shapes.one(prop, "path")
    if not isinstance(path, ox.NamedNode):
        raise UnsupportedShape(f"property shape {prop}: only single-IRI sh:path is supported")
    return path


def _cid(shape: Term, path: str | None, component: str, query: str) -> str:
    """A constraint's id, the same in every process (so that cached answers are found):
    from its shape, path, component and query, never from blank-node labels of the shapes."""
    digest = hashlib.sha256(f"{shape}|{path}|{component}|{query}".encode()).hexdigest()[:12]
    return f"{component}:{digest}"


def _property_constraints(shapes: _Shapes, shape: Term, prop: ox.NamedNode | ox.BlankNode,
                          target: _Target, severity: str) -> list[Constraint]:
    path = _path(shapes, prop)
    unknown = {p.removeprefix(SH) for p in shapes.predicates(prop) if p.startswith(SH)} - _COMPONENTS - _IGNORED - {
        "path"}
    if unknown:
        raise UnsupportedShape(f"property shape on {path.value} uses sh:{', sh:'.join(sorted(unknown))}")
    message = _text(shapes.one(prop, "message")) or f"violates a constraint on {path.value}"
    focus, member = target.pattern, target.member
    predicates = frozenset({path.value, *target.predicates})
    out = []

    def add(component: str, query: str, classes: Iterable[str] = (), extra: str = "", lookup: str | None = None,
            probe: str | None = None) -> None:
        cid = _cid(shape, path.value, component, query + extra + message)
        out.append(Constraint(cid, str(shape), path.value, message, severity, query,
                              frozenset({*target.classes, *classes}), predicates, lookup=lookup, probe=probe))

    low = _integer(shapes.one(prop, "minCount"), "minCount")
    if low is not None and low > 0:
        if low == 1:  # MINUS: one anti-join of two scans, cheaper than a lookup per focus node
            add("minCount", f"SELECT ?this WHERE {{ {focus} MINUS {{ ?this {path} ?v }} }}",
                lookup=f"SELECT ?this WHERE {{ {focus} FILTER NOT EXISTS {{ ?this {path} ?v }} }}", probe=focus)
        else:
            add("minCount", f"SELECT ?this WHERE {{ {focus} OPTIONAL {{ ?this {path} ?v }} }} "
                            f"GROUP BY ?this HAVING (COUNT(DISTINCT ?v) < {low})")
    high = _integer(shapes.one(prop, "maxCount"), "maxCount")
    if high is not None:
        # Grouping the path's triples by subject is one scan; the focus-node test then
        # runs only for the few subjects with too many values (a subquery keeps it last).
        add("maxCount", f"SELECT ?this WHERE {{ {{ SELECT ?this WHERE {{ ?this {path} ?v }} "
                        f"GROUP BY ?this HAVING (COUNT(DISTINCT ?v) > {high}) }} {member} }}")
    for wanted in shapes.objects(prop, "hasValue"):
        add("hasValue", f"SELECT ?this WHERE {{ {focus} MINUS {{ ?this {path} {wanted} }} }}", extra=str(wanted),
            lookup=f"SELECT ?this WHERE {{ {focus} FILTER NOT EXISTS {{ ?this {path} {wanted} }} }}", probe=focus)
    unique = shapes.one(prop, "uniqueLang")
    if isinstance(unique, ox.Literal) and unique.value == "true":
        add("uniqueLang", f"SELECT DISTINCT ?this WHERE {{ {{ SELECT ?this WHERE {{ ?this {path} ?v "
                          f"FILTER(LANG(?v) != \"\") }} GROUP BY ?this (LCASE(LANG(?v)) AS ?lang_) "
                          f"HAVING (COUNT(DISTINCT ?v) > 1) }} {member} }}")
    classes: set[str] = set()
    for component, ok in _value_ok(shapes, prop, "?value", classes):
        # The values that fail first (in a subquery, so that the focus-node test runs only
        # for them, not for every triple of the path).
        values, failing, lookup = f"?this {path} ?value", _failing(ok, "?value"), f"FILTER(!({ok}))"

        def failed(test: str, values: str = values) -> str:
            return f"SELECT ?this ?value WHERE {{ {{ SELECT ?this ?value WHERE {{ {values} {test} }} }} {member} }}"

        add(component, failed(failing), classes, lookup=None if failing == lookup else failed(lookup),
            probe=None if failing == lookup else values)
    return out


def _failing(ok: str, var: str) -> str:
    """The pattern that keeps the rows whose ``var`` does not satisfy ``ok``. A class test
    (``EXISTS { var rdf:type ?class_ ... }``) becomes a MINUS: one anti-join of two scans
    instead of a lookup per value (the same answer, as ``var`` is always bound and the
    test shares no other variable with the query)."""
    match = re.fullmatch(r"EXISTS (\{ " + re.escape(var) + r" rdf:type \?class_ \. VALUES \?class_ \{ [^{}]* \} \})",
                         ok)
    return f"MINUS {match.group(1)}" if match else f"FILTER(!({ok}))"


def _sparql_constraint(shapes: _Shapes, shape: Term, node: ox.NamedNode | ox.BlankNode, target: _Target,
                       severity: str) -> Constraint:
    select = _text(shapes.one(node, "select"))
    if not select:
        raise UnsupportedShape(f"{shape}: a SPARQL constraint needs sh:select")
    declared: list[tuple[str, str]] = []
    for decl in shapes.objects(node, "prefixes"):
        assert isinstance(decl, ox.NamedNode | ox.BlankNode)
        for entry in shapes.objects(decl, "declare"):
            assert isinstance(entry, ox.NamedNode | ox.BlankNode)
            prefix, namespace = _text(shapes.one(entry, "prefix")), shapes.one(entry, "namespace")
            if prefix and namespace is not None:
                declared.append((prefix, namespace.value))
    # SHACL pre-binds $this to each focus node: the query is run once per focus node with
    # $this written in (see prebind); `focus` lists the focus nodes.
    inner = select.strip()
    prefixes = "\n".join(f"PREFIX {p}: <{ns}>" for p, ns in declared)
    query = prefixes + "\n" + inner
    # A focus node that lacks a triple the query requires of $this gets no rows from it:
    # those triples join the focus nodes' query, so that the query runs only for the rest.
    focus = f"SELECT ?this WHERE {{ {target.pattern} {' '.join(f'?this {t} .' for t in _required_of_this(query))} }}"
    message = _text(shapes.one(node, "message")) or "violates a SPARQL constraint"
    iris = set(re.findall(r"<([^>]+)>", inner))
    for name, base in declared:
        iris |= {base + local for local in re.findall(rf"\b{name}:(\w+)", inner)}
    return Constraint(_cid(shape, None, "sparql", select + message), str(shape), None, message, severity, query,
                      frozenset(target.classes), frozenset({*iris, *target.predicates}), focus=focus)


def _required_of_this(query: str) -> list[str]:
    """The triple patterns ``$this <p> <o>`` (constants p and o) that every solution of
    ``query`` matches, as "<p> <o>": those of basic graph patterns reached from the top
    through joins, filters, BINDs and the left side of OPTIONAL and MINUS only (not
    through a UNION, a GRAPH or an aggregate, which can answer without them)."""
    from rdflib import URIRef, Variable
    from rdflib.plugins.sparql import prepareQuery

    out: list[str] = []

    def walk(node: object) -> None:
        name = getattr(node, "name", None)
        if name == "BGP":
            for s, p, o in node.triples:  # type: ignore[attr-defined]
                if s == Variable("this") and isinstance(p, URIRef) and not isinstance(o, Variable):
                    if not isinstance(o, URIRef) and o.n3().startswith("_:"):
                        continue
                    out.append(f"{p.n3()} {o.n3()}")
        elif name in ("Join", "LeftJoin", "Minus"):
            walk(node["p1"])  # type: ignore[index]
            if name == "Join":
                walk(node["p2"])  # type: ignore[index]
        elif name in ("SelectQuery", "Project", "Distinct", "Reduced", "Slice", "OrderBy", "Filter", "Extend",
                      "ToMultiSet"):
            walk(node["p"])  # type: ignore[index]

    walk(prepareQuery(query).algebra)
    return out


def _node_or(shapes: _Shapes, shape: Term, alternatives: Term, target: _Target,
             severity: str) -> Constraint:
    """A focus node violates ``sh:or`` when it violates every alternative; each alternative
    here is a shape of property shapes whose violations can be written as EXISTS patterns."""
    message = _text(shapes.one(shape, "message")) if isinstance(shape, ox.NamedNode | ox.BlankNode) else None
    violated: list[str] = []
    predicates: set[str] = set(target.predicates)
    classes: set[str] = set(target.classes)
    for alt in shapes.items(alternatives):
        assert isinstance(alt, ox.NamedNode | ox.BlankNode)
        fails: list[str] = []
        for prop in shapes.objects(alt, "property"):
            assert isinstance(prop, ox.NamedNode | ox.BlankNode)
            path = _path(shapes, prop)
            predicates.add(path.value)
            low = _integer(shapes.one(prop, "minCount"), "minCount")
            high = _integer(shapes.one(prop, "maxCount"), "maxCount")
            if (low or 0) > 1 or (high is not None and high != 1):
                raise UnsupportedShape("sh:or alternatives support sh:minCount 1 and sh:maxCount 1 only")
            if low == 1:
                fails.append(f"NOT EXISTS {{ ?this {path} ?v_ }}")
            if high == 1:
                fails.append(f"EXISTS {{ ?this {path} ?a_ , ?b_ FILTER(?a_ != ?b_) }}")
            for _c, ok in _value_ok(shapes, prop, "?w_", classes):
                fails.append(f"EXISTS {{ ?this {path} ?w_ FILTER(!({ok})) }}")
        violated.append("(" + (" || ".join(fails) or "false") + ")")
    # An alternative that is one sh:minCount 1 fails exactly where the value is missing: a
    # MINUS takes those focus nodes out in one anti-join before the other tests run (a
    # subquery, so that they do run after it, on the few focus nodes left).
    minus = [v for v in violated if re.fullmatch(r"\(NOT EXISTS \{ \?this <[^>]+> \?v_ \}\)", v)]
    rest = [v for v in violated if v not in minus[:1]]
    head = minus[0][len("(NOT EXISTS "):-1] if minus else ""
    tests = f"FILTER({' && '.join(rest)}) " if rest else ""

    def query(take_out: str) -> str:
        focus = f"{{ SELECT ?this WHERE {{ {target.pattern} {take_out} {head} }} }}" if head else target.pattern
        return f"SELECT ?this WHERE {{ {focus} {tests}}}"

    text = message or "violates every alternative of sh:or"
    return Constraint(_cid(shape, None, "or", query("MINUS") + text), str(shape), None, text, severity,
                      query("MINUS"), frozenset(classes), frozenset(predicates),
                      lookup=query("FILTER NOT EXISTS") if head else None, probe=target.pattern if head else None)


def prebind(query: str, this: str) -> str:
    """``query`` with ``$this`` pre-bound to the term ``this`` (N-Triples syntax), as SHACL
    pre-binding means: written into the pattern, and projected as ``?this``."""
    head = re.search(r"\bSELECT\b(.*?)\bWHERE\b", query, re.IGNORECASE | re.DOTALL)
    if head is None:
        raise UnsupportedShape("a SPARQL constraint must be SELECT ... WHERE { ... }")
    projection = re.sub(r"\$this\b", f"({this} AS ?this)", head.group(1))
    if "?this" not in projection and "*" not in projection:
        projection += f" ({this} AS ?this)"
    body = re.sub(r"\$this\b", this, query[head.end():])
    return query[: head.start()] + "SELECT" + projection + "WHERE" + body


def with_subclasses(query: str, subclasses: dict[str, set[str]]) -> str:
    """Fill each ``%SUBCLASSES:C%`` placeholder with C and its subclasses (as IRIs)."""

    def fill(match: re.Match[str]) -> str:
        cls = match.group(1)
        return " ".join(f"<{c}>" for c in sorted(subclasses.get(cls, {cls}) | {cls}))

    return re.sub(r"%SUBCLASSES:([^%]+)%", fill, query)


def subclass_closure(pairs: Iterable[tuple[str, str]]) -> dict[str, set[str]]:
    """class → every class below it (rdfs:subClassOf, transitively), from (sub, super) pairs."""
    below: dict[str, set[str]] = {}
    for sub, sup in pairs:
        below.setdefault(sup, set()).add(sub)

    def walk(cls: str, seen: set[str]) -> Iterator[str]:
        for sub in below.get(cls, ()):
            if sub not in seen:
                seen.add(sub)
                yield sub
                yield from walk(sub, seen)

    return {cls: set(walk(cls, set())) for cls in list(below)}

