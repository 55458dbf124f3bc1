"""Shared test fixtures: access to the real services, or a clear skip/failure.

Under ARENA_REQUIRE_SERVICES=1 (CI) a test that needs PostgreSQL, Redis or
Docker fails when the service is missing instead of skipping.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

REQUIRE_SERVICES = os.environ.get("ARENA_REQUIRE_SERVICES", "") not in ("", "0", "false", "no")
SANDBOX_IMAGE = os.environ.get("SANDBOX_IMAGE", "uno-arena-sandbox:latest")


def service_missing(what: str) -> None:
    """Skip, or fail under ARENA_REQUIRE_SERVICES=1, because `what` is not there."""
    if REQUIRE_SERVICES:
        pytest.fail(f"required service missing: {what} (ARENA_REQUIRE_SERVICES=1)", pytrace=False)
    pytest.skip(f"service missing: {what}")


@pytest.fixture(scope="session")
def docker_client():
    """A docker SDK client for a running engine that has the sandbox image."""
    try:
        import docker
        from docker.errors import DockerException, ImageNotFound
    except ImportError:  # pragma: no cover - docker is a hard dependency
        service_missing("the docker Python package")
    try:
        client = docker.from_env(timeout=30)
        client.ping()
    except DockerException as exc:
        service_missing(f"Docker engine ({exc})")
    try:
        client.images.get(SANDBOX_IMAGE)
    except ImageNotFound:
        service_missing(f"sandbox image {SANDBOX_IMAGE} (build it: deploy/sandbox/build-offline.sh)")
    yield client
    client.close()


@pytest.fixture(scope="session")
def bwrap_path():
    """Path of bubblewrap, needed for the process backend's namespaces."""
    path = shutil.which("bwrap")
    if path is None:
        service_missing("bubblewrap (apt-get install bubblewrap)")
    probe = subprocess.run([path, "--ro-bind", "/", "/", "--unshare-net", "true"], capture_output=True)
    if probe.returncode != 0:
        service_missing(f"working bubblewrap: {probe.stderr.decode(errors='replace').strip()}")
    return path


@pytest.fixture(scope="session")
def redis_url():
    """URL of a reachable Redis server."""
    import redis

    url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        service_missing(f"Redis at {url} ({exc})")
    return url


class WorkerProcess:
    """A real `celery worker` subprocess of the project, for tests."""

    def __init__(self, proc: subprocess.Popen, log_path):
        self.proc = proc
        self.log_path = log_path

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self, sig: int = 9) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, sig)
            self.proc.wait(timeout=30)

    def alive(self) -> bool:
        return self.proc.poll() is None


def start_worker_process(log_path, *, env_extra: dict | None = None, queues: str | None = None,
                         timeout: float = 60.0) -> WorkerProcess:
    """Start `celery -A arena worker` against the current test database and REDIS_URL.

    The worker sees the data the test committed, so use it with `transactional_db`.
    """
    import sys
    import time
    from pathlib import Path

    from django.db import connection

    settings_dict = connection.settings_dict
    if settings_dict["ENGINE"] != "django.db.backends.postgresql":
        service_missing("PostgreSQL test database (set DATABASE_URL=postgresql://...)")
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        service_missing("Redis broker (set REDIS_URL=redis://...)")
    user = settings_dict.get("USER") or ""
    password = f":{settings_dict['PASSWORD']}" if settings_dict.get("PASSWORD") else ""
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or "5432"
    database_url = f"postgresql://{user}{password}@{host}:{port}/{settings_dict['NAME']}"
    root = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if k != "TEST_DATABASE_NAME"}
    env.update(
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        PYTHONPATH=os.pathsep.join([str(root), str(root / "platform")]),
        DJANGO_SETTINGS_MODULE="arena.settings",
    )
    env.update(env_extra or {})
    from arena import queues as arena_queues

    log = open(log_path, "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "arena", "worker", "--pool=solo",
         "--loglevel=INFO", "--without-gossip", "--without-mingle", "-n", f"test-{os.getpid()}@%h",
         "-Q", queues or ",".join(arena_queues.ALL)],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    log.close()
    worker = WorkerProcess(proc, Path(log_path))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not worker.alive():
            pytest.fail(f"celery worker exited with {proc.returncode}:\n{worker.log[-3000:]}")
        if " ready." in worker.log:
            return worker
        time.sleep(0.2)
    worker.kill()
    pytest.fail(f"celery worker not ready after {timeout}s:\n{worker.log[-3000:]}")


@pytest.fixture
def celery_worker_factory(transactional_db, tmp_path, redis_url):
    """Starts real Celery worker subprocesses on demand; all are stopped at the end."""
    from celery import current_app

    if current_app.conf.task_always_eager:
        service_missing("a Redis broker for Celery (set REDIS_URL=redis://...)")
    import redis

    from arena import queues as arena_queues

    # Messages left by an earlier, interrupted run must not reach this test's worker.
    redis.Redis.from_url(redis_url).delete(*arena_queues.ALL)
    workers: list[WorkerProcess] = []

    def start(**kwargs) -> WorkerProcess:
        worker = start_worker_process(tmp_path / f"worker-{len(workers)}.log", **kwargs)
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.kill(15)


@pytest.fixture
def celery_worker_process(celery_worker_factory):
    """One started real Celery worker subprocess (`.kill(sig)`, `.log`, `.alive()`)."""
    return celery_worker_factory()
