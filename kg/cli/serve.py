"""``kg serve``: the comparison workbench and the graph as a SPARQL 1.1 endpoint (with
named-query URLs), under uvicorn."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from kg.cli import state
from kg.cli.output import Format, pick_format

if TYPE_CHECKING:
    import socket

    from kg.server.workers import WorkerPool

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


def _server_class() -> type:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, which also stops the query workers as soon as a signal asks
        it to stop: queries still running are answered 503 at once, not cancelled later."""

        def __init__(self, config: uvicorn.Config, pool: WorkerPool) -> None:
            super().__init__(config)
            self.pool = pool

        def handle_exit(self, sig: int, frame: object) -> None:
            self.pool.interrupt()
            super().handle_exit(sig, frame)  # type: ignore[arg-type]

    return Server


def _token(token: str | None, token_file: Path | None, from_command_line: bool) -> str | None:
    from kg.cli.output import err_console
    from kg.errors import KGError

    if token_file is not None:
        try:
            value = token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise KGError(f"cannot read the token file {token_file}: {exc.strerror or exc}",
                          hint="Write the token alone in a file only you can read (chmod 600).") from None
        if not value:
            raise KGError(f"the token file {token_file} is empty", hint="Write the token in it.")
        if token is not None and from_command_line:
            raise KGError("give the token once: --token-file or --token, not both")
        return value
    if token is not None and from_command_line:
        err_console().print("[yellow]warning:[/] --token shows in the process list (ps) of everyone on this "
                            "machine; prefer KG_SERVE_TOKEN or --token-file.")
    return token


def _origins(values: list[str] | None) -> tuple[str, ...]:
    """The ``--cors-origin`` values as browsers send them in ``Origin`` (scheme://host[:port],
    lower case), or ``*``; ``null`` and anything with a path are refused."""
    from urllib.parse import urlsplit

    from kg.errors import KGError

    out = []
    for value in values or ():
        if value.strip() == "*":
            out.append("*")
            continue
        try:
            parts = urlsplit(value.strip().rstrip("/"))
            port = parts.port
        except ValueError:
            parts, port = None, None
        if (parts is None or parts.scheme.lower() not in ("http", "https") or not parts.hostname
                or parts.path or parts.query or parts.fragment or parts.username or parts.password):
            raise KGError(f"--cors-origin {value!r} is not an origin",
                          hint="Give scheme://host[:port], such as https://yasgui.example or http://localhost:8080 "
                          "(Origin: null, what sandboxed frames send, is never allowed).")
        host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
        out.append(f"{parts.scheme.lower()}://{host.lower()}" + (f":{port}" if port is not None else ""))
    return tuple(dict.fromkeys(out))


def serve(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="Address to listen on. Keep 127.0.0.1 unless others "
                                      "should reach the graph.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on; 0 takes a free one.")] = 7879,
    allow_update: Annotated[bool, typer.Option("--allow-update", help="Accept SPARQL updates that carry "
                                               "the token (read-only otherwise).")] = False,
    token: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(envvar="KG_SERVE_TOKEN", show_default=False,
                     help="Bearer token that updates (and writes beyond loopback) must carry. Set it in "
                     "KG_SERVE_TOKEN or --token-file: on the command line it shows in ps."),
    ] = None,
    token_file: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--token-file", show_default=False, dir_okay=False,
                     help="Read the token from this file (only its owner should read it)."),
    ] = None,
    timeout: Annotated[float, typer.Option(min=0.001, help="Seconds a query may run; then it is stopped "
                                           "and the client gets 503.")] = 30.0,
    max_rows: Annotated[int, typer.Option(min=1, help="Rows (or triples) a result may hold before "
                                          "the client gets 422; the most rows of a page of /queries/NAME. "
                                          "A whole named SELECT query streams, in any size.")] = 10_000,
    workers: Annotated[int, typer.Option(min=1, help="Query worker processes: queries that may run "
                                         "at once.")] = 4,
    queue: Annotated[int, typer.Option(min=0, help="Requests that may wait for a worker; one more "
                                       "gets 503.")] = 64,
    query_memory: Annotated[int, typer.Option(min=16, metavar="MIB", help="Memory one query may use, "
                                              "in MiB; then it is stopped.")] = 1024,
    max_query_size: Annotated[int, typer.Option(min=1, metavar="KIB", help="Largest query or update "
                                                "text, in KiB.")] = 256,
    max_query_depth: Annotated[int, typer.Option(min=1, help="Deepest nesting of brackets (and unary "
                                                 "operators) in a query.")] = 64,
    cors_origin: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--cors-origin", show_default=False,
                     help="Origin (https://host[:port]) whose pages may read /sparql, /store and /queries; "
                     "repeat for more, * for any. Default: none (the reading list is private). The "
                     "workbench never allows other origins."),
    ] = None,
    allow_service: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--allow-service", metavar="HOST", show_default=False,
                     help="Host (name or name:port) that SERVICE in queries and LOAD in updates may "
                     "contact; repeat for more. Default: none, the server sends no requests."),
    ] = None,
    allow_host: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option("--allow-host", metavar="NAME", show_default=False,
                     help="Host name requests may be addressed to besides loopback ones (and IP "
                     "addresses beyond loopback): a reverse proxy's, say. Repeat for more."),
    ] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level: critical, error, warning, info, "
                                           "debug.")] = "info",
    fmt: Annotated[Format, typer.Option("--format", "-f", help="How to print the addresses at start-up: "
                                        "table, or json / csv for scripts (one object once listening).")]
    = Format.table,
) -> None:
    """Serve the comparison workbench (/) and the graph as a SPARQL 1.1 endpoint (/sparql), with
    the named queries under /queries and each graph under /store."""
    import datetime as dt
    import json
    import os
    import signal

    from kg.cli.output import console, emit_machine, err_console
    from kg.errors import KGError

    fmt = pick_format(fmt)
    token = _token(token, token_file, getattr(ctx.get_parameter_source("token"), "name", "") == "COMMANDLINE")
    if allow_update and not token:
        raise KGError("--allow-update needs a token that updates must carry",
                      hint="Set KG_SERVE_TOKEN (or pass --token-file FILE); clients send "
                      "Authorization: Bearer TOKEN.")
    import uvicorn

    from kg.server import ServerSettings, create_app
    from kg.server.logs import redact_access_log
    from kg.server.security import MAX_REQUEST_LINE_BYTES
    from kg.sparqlguard import QueryLimits
    from kg.store.embedded import SERVE_FILE, OxigraphStore
    from kg.wording import counted

    origins = _origins(cors_origin)
    settings = ServerSettings(host=host, port=port, allow_update=allow_update, token=token, timeout=timeout,
                              max_rows=max_rows, workers=workers, queue=queue, query_memory=query_memory << 20,
                              query_limits=QueryLimits(max_bytes=max_query_size << 10, max_depth=max_query_depth),
                              cors_origins=origins, allow_service=tuple(allow_service or ()),
                              allowed_hosts=tuple(allow_host or ()))
    store = state().store()
    kept = _keep_in_background(store)
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
                "store_protocol": f"{base}/store", "store": store.location, "allow_update": allow_update,
                "timeout": timeout, "max_rows": max_rows, "workers": workers, "pid": pid}
        if fmt is Format.json:  # one line, so a script can read it while the server runs
            out.file.write(json.dumps(info) + "\n")
        elif not emit_machine(fmt, info):
            out.print(f"Serving {store.location} at {base}/", highlight=False)
            out.print(f"  workbench      {base}/  (techniques, compare, lineage, reading list, query)",
                      highlight=False)
            out.print(f"  SPARQL         {base}/sparql", highlight=False)
            out.print(f"  graph store    {base}/store?graph=IRI", highlight=False)
            out.print(f"  named queries  {base}/queries", highlight=False)
            out.print(f"  updates        {'allowed with the token' if allow_update else 'refused (read-only)'}",
                      highlight=False)
            out.print(f"  limits         {timeout:g} s and {query_memory} MiB per query, "
                      f"{counted(max_rows, 'row')} per result, {counted(workers, 'worker')}", highlight=False)
            if origins:
                out.print(f"  CORS           {', '.join(origins)} (/sparql, /store, /queries)", highlight=False)
        if host not in ("127.0.0.1", "localhost", "::1"):
            err_console().print(f"[yellow]warning:[/] listening on {host}: anyone who can reach this "
                                "address can read the graph, your reading list included.")
        if origins:
            err_console().print(f"[yellow]warning:[/] pages on {', '.join(origins)} can read the whole graph, "
                                "your reading list included.")
        out.file.flush()
        from kg.server.web import workbench_routes
        from kg.server.web.warm import warm_up

        app = create_app(store, settings, extra_routes=workbench_routes(), startup=[warm_up])
        # Stop within seconds: requests still running after 3 s are cancelled and the
        # query workers killed, so the store is released at once.
        # The log goes to stderr, the access log included: stdout holds only the addresses
        # (one JSON line with -f json), for a script to read.
        import copy

        from uvicorn.config import LOGGING_CONFIG

        log_config = copy.deepcopy(LOGGING_CONFIG)
        log_config["handlers"]["access"]["stream"] = "ext://sys.stderr"
        log_config["loggers"]["kg.server"] = {"handlers": ["default"], "level": log_level.upper(), "propagate": False}
        config = uvicorn.Config(app, log_level=log_level, lifespan="on", timeout_graceful_shutdown=3,
                                access_log=log_level in ("info", "debug"), log_config=log_config,
                                http="h11", h11_max_incomplete_event_size=MAX_REQUEST_LINE_BYTES)
        redact_access_log()
        _server_class()(config, app.state.pool).run(sockets=[sock])
    finally:
        signal.signal(signal.SIGTERM, previous)
        sock.close()
        if serve_file is not None:
            _remove_serve_file(serve_file, pid)
        kept.close()


def _keep_in_background(store: Any) -> Any:
    """The analytics tables kept current by the server's writes (a status set on the
    workbench, an update through /sparql), in the background: each write's
    reply goes out at once, and a reader waits for the patch rather than finding the
    tables stale (kg.derived.Background). The search index the workbench keeps itself."""
    import logging
    from functools import partial

    from kg import derived
    from kg.analytics.files import database_path, mark_pending
    from kg.analytics.keeper import TablesKeeper

    state().keep_derived()  # the command's own watch (nothing written yet) gives way
    return derived.Background(store, logging.getLogger("kg.server").warning, [TablesKeeper()],
                              pending=partial(mark_pending, database_path(store.location)))


def register(app: typer.Typer) -> None:
    app.command("serve")(serve)
