"""Fixtures for the Zotero tests: the emulator on loopback, clients pointed at it, and
helpers that edit either side the way a user would."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from ingest.emulators.zotero import ZoteroEmulator
from ingest.http import RetryPolicy
from ingest.zotero import LibrarySpec, ZoteroAPI, connect

USER_ID = 475425
GROUP_ID = 169947
KEY = "TKGtestKEY0123456789abcd"
#: Retries fast enough for tests, still exponential.
FAST = RetryPolicy(attempts=4, base=0.01, cap=0.05, max_retry_after=5.0)


@pytest.fixture
def emulator() -> Iterator[ZoteroEmulator]:
    """A running emulator with a user and a group library and a read-write key."""
    with ZoteroEmulator(seed=7) as emu:
        emu.add_library("user", USER_ID, name="reader")
        emu.add_library("group", GROUP_ID, name="lab")
        emu.add_key(KEY, user_id=USER_ID)
        yield emu


@pytest.fixture
def api_for(emulator: ZoteroEmulator, closing: Callable[[ZoteroAPI], ZoteroAPI]) -> Callable[..., ZoteroAPI]:
    """Make a TechKG Zotero client for a library of the emulator."""

    def make(library: str = f"user:{USER_ID}", *, key: str | None = KEY, retry: RetryPolicy = FAST) -> ZoteroAPI:
        return closing(connect(LibrarySpec.parse(library), key=key, api_url=emulator.url, retry=retry))

    return make


@pytest.fixture
def api(api_for: Callable[..., ZoteroAPI]) -> ZoteroAPI:
    return api_for()


@pytest.fixture
def pyzotero_client(emulator: ZoteroEmulator):
    """The plain pyzotero client (another device), pointed at the emulator's user library."""
    from pyzotero import zotero

    zot = zotero.Zotero(USER_ID, "user", KEY)
    zot.endpoint = emulator.url
    return zot
