"""What the reader's own parts of the workbench show: whether they follow a technique,
the notes of the papers on the reading page, and the values of the technique form
(:mod:`kg.server.web.mine` writes them)."""

from __future__ import annotations

from typing import Any

from pyoxigraph import NamedNode

from kg.store.base import GraphStore

__all__ = ["FIELDS", "entry_form", "follow_state", "form_lines", "with_notes"]

#: The technique form's fields (besides one v_<key> field per dimension).
FIELDS = ("name", "id", "category", "new_category", "aliases", "summary", "date", "paper", "repository",
          "parents")


def form_lines(value: str) -> list[str]:
    """A textarea's entries: one per line."""
    return [line.strip() for line in value.splitlines() if line.strip()]


def follow_state(store: GraphStore, technique: NamedNode) -> dict[str, Any]:
    """Whether the reader follows ``technique``, and whether that is their choice or inferred."""
    from kg.follows import followed

    now = followed(store)
    return {"following": technique.value in now, "inferred": now.inferred, "count": len(now)}


def with_notes(store: GraphStore, data: dict[str, Any]) -> dict[str, Any]:
    """A reading page (:func:`kg.server.web.models.reading_page`) with the notes of each paper
    it shows: the newest is the one its form edits."""
    from kg.notes import notes_by_paper

    papers = [NamedNode(p["paper"]) for g in data.get("categories", []) for p in g.papers]
    notes = notes_by_paper(store, papers)
    categories = []
    for g in data.get("categories", []):
        copy = type(g)(**{**vars(g), "papers": [{**p, "notes": [n.as_dict() for n in notes.get(p["paper"], [])]}
                                                for p in g.papers]})
        categories.append(copy)
    return {**data, "categories": categories}


def _catalog_choices(store: GraphStore) -> dict[str, Any]:
    from kg.owntech.edit import context
    from kg.owntech.model import VALUES
    from kg.vocab import LINEAGE_RELATIONS

    known, mine = context(store)
    return {"categories": sorted(known.category_labels(mine).items(), key=lambda c: c[1].casefold()),
            "relations": LINEAGE_RELATIONS, "values": [(k, v.label) for k, v in VALUES.items() if k != "summary"]}


def entry_form(store: GraphStore, ident: str | None) -> dict[str, Any]:
    """The form's values for technique ``ident`` (the reader's word on it), or a blank form."""
    from kg.owntech.edit import context

    known, mine = context(store)
    form: dict[str, Any] = {k: "" for k in FIELDS}
    form["values"] = {}
    if ident is None:
        return {"form": form, "own": True, "catalogName": None, **_catalog_choices(store)}
    iri = known.find(mine, ident)
    names = known.names(mine)
    tid = names[iri][1]
    entry = mine.entries.get(tid)
    own = entry is not None and entry.own
    if entry is not None:
        form.update(name=entry.name or "", id=entry.id, category=entry.category or "",
                    aliases="\n".join(entry.aliases), date=entry.date or "", paper=entry.paper or "",
                    repository=entry.repository or "",
                    parents="\n".join(f"{names.get(p, (p, p))[1]}:{r}" for p, r in entry.parents))
        form["summary"] = entry.values.get("summary", "")
        form["values"] = {k: v for k, v in entry.values.items() if k != "summary"}
    form["id"] = tid
    return {"form": form, "own": own, "catalogName": None if own else names[iri][0], **_catalog_choices(store)}
