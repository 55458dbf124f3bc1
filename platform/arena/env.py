"""Reading settings from environment variables: the one place that parses them."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

TRUE = {"1", "true", "yes", "on"}
FALSE = {"0", "false", "no", "off", ""}


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use one of 1/0, true/false, yes/no, on/off)")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def database_from_url(url: str, base_dir: Path) -> dict:
    """Django DATABASES entry for a URL: postgres://user:pass@host:port/name or sqlite:///path.

    >>> database_from_url("postgresql://root@127.0.0.1:5432/test", Path("."))["NAME"]
    'test'
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    options = dict(parse_qsl(parts.query))
    if scheme == "sqlite":
        # sqlite:///relative/to/project.db, sqlite:////absolute/path.db, sqlite:// = memory
        rest = unquote(url.split("?", 1)[0][len("sqlite://"):])
        if rest.startswith("//"):
            name = rest[1:]
        elif rest.strip("/"):
            name = str(base_dir / rest.lstrip("/"))
        else:
            name = ":memory:"
        # The embedded default's worker thread writes beside the web server: write-ahead logging lets
        # readers go on during a write, and IMMEDIATE transactions take the write lock when they begin
        # (a deferred one that reads and then writes fails at once when another writer holds it).
        options = {"timeout": 20, "transaction_mode": "IMMEDIATE", "init_command": "PRAGMA journal_mode=WAL;"}
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": name, "OPTIONS": options}
    if scheme in ("postgres", "postgresql", "pgsql"):
        name = unquote(parts.path.lstrip("/"))
        if not name:
            raise ImproperlyConfigured(f"DATABASE_URL={url!r} names no database")
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": name,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(parts.port or ""),
            "CONN_MAX_AGE": int(options.pop("conn_max_age", 60)),
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": options,
        }
    raise ImproperlyConfigured(
        f"DATABASE_URL scheme {scheme!r} is not supported (use postgresql://... or sqlite:///...)"
    )
