"""TechKG's version, on its own so that any module can name it without importing the
package's ``__init__`` (which reaches the store for :func:`kg.open_graph`)."""

__version__ = "0.1.0"
