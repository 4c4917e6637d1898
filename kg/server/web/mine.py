"""The reader's own writes in the workbench: a technique of their own (``/techniques/new``),
their facts on any technique (``/techniques/{id}/edit``), the follow toggle on a
technique's page (``POST /follows``) and the note of each paper on the reading page
(``POST /reading/note``). Each form is checked as ``kg technique add/edit``, ``kg follow``
and ``kg reading note`` check it (a refused form comes back with its values and the
reason), and each write is guarded as every workbench write is (:mod:`kg.server.web.guard`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyoxigraph import NamedNode
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from kg.errors import KGError
from kg.server.web.mymodels import FIELDS, entry_form, follow_state, form_lines

if TYPE_CHECKING:
    from kg.owntech import Change
    from kg.server.web.pages import Workbench

__all__ = ["MyPages"]


def _form_change(form: dict[str, str], before: dict[str, Any] | None) -> Change:
    """The :class:`~kg.owntech.Change` that makes the reader's entry what the form says
    (``before``: the form as it was shown, to tell what was taken away)."""
    from kg.owntech import Change
    from kg.owntech.checks import value_key
    from kg.owntech.model import VALUES

    old = before or {k: "" for k in FIELDS}
    aliases, old_aliases = form_lines(form.get("aliases", "")), form_lines(old.get("aliases", ""))
    parents, old_parents = form_lines(form.get("parents", "")), form_lines(old.get("parents", ""))
    values = {value_key(k.removeprefix("v_")): v for k, v in form.items() if k.startswith("v_")}
    values = {k: v for k, v in values.items() if k in VALUES}
    values["summary"] = form.get("summary", "")

    def given(key: str) -> str | None:
        now = form.get(key, "").strip()
        return None if now == str(old.get(key, "")).strip() else now

    category = form.get("category", "").strip() or None
    return Change(
        name=form.get("name", "").strip() or None, ident=form.get("id", "").strip() or None,
        aliases=[a for a in aliases if a not in old_aliases], drop_aliases=[a for a in old_aliases if a not in aliases],
        category=None if before and category == old.get("category") else category,
        new_category=form.get("new_category", "").strip() or None, date=given("date"), paper=given("paper"),
        repository=given("repository"), parents=[p for p in parents if p not in old_parents],
        drop_parents=[p.rsplit(":", 1)[0] for p in old_parents if p not in parents], values=values,
        force=form.get("force") == "1")


class MyPages:
    """The handlers; ``bench`` gives them the workbench's plumbing (rendering, worker
    threads, the write guard, the error pages)."""

    def __init__(self, bench: Workbench) -> None:
        self.bench = bench

    def handlers(self) -> dict[str, Any]:
        return {name: self.bench.page(getattr(self, name)) for name in ("new_technique", "edit_technique",
                                                                        "follow", "note")}

    async def _show_form(self, request: Request, data: dict[str, Any], *, ident: str | None, problem: str = "",
                         hint: str = "", status: int = 200) -> Response:
        title = "Add a technique" if ident is None else f"Edit {data.get('catalogName') or data['form']['name']}"
        return self.bench.render(request, "technique_form.html", status_code=status, title=title, data=data,
                                 ident=ident, problem=problem, hint=hint, page="techniques")

    async def _technique_form(self, request: Request, ident: str | None) -> Response:
        from kg.owntech import add_technique, edit_technique
        from kg.server.web.pages import _keep_index, _wants_json

        store = self.bench.store(request)
        if request.method == "GET":
            data = await self.bench.call(request, entry_form, store, ident)
            return await self._show_form(request, data, ident=ident)
        form = await self.bench.write_form(request)
        shown = await self.bench.call(request, entry_form, store, ident)

        def save() -> Any:
            change = _form_change(form, shown["form"] if ident is not None else None)
            outcome = add_technique(store, change) if ident is None else edit_technique(store, ident, change)
            if outcome.action != "unchanged":  # the graphs it changed are followed to the papers they name
                _keep_index(store, [], techniques=[outcome.entry.iri.value], reading=False)
            return outcome

        try:
            outcome = await self.bench.call(request, save)
        except KGError as error:
            if _wants_json(request):
                raise
            data = {**shown, "form": {**shown["form"], **{k: form.get(k, "") for k in FIELDS if k in form},
                                      "values": {k.removeprefix("v_"): v for k, v in form.items()
                                                 if k.startswith("v_")}}}
            # 400: the form was refused (an unknown parent or category too: the page itself exists)
            return await self._show_form(request, data, ident=ident, problem=error.message, hint=error.hint,
                                         status=400)
        finally:
            request.app.state.pool.invalidate()  # the endpoint's workers read the change
        if _wants_json(request):
            return JSONResponse({"ok": True, "action": outcome.action, "technique": outcome.entry.iri.value,
                                 "id": outcome.entry.id, "notes": outcome.notes}, headers={"Cache-Control": "no-store"})
        return RedirectResponse(f"/techniques/{outcome.entry.id}", status_code=303)

    async def new_technique(self, request: Request) -> Response:
        return await self._technique_form(request, None)

    async def edit_technique(self, request: Request) -> Response:
        return await self._technique_form(request, request.path_params["id"])

    async def follow(self, request: Request) -> Response:
        """Follow or unfollow a technique (``technique``: its id; ``follow``: 1 or 0)."""
        from kg.follows import chosen, follow, unfollow
        from kg.graphs import FOLLOWS
        from kg.resolve import resolve_technique
        from kg.server.web.pages import _keep_index, _wants_json, redirect_next

        form = await self.bench.write_form(request)
        name = form.get("technique", "").strip()
        wanted = form.get("follow", "")
        if not name or wanted not in ("0", "1"):
            raise KGError("the form names no technique to follow or unfollow",
                          hint="Send technique=<id> and follow=1 (follow) or follow=0 (unfollow).")
        store = self.bench.store(request)

        def change() -> tuple[NamedNode, dict[str, Any]]:
            node = resolve_technique(store, name)
            before = chosen(store)
            if wanted == "1":
                follow(store, [node])
            else:
                unfollow(store, [node])
            # A followed technique is the reader's own in search: those followed before and after.
            _keep_index(store, [], techniques=sorted({*(before or {}), *(chosen(store) or {})}), graphs=[FOLLOWS])
            return node, follow_state(store, node)

        try:
            node, state = await self.bench.call(request, change)
        finally:
            request.app.state.pool.invalidate()
        if _wants_json(request):
            return JSONResponse({"ok": True, "technique": node.value, **state}, headers={"Cache-Control": "no-store"})
        return redirect_next(form, "/")

    async def note(self, request: Request) -> Response:
        """Write, change or delete a paper's note (``paper``; ``note``: the note's IRI when it
        has one; ``text``; ``delete=1`` deletes it)."""
        from kg.notes import add_note, delete_note, edit_note
        from kg.server.web.pages import _keep_index, _wants_json, redirect_next

        form = await self.bench.write_form(request)
        paper, note, value = form.get("paper", "").strip(), form.get("note", "").strip(), form.get("text", "")
        if not paper.startswith(("http://", "https://")):
            raise KGError("the form names no paper", hint="Send paper=<the paper's IRI> and text=<the note>.")
        if note and not note.startswith(("http://", "https://")):
            raise KGError("the form's note is not a note's IRI", hint="Reload the page and try again.")
        store = self.bench.store(request)

        def write() -> dict[str, Any]:
            if form.get("delete") == "1" or (note and not value.strip()):
                if not note:
                    raise KGError("there is no note to delete", hint="Reload the page: it may have gone already.")
                return {"action": "deleted", **delete_note(store, NamedNode(note), via="web").as_dict()}
            if note:
                done, changed = edit_note(store, NamedNode(note), value, via="web")
                return {"action": "edited" if changed else "unchanged", **done.as_dict()}
            return {"action": "added", **add_note(store, NamedNode(paper), value, via="web").as_dict()}

        def change() -> dict[str, Any]:
            done = write()
            if done["action"] != "unchanged":  # a note is its paper's text in search
                _keep_index(store, [str(done["paper"])])
            return done

        try:
            done = await self.bench.call(request, change)
        finally:
            request.app.state.pool.invalidate()
        if _wants_json(request):
            return JSONResponse({"ok": True, **done}, headers={"Cache-Control": "no-store"})
        return redirect_next(form, "/reading")
