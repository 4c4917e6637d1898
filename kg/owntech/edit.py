"""Adding, changing and removing the reader's techniques and their facts on the catalog's.

A :class:`Change` says what one command (``kg technique add/edit``, the web form, one entry
of an imported TOML file) asks for; :func:`apply_change` checks it against the store
(:class:`~kg.owntech.known.Known`) and the reader's graph as it stands (:class:`Mine`) and
changes the latter; :func:`save` writes the reader's graph whole, in one transaction that
keeps a snapshot first (``kg undo``). Every refusal is a :class:`~kg.errors.KGError` that
names the problem and the fix, raised before anything is written:

- an unknown parent or category gets a did-you-mean;
- a name or alias that another technique already answers to is refused unless ``force``,
  and the message names that technique;
- a parent that would close a loop in the lineage is refused, and the message shows it;
- a malformed arXiv id, DOI, date or repository is refused.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

from pyoxigraph import NamedNode

from kg.errors import KGError, NotFoundError
from kg.graphs import MY_TECHNIQUES
from kg.iris import slugify
from kg.owntech.checks import PaperSpec, check_date, check_repository, check_slug, parse_paper, parse_parent
from kg.owntech.known import Known, category_id, read_known
from kg.owntech.model import Category, Entry, Mine, Paper, mine_from_triples, mine_triples
from kg.resolve import normalize_name
from kg.store.base import Activity, GraphStore, Transaction

__all__ = ["Change", "Outcome", "apply_change", "find_cycle", "read_mine", "remove_entry", "save"]


@dataclass
class Change:
    """What to change of one technique; None (or empty) leaves a field as it is, and an
    empty string clears the reader's value."""

    name: str | None = None
    ident: str | None = None
    aliases: list[str] = field(default_factory=list)
    drop_aliases: list[str] = field(default_factory=list)
    category: str | None = None
    new_category: str | None = None
    date: str | None = None
    paper: str | None = None
    repository: str | None = None
    #: ``TECHNIQUE:RELATION`` each
    parents: list[str] = field(default_factory=list)
    #: parent names whose edge (any relation) the reader added and now takes back
    drop_parents: list[str] = field(default_factory=list)
    #: value key (:data:`kg.owntech.model.VALUES`) → text; "" clears
    values: dict[str, str] = field(default_factory=dict)
    force: bool = False


@dataclass
class Outcome:
    """What a change did: ``added``, ``changed``, ``unchanged`` or ``removed``, to which
    technique, with notes worth telling the reader."""

    action: str
    entry: Entry
    notes: list[str] = field(default_factory=list)


def read_mine(store: GraphStore) -> Mine:
    return mine_from_triples(store.triples(MY_TECHNIQUES))


def find_cycle(edges: set[tuple[str, str]], child: str, parent: str) -> list[str] | None:
    """The loop that the edge "``child`` derives from ``parent``" would close, as the
    techniques from ``child`` round to ``child`` again (each derives from the next), or None."""
    parents: dict[str, list[str]] = {}
    for c, p in edges:
        parents.setdefault(c, []).append(p)
    # A loop closes when child is an ancestor of parent: walk up from parent.
    came_from: dict[str, str | None] = {parent: None}
    todo = [parent]
    while todo:
        node = todo.pop(0)
        if node == child:
            back: list[str] = []
            step: str | None = node
            while step is not None:
                back.append(step)
                step = came_from[step]
            return [child, *reversed(back)]
        for up in sorted(parents.get(node, [])):
            if up not in came_from:
                came_from[up] = node
                todo.append(up)
    return None


def _clash(known: Known, mine: Mine, label: str, own_iri: str, what: str, force: bool) -> str | None:
    """Refuse ``label`` when another technique answers to it (unless ``force``: then say so)."""
    key = normalize_name(label)
    if not key:
        raise KGError(f"the {what} {label!r} has no letters or digits", hint=f"Give a {what} that can be typed.")
    others = known.label_index(mine).get(key, set()) - {own_iri}
    if not others:
        return None
    names = known.names(mine)
    who = "; ".join(f"{names.get(o, (o, o))[0]} ({names.get(o, (o, o))[1]})" for o in sorted(others))
    if not force:
        raise KGError(f"the {what} {label!r} is already used by {who}",
                      hint=f"Choose another {what}, or pass --force to give it anyway (then {label!r} names "
                      "more than one technique, and commands ask which).")
    return f"{what} {label!r} is also used by {who} (--force)"


def resolve_paper_spec(store: GraphStore, spec: PaperSpec, mine: Mine) -> tuple[str, Paper | None]:
    """The IRI of the paper ``spec`` names, and a stub to add when the graph lacks it."""
    from pyoxigraph import Literal

    if spec.kind == "title":
        from kg.reading import resolve_paper

        return resolve_paper(store, spec.value).value, None
    iri = spec.iri
    assert iri is not None
    if iri in mine.papers or store.ask("ASK { ?p a bibo:Document }", {"p": NamedNode(iri)}):
        return iri, None
    if spec.kind == "arxiv":
        found = store.select("SELECT ?p WHERE { ?p tkg:arxivId ?id ; a bibo:Document } LIMIT 1",
                             {"id": Literal(spec.value)}).records()
        return (found[0]["p"], None) if found else (iri, Paper(iri, arxiv=spec.value))
    if spec.kind == "doi":
        found = store.select("SELECT ?p WHERE { ?p bibo:doi ?d ; a bibo:Document FILTER(LCASE(STR(?d)) = ?want) } "
                             "LIMIT 1", {"want": Literal(spec.value)}).records()
        return (found[0]["p"], None) if found else (iri, Paper(iri, doi=spec.value))
    raise NotFoundError(f"the graph holds no paper {iri}",
                        hint="Give the paper's arXiv id, DOI or words of its title instead.")


def _category(known: Known, mine: Mine, change: Change, entry: Entry) -> list[str]:
    if change.category is None and change.new_category is None:
        return []
    if not entry.own:
        raise KGError(f"{entry.id} is a catalog technique: its category is the catalog's",
                      hint="Add a technique of your own (kg technique add) to place it elsewhere.")
    if change.category is not None and change.new_category is not None:
        raise KGError("give --category or --new-category, not both",
                      hint="--category names an existing category; --new-category makes one.")
    if change.category is not None:
        entry.category = category_id(known, mine, change.category)
        return []
    label = (change.new_category or "").strip()
    if not label:
        raise KGError("--new-category needs a name", hint="Example: --new-category 'Pipeline parallelism'.")
    ident = slugify(label)
    labels = known.category_labels(mine)
    taken = [i for i, lab in labels.items() if i == ident or normalize_name(lab) == normalize_name(label)]
    if taken:
        raise KGError(f"the category {label!r} exists already ({taken[0]})",
                      hint=f"Use --category {taken[0]}.")
    position = max([c.position for c in mine.categories.values()] + [99]) + 1
    mine.categories[ident] = Category(ident, label, None, position)
    entry.category = ident
    return [f"new category {label!r} ({ident})"]


def apply_change(store: GraphStore, known: Known, mine: Mine, change: Change, *, technique: str | None = None,
                 now: dt.datetime | None = None) -> Outcome:
    """Apply ``change`` to ``mine``: a new technique of the reader's own when ``technique``
    is None (``change.name`` names it), else the technique called ``technique`` (the
    reader's own, or a catalog one whose facts the reader gives)."""
    notes: list[str] = []
    if technique is None:
        entry, notes = _new_entry(known, mine, change, now)
        action = "added"
        before = None
    else:
        iri = known.find(mine, technique)
        ident = known.names(mine)[iri][1]
        existing = mine.entries.get(ident)
        before = existing.copy() if existing is not None else None
        entry = existing.copy() if existing is not None else Entry(ident, own=False)
        action = "changed"
        if change.name is not None:
            if not entry.own:
                raise KGError(f"{ident} is a catalog technique: its name is the catalog's",
                              hint="Give it another name as an alias instead: --alias NAME.")
            if not change.name.strip():
                raise KGError("a technique's name cannot be empty", hint="Give a name, e.g. --name 'PipeDream-2BW'.")
            if normalize_name(change.name) != normalize_name(entry.name or ""):
                note = _clash(known, mine, change.name.strip(), entry.iri.value, "name", change.force)
                if note:
                    notes.append(note)
                    entry.shared.append(change.name.strip())
            entry.name = change.name.strip()
    notes += _category(known, mine, change, entry)
    if entry.own and not entry.category:
        labels = known.category_labels(mine)
        raise KGError(f"{entry.name or entry.id} needs a category",
                      hint="Give --category NAME (" + ", ".join(sorted(labels)) + ") or --new-category NAME.")
    for alias in change.aliases:
        alias = alias.strip()
        if any(normalize_name(alias) == normalize_name(a) for a in entry.aliases):
            continue
        if normalize_name(alias) in {normalize_name(x) for x in (entry.name or "", entry.id)} and entry.own:
            continue
        if entry.iri.value in known.labels.get(normalize_name(alias), set()):
            notes.append(f"{alias!r} is one of its names already")
            continue
        note = _clash(known, mine, alias, entry.iri.value, "alias", change.force)
        if note:
            notes.append(note)
            entry.shared.append(alias)
        entry.aliases.append(alias)
    for alias in change.drop_aliases:
        kept = [a for a in entry.aliases if normalize_name(a) != normalize_name(alias)]
        if len(kept) == len(entry.aliases):
            raise KGError(f"{alias!r} is not an alias you gave {entry.id}",
                          hint="Your aliases of it: " + (", ".join(entry.aliases) or "none")
                          + ". The catalog's aliases are the catalog's.")
        entry.aliases = kept
        entry.shared = [x for x in entry.shared if normalize_name(x) != normalize_name(alias)]
    entry.aliases.sort(key=str.casefold)
    if change.date is not None:
        entry.date = check_date(change.date) if change.date.strip() else None
    if change.repository is not None:
        entry.repository = check_repository(change.repository) if change.repository.strip() else None
    if change.paper is not None:
        if change.paper.strip():
            iri, stub = resolve_paper_spec(store, parse_paper(change.paper), mine)
            entry.paper = iri
            if stub is not None:
                mine.papers[stub.iri] = stub
                notes.append(f"new paper {stub.iri} (kg ingest arxiv or citations fills in its metadata)")
        else:
            entry.paper = None
    for key, text in change.values.items():
        if text.strip():
            entry.values[key] = text.strip()
        else:
            entry.values.pop(key, None)
    for name in change.drop_parents:
        parent = known.find(mine, name)
        left = [(p, r) for p, r in entry.parents if p != parent]
        if len(left) == len(entry.parents):
            raise KGError(f"you gave {entry.id} no parent {name!r}",
                          hint="kg lineage shows its parents; only those you added can be taken back.")
        entry.parents = left
    mine.entries[entry.id] = entry
    for spec in change.parents:
        name, relation = parse_parent(spec)
        parent = known.find(mine, name)
        notes += _add_parent(known, mine, entry, parent, relation)
    _drop_unused_papers(mine)
    if before is not None and _same(before, entry):
        action = "unchanged"
    elif before is None and technique is not None and not _said(entry):
        del mine.entries[entry.id]
        action = "unchanged"
    return Outcome(action, entry, notes)


def _said(entry: Entry) -> bool:
    return bool(entry.own or entry.aliases or entry.date or entry.paper or entry.repository or entry.values
                or entry.parents)


def _same(a: Entry, b: Entry) -> bool:
    return (a.name, sorted(a.aliases), a.category, a.date, a.paper, a.repository, a.values, sorted(a.parents),
            sorted(a.shared)) == (b.name, sorted(b.aliases), b.category, b.date, b.paper, b.repository, b.values,
                                  sorted(b.parents), sorted(b.shared))


def _new_entry(known: Known, mine: Mine, change: Change, now: dt.datetime | None) -> tuple[Entry, list[str]]:
    name = (change.name or "").strip()
    if not name:
        raise KGError("a technique needs a name",
                      hint="Example: kg technique add 'PipeDream-2BW' --category distributed")
    ident = check_slug(change.ident.strip()) if change.ident else slugify(name)
    names = known.names(mine)
    iri = Entry(ident, own=True).iri.value
    if iri in names:
        owner = "yours" if ident in mine.entries and mine.entries[ident].own else "the catalog's"
        raise KGError(f"a technique with the id {ident!r} exists already: {names[iri][0]} ({owner})",
                      hint=f"Change it with kg technique edit {ident}, or give the new one another id with --id.")
    entry = Entry(ident, own=True, name=name,
                  created=(now or dt.datetime.now(dt.UTC)).replace(microsecond=0).isoformat().replace("+00:00", "Z"))
    note = _clash(known, mine, name, iri, "name", change.force)
    if note:
        entry.shared.append(name)
    return entry, [note] if note else []


def _add_parent(known: Known, mine: Mine, entry: Entry, parent: str, relation: str) -> list[str]:
    child = entry.iri.value
    names = known.names(mine)
    if parent == child:
        raise KGError(f"{entry.name or entry.id} cannot derive from itself",
                      hint="Name another technique as its parent.")
    if (parent, relation) in entry.parents:
        return []
    if (child, parent, relation) in known.typed:
        return [f"{names[parent][0]} ({relation}) is in the lineage already"]
    cycle = find_cycle(known.all_edges(mine), child, parent)
    if cycle is not None:
        shown = " → ".join(names.get(t, (t, t))[0] for t in cycle)
        raise KGError(f"{entry.name or entry.id} deriving from {names[parent][0]} would close a loop in the "
                      f"lineage: {shown}",
                      hint="Each arrow reads 'derives from'. Drop one of these edges first "
                      "(kg technique edit TECH --drop-parent PARENT), or choose another parent.")
    entry.parents.append((parent, relation))
    entry.parents.sort()
    return []


def _drop_unused_papers(mine: Mine) -> None:
    used = {e.paper for e in mine.entries.values() if e.paper}
    for iri in [p for p in mine.papers if p not in used]:
        del mine.papers[iri]


def remove_entry(known: Known, mine: Mine, technique: str) -> Outcome:
    """Take the technique called ``technique`` out of ``mine``: a technique of the reader's
    own goes with the edges the reader gave to it; of a catalog technique, the reader's
    facts go (the catalog's stay)."""
    iri = known.find(mine, technique)
    names = known.names(mine)
    ident = names[iri][1]
    entry = mine.entries.get(ident)
    if entry is None:
        raise KGError(f"{names[iri][0]} ({ident}) is the catalog's, and you gave it no facts of your own",
                      hint="Only your own techniques, and your facts on the catalog's, can be removed.")
    del mine.entries[ident]
    notes = []
    for other in mine.entries.values():
        if any(p == iri for p, _r in other.parents):
            other.parents = [(p, r) for p, r in other.parents if p != iri]
            notes.append(f"{other.name or other.id} no longer derives from it")
    _drop_unused_papers(mine)
    return Outcome("removed", entry, notes)


def save(store: GraphStore, mine: Mine, label: str, stats: dict[str, int],
         also: Callable[[Transaction], None] | None = None) -> bool:
    """Write ``mine`` as the reader's graph in one transaction (with ``also``'s changes);
    False when nothing changed."""
    with store.transaction(Activity(label, stats=stats)) as tx:
        changed = tx.replace_graph(MY_TECHNIQUES, mine_triples(mine))
        if also is not None:
            also(tx)
    return changed or bool(tx.touched)


def context(store: GraphStore) -> tuple[Known, Mine]:
    """What a change is checked against, read once."""
    return read_known(store), read_mine(store)
