"""The web process's SQL statements are cut off at WEB_STATEMENT_TIMEOUT_MS on PostgreSQL; workers and
manage.py commands are not (they do not load arena.wsgi)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from testsupport import service_missing

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json, os, sys
sys.path.insert(0, "platform")
if os.environ.get("PROBE_WSGI"):
    import arena.wsgi  # noqa: F401  (the web process's entry point)
else:
    import django
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
    django.setup()
from django.conf import settings
from django.db import connection
out = {"options": settings.DATABASES["default"]["OPTIONS"].get("options", "")}
if os.environ.get("PROBE_SLEEP"):
    from django.db import OperationalError
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_sleep(2)")
        out["slept"] = True
    except OperationalError as exc:
        out["slept"] = False
        out["error"] = type(exc).__name__ + ": " + str(exc)
print(json.dumps(out))
"""


def _probe(database_url: str, **env) -> dict:
    environment = {**os.environ, "DATABASE_URL": database_url, "WEB_STATEMENT_TIMEOUT_MS": "300", **env}
    environment.pop("ARENA_WEB_PROCESS", None)
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=environment, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_only_the_web_entry_point_sets_the_statement_timeout():
    url = "postgresql://nobody@127.0.0.1:1/none"  # settings only: nothing connects
    assert _probe(url, PROBE_WSGI="1")["options"] == "-c statement_timeout=300"
    assert _probe(url)["options"] == ""
    assert _probe(url, PROBE_WSGI="1", WEB_STATEMENT_TIMEOUT_MS="0")["options"] == ""
    assert _probe("sqlite:///" + str(ROOT / "var" / "probe.sqlite3"), PROBE_WSGI="1")["options"] == ""


def test_a_slow_statement_of_the_web_process_is_cancelled_on_postgresql():
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        service_missing("PostgreSQL (DATABASE_URL=postgresql://...)")
    web = _probe(url, PROBE_WSGI="1", PROBE_SLEEP="1")
    assert web["slept"] is False and "statement timeout" in web["error"]
    command = _probe(url, PROBE_SLEEP="1")
    assert command["slept"] is True


@pytest.mark.parametrize("entry", ["arena/wsgi.py", "arena/asgi.py"])
def test_both_entry_points_mark_the_web_process_before_the_settings_load(entry):
    text = (ROOT / "platform" / entry).read_text()
    assert text.index('"ARENA_WEB_PROCESS", "1"') < text.index("application = ")
