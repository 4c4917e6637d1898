"""``kg serve``: the comparison workbench and the graph as a SPARQL 1.1 endpoint (with
named-query URLs), under uvicorn."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional

import typer

from kg.cli import state
from kg.cli.output import Format, pick_format

if TYPE_CHECKING:
    import socket
    from pathlib import Path

__all__ = ["register", "serve"]


def _listen(host: str, port: int) -> socket.socket:
    import socket

    from kg.errors import KGError

    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        raise KGError(f"cannot listen on {host}:{port}: {exc.strerror or exc}",
                      hint="Pick another --port (0 takes any free one) or stop what holds it.") from None
    sock.setblocking(False)
    return sock


def _write_serve_file(path: Path, info: dict[str, object]) -> None:
    import json
    import os

    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def _remove_serve_file(path: Path, pid: int) -> None:
    import json

    try:
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == pid:
            path.unlink()
    except (OSError, ValueError):
        pass


def _stop(signum: int, frame: object) -> None:
    # uvicorn shuts down gracefully on SIGTERM, then raises the signal again; ending
    # with SystemExit here (instead of dying) lets `kg serve` remove its serve.json.
    raise SystemExit(0)


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on. Keep 127.0.0.1 unless others "
                                      "should reach the graph.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on; 0 takes a free one.")] = 7879,
    allow_update: Annotated[bool, typer.Option("--allow-update", help="Accept SPARQL updates that carry "
                                               "the --token (read-only otherwise).")] = False,
    token: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(envvar="KG_SERVE_TOKEN", show_default=False,
                     help="Bearer token that updates must carry (needed with --allow-update)."),
    ] = None,
    timeout: Annotated[float, typer.Option(min=0.001, help="Seconds a query may run before the "
                                           "client gets 503.")] = 30.0,
    max_rows: Annotated[int, typer.Option(min=1, help="Rows (or triples) a result may hold before "
                                          "the client gets 422.")] = 10_000,
    workers: Annotated[int, typer.Option(min=1, help="Queries that may run at once.")] = 4,
    cors_origin: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--cors-origin", help="Origin allowed to call from a browser; repeat for more. "
                     "Default: any.", show_default=False),
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level: critical, error, warning, info, "
                                           "debug.")] = "info",
    fmt: Annotated[Format, typer.Option("--format", "-f", help="How to print the addresses at start-up: "
                                        "table, or json / csv for scripts (one object once listening).")]
    = Format.table,
) -> None:
    """Serve the comparison workbench (/) and the graph as a SPARQL 1.1 endpoint (/sparql), with
    the named queries under /queries."""
    import datetime as dt
    import json
    import os
    import signal

    from kg.cli.output import console, emit_machine, err_console
    from kg.errors import KGError

    fmt = pick_format(fmt)
    if allow_update and not token:
        raise KGError("--allow-update needs a token that updates must carry",
                      hint="Pass --token TOKEN (or set KG_SERVE_TOKEN); clients send "
                      "Authorization: Bearer TOKEN.")
    import uvicorn

    from kg.server import ServerSettings, create_app
    from kg.store.embedded import SERVE_FILE, OxigraphStore

    settings = ServerSettings(host=host, port=port, allow_update=allow_update, token=token, timeout=timeout,
                              max_rows=max_rows, workers=workers,
                              cors_origins=tuple(cors_origin) if cors_origin else ("*",))
    store = state().store()
    sock = _listen(host, port)
    bound = sock.getsockname()[1]
    authority = f"[{host}]" if ":" in host else host
    base = f"http://{authority}:{bound}"
    serve_file = store.path / SERVE_FILE if isinstance(store, OxigraphStore) and store.path else None
    pid = os.getpid()
    previous = signal.signal(signal.SIGTERM, _stop)
    if serve_file is not None:
        _write_serve_file(serve_file, {
            "sparql": f"{base}/sparql", "queries": f"{base}/queries", "pid": pid,
            "started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "allow_update": allow_update, "store": store.location,
        })
    try:
        out = console()
        info = {"workbench": f"{base}/", "sparql": f"{base}/sparql", "queries": f"{base}/queries",
                "store": store.location, "allow_update": allow_update, "timeout": timeout, "max_rows": max_rows,
                "pid": pid}
        if fmt is Format.json:  # one line, so a script can read it while the server runs
            out.file.write(json.dumps(info) + "\n")
        elif not emit_machine(fmt, info):
            out.print(f"Serving {store.location} at {base}/", highlight=False)
            out.print(f"  workbench      {base}/  (techniques, compare, lineage, reading list, query)",
                      highlight=False)
            out.print(f"  SPARQL         {base}/sparql", highlight=False)
            out.print(f"  named queries  {base}/queries", highlight=False)
            out.print(f"  updates        {'allowed with the token' if allow_update else 'refused (read-only)'}",
                      highlight=False)
            out.print(f"  limits         {timeout:g} s per query, {max_rows} rows per result", highlight=False)
        if host not in ("127.0.0.1", "localhost", "::1"):
            err_console().print(f"[yellow]warning:[/] listening on {host}: anyone who can reach this "
                                "address can read the graph.")
        out.file.flush()
        from kg.server.web import workbench_routes

        app = create_app(store, settings, extra_routes=workbench_routes())
        config = uvicorn.Config(app, log_level=log_level, lifespan="on", access_log=log_level in ("info", "debug"))
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
        if serve_file is not None:
            _remove_serve_file(serve_file, pid)


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
