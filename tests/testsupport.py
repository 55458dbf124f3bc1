"""Helpers shared by the tests: service checks and a real Celery worker process.

Import from here (``from testsupport import service_missing``), never from
``conftest``: several folders have a conftest.py, and which one the name
``conftest`` means depends on collection order.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

REQUIRE_SERVICES = os.environ.get("ARENA_REQUIRE_SERVICES", "") not in ("", "0", "false", "no")
SANDBOX_IMAGE = os.environ.get("SANDBOX_IMAGE", "uno-arena-sandbox:latest")


def service_missing(what: str) -> None:
    """Skip, or fail under ARENA_REQUIRE_SERVICES=1, because `what` is not there."""
    if REQUIRE_SERVICES:
        pytest.fail(f"required service missing: {what} (ARENA_REQUIRE_SERVICES=1)", pytrace=False)
    pytest.skip(f"service missing: {what}")


def stdout_on_the_core(code: str, *args: str) -> str:
    """What ``code`` prints, run by ``python -c`` in a subprocess on the compiled core (whichever engine
    this run picks) under PYTHONMALLOC=debug, which turns a use of freed memory into a crash; it must
    exit 0. For the C code's tests with Python code run in its middle (finalizers and the like)."""
    run = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONMALLOC": "debug", "ARENA_ENGINE": "compiled"})
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


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


def service_urls() -> tuple[str, str]:
    """(DATABASE_URL, REDIS_URL) of the current test database and Redis, for another process."""
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
    return f"postgresql://{user}{password}@{host}:{port}/{settings_dict['NAME']}", redis_url


def start_worker_process(log_path, *, env_extra: dict | None = None, queues: str | None = None,
                         timeout: float = 60.0, name: str | None = None,
                         wrapper: list[str] | None = None) -> WorkerProcess:
    """Start `celery -A arena worker` against the current test database and REDIS_URL.

    The worker sees the data the test committed, so use it with `transactional_db`.
    ``name`` tells several workers of one test apart (their hostnames ``<name>-<pid>@host``).
    ``wrapper``: a command the worker runs under (e.g. another host name or clock), the
    worker's command line appended to it.
    """
    from pathlib import Path

    database_url, redis_url = service_urls()
    root = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if k != "TEST_DATABASE_NAME"}
    env.update(
        # no warm seats unless the test asks (SANDBOX_DOCKER_WARM in env_extra): tests find a
        # match's containers by its label and check the seats' folders empty while it runs
        SANDBOX_DOCKER_WARM="0",
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        PYTHONPATH=os.pathsep.join([str(root), str(root / "platform")]),
        DJANGO_SETTINGS_MODULE="arena.settings",
    )
    env.update(env_extra or {})
    from arena import queues as arena_queues

    log = open(log_path, "wb")
    proc = subprocess.Popen(
        [*(wrapper or []), sys.executable, "-m", "celery", "-A", "arena", "worker", "--pool=solo",
         "--loglevel=INFO", "--without-gossip", "--without-mingle", "-n", f"{name or 'test'}-{os.getpid()}@%h",
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


def wait_for(what: str, check, timeout: float, worker: WorkerProcess | None = None):
    """Poll ``check()`` until it returns something true (returned); fail after ``timeout`` s,
    with the end of the worker's log when one is given."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.25)
    log = f"\nworker log:\n{worker.log[-4000:]}" if worker is not None else ""
    pytest.fail(f"timed out after {timeout}s waiting for {what}{log}")


def validated_on_worker(owner: str, name: str, data: bytes, worker, timeout: float = 120):
    """Upload ``data`` as a new bot of a new user and wait for a worker to validate it.

    Returns the version (refreshed); the caller asserts what it expects of it.
    """
    from bots import services as bot_services
    from bots.models import BotVersion

    bot = bot_services.bot_create(owner=make_user(owner), name=name)
    version = bot_services.bot_version_create(bot=bot, filename="bot.py", data=data)
    wait_for(
        "the validation match",
        lambda: BotVersion.objects.get(pk=version.pk).status != BotVersion.Status.VALIDATING,
        timeout, worker,
    )
    version.refresh_from_db()
    return version


def make_ladder(**fields):
    """A ladder of ``fields``, validated as the admin validates it, saved."""
    from ladders.models import Ladder

    ladder = Ladder(**fields)
    ladder.full_clean()
    ladder.save()
    return ladder


def make_user(username: str = "alice", *, staff: bool = False):
    """A user with the password ``correct horse battery``; ``staff`` makes a superuser organizer."""
    from django.contrib.auth import get_user_model

    return get_user_model().objects.create_user(
        username=username, password="correct horse battery", is_staff=staff, is_superuser=staff
    )


# Says which decision it is on, and takes at least 20 ms over every "play".
SLEEPY_COUNTER_BOT = b"""import time

calls = 0


def agent(observation, configuration):
    global calls
    calls += 1
    print("decision", calls)
    if observation["decision"] == "play":
        time.sleep(0.02)
    return observation["legal_actions"][0]
"""


def played_match(
    ranks, *, scores=None, wins=None, forfeits=(), rounds: int = 1, games: int = 1, replay: dict | None = None
):
    """A played match as ``sandbox.runner`` returns it (what ``match_record_result`` stores),
    built without playing: seat i has rank ``ranks[i]``; a seat in ``forfeits`` forfeited with
    a crash (``ZeroDivisionError``), its only fault."""
    from engine.faults import Fault
    from engine.match import MatchResult, SeatResult
    from sandbox.runner import SandboxMatchResult

    n = len(ranks)
    scores = scores or [0] * n
    wins = wins or [int(rank == 1) for rank in ranks]
    crash = Fault("crash", "ZeroDivisionError")
    players = tuple(
        SeatResult(bot=i, name=f"bot{i}", score=scores[i], rank=ranks[i], wins=wins[i],
                   forfeit=crash if i in forfeits else None, strikes=0, faults=(crash,) if i in forfeits else ())
        for i in range(n)
    )
    result = MatchResult(players=players, replay={"version": 1} if replay is None else replay, games=games,
                         rounds=rounds, timings=[])
    return SandboxMatchResult(result=result, logs=[""] * n, start_seconds=[0.0] * n, backend="", match_id="")
