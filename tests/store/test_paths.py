"""--store DIR: an existing store opens, an empty or missing directory (whose parent
exists) becomes one, anything else is refused before a byte is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from kg.errors import StoreError
from kg.store.embedded import OxigraphStore
from kg.store.folder import MARKER


def test_a_missing_directory_whose_parent_is_missing_is_refused(kg_cli, tmp_path: Path) -> None:
    target = tmp_path / "nonexistent" / "x"
    out = kg_cli("build", store=target)
    assert out.returncode == 1 and "parent directory" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "nonexistent").exists()


def test_a_directory_with_the_users_files_is_refused_and_left_alone(kg_cli, tmp_path: Path) -> None:
    folder = tmp_path / "folder-with-my-files"
    folder.mkdir()
    (folder / "thesis.tex").write_text("my work")
    (folder / "figures").mkdir()
    for args in (("stats",), ("build",), ("reading", "list")):
        out = kg_cli(*args, store=folder)
        assert out.returncode == 1, out.stdout
        assert "is not a TechKG store" in out.stderr and "thesis.tex" in out.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["figures", "thesis.tex"]


@pytest.mark.parametrize("existing", [False, True])
def test_a_missing_or_empty_directory_becomes_a_store(kg_cli, tmp_path: Path, existing: bool) -> None:
    target = tmp_path / "store"
    if existing:
        target.mkdir()
    kg_cli("reading", "list", "-f", "json", store=target, check=True)
    assert (target / MARKER).is_file() and (target / "CURRENT").is_file()
    assert kg_cli("stats", "-f", "json", store=target).returncode == 0


def test_a_store_made_before_the_marker_existed_still_opens(built_store_path: Path) -> None:
    (built_store_path / MARKER).unlink()
    with OxigraphStore(built_store_path) as store:
        assert store.count() > 4000
    assert (built_store_path / MARKER).is_file()


def test_a_file_is_not_a_store(tmp_path: Path) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("x")
    with pytest.raises(StoreError, match="is a file"):
        OxigraphStore(file)
    with pytest.raises(StoreError, match="is a file"):
        OxigraphStore.open_reader(file)
    assert file.read_text() == "x"


def test_the_default_store_is_created_with_its_parents(kg_cli, tmp_path: Path) -> None:
    xdg = tmp_path / "xdg-data"  # does not exist yet
    kg_cli("reading", "list", env={"XDG_DATA_HOME": str(xdg)}, check=True)
    assert (xdg / "techkg" / "store" / MARKER).is_file()


@pytest.mark.parametrize("inside", ["snapshots", "readers", "snapshots/deeper/store", "new-folder"])
def test_a_store_inside_another_store_is_refused(kg_cli, built_store_path: Path, inside: str) -> None:
    nested = built_store_path / inside
    for args in (("stats",), ("build",)):
        out = kg_cli(*args, store=nested)
        assert out.returncode == 1 and "cannot hold another store" in " ".join(out.stderr.split()), (inside, args)
        assert "Traceback" not in out.stderr
    assert not (nested / "techkg-store.json").exists() and not any(nested.glob("MANIFEST-*"))
