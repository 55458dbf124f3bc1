"""Settings come from environment variables, with a checked production profile."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from arena.env import database_from_url, env_bool

ROOT = Path(__file__).resolve().parents[2]


def test_database_url_postgresql_gives_psycopg_backend_with_all_parts():
    db = database_from_url("postgresql://alice:s%40cret@db.example:6543/arena", ROOT)
    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert (db["USER"], db["PASSWORD"], db["HOST"], db["PORT"], db["NAME"]) == (
        "alice", "s@cret", "db.example", "6543", "arena")


def test_database_url_sqlite_relative_absolute_and_memory():
    assert database_from_url("sqlite:///var/a.sqlite3", ROOT)["NAME"] == str(ROOT / "var/a.sqlite3")
    assert database_from_url("sqlite:////tmp/b.sqlite3", ROOT)["NAME"] == "/tmp/b.sqlite3"
    assert database_from_url("sqlite://", ROOT)["NAME"] == ":memory:"


def test_database_url_with_unknown_scheme_is_a_clear_error():
    with pytest.raises(ImproperlyConfigured, match="mysql"):
        database_from_url("mysql://root@localhost/x", ROOT)


def test_boolean_variable_with_garbage_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("SOME_FLAG", "maybe")
    with pytest.raises(ImproperlyConfigured, match="SOME_FLAG='maybe'"):
        env_bool("SOME_FLAG", False)


def _manage(*args, **env):
    # Only what the test names: no database or broker leaks in from the test run.
    full_env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    full_env.update(env)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=full_env,
                          capture_output=True, text=True)


@pytest.mark.slow
def test_check_deploy_is_clean_with_production_values():
    result = _manage(
        "check", "--deploy", "--fail-level", "DEBUG",
        DEBUG="0", SECRET_KEY="x9!" * 20 + "production-secret-key-not-real",
        ALLOWED_HOSTS="arena.example.org", DATABASE_URL="postgresql://arena@127.0.0.1:5432/arena",
        REDIS_URL="redis://127.0.0.1:6379/0", SANDBOX_BACKEND="docker",
    )
    assert result.returncode == 0, result.stderr + result.stdout
    assert "no issues" in result.stdout


def test_production_without_secret_key_refuses_to_start():
    result = _manage("check", DEBUG="0", SECRET_KEY="", ALLOWED_HOSTS="arena.example.org")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_unknown_sandbox_backend_is_a_clear_error():
    result = _manage("check", SANDBOX_BACKEND="chroot")
    assert result.returncode != 0
    assert "SANDBOX_BACKEND='chroot' is not one of: auto, docker, process" in result.stderr


@pytest.mark.slow
def test_without_redis_tasks_run_in_process_and_with_it_they_go_to_the_broker():
    code = "from django.conf import settings as s; print(s.CELERY_TASK_ALWAYS_EAGER, s.CELERY_BROKER_URL)"
    eager = _manage("shell", "-v", "0", "-c", code)
    assert eager.stdout.split() == ["True", "memory://"], eager.stderr
    broker = _manage("shell", "-v", "0", "-c", code, REDIS_URL="redis://127.0.0.1:6379/3")
    assert broker.stdout.split() == ["False", "redis://127.0.0.1:6379/3"], broker.stderr


def test_celery_queue_is_reliable_by_configuration():
    from arena.celery import app

    conf = app.conf
    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1
    assert conf.accept_content == ["json"] and conf.task_serializer == "json"
    assert conf.broker_transport_options["visibility_timeout"] > conf.task_time_limit
    assert {q.name for q in conf.task_queues} == {"matches", "validation", "play", "maintenance"}
