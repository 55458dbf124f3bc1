"""Shared test fixtures: access to the real services, or a clear skip/failure.

Under ARENA_REQUIRE_SERVICES=1 (CI) a test that needs PostgreSQL, Redis or
Docker fails when the service is missing instead of skipping.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest
from testsupport import (
    REQUIRE_SERVICES,
    SANDBOX_IMAGE,
    WorkerProcess,
    make_user,
    service_missing,
    start_worker_process,
)


@pytest.fixture
def core_built():
    """The compiled core engine._core is built: skip without it, fail under ARENA_REQUIRE_SERVICES=1
    (CI must test both engines)."""
    import engine.compiled

    if engine.compiled._core is None:
        why = f"the compiled core engine._core is not built ({engine.compiled.CORE_ERROR})"
        if REQUIRE_SERVICES:
            pytest.fail(f"{why}; CI must test both engines (ARENA_REQUIRE_SERVICES=1)", pytrace=False)
        pytest.skip(why)


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


@pytest.fixture(scope="session", autouse=True)
def another_installations_containers(request):
    """While the Docker tests run, the engine holds another installation's labelled containers (a
    warm seat, running, and an old match's, stopped) as a machine shared with another Uno Arena
    does: no test may count, reuse or remove them, and at the end both must still be there."""
    if not any(item.get_closest_marker("docker") for item in request.session.items):
        yield None
        return
    try:
        import docker
        from docker.errors import DockerException

        client = docker.from_env(timeout=30)
        client.images.get(SANDBOX_IMAGE)
    except Exception:  # no engine or no image: the Docker tests report it themselves
        yield None
        return
    from sandbox import docker_backend as backend

    labels = {backend.LABEL_INSTALLATION: f"foreign-{os.getpid()}", backend.LABEL_HOST: backend.host_name(),
              backend.LABEL_OWNER: backend.owner_token(1), backend.LABEL_MATCH: "foreign", backend.LABEL_SEAT: "0"}
    old = str(int(time.time()) - 86_400)
    warm = client.containers.run(SANDBOX_IMAGE, ["sleep", "86400"], detach=True, network_mode="none",
                                 labels=labels | {backend.LABEL_WARM: "1", backend.LABEL_STARTED: old})
    stopped = client.containers.create(SANDBOX_IMAGE, ["true"], network_mode="none",
                                       labels=labels | {backend.LABEL_STARTED: old})
    yield labels
    gone = []
    for container in (warm, stopped):
        try:
            container.reload()
            container.remove(force=True)
        except DockerException:
            gone.append(container.short_id)
    client.close()
    assert not gone, f"a test removed another installation's containers {gone}: tests must touch only their own"


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


@pytest.fixture
def postgresql_db(db):
    """The test database is PostgreSQL (what a figure computed by PostgreSQL alone needs)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        service_missing(f"PostgreSQL (the test database is {connection.vendor}; set DATABASE_URL=postgresql://...)")


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


# -- users and tasks, shared by the platform, API, tournament and browser tests


@pytest.fixture
def alice(db):
    return make_user("alice")


@pytest.fixture
def bob(db):
    return make_user("bob")


@pytest.fixture
def staff(db):
    return make_user("root", staff=True)


@pytest.fixture
def eager_tasks():
    """Tasks run in-process, as on the embedded default, even when REDIS_URL is set."""
    from celery import current_app

    eager = current_app.conf.task_always_eager
    current_app.conf.task_always_eager = True
    yield
    current_app.conf.task_always_eager = eager


@pytest.fixture
def run_on_commit(eager_tasks, django_capture_on_commit_callbacks):
    """Run the tasks a block enqueues (on commit) right away, in-process."""

    def runner():
        return django_capture_on_commit_callbacks(execute=True)

    return runner


@pytest.fixture(autouse=True)
def _no_lease_renewal_inside_a_test_transaction(request):
    """A match played inside a test's transaction cannot renew its lease: the lease thread has a
    connection of its own, which does not see the transaction's rows, so its first renewal (after
    MATCH_LEASE_RENEW_SECONDS) finds no row and abandons the attempt. That is true of the test, not
    of the platform, so such tests renew only after an hour; lease behaviour is tested with
    ``transaction=True`` (tests/faults), where the rows are committed."""
    marker = request.node.get_closest_marker("django_db")
    names = request.fixturenames
    transactional = (
        "transactional_db" in names
        or "live_server" in names
        or (marker is not None and (marker.kwargs.get("transaction") or (marker.args and marker.args[0])))
    )
    if transactional or (marker is None and "db" not in names):
        yield
        return
    from django.test import override_settings

    with override_settings(MATCH_LEASE_RENEW_SECONDS=3600):
        yield


@pytest.fixture(autouse=True)
def _fresh_rate_limits(settings):
    """Each test starts with empty rate-limit counters (they live in the local-memory cache), and
    with a fast password hasher: the users' passwords are not under test."""
    from django.core.cache import cache

    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    yield
    cache.clear()
