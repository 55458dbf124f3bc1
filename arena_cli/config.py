"""Where ``arena`` keeps its API tokens: ``~/.config/uno-arena/config.json``, readable by you only.

One token per server URL, so a local and a public server can both be used, and the server of the
last ``arena login`` as the default of later commands (``"default"``; ``arena logout`` forgets both).
``$XDG_CONFIG_HOME`` moves the folder; ``ARENA_TOKEN`` overrides the stored token.

>>> normalize_server("http://127.0.0.1:8000/")
'http://127.0.0.1:8000'
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

from arena_cli.errors import CommandError

DEFAULT_SERVER = "http://127.0.0.1:8000"


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "uno-arena" / "config.json"


def normalize_server(url: str) -> str:
    """The server's base URL without a trailing slash; CommandError unless it is http(s)://host."""
    url = url.strip().rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CommandError(f"server must be an http:// or https:// URL, got {url!r}")
    return url


def resolve_server(option: str | None) -> str:
    """--server, else $ARENA_SERVER, else the server of the last ``arena login``, else DEFAULT_SERVER."""
    if option or os.environ.get("ARENA_SERVER"):
        return normalize_server(option or os.environ["ARENA_SERVER"])
    remembered = load().get("default")
    return normalize_server(remembered if isinstance(remembered, str) and remembered else DEFAULT_SERVER)


def load() -> dict:
    path = config_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"servers": {}}
    except (OSError, ValueError) as exc:
        raise CommandError(f"cannot read {path}: {exc}; fix or delete it, then run arena login") from None
    if not isinstance(data, dict) or not isinstance(data.get("servers"), dict):
        raise CommandError(f"{path} is not an arena config (no 'servers' object); delete it and run arena login")
    return data


def stored_token(server: str) -> str | None:
    """The token to use for ``server``: $ARENA_TOKEN, else the one ``arena login`` stored."""
    if os.environ.get("ARENA_TOKEN"):
        return os.environ["ARENA_TOKEN"]
    entry = load()["servers"].get(server)
    return entry.get("token") if isinstance(entry, dict) else None


def store_token(server: str, username: str, token: str) -> Path:
    """Remember ``token`` for ``server`` and make ``server`` the default of later commands."""
    data = load()
    data["servers"][server] = {"username": username, "token": token}
    data["default"] = server
    return _write(data)


def forget(server: str) -> dict | None:
    """Drop the token stored for ``server`` (and ``server`` as the default); the entry it had, or None."""
    data = load()
    entry = data["servers"].pop(server, None)
    was_default = data.get("default") == server
    if was_default:
        del data["default"]
    if entry is not None or was_default:
        _write(data)
    return entry if isinstance(entry, dict) else None


def _write(data: dict) -> Path:
    """Write the config whole; the file is mode 0600 from the start."""
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    # mkstemp creates the file 0600, so the token is never readable by others, not even briefly.
    fd, tmp = tempfile.mkstemp(prefix=".config-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2, sort_keys=True)
            out.write("\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
