"""Fixtures of the fault tests: a Redis of the test's own, its workers, its seats' folder.

Every fault test talks to a ``redis-server`` it started itself on a free port (never the
machine's shared Redis, which other tests use and which must not be restarted), sends its
tasks there, and starts real worker subprocesses pointed at it and at the test database.
"""

from __future__ import annotations

import pytest
from faultsupport import PrivateRedis, WorkerSet, celery_sends_to, seats_folder


@pytest.fixture
def keep_data() -> bool:
    """Whether the test's Redis keeps its data over a crash (override in a test module)."""
    return True


@pytest.fixture
def broker(transactional_db, tmp_path, keep_data):
    """The test's own Redis, started; this process's tasks go there for the test."""
    folder = tmp_path / "redis"
    folder.mkdir()
    server = PrivateRedis(folder, keep_data=keep_data)
    server.start()
    try:
        with celery_sends_to(server.url):
            yield server
    finally:
        server.crash()


@pytest.fixture
def workers(broker, tmp_path):
    """Starts worker subprocesses on the test's broker (``workers.start(name, **env)``); all are
    stopped at the end."""
    found = WorkerSet(tmp_path, broker.url)
    try:
        yield found
    finally:
        found.stop_all()


@pytest.fixture
def seats():
    """A seats' folder of the test's own (SANDBOX_WORK_DIR of its workers), checked empty at the end."""
    with seats_folder() as folder:
        yield folder
