"""``kg ingest``: enrich the graph from arXiv, GitHub and Zotero."""

from __future__ import annotations

import typer

__all__ = ["app"]

app = typer.Typer(help="Pull papers, authors and repository metadata from arXiv, GitHub and Zotero.",
                  no_args_is_help=True)
