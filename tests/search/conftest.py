"""Fixtures of the search tests: the Semantic Scholar emulator of the citation tests."""

from tests.citations.conftest import emulator, private_settings  # noqa: F401 - fixtures
