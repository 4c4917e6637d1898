"""Sources: what TechKG learns from arXiv, GitHub and Zotero, each into its own named graph.

The modules, each depending on the core (``kg``) and never the reverse:

- :mod:`ingest.http` builds the one ``httpx.Client`` every source uses (User-Agent with
  a contact, timeouts, retries with backoff and jitter, ``Retry-After`` and ``Backoff``,
  per-host politeness), counting what it did (:mod:`ingest.stats`); :mod:`ingest.secrets`
  holds the conventions for tokens: read them with ``token_from_env``, never write them
  (``redact``, ``safe_url``).
- :mod:`ingest.cache` is the on-disk HTTP cache: conditional requests (``ETag``), free
  304 refreshes, and ``--offline`` answers.
- :mod:`ingest.safexml` parses XML answers safely (no DTDs, entities or network).
- :mod:`ingest.arxiv` looks papers up by id (100 per request) or by search, through
  the ``arxiv`` package; :mod:`ingest.oai` harvests arXiv in bulk over OAI-PMH and
  resumes after an interruption.
- :mod:`ingest.semanticscholar` talks to the Semantic Scholar Graph API (batch lookups,
  citation lists with contexts and intents, search, recommendations) and
  :mod:`ingest.citations` writes what it finds into the ``citations`` graph, fetching a
  paper's lists again only when its counts changed.
- :mod:`ingest.github` fetches repositories over REST (conditional) or GraphQL (100
  per query, with a token), and records dated snapshots of their counts.
- :mod:`ingest.merge` merges a run's records into a source graph and summarises the
  run (added, updated, unchanged, missing, failed).
- :mod:`ingest.zotero` talks to a Zotero library; :mod:`ingest.zotero_sync` (one module
  per step) syncs it with the reading list both ways, merging three-way with
  :mod:`ingest.zotero_merge`; ``kg ingest zotero`` is its one-way form.
- :mod:`ingest.emulators` serves faithful stand-ins of these APIs on loopback.

Every ingest function takes the store and a source object built around an injected
client, fetches everything first, then writes in one transaction recorded as a
``prov:Activity``: a run that fails half-way leaves the graph as it was. Only the CLI
(``kg ingest ...``) wires clients, sources and the store together.

What belongs here: a source (one module beside a worked example such as
:mod:`ingest.github`) and what every source shares. What does not: reading the graph for a
user (a consumer's job) or anything of the consumers or the CLI, which sources never import.
"""

from __future__ import annotations

__all__: list[str] = []
