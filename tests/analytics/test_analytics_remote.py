"""The analytics of a graph behind a SPARQL endpoint (a real Oxigraph server on loopback)
are the same as those of the embedded store it was copied from."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

from kg.analytics import build, connect
from tests.servers import oxigraph_server


def test_a_remote_endpoint_gives_the_same_tables(
    analysed_store_dir: Path, analysed_db: Path, tmp_path: Path
) -> None:
    import pyoxigraph as ox

    from kg.store.embedded import OxigraphStore
    from kg.store.remote import RemoteStore

    copy = tmp_path / "store"
    shutil.copytree(analysed_store_dir, copy)
    local = OxigraphStore(copy)
    dump = io.BytesIO()
    local.dump(dump, fmt=ox.RdfFormat.N_QUADS)
    local.close()
    with oxigraph_server() as server:
        server.load(dump.getvalue())
        with RemoteStore.from_spec(server.spec) as remote:
            report = build(remote, tmp_path / "remote.duckdb")
            again = build(remote, tmp_path / "remote.duckdb")
    assert report.mode == "full" and again.mode == "up to date"
    con = connect(analysed_db, read_only=True)
    try:
        expected = dict(con.execute("SELECT table_name, rows FROM materialisations").fetchall())
        titles = con.execute(
            "SELECT md5(string_agg(title, '|' ORDER BY paper)) FROM papers"
        ).fetchall()
    finally:
        con.close()
    assert report.tables == expected
    remote_con = connect(tmp_path / "remote.duckdb", read_only=True)
    try:
        assert (
            remote_con.execute(
                "SELECT md5(string_agg(title, '|' ORDER BY paper)) FROM papers"
            ).fetchall()
            == titles
        )
    finally:
        remote_con.close()
