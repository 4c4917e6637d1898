"""An import copy's N-Triples lines made into staging rows, a batch at a time, by Arrow.

A copy (:mod:`kg.store.copies`) holds one triple a line, ``{s} {p} {o} .``, each term in
the store's canonical N-Triples form. Its lines are read by Arrow's CSV reader (one column,
no quoting) and taken apart with Arrow's vectorised string kernels, which work on bytes:
the same work in DuckDB's SQL (substrings count characters, and a string join on the
predicate) cost three times the CPU at 150k papers.

How a line is taken apart:

- an IRI or a blank node holds no space, so the subject ends at the first space and the
  predicate at the second (one split); the object is the rest less the final ``" ."``;
- the predicate is looked up in the table of those staging reads (an index into it: the
  key and the list position); lines of any other predicate are dropped at once;
- a literal's text ends at its *last* ``"``: neither a language tag nor a datatype IRI can
  hold one, and a ``"`` in the text is escaped (``\\"``). What follows is ``""`` (a plain
  string), ``@tag`` or ``^^<datatype>``;
- only a text that holds a backslash is unescaped (in Python: few are).

The rows have the columns of ``staging.facts`` less the graph: ``s``, ``k``, ``o``, ``n``,
``d`` with the meaning :mod:`kg.analytics.staging` gives them; the ``rdf:type`` lines come
back apart, as ``(s, o, d)``, for the type keys made in SQL.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

# pyarrow.compute and pyarrow.csv (60 ms to import) are imported where a copy is read. Staging
# a write's small graphs does not import this module (nor pyarrow) at all.

__all__ = ["BLOCK", "Lines", "Predicates", "blocks", "parse", "unescape"]

_STRING = pa.string()
_BINARY = pa.binary()
#: Bytes of the copy read at a time (about 16k lines). Each block's parse makes a dozen
#: arrays of its size, a few blocks are in flight, and Arrow's allocator keeps what they
#: freed: at 700k papers (a 1.2 GB copy), 16 MB blocks held 1,130 MB and took 4.2 s; 2 MB
#: blocks, 390 MB and 3.1 s.
BLOCK = 1 << 21
_TYPE = "rdf:type"
_LABEL = "skos:prefLabel"


def blocks(path: Path) -> int:
    """How many batches :class:`Lines` reads ``path`` in (for a progress bar)."""
    return max(1, -(-path.stat().st_size // BLOCK))


def _cut(strings: pa.Array, start: int, stop: int = 1 << 40) -> pa.Array:
    """Each string less its first ``start`` bytes and all from byte ``stop`` (negative:
    from the end). Only ever cuts beside an ASCII character, so UTF-8 stays whole."""
    import pyarrow.compute as pc

    return pc.binary_slice(strings.view(_BINARY), start, stop).view(_STRING)


_SIMPLE = {"t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)")


def _resolved(m: re.Match[str]) -> str:
    code = m.group(1)
    return chr(int(code[1:], 16)) if code[0] in "uU" else _SIMPLE.get(code, code)


def unescape(text: str) -> str:
    """An N-Triples string body with its escapes (\\t, \\", \\u00E9, ...) resolved, as the
    build's SQL macro ``kg_unescape`` does (:data:`kg.analytics.schema.MACROS`)."""
    return _ESCAPE.sub(_resolved, text)


def _unescaped(texts: pa.Array) -> pa.Array:
    """``texts`` with N-Triples escapes resolved, in Python for those that hold any."""
    import pyarrow.compute as pc

    marked = pc.match_substring(texts, "\\")
    if not pc.any(marked).as_py():
        return texts
    escaped = pc.filter(texts, marked).to_pylist()
    return pc.replace_with_mask(texts, marked, pa.array([unescape(t) for t in escaped], _STRING))


def _blank(terms: pa.Array, prefix: str | None) -> pa.Array:
    """Blank nodes (``_:x``) given the graph's ``prefix`` (``_:{prefix}x``), where it has one."""
    if prefix is None:
        return terms
    import pyarrow.compute as pc

    return pc.if_else(pc.starts_with(terms, "_:"),
                      pc.replace_substring(terms, "_:", f"_:{prefix}", max_replacements=1), terms)


@dataclass(frozen=True)
class Predicates:
    """The predicates staging reads, as N-Triples IRIs, each with its key and list position."""

    iris: pa.Array
    keys: pa.Array
    positions: pa.Array

    @classmethod
    def of(cls, iris: Sequence[str], keys: Sequence[str], positions: Sequence[int | None]) -> Predicates:
        return cls(pa.array(iris, _STRING), pa.array(keys, _STRING), pa.array(positions, pa.int32()))


def parse(lines: pa.Array, predicates: Predicates, prefix: str | None = None) -> tuple[pa.RecordBatch, pa.RecordBatch]:
    """The staging rows of ``lines`` (a copy's lines without their newlines): the facts
    ``(s, k, o, n, d)`` and, apart, the ``rdf:type`` rows ``(s, o, d)``. ``prefix`` goes
    before each blank node's label (see :func:`kg.analytics.staging.stage`)."""
    import pyarrow.compute as pc

    parts = pc.split_pattern(lines, " ", max_splits=2)
    index = pc.index_in(pc.list_element(parts, 1), value_set=predicates.iris)
    if index.null_count:  # lines of predicates staging does not read
        wanted = pc.is_valid(index)
        parts, index = pc.filter(parts, wanted), pc.filter(index, wanted)
    subject = pc.list_element(parts, 0)
    subject = pc.if_else(pc.starts_with(subject, "<"), _cut(subject, 1, -1), _blank(subject, prefix))
    obj = _cut(pc.list_element(parts, 2), 0, -2)  # less " ."
    head = _cut(obj, 0, 1)
    iri, literal = pc.equal(head, "<"), pc.equal(head, '"')
    # A literal: its text up to the last quote, then "", "@tag" or "^^<datatype>".
    split = pc.split_pattern(pc.filter(obj, literal), '"', max_splits=1, reverse=True)
    text, rest = pc.list_element(split, 0), pc.list_element(split, 1)
    text = _unescaped(_cut(text, 1))
    marker = pc.if_else(pc.starts_with(rest, "^^"), _cut(rest, 3, -1), rest)
    value = pc.replace_with_mask(pc.if_else(iri, _cut(obj, 1, -1), _blank(obj, prefix)), literal, text)
    kind = pc.replace_with_mask(pc.if_else(iri, pa.scalar(None, _STRING), pa.scalar("_", _STRING)), literal, marker)
    key = pc.take(predicates.keys, index)
    # skos:prefLabel is two keys, by language (a label that is no literal is neither).
    label = pc.equal(key, _LABEL)
    if pc.any(label).as_py():
        tag = pc.utf8_lower(pc.fill_null(kind, ""))
        zh = pc.or_(pc.equal(tag, "@zh"), pc.starts_with(tag, "@zh-"))
        key = pc.if_else(pc.and_(label, pc.invert(literal)), pa.scalar(None, _STRING),
                         pc.if_else(pc.and_(label, zh), pa.scalar(_LABEL + "@zh", _STRING), key))
    typed = pc.equal(key, _TYPE)
    fact = pc.and_(pc.is_valid(key), pc.invert(typed))
    facts = pa.record_batch({
        "s": pc.filter(subject, fact), "k": pc.filter(key, fact), "o": pc.filter(value, fact),
        "n": pc.filter(pc.take(predicates.positions, index), fact), "d": pc.filter(kind, fact),
    })
    types = pa.record_batch({"s": pc.filter(subject, typed), "o": pc.filter(value, typed),
                             "d": pc.filter(kind, typed)})
    return facts, types


FACTS = pa.schema([("s", _STRING), ("k", _STRING), ("o", _STRING), ("n", pa.int32()), ("d", _STRING)])


@dataclass
class Lines:
    """One copy read once: :meth:`facts` streams its fact rows (``workers`` batches parsed
    side by side, ``done`` called after each); afterwards ``lines`` is how many lines it
    held and ``types`` its ``rdf:type`` rows."""

    path: Path
    predicates: Predicates
    prefix: str | None = None
    workers: int = 2
    done: Callable[[], None] | None = None
    lines: int = 0
    types: list[pa.RecordBatch] = field(default_factory=list)

    def facts(self) -> pa.RecordBatchReader:
        return pa.RecordBatchReader.from_batches(FACTS, self._batches())

    def _batches(self) -> Iterator[pa.RecordBatch]:
        import pyarrow.csv as pcsv

        reader = pcsv.open_csv(
            self.path,
            read_options=pcsv.ReadOptions(column_names=["t"], block_size=BLOCK),
            parse_options=pcsv.ParseOptions(delimiter="\x01", quote_char=False, escape_char=False),
            convert_options=pcsv.ConvertOptions(column_types={"t": _STRING}),
        )
        pending: deque[Future[tuple[pa.RecordBatch, pa.RecordBatch]]] = deque()
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            try:
                for batch in reader:
                    self.lines += batch.num_rows
                    pending.append(pool.submit(parse, batch.column(0), self.predicates, self.prefix))
                    if len(pending) > self.workers:
                        yield self._done(pending.popleft())
                while pending:
                    yield self._done(pending.popleft())
            finally:
                for future in pending:
                    future.cancel()
                reader.close()

    def _done(self, future: Future[tuple[pa.RecordBatch, pa.RecordBatch]]) -> pa.RecordBatch:
        facts, types = future.result()
        self.types.append(types)
        if self.done:
            self.done()
        return facts
