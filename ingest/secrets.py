"""What a request must never show: the tokens TechKG was given, and credentials in URLs.

A token read with :func:`token_from_env` (or given to :func:`register_secret`) is
remembered for the run; :func:`redact` replaces every one in a text, and
:func:`safe_url` strips user:password and credential-like query parameters from a URL
before it goes into a message, the cache's metadata or ``prov:used``. Every source and
the HTTP client (:mod:`ingest.http`) follow these conventions.
"""

from __future__ import annotations

import os
import re
import threading
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx

__all__ = ["redact", "register_secret", "registered_secrets", "safe_url", "token_from_env"]

_SENSITIVE_PARAMS = re.compile(r"(?i)^(.*token.*|.*key.*|.*secret.*|password|passwd|auth|sig|signature)$")
_SECRETS: set[str] = set()
_SECRETS_LOCK = threading.Lock()


def register_secret(value: str | None) -> None:
    """Remember ``value`` as a secret so that :func:`redact` hides it everywhere."""
    if value and len(value) >= 4:
        with _SECRETS_LOCK:
            _SECRETS.add(value)


def registered_secrets() -> list[str]:
    """Every value registered with :func:`register_secret` so far."""
    with _SECRETS_LOCK:
        return list(_SECRETS)


def token_from_env(name: str) -> str | None:
    """The token in environment variable ``name`` (``GITHUB_TOKEN``, ``ZOTERO_API_KEY``),
    registered as a secret; None when unset or empty."""
    value = os.environ.get(name, "").strip()
    if not value:
        return None
    register_secret(value)
    return value


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by ``***``."""
    with _SECRETS_LOCK:
        secrets = sorted(_SECRETS, key=len, reverse=True)
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def safe_url(url: str | httpx.URL) -> str:
    """``url`` without user:password and without query parameters that look like
    credentials (``token``, ``key``, ``api_key``, ``secret`` ...); secrets redacted."""
    parts = urlsplit(str(url))
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    query = [(k, "***" if _SENSITIVE_PARAMS.match(k) else v)
             for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    cleaned = urlunsplit((parts.scheme, netloc, parts.path, urlencode(query, safe=":,/*"), parts.fragment))
    return redact(cleaned)
