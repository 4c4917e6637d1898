"""TechKG: a knowledge graph and literature tracker for ML training techniques.

The core (this package's vocabulary, store, catalog and reading state) knows nothing
of its sources or consumers: ingesters, kernels, exports, analytics and the server
depend on it, never the reverse.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
