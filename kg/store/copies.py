"""Import copies: the content of each graph that ``load_file`` loaded whole, kept beside
the store as N-Triples, so that readers of a whole graph (``kg analytics build``, the
next replacement's diff) need not dump it out of RocksDB again (117 s at 10M quads).

Layout, inside the store's directory::

    DIR/copies/<key>/graph.txt                the graph's IRI (key: a hash of it)
    DIR/copies/<key>/<stamp>.<ids>.nt         the copy: one triple a line
    DIR/copies/<key>/tmp-*.nt                 a copy being written (never read)

A copy's lines are exactly ``f"{s} {p} {o} .\\n"`` with the store's own form of each term
(:func:`canonical_lines`), no comments and no blank lines; a line may repeat (a first load
copies the file's lines, duplicates included). ``<stamp>`` is a hash of the activity that
loaded the graph and the digest it recorded in the provenance graph; ``<ids>`` says whose
blank-node labels the copy holds: ``store`` (the store's own ids, after a replacement) or
``file`` (the file's labels, which Oxigraph's bulk loader renames). A first load whose copy
has no ``_:`` anywhere is ``store``: with no blank nodes the labels cannot differ, and the
next replacement can diff against it.

Why a copy is never stale: every write that may touch a graph deletes the graph's copies
first (:meth:`Copies.invalidate`, :meth:`Copies.invalidate_for_update`), and a copy is
installed only after the store committed the load that it copies (a temporary file,
fsync, then one rename), under the name the load's provenance gives. :meth:`Copies.find`
returns a copy only when the graph's provenance, as the caller's store sees it, names
that very load. So a kill at any point leaves either no copy or a true one, and a reader
of an older view never gets a newer graph's copy.

Disk: a copy is about the size of the N-Triples file it came from (1.2 GB for the 9.1M
triples of 700k papers): the store keeps the graph twice, once indexed and once as text.
Copies are not part of RocksDB, so reader views, store snapshots (checkpoints) and
``kg backup`` (which exports the graphs) neither include nor double them.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pyoxigraph as ox

__all__ = ["COPIES", "Copies", "ImportCopy", "canonical_lines", "canonical_triples", "fsync"]

#: The folder of import copies inside a store's directory.
COPIES = "copies"
_GRAPH_FILE = "graph.txt"
_TMP = "tmp-"

BlankIds = Literal["store", "file"]


@dataclass(frozen=True)
class ImportCopy:
    """A graph's content as N-Triples lines (see the module's docstring)."""

    graph: ox.NamedNode
    path: Path  # the N-Triples file (plain, uncompressed)
    digest: str  # the provenance digest recorded by the load that wrote it
    triples: int  # distinct triples, as recorded in provenance
    blank_ids: BlankIds  # are blank-node labels the store's own ids?


# -- the store's form of a triple -----------------------------------------------------------

_XSD = rb"http://www\.w3\.org/2001/XMLSchema#"
_RDF = rb"http://www\.w3\.org/1999/02/22-rdf-syntax-ns#"
_IRI = rb'<[^\x00-\x20<>"{}|^`\\]*>'
_BLANK = rb"_:[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?"
#: A string as Oxigraph writes it: these escapes and no others (it writes other control
#: characters as \\uXXXX, which this leaves to the slow path).
_STRING = rb'"[^"\\\x00-\x1f\x7f]*(?:\\[btnfr"\\][^"\\\x00-\x1f\x7f]*)*"'
_TIME = rb"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
_DAY = rb"[0-9]{4}-[0-9]{2}-[0-9]{2}"
#: Typed literals whose lexical form Oxigraph keeps as it is: a datatype it does not
#: interpret, or the canonical form of one it does (it stores xsd:integer, xsd:dateTime
#: and the like as values and writes them back canonically: "01" comes back as "1").
_TYPED = (
    rb'"(?:0|-?[1-9][0-9]{0,17})"\^\^<' + _XSD + rb"integer>"
    + rb'|"(?:true|false)"\^\^<' + _XSD + rb"boolean>"
    + rb'|"' + _DAY + rb"T" + _TIME + rb'Z"\^\^<' + _XSD + rb"dateTime>"
    + rb'|"' + _DAY + rb'"\^\^<' + _XSD + rb"date>"
    + rb'|"[0-9]{4}"\^\^<' + _XSD + rb"gYear>"
    + rb"|" + _STRING + rb"\^\^<(?!" + _XSD + rb"|" + _RDF + rb")" + _IRI[1:]
)
_LITERAL = rb"(?:" + _STRING + rb"(?:@[a-z]+(?:-[a-z0-9]+)*)?|" + _TYPED + rb")"
_LINE = (rb"(?:" + _IRI + rb"|" + _BLANK + rb") " + _IRI + rb" (?:" + _IRI + rb"|" + _BLANK + rb"|"
         + _LITERAL + rb") \.")
_CANONICAL_LINE = re.compile(_LINE)
_CANONICAL_BLOCK = re.compile(rb"(?:" + _LINE + rb"\n)*+")


def canonical_lines(block: bytes) -> bytes:
    """The triples of ``block`` (whole N-Triples lines) as the store writes them, one a
    line, each ending in a newline; comments and blank lines left out.

    Exact, and cheap for a file that is canonical already: a line the strict pattern of
    the store's own form matches is kept byte for byte (a whole block is checked by one
    regular-expression match); any other line is parsed and written back by Oxigraph
    (through a store in memory, so that typed literals take the store's canonical form).
    Raises SyntaxError for a line that is not N-Triples."""
    if _CANONICAL_BLOCK.fullmatch(block):
        return block
    out: list[bytes] = []
    odd: list[bytes] = []
    for line in block.split(b"\n"):
        line = line.strip()
        if not line or line.startswith(b"#"):
            continue
        if _CANONICAL_LINE.fullmatch(line):
            out.append(line + b"\n")
        else:
            odd.append(line)
    if odd:
        out.append(_through_store(b"\n".join(odd)))
    return b"".join(out)


def canonical_triples(triples: Iterable[ox.Triple | ox.Quad]) -> bytes:
    """``triples`` as the store writes them (see :func:`canonical_lines`)."""
    return canonical_lines("".join(f"{t.subject} {t.predicate} {t.object} .\n" for t in triples).encode())


def _through_store(data: bytes) -> bytes:
    memory = ox.Store()
    memory.extend(ox.Quad(t.subject, t.predicate, t.object, ox.DefaultGraph())
                  for t in ox.parse(data, format=ox.RdfFormat.N_TRIPLES))
    return memory.dump(format=ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph()) or b""


# -- which graphs an update may write ------------------------------------------------------

_STRINGS = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*"""|' r"'''(?:[^'\\]|\\.|'(?!''))*'''|"
                      r'"(?:[^"\\\n]|\\.)*"|' r"'(?:[^'\\\n]|\\.)*'", re.S)
_ANY_GRAPH = re.compile(r"\bGRAPH\s*[?$]|\bBASE\b|\\[uU]", re.I)
_WHOLE_OPS = re.compile(r"\b(?:DROP|CLEAR|COPY|MOVE|ADD)\b", re.I)
_WHOLE_TARGETS = re.compile(r"\b(?:ALL|NAMED|DEFAULT)\b", re.I)
_PREFIX_DECL = re.compile(r"\bPREFIX\s+([A-Za-z][\w.\-]*|)\s*:\s*<([^>]*)>", re.I)


def update_may_write(sparql: str, graph: str, prefixes: dict[str, str]) -> bool:
    """Whether the SPARQL Update ``sparql`` may write the graph ``graph`` (an IRI),
    conservatively: it names the graph (as ``<IRI>`` or a prefixed name, in ``prefixes``
    or declared in the text), or uses ``GRAPH ?var``, ``BASE``, escapes in names, or
    ``ALL``/``NAMED``/``DEFAULT`` in a graph-management operation. Only an update that
    names other graphs alone is known not to."""
    if f"<{graph}>" in sparql:
        return True
    code = _STRINGS.sub('""', sparql)
    if _ANY_GRAPH.search(code) or (_WHOLE_OPS.search(code) and _WHOLE_TARGETS.search(code)):
        return True
    declared = {**prefixes, **{p: ns for p, ns in _PREFIX_DECL.findall(code)}}
    for name, ns in declared.items():
        if ns and graph.startswith(ns) and _prefixed(name, graph[len(ns):]).search(code):
            return True
    return False


def _prefixed(name: str, local: str) -> re.Pattern[str]:
    # A local name may escape its characters with a backslash (PN_LOCAL_ESC).
    body = "".join(r"\\?" + re.escape(c) for c in local)
    return re.compile(rf"(?<![\w\-.:]){re.escape(name)}:{body}(?![\w\-:%\\]|\.[\w\-:%\\])")


# -- the folder --------------------------------------------------------------------------


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class Copies:
    """The import copies of the store at ``store_dir``."""

    def __init__(self, store_dir: Path) -> None:
        self.root = store_dir / COPIES

    def folder(self, graph: ox.NamedNode) -> Path:
        return self.root / _key(graph.value)

    def _name(self, activity: str, digest: str, blank_ids: BlankIds) -> str:
        return f"{_key(activity + chr(10) + digest)}.{blank_ids}.nt"

    def find(self, graph: ox.NamedNode, activity: str, digest: str, triples: int) -> ImportCopy | None:
        """The copy written by the load ``activity`` (which recorded ``digest``), if any."""
        ids: tuple[BlankIds, ...] = ("store", "file")
        for blank_ids in ids:
            path = self.folder(graph) / self._name(activity, digest, blank_ids)
            if path.is_file():
                return ImportCopy(graph, path, digest, triples, blank_ids)
        return None

    def temporary(self, graph: ox.NamedNode) -> Path:
        """A fresh path for a copy being written (other unfinished ones of the graph are
        removed: one writer at a time holds the store)."""
        folder = self.folder(graph)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / _GRAPH_FILE).write_text(graph.value + "\n", encoding="utf-8")
        for old in folder.glob(_TMP + "*"):
            with contextlib.suppress(OSError):
                old.unlink()
        return folder / f"{_TMP}{uuid.uuid4().hex}.nt"

    def install(self, graph: ox.NamedNode, written: Path, *, activity: str, digest: str,
                blank_ids: BlankIds, keep: bool = False) -> Path:
        """Make ``written`` (a finished file) the graph's copy for the load ``activity``:
        fsync, then one rename (a hard link first when ``keep``, so that a retry finds
        ``written`` again). Call it only after the store committed that load."""
        folder = self.folder(graph)
        target = folder / self._name(activity, digest, blank_ids)
        if keep:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / _GRAPH_FILE).write_text(graph.value + "\n", encoding="utf-8")
            link = folder / f"{_TMP}{uuid.uuid4().hex}.nt"
            os.link(written, link)
            written = link
        fsync(written)
        os.replace(written, target)
        fsync(folder)
        return target

    def graphs(self) -> Iterator[tuple[str, Path]]:
        """(IRI, folder) of each graph that has a folder here."""
        if not self.root.is_dir():
            return
        for folder in self.root.iterdir():
            try:
                iri = (folder / _GRAPH_FILE).read_text(encoding="utf-8").strip()
            except OSError:
                iri = ""  # unknown: treated as any graph
            yield iri, folder

    def invalidate(self, graphs: Iterable[ox.NamedNode] | None = None) -> None:
        """Delete the copies of ``graphs`` (every copy, when None), before a write."""
        wanted = None if graphs is None else {g.value for g in graphs}
        for iri, folder in list(self.graphs()):
            if wanted is None or not iri or iri in wanted:
                _remove_copies(folder)

    def invalidate_for_update(self, sparql: str, prefixes: dict[str, str]) -> None:
        """Delete the copies of every graph the update ``sparql`` may write."""
        for iri, folder in list(self.graphs()):
            if not iri or update_may_write(sparql, iri, prefixes):
                _remove_copies(folder)

    def sweep(self) -> None:
        """Remove unfinished copies and empty folders (a writer was killed while writing)."""
        for _iri, folder in list(self.graphs()):
            for tmp in folder.glob(_TMP + "*"):
                with contextlib.suppress(OSError):
                    tmp.unlink()
            if not any(folder.glob("*.nt")):
                shutil.rmtree(folder, ignore_errors=True)


def _remove_copies(folder: Path) -> None:
    for path in folder.glob("*.nt"):
        if not path.name.startswith(_TMP):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


def fsync(path: Path) -> None:
    """Make ``path`` (a file or a folder) durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
