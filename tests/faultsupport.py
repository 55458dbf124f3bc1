"""Helpers of the fault tests (tests/faults, tests/platform/test_match_blame.py): ladder matches
of slow bots, a Redis server of the test's own, the test's own seats' folder, watching which
sandbox containers the test's matches started, and the exactly-once checks.

Import from here (``from faultsupport import ...``); the tests' Redis is shared with other
tests on this machine, so a test that restarts Redis starts its own (``PrivateRedis``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

# A bot that takes ``{delay}`` s a decision: a match lasts long enough to do something to it
# while it plays (a 1-round 2-seat match of 0.1 s decisions: several seconds).
SLOW_BOT = """import time


def agent(observation, configuration):
    time.sleep({delay})
    return observation["legal_actions"][0]
"""


def ladder_with_matches(tag: str, matches: int = 1, *, fault_streak: int = 0, rounds: int = 1, delay: float = 0.02):
    """A 2-seat ladder of ``2 * matches`` slow bots (``delay`` s a decision) of different owners and
    its ``matches`` matches of ``rounds`` rounds (queued; their tasks sent when the test's
    transaction commits). Returns (ladder, matches)."""
    from testsupport import make_user

    from bots import services as bot_services
    from bots.models import BotVersion
    from ladders import services as ladder_services
    from ladders.models import Ladder, LadderEntry

    item = Ladder(
        name=f"Faults {tag}", slug=f"faults-{tag}", rules={"players": 2, "rounds": rounds}, deals=1,
        duplicate=False, max_pending=max(1, matches),
    )
    item.full_clean()
    item.save()
    for index in range(2 * matches):
        bot = bot_services.bot_create(owner=make_user(f"{tag}-{index}"), name=f"slow-{index}")
        version = bot_services.bot_version_create(bot=bot, filename="slow.py", data=SLOW_BOT.format(delay=delay).encode(),
                                                   validate=False)
        BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.ACTIVE)
        ladder_services.ladder_enter(item, bot)
    if fault_streak:
        LadderEntry.objects.filter(ladder=item).update(fault_streak=fault_streak)
    created = ladder_services.ladder_matchmake(item)
    assert len(created) == matches, f"matchmaking made {len(created)} matches, not {matches}"
    return item, created


def record_of(item) -> list[tuple]:
    """Each entry's (bot, rating, matches played, fault streak, status), sorted."""
    from ladders.models import LadderEntry

    return sorted(
        LadderEntry.objects.filter(ladder=item).values_list("bot_id", "rating", "matches_played", "fault_streak", "status")
    )


def status_of(match_id: int) -> str:
    from matches.models import Match

    return Match.objects.values_list("status", flat=True).get(pk=match_id)


def all_finished(matches) -> bool:
    from matches.models import Match

    return not Match.objects.filter(pk__in=[m.pk for m in matches], status__in=["queued", "running"]).exists()


def assert_each_played_once(item, matches, *, seats: int = 2) -> None:
    """Every match is done, rated exactly once (one rating change per seat), and every entry
    counted each of its matches once."""
    from django.db.models import Count

    from ladders.models import LadderEntry, RatingChange
    from matches.models import Match

    rows = {m.pk: m for m in Match.objects.filter(pk__in=[m.pk for m in matches])}
    assert all(row.status == "done" for row in rows.values()), {pk: (r.status, r.error) for pk, r in rows.items()}
    changes = dict(
        RatingChange.objects.filter(ladder=item).values_list("match").annotate(n=Count("pk")).values_list("match", "n")
    )
    assert changes == {pk: seats for pk in rows}, f"rating changes per match: {changes}"
    played = sorted(LadderEntry.objects.filter(ladder=item).values_list("matches_played", flat=True))
    assert played == [1] * (seats * len(rows)), f"matches played per entry: {played}"


class BackgroundWatch:
    """A thread that looks at something while a ``with`` block runs (``_run`` loops until
    ``self._stop`` is set); leaving the block stops and joins it."""

    def __init__(self):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self):
        raise NotImplementedError


class SandboxWatch(BackgroundWatch):
    """Records, while the test runs, the sandbox label (``<id>-<token8>``) of every attempt of the
    test's matches (read from the database every 0.2 s), so the end of the test can check that
    none of *those* containers is left; other tests' containers are never looked at."""

    def __init__(self, match_ids):
        self.match_ids = list(match_ids)
        self.labels: set[str] = set()
        super().__init__()

    def _run(self):
        from django.db import connection

        from matches.models import Match

        try:
            while not self._stop.wait(0.2):
                try:
                    for pk, token in Match.objects.filter(pk__in=self.match_ids).exclude(attempt_token="").values_list(
                        "pk", "attempt_token"
                    ):
                        self.labels.add(f"{pk}-{token[:8]}")
                except Exception:  # the test may be cutting the database's connections
                    connection.close()
        finally:
            connection.close()

    def containers(self, docker_client) -> list[dict]:
        """The attempts' containers as the engine lists them (no inspect per container: one the
        worker's remover deletes between the list and an inspect would be a 404)."""
        found = []
        for label in sorted(self.labels):
            found += docker_client.api.containers(all=True, filters={"label": f"uno-arena.match={label}"})
        return found


def assert_nothing_left(watch: SandboxWatch, docker_client, folders=()) -> None:
    """None of the test's attempts left a container; the test's seats' folders are empty."""
    def folders_left() -> bool:
        return any(any(Path(folder).iterdir()) for folder in folders)

    deadline = time.monotonic() + 15
    # a seat is removed right after its match, in the background: its container, then its folder;
    # give a loaded engine a moment for both
    while time.monotonic() < deadline and (watch.containers(docker_client) or folders_left()):
        time.sleep(0.5)
    left = [((c.get("Labels") or {}).get("uno-arena.match"), c.get("State")) for c in watch.containers(docker_client)]
    assert left == [], f"containers left behind: {left}"
    for folder in folders:
        assert [p.name for p in Path(folder).iterdir()] == [], f"seat folders left in {folder}"


@contextlib.contextmanager
def seats_folder():
    """A short folder of the test's own for the seats (their sockets live under it); removed after."""
    folder = Path(tempfile.mkdtemp(prefix="ua-seats-", dir="/tmp"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def tiny_tmpfs(size: str = "1m"):
    """A small tmpfs of the test's own (a short path); unmounted and removed at the end."""
    folder = Path(tempfile.mkdtemp(prefix="ua-full-", dir="/tmp"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        folder.rmdir()
        pytest.fail(f"cannot mount a tmpfs for the test: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
        folder.rmdir()


def fill(folder) -> None:
    """Write into ``folder`` until it is full."""
    with open(Path(folder) / "filler", "wb", buffering=0) as filler:
        try:
            while True:
                filler.write(b"x" * 4096)
        except OSError:
            pass


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PrivateRedis:
    """A ``redis-server`` of the test's own on a free port (never the machine's shared one).

    ``keep_data``: an append-only file synced at every write, so a crash keeps every message;
    else no persistence at all, so a restart loses everything. ``crash()`` kills it (SIGKILL),
    ``start()`` starts it again on the same port and folder.
    """

    def __init__(self, folder: Path, *, keep_data: bool):
        self.folder = Path(folder)
        self.port = free_port()
        self.keep_data = keep_data
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            from testsupport import service_missing

            service_missing("redis-server (apt-get install redis-server)")
        persistence = ["--appendonly", "yes", "--appendfsync", "always"] if self.keep_data else ["--appendonly", "no"]
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder), "--save", "",
             "--protected-mode", "no", *persistence],
            stdout=open(self.folder / "redis.log", "ab"), stderr=subprocess.STDOUT, start_new_session=True,
        )
        import redis

        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if redis.Redis(port=self.port, socket_connect_timeout=0.5).ping():
                    # an append-only file is being loaded: ping answers LOADING until it is done
                    return
            except redis.exceptions.BusyLoadingError:
                pass
            except redis.RedisError:
                pass
            time.sleep(0.1)
        pytest.fail(f"redis-server on port {self.port} did not start: {(self.folder / 'redis.log').read_text()[-2000:]}")

    def crash(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def keys(self) -> list[bytes]:
        import redis

        return redis.Redis(port=self.port).keys("*")


@contextlib.contextmanager
def celery_sends_to(url: str):
    """Tasks this process sends go to the broker at ``url`` for the block (then back as before)."""
    from celery import current_app

    conf = current_app.conf
    saved = conf.broker_url, conf.broker_write_url

    def reset():
        # The app's connection pool is also kombu's global pool for that broker URL: closing it
        # without clearing kombu's registry left later sends to the same URL with a closed pool
        # ("Acquire on closed pool" in every later test that sends a task). kombu.pools.reset
        # closes every pool and forgets them, so the next send makes a fresh one.
        from kombu import pools

        pools.reset()
        current_app._pool = None
        current_app.amqp._producer_pool = None

    reset()
    conf.broker_url, conf.broker_write_url = url, None
    try:
        yield
    finally:
        reset()
        conf.broker_url, conf.broker_write_url = saved


class WorkerSet:
    """Real worker subprocesses of one test (``start``), all stopped at the end (``stop_all``)."""

    def __init__(self, log_dir: Path, broker_url: str):
        self.log_dir = Path(log_dir)
        self.broker_url = broker_url
        self.workers: list = []

    def start(self, name: str, *, wrapper: list[str] | None = None, **env):
        from testsupport import start_worker_process

        env = {"SANDBOX_BACKEND": "docker", "REDIS_URL": self.broker_url, "WORKER_HEARTBEAT_SECONDS": "2", **env}
        worker = start_worker_process(self.log_dir / f"{name}.log", env_extra={k: str(v) for k, v in env.items()},
                                      name=name, wrapper=wrapper)
        self.workers.append(worker)
        return worker

    def stop_all(self) -> None:
        for worker in self.workers:
            if worker.alive():
                os.killpg(worker.proc.pid, signal.SIGTERM)
        for worker in self.workers:
            try:
                worker.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(worker.proc.pid, signal.SIGKILL)
                worker.proc.wait(timeout=10)


def heartbeat_of(worker_name: str):
    """The heartbeat row of the test's worker called ``worker_name`` (None before its first beat)."""
    from core.models import WorkerHeartbeat

    return WorkerHeartbeat.objects.filter(hostname__startswith=f"{worker_name}-{os.getpid()}@").first()
