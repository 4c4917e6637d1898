"""Fixtures of the what-is-new tests: the Semantic Scholar emulator and the arXiv/GitHub
replay server of the ingest tests."""

from tests.citations.conftest import emulator, private_settings  # noqa: F401 - fixtures
from tests.ingest.conftest import private_cache, replay  # noqa: F401 - fixtures
