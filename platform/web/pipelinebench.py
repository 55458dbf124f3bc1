"""``manage.py pipeline_bench``: ladder matches through the whole match pipeline, against two floors.

The run, in order:

1. Scratch rows, named ``pipeline-bench-<tag>-...`` (users with unusable passwords, one bot
   each uploading a reference bot of ``web.scale.SEED_MODULES``, 2-seat and 4-seat ladders of
   the seeded ladders' format: one round, one deal, duplicate rotation). Refused on a database
   holding users neither seed_scale nor this bench created, unless ``force``.
2. ``workers`` real Celery worker processes (``celery -A arena worker --pool=solo``, every
   queue, Docker sandbox, their own seats' folder), started by ``worker_main`` below: the
   project's worker with three changes, all of measurement or isolation. Every key they and
   this process use in Redis has the prefix ``pipeline-bench-<tag>:`` (kombu's
   ``global_keyprefix``), so their queues are the bench's own and they never take or give a
   task of another worker on the same Redis; they do not run the match sweeper (it would take
   other matches of the database); each wraps the pipeline's steps in timers and writes one
   line per task to a file (wall, process CPU and the task thread's CPU per step).
3. Once the workers' warm pools are full (``warm_settle_s``; a worker that ran a while has
   them full), the ladders' matchmaking (``ladders.services.ladder_matchmake``) queues all
   ``matches`` at once; the run waits until every one has ended, then stops the workers (SIGTERM).
4. The floors, on the same matches: the in-process floor plays each (same rules, seed, deals
   and bots) through ``sandbox.runner.play_sandboxed_match`` with the in-process backend in this
   process, as ``arena play`` does; the container floor creates, starts, waits for and removes
   one bare container of the sandbox image running ``true`` per seat (``docker run --rm IMAGE
   true``, with the seats' network: none, and no libnetwork sandbox), the seats of a match in
   parallel and enough matches at a time to keep every core busy (twice the cores, at least
   ``workers``): a ceiling of the machine's CPU, not of one container's latency, with the
   machine's CPU a container (``cpu_ms_per_container``).
5. Clean-up: the scratch rows, the Redis keys of the prefix, the bench's own containers and
   folders are removed (``keep`` keeps the rows, still named by their prefix); containers and
   seat folders the workers left are counted in the report before they go.

The 2-seat target (``two_seat_matches_per_s_per_core``) is measured by a run of 2-seat matches
only (``--four-seat-share 0``: ``two_seat_basis`` "measured", the run's own matches a second per
core); a mixed run derives it from its 2-seat matches' mean time in a worker ("derived").

Shares are of the workers' busy time (each worker from its first task's start to its last
task's end): seat start (``runner.play_sandboxed_match`` up to the referee: containers started or warm
seats handed their code, and every host ready), decisions (``engine.match.play_match``: the
bots' thinking, the channel and the referee), stop (``runner._stop_all``) and bookkeeping
(everything else: the health check, start, lease and reading of the match, the result's
transaction with its hooks when the task stores it, other tasks such as ladder refits, and the
gaps between tasks, which are Celery's fetch and acknowledgement). A result the worker's recorder
thread stores (``MATCH_RESULTS_IN_BACKGROUND``, the default) is off that path, beside the next
match: ``stored_in_background`` gives its wall (as a share of the busy time it overlaps) and the
thread's CPU a match, apart. The workers run as deploy/compose.yaml runs them (``DEBUG=0``). The
seat start p50 is of the per-seat times the sandbox records in ``Match.timings``.

With ``PIPELINE_BENCH_PROFILE=FOLDER`` in the environment each worker also profiles its tasks
(cProfile, the task's thread, wall clock) and writes ``FOLDER/worker-<pid>.prof`` when it stops
(``python -m pstats``): for finding where a step's time goes, not for the report's figures (the
profiler slows the workers down).
"""

from __future__ import annotations

import cProfile
import functools
import json
import os
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

#: every scratch row's name starts with this (users, bots' owners, ladders' slugs)
BENCH_PREFIX = "pipeline-bench-"
#: the worker processes read their Redis key prefix and their records file from these
PREFIX_ENV = "PIPELINE_BENCH_KEYPREFIX"
#: a folder: the workers profile their tasks into it (cProfile, one file a worker)
PROFILE_ENV = "PIPELINE_BENCH_PROFILE"
RECORDS_ENV = "PIPELINE_BENCH_RECORDS"
#: the label of the container floor's bare containers (never a sandbox label: the reaper ignores them)
FLOOR_LABEL = "uno-arena.pipeline-bench"
#: issue 18's targets on a machine like this one
TARGETS = {"two_seat_matches_per_s_per_core": 2.0, "seat_start_p50_s": 0.050, "bookkeeping_share": 0.10}
#: seconds a worker may take to say it is ready
WORKER_READY_SECONDS = 180.0
#: seconds the run waits for the workers' warm pools to fill before it queues the matches
WARM_SETTLE_SECONDS = 120.0


class BenchError(Exception):
    """pipeline_bench cannot run here (real users, no broker or Docker, bad sizes) or its run failed."""


# --- the worker side ---------------------------------------------------------------------


class _Recorder:
    """One JSON line per task of this worker process, with the wall and CPU of each step."""

    def __init__(self, path: Path):
        self.file = open(path, "a", buffering=1)  # noqa: SIM115 - open for the process's life
        self.lock = threading.Lock()
        self.local = threading.local()

    def write(self, row: dict) -> None:
        with self.lock:
            self.file.write(json.dumps(row) + "\n")

    def timed(self, name: str, fn):
        """``fn`` wrapped: inside a task, its wall, process CPU and thread CPU add to step ``name``."""

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            row = getattr(self.local, "row", None)
            if row is None:
                return fn(*args, **kwargs)
            wall, cpu, own = time.monotonic(), time.process_time(), time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                step = row["steps"].setdefault(name, [0.0, 0.0, 0.0])
                step[0] += time.monotonic() - wall
                step[1] += time.process_time() - cpu
                step[2] += time.thread_time() - own

        return wrapper


def _instrument(recorder: _Recorder) -> None:
    """Time the pipeline's steps in this worker (module attributes the callers look up per call)."""
    from celery import signals

    from engine import match as engine_match
    from matches import hooks, sandboxing, services
    from sandbox import runner

    timed = []
    for module, attribute, step in (
        (engine_match, "play_match", "decisions"), (runner, "play_sandboxed_match", "sandbox"), (runner, "_stop_all", "stop"),
        (services, "match_record_result", "record"), (hooks, "run", "hooks"), (services, "_declined", "health"),
        (services, "match_begin", "start"), (sandboxing, "bots_of", "packages"),
    ):
        # a step the code no longer has (renamed) is left out, and the report says which were timed
        if callable(getattr(module, attribute, None)):
            setattr(module, attribute, recorder.timed(step, getattr(module, attribute)))
            timed.append(step)
    # a result stored by the worker's recorder thread (MATCH_RESULTS_IN_BACKGROUND), off the task's
    # path: a row of its own ("background"), its record and hooks steps timed in it, its CPU the thread's
    store_played = getattr(services, "_store_played", None)
    if callable(store_played):
        def stored_in_background(match, *args, **kwargs):
            if getattr(recorder.local, "row", None) is not None:
                return store_played(match, *args, **kwargs)  # the task stores it itself
            row = {"pid": os.getpid(), "task": "background", "background": True, "match": match.pk,
                   "t0": time.monotonic(), "own0": time.thread_time(), "steps": {}}
            recorder.local.row = row
            stored = False
            try:
                stored = store_played(match, *args, **kwargs)
                return stored
            finally:
                recorder.local.row = None
                own = time.thread_time() - row.pop("own0")
                row.update(t1=time.monotonic(), cpu=own, own=own, stored=stored is True)
                recorder.write(row)

        services._store_played = stored_in_background
        timed.append("background")
    platform_play = sandboxing.play_match_row

    def play(match):
        row = getattr(recorder.local, "row", None)
        if row is not None:
            row["label"] = sandboxing.sandbox_label(match)
            row["seats"] = len(match.seats.all())
        return platform_play(match)

    sandboxing.play_match_row = play

    # PIPELINE_BENCH_PROFILE=FOLDER: each worker also profiles its tasks (cProfile, the task's
    # thread) and writes FOLDER/worker-<pid>.prof when it stops (for looking into a step)
    profile_folder = os.environ.get(PROFILE_ENV)
    profiler = cProfile.Profile() if profile_folder else None

    def prerun(task=None, args=None, **_):
        if profiler is not None:
            profiler.enable()
        recorder.local.row = {
            "pid": os.getpid(), "task": task.name, "match": args[0] if task.name.endswith(".match_play") and args else None,
            "t0": time.monotonic(), "cpu0": time.process_time(), "own0": time.thread_time(), "steps": {},
        }

    def postrun(retval=None, **_):
        if profiler is not None:
            profiler.disable()
        row = getattr(recorder.local, "row", None)
        if row is None:
            return
        recorder.local.row = None
        row.update(t1=time.monotonic(), cpu=time.process_time() - row.pop("cpu0"),
                   own=time.thread_time() - row.pop("own0"), stored=retval is True)
        recorder.write(row)

    def ready(**_):
        from sandbox import docker_backend

        warm = getattr(docker_backend, "warm_seats", None)
        recorder.write({"pid": os.getpid(), "ready": time.monotonic(), "warm_seats": warm() if warm else None,
                        "timed": timed})

    def shutdown(**_):
        if profiler is not None:
            profiler.dump_stats(str(Path(profile_folder) / f"worker-{os.getpid()}.prof"))

    signals.task_prerun.connect(prerun, weak=False)
    signals.worker_shutdown.connect(shutdown, weak=False)
    signals.task_postrun.connect(postrun, weak=False)
    signals.worker_ready.connect(ready, weak=False)


def worker_main(argv: list[str] | None = None) -> None:
    """A bench worker: the project's Celery worker on the bench's Redis key prefix, without the
    match sweeper, with the pipeline's steps timed (``python -c 'from web.pipelinebench
    import worker_main; worker_main()' CELERY-WORKER-ARGS``)."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")
    django.setup()
    from arena.celery import app
    from matches.worker import MatchSweepStep

    app.steps["worker"].discard(MatchSweepStep)
    app.conf.broker_transport_options = {**app.conf.broker_transport_options, "global_keyprefix": os.environ[PREFIX_ENV]}
    _instrument(_Recorder(Path(os.environ[RECORDS_ENV])))
    app.worker_main(["worker", *(sys.argv[1:] if argv is None else argv)])


# --- the bench side ----------------------------------------------------------------------


def split(matches: int, four_seat_share: float) -> tuple[int, int]:
    """(two-seat, four-seat) matches of a run."""
    four = round(matches * four_seat_share)
    return matches - four, four


def bench_users():
    """The users this bench created (its prefix, unusable password)."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX

    return get_user_model().objects.filter(username__startswith=BENCH_PREFIX, password__startswith=UNUSABLE_PASSWORD_PREFIX)


def real_users():
    """Users neither seed_scale nor this bench created."""
    from django.contrib.auth.hashers import UNUSABLE_PASSWORD_PREFIX

    from web import scale

    return scale.real_users().exclude(username__startswith=BENCH_PREFIX, password__startswith=UNUSABLE_PASSWORD_PREFIX)


def _check_services() -> str:
    """The broker URL; BenchError when there is no Redis broker or no Docker engine with the image."""
    import redis
    from celery import current_app
    from django.conf import settings

    from sandbox import docker_backend

    if current_app.conf.task_always_eager or not settings.REDIS_URL.startswith(("redis://", "rediss://", "unix://")):
        raise BenchError("pipeline_bench needs a Redis broker: set REDIS_URL=redis://...")
    try:
        redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=3).ping()
    except redis.RedisError as exc:
        raise BenchError(f"Redis at {settings.REDIS_URL} does not answer: {exc}") from None
    if not docker_backend.available(settings.SANDBOX_IMAGE):
        raise BenchError(
            f"the Docker engine does not answer or has no sandbox image {settings.SANDBOX_IMAGE!r} "
            "(build it with deploy/sandbox/build-offline.sh)"
        )
    return settings.REDIS_URL


def _database_url() -> str:
    """The URL of the database this process uses, for the workers (a test's database in tests)."""
    from django.db import connection

    s = connection.settings_dict
    if s["ENGINE"] != "django.db.backends.postgresql":
        raise BenchError("pipeline_bench needs PostgreSQL: set DATABASE_URL=postgresql://...")
    password = f":{s['PASSWORD']}" if s.get("PASSWORD") else ""
    return f"postgresql://{s.get('USER') or ''}{password}@{s.get('HOST') or '127.0.0.1'}:{s.get('PORT') or 5432}/{s['NAME']}"


def create_scratch(tag: str, two: int, four: int) -> list:
    """The run's users, bots and ladders (not matched yet): enough ladders of at most
    ``ladders.models.MAX_PENDING`` matches for ``two`` 2-seat and ``four`` 4-seat matches, every
    bot with an owner of its own. Returns the ladders with the number of matches each must make."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password

    from bots import services as bot_services
    from bots.models import BotVersion
    from ladders.models import MAX_PENDING, Ladder, LadderEntry
    from web.demo import reference_bot_upload
    from web.scale import SEED_MODULES

    plan = []
    for seats, count in ((2, two), (4, four)):
        for index, start in enumerate(range(0, count, MAX_PENDING)):
            plan.append((seats, index, min(MAX_PENDING, count - start)))
    needed = max([seats * n for seats, _, n in plan] or [0])
    password = make_password(None)
    users = get_user_model().objects.bulk_create(
        [get_user_model()(username=f"{BENCH_PREFIX}{tag}-{i}", password=password) for i in range(needed)]
    )
    uploads = {module: reference_bot_upload(module) for module in SEED_MODULES}
    bots = []
    for i, user in enumerate(users):
        module = SEED_MODULES[i % len(SEED_MODULES)]
        bot = bot_services.bot_create(owner=user, name=f"{module}-{i}", description=f"pipeline_bench {tag} scratch bot")
        filename, data = uploads[module]
        version = bot_services.bot_version_create(bot=bot, filename=filename, data=data, validate=False)
        BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.ACTIVE)
        bots.append(bot)
    ladders = []
    for seats, index, n in plan:
        ladder = Ladder(
            name=f"Pipeline bench {seats}-seat {index + 1} ({tag})", slug=f"{BENCH_PREFIX}{tag}-{seats}-{index + 1}",
            description=f"Scratch ladder of manage.py pipeline_bench (run {tag}); removed at its end.",
            rules={"players": seats, "rounds": 1}, seats=seats, deals=1, duplicate=True, max_pending=n,
        )
        ladder.full_clean()
        ladder.save()
        LadderEntry.objects.bulk_create([LadderEntry(ladder=ladder, bot=bot) for bot in bots[: seats * n]])
        ladders.append((ladder, n))
    return ladders


def remove_scratch(tag: str) -> None:
    """Delete the run's rows: its ladders' matches, its ladders, its users (their bots and versions)
    and its workers' heartbeats."""
    from core.models import WorkerHeartbeat

    from ladders.models import Ladder
    from matches.models import Match

    ladders = Ladder.objects.filter(slug__startswith=f"{BENCH_PREFIX}{tag}-")
    Match.objects.filter(ladder_match__ladder__in=ladders).delete()
    ladders.delete()
    bench_users().filter(username__startswith=f"{BENCH_PREFIX}{tag}-").delete()
    WorkerHeartbeat.objects.filter(hostname__startswith=f"{BENCH_PREFIX}{tag}-").delete()


class _Workers:
    """The run's worker processes."""

    def __init__(self, folder: Path, tag: str, env: dict):
        self.folder, self.tag, self.env = folder, tag, env
        self.procs: list[subprocess.Popen] = []

    def log(self, index: int) -> str:
        path = self.folder / f"worker-{index}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def start(self, count: int) -> None:
        from arena import queues

        root = Path(__file__).resolve().parents[2]
        for index in range(count):
            log = open(self.folder / f"worker-{index}.log", "wb")  # noqa: SIM115 - handed to the child
            self.procs.append(subprocess.Popen(
                [sys.executable, "-c", "from web.pipelinebench import worker_main; worker_main()",
                 "--pool=solo", "--loglevel=INFO", "--without-gossip", "--without-mingle",
                 "-n", f"{BENCH_PREFIX}{self.tag}-{index}@%h", "-Q", ",".join(queues.ALL)],
                cwd=root, env={**self.env, RECORDS_ENV: str(self.folder / f"records-{index}.jsonl")},
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            ))
            log.close()
        deadline = time.monotonic() + WORKER_READY_SECONDS
        waiting = set(range(count))
        while waiting:
            for index in sorted(waiting):
                if self.procs[index].poll() is not None:
                    raise BenchError(f"worker {index} exited with {self.procs[index].returncode}:\n{self.log(index)[-3000:]}")
                if " ready." in self.log(index):
                    waiting.discard(index)
            if waiting and time.monotonic() > deadline:
                raise BenchError(f"worker {min(waiting)} not ready after {WORKER_READY_SECONDS:.0f} s:\n{self.log(min(waiting))[-3000:]}")
            time.sleep(0.2)

    def stop(self) -> None:
        """SIGTERM (a warm shutdown: the task in hand finishes), SIGKILL after 60 s."""
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)


class _Prefixed:
    """Tasks this process sends go under the run's Redis key prefix for the block."""

    def __init__(self, prefix: str):
        self.prefix = prefix

    @staticmethod
    def _reset():
        from celery import current_app
        from kombu import pools

        pools.reset()  # the app's pool is kombu's global pool of the URL: forget it, not only close it
        current_app._pool = None
        current_app.amqp._producer_pool = None

    def __enter__(self):
        from celery import current_app

        self.saved = current_app.conf.broker_transport_options
        self._reset()
        current_app.conf.broker_transport_options = {**(self.saved or {}), "global_keyprefix": self.prefix}
        return self

    def __exit__(self, *exc):
        from celery import current_app

        self._reset()
        current_app.conf.broker_transport_options = self.saved


def _proc_cpu(pids) -> float:
    """CPU seconds (user + system) of the live processes ``pids`` (warm_bench's reading)."""
    from sandbox.warm_bench import process_cpu_seconds

    return process_cpu_seconds(list(pids))


def _containers_cpu() -> float | None:
    """CPU seconds of every container of the Docker engine so far (its cgroup, v1 or v2, read as
    warm_bench reads one; None where unreadable). Other users' containers on the same engine count too."""
    from sandbox.warm_bench import cgroup_cpu_seconds

    for folder in ("/sys/fs/cgroup/cpuacct/docker", "/sys/fs/cgroup/docker"):
        try:
            return cgroup_cpu_seconds(folder)
        except (OSError, ValueError):
            continue
    return None


def _machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far (/proc/stat)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / tick, sum(fields[:8]) / tick


def _pids_named(*names: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() in names:
                    pids.append(int(entry.name))
            except OSError:
                pass
    return pids


def _p(values, q: float):
    """Nearest-rank percentile (load_bench's); None without values."""
    from web.loadbench import _percentile

    return _percentile(sorted(values), q)


def _r(value, digits: int = 4):
    return None if value is None else round(value, digits)


def floor_inprocess(matches, progress=None) -> dict:
    """Play ``matches`` (Match rows) again in this process with in-process seats, one at a time."""
    from engine.rules import Rules
    from matches import sandboxing
    from sandbox import runner

    wall, cpu = time.monotonic(), time.process_time()
    decisions = 0
    for done, match in enumerate(matches, 1):
        result = runner.play_sandboxed_match(
            Rules.from_dict(match.rules), sandboxing.bots_of(match), seed=match.seed, deals=match.deals,
            duplicate=match.duplicate, backend="inprocess",
            limits=sandboxing.match_limits(match.time_per_decision, match.time_bank, match.time_per_match),
        )
        decisions += sum(int(seat.get("decisions", 0)) for seat in result.result.timings)
        if progress:
            progress(done, len(matches))
    wall, cpu = time.monotonic() - wall, time.process_time() - cpu
    return {"matches_per_s_per_core": _r(len(matches) / wall, 3), "decisions_per_s_per_core": _r(decisions / wall, 0),
            "wall_s": _r(wall, 2), "cpu_s": _r(cpu, 2)}


def floor_containers(seat_counts: list[int], workers: int, cores: int, tag: str, progress=None) -> dict:
    """Bare containers of the sandbox image running ``true``: per match one per seat in parallel
    (created, started, waited for, removed), ``floor_matches_at_once(workers, cores)`` matches at a
    time, so that the machine's cores, not one container's latency, bound it; with the machine's
    busy cores and CPU milliseconds a container (every process: Docker's daemons, runc, the kernel)."""
    import docker
    from django.conf import settings

    client = docker.from_env(timeout=120)
    starts: list[float] = []
    done = [0]
    lock = threading.Lock()

    def seat(_):
        began = time.monotonic()
        # the seats' network (sandbox.docker_backend.container_options): no libnetwork sandbox
        container = client.containers.create(settings.SANDBOX_IMAGE, entrypoint=["true"], command=[],
                                             labels={FLOOR_LABEL: tag}, network_mode="none",
                                             network_disabled=True)
        try:
            container.start()
            container.wait(timeout=120)
        finally:
            container.remove(force=True)
        return time.monotonic() - began

    def match(seats):
        with ThreadPoolExecutor(max_workers=seats) as pool:
            times = list(pool.map(seat, range(seats)))
        with lock:
            starts.extend(times)
            done[0] += 1
            if progress:
                progress(done[0], len(seat_counts))

    wall, machine = time.monotonic(), _machine_cpu()
    try:
        with ThreadPoolExecutor(max_workers=floor_matches_at_once(workers, cores)) as pool:
            list(pool.map(match, seat_counts))
    finally:
        for container in client.containers.list(all=True, filters={"label": f"{FLOOR_LABEL}={tag}"}, ignore_removed=True):
            container.remove(force=True)
        client.close()
    wall, ended = time.monotonic() - wall, _machine_cpu()
    busy, total = ended[0] - machine[0], ended[1] - machine[1]
    return {"matches_per_s_per_core": _r(len(seat_counts) / wall / cores, 3), "wall_s": _r(wall, 2),
            "container_p50_s": _r(_p(starts, 50)), "container_p95_s": _r(_p(starts, 95)),
            "machine_busy_cores": _r(busy / total * (os.cpu_count() or 1), 2) if total > 0 else None,
            "cpu_ms_per_container": _r(busy * 1000 / max(1, sum(seat_counts)), 1)}


def floor_matches_at_once(workers: int, cores: int) -> int:
    """Matches the container floor runs at a time: twice the cores (a container's start is mostly
    waiting on Docker's daemons, so fewer leave cores idle), never fewer than the workers."""
    return max(workers, 2 * cores)


def _settle_warm(folder: Path, timeout: float) -> float | None:
    """Wait until the workers' warm pools are full (the seats they said they keep, running), as
    a worker that ran a while has them; the seconds it took (None: not full within ``timeout``)."""
    import docker

    from sandbox import docker_backend

    started = time.monotonic()
    _, _, ready = _read_records(folder)
    wanted = sum(r.get("warm_seats") or 0 for r in ready)
    seats = str(folder / "seats")
    client = docker.from_env(timeout=60)
    try:
        while time.monotonic() - started < timeout:
            rows = client.api.containers(filters={"label": f"{docker_backend.LABEL_WARM}=1", "status": "running"})
            mine = [r for r in rows if any(m.get("Source", "").startswith(seats) for m in r.get("Mounts") or [])]
            if len(mine) >= wanted:
                time.sleep(1.0)  # their hosts connect and wait for a bot
                return _r(time.monotonic() - started, 1)
            time.sleep(0.25)
    finally:
        client.close()
    return None


def _left_behind(folder: Path, labels: set[str]) -> dict:
    """Containers of the run's workers still there (their sandbox label, or a bind mount from the
    run's seats' folder, which warm seats have too) and seat folders left in it; removes them."""
    import docker

    from sandbox import docker_backend

    client = docker.from_env(timeout=60)
    seats = str(folder / "seats")
    left = []
    try:
        for container in client.containers.list(all=True, filters={"label": docker_backend.LABEL_MATCH}, ignore_removed=True):
            mounts = [m.get("Source", "") for m in container.attrs.get("Mounts", [])]
            if container.labels.get(docker_backend.LABEL_MATCH) in labels or any(m.startswith(seats) for m in mounts):
                left.append(container)
        for container in left:
            container.remove(force=True)
    finally:
        client.close()
    dirs = [p.name for p in Path(seats).iterdir()] if Path(seats).exists() else []
    return {"containers": len(left), "seat_folders": len(dirs)}


def _read_records(folder: Path) -> tuple[list[dict], list[dict], list[dict]]:
    """The workers' rows: their tasks, their results stored in the background, their ready marks."""
    tasks: list[dict] = []
    background: list[dict] = []
    ready: list[dict] = []
    for path in sorted(folder.glob("records-*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            (ready if "ready" in row else background if row.get("background") else tasks).append(row)
    return tasks, background, ready


#: bookkeeping's parts: the timed steps each is made of (``rest``: the task's time no step took)
BOOKKEEPING_PARTS = {"health": ("health",), "start": ("start",), "packages": ("packages",),
                     "record": ("record",), "hooks": ("hooks",)}


def _shares(tasks: list[dict], end: float, matches: int) -> dict:
    """Seat start, decisions, stop and bookkeeping as shares of the workers' busy time (wall) and
    of their tasks' process CPU, with bookkeeping's parts (shares of the busy time, and CPU ms per
    match)."""
    tasks = [t for t in tasks if t["t0"] <= end]
    by_pid: dict[int, list[dict]] = {}
    for t in tasks:
        by_pid.setdefault(t["pid"], []).append(t)
    busy = sum(max(t["t1"] for t in ts) - min(t["t0"] for t in ts) for ts in by_pid.values())
    gaps = []
    for ts in by_pid.values():
        ts.sort(key=lambda t: t["t0"])
        gaps += [b["t0"] - a["t1"] for a, b in zip(ts, ts[1:], strict=False)]
    zero = [0.0, 0.0, 0.0]
    # [wall, cpu] of each share and of each part of bookkeeping
    main = {"seat_start": [0.0, 0.0], "decisions": [0.0, 0.0], "stop": [0.0, 0.0]}
    parts = {name: [0.0, 0.0] for name in (*BOOKKEEPING_PARTS, "rest", "other_tasks")}
    parts["dispatch"] = [sum(gaps), 0.0]
    cpu_total = 0.0
    for t in tasks:
        steps, task = t["steps"], [t["t1"] - t["t0"], t["cpu"]]
        cpu_total += t["cpu"]
        if t["match"] is None:
            for i in (0, 1):
                parts["other_tasks"][i] += task[i]
            continue
        sandbox, decisions, stop = steps.get("sandbox", zero), steps.get("decisions", zero), steps.get("stop", zero)
        hooks = steps.get("hooks", zero)
        for i in (0, 1):
            main["seat_start"][i] += sandbox[i] - decisions[i] - stop[i]
            main["decisions"][i] += decisions[i]
            main["stop"][i] += stop[i]
            named = sandbox[i]
            for part, names in BOOKKEEPING_PARTS.items():
                spent = sum(steps.get(name, zero)[i] for name in names)
                if part == "record":
                    spent -= hooks[i]  # the hooks run inside the result's transaction: a part of their own
                parts[part][i] += spent
                named += spent
            parts["rest"][i] += task[i] - named
    shares = {k: _r(v[0] / busy) for k, v in main.items()} if busy else {}
    shares["bookkeeping"] = _r(sum(v[0] for v in parts.values()) / busy) if busy else None
    cpu_shares = {k: _r(v[1] / cpu_total) for k, v in main.items()} if cpu_total else {}
    if cpu_total:
        cpu_shares["bookkeeping"] = _r(1 - sum(v[1] for v in main.values()) / cpu_total)
    return {
        "busy_s": _r(busy, 2),
        "shares": shares,
        "bookkeeping_parts": {k: _r(v[0] / busy) for k, v in parts.items()} if busy else {},
        "cpu_shares": cpu_shares,
        "cpu_ms_per_match": {k: _r(v[1] * 1000 / max(1, matches), 1) for k, v in {**main, **parts}.items()
                             if k != "dispatch"},
        "tasks_cpu_s": _r(cpu_total, 2),
        "dispatch_gap_p50_s": _r(_p(gaps, 50)),
    }


def run(*, matches: int = 60, workers: int | None = None, four_seat_share: float = 1 / 3, warm: int | None = None,
        timeout: float = 1800.0, force: bool = False, keep: bool = False, progress=None) -> dict:
    """The benchmark (module docstring); ``progress(stage, done, total)`` as it goes. Returns the report."""
    from django.conf import settings

    from matches import services
    from matches.models import Match

    workers = workers or os.cpu_count() or 1
    if matches < 1 or workers < 1 or not 0 <= four_seat_share <= 1 or timeout <= 0 or (warm is not None and warm < 0):
        raise BenchError("need --matches >= 1, --workers >= 1, --four-seat-share in [0, 1], --timeout > 0, --warm >= 0")
    real = real_users().count()
    if real and not force:
        raise BenchError(
            f"the database holds {real} user(s) neither seed_scale nor pipeline_bench created (real users, or the "
            "demo's): use a database of its own, or --force to add the bench's scratch rows beside them"
        )
    redis_url = _check_services()
    progress = progress or (lambda stage, done, total: None)
    tag = uuid.uuid4().hex[:8]
    prefix = f"{BENCH_PREFIX}{tag}:"
    two, four = split(matches, four_seat_share)
    cores = min(workers, os.cpu_count() or 1)
    folder = Path(tempfile.mkdtemp(prefix="ua-bench-", dir="/tmp"))  # short: seat sockets live under it
    (folder / "seats").mkdir()
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if k != "TEST_DATABASE_NAME"}
    env.update(
        DATABASE_URL=_database_url(), REDIS_URL=redis_url, DJANGO_SETTINGS_MODULE="arena.settings",
        PYTHONPATH=os.pathsep.join([str(root), str(root / "platform")]), SANDBOX_BACKEND="docker",
        SANDBOX_WORK_DIR=str(folder / "seats"), SANDBOX_IMAGE=settings.SANDBOX_IMAGE, **{PREFIX_ENV: prefix},
    )
    # the workers run as deploy/compose.yaml runs them: DEBUG off (Django's debug cursor formats and
    # keeps every query: CPU a production worker does not spend), with the bench's own secret key
    # (no site is served: ALLOWED_HOSTS only satisfies the production profile's check)
    env.update(DEBUG="0", SECRET_KEY=os.environ.get("SECRET_KEY") or secrets.token_urlsafe(50),
               ALLOWED_HOSTS=os.environ.get("ALLOWED_HOSTS") or "localhost")
    if warm is not None:
        env["SANDBOX_DOCKER_WARM"] = str(warm)
    pool = _Workers(folder, tag, env)
    report: dict = {"matches": matches, "two_seat": two, "four_seat": four, "workers": workers, "cores": cores,
                    "machine_cores": os.cpu_count(), "load_average_start": [round(x, 2) for x in os.getloadavg()]}
    ids: list[int] = []
    try:
        ladders = create_scratch(tag, two, four)
        pool.start(workers)
        report["warm_settle_s"] = _settle_warm(folder, WARM_SETTLE_SECONDS)
        daemons = _pids_named("dockerd", "containerd")
        cpu_start = _proc_cpu([p.pid for p in pool.procs]), _proc_cpu(daemons), _containers_cpu(), _machine_cpu()
        began = time.monotonic()
        with _Prefixed(prefix):
            from ladders import services as ladder_services

            for ladder, n in ladders:
                created = ladder_services.ladder_matchmake(ladder)
                if len(created) != n:
                    raise BenchError(f"matchmaking of {ladder.slug} made {len(created)} matches, not {n}")
                ids += [m.pk for m in created]
        deadline = began + timeout
        finished = 0
        while True:
            finished = Match.objects.filter(pk__in=ids).exclude(status__in=[Match.Status.QUEUED, Match.Status.RUNNING]).count()
            progress("matches", finished, len(ids))
            if finished == len(ids) or time.monotonic() > deadline:
                break
            for index, proc in enumerate(pool.procs):
                if proc.poll() is not None:
                    raise BenchError(f"worker {index} exited with {proc.returncode}:\n{pool.log(index)[-3000:]}")
            time.sleep(0.25)
        polled_end = time.monotonic()
        cpu_end = _proc_cpu([p.pid for p in pool.procs]), _proc_cpu(daemons), _containers_cpu(), _machine_cpu()
        report["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
        # the queued ones (a timed-out run) are cancelled; a running one is given back by its worker's stop
        for match in Match.objects.filter(pk__in=ids, status=Match.Status.QUEUED):
            services.match_cancel(match)
        pool.stop()
        tasks, background, ready = _read_records(folder)
        report["left_behind"] = _left_behind(folder, {t["label"] for t in tasks if t.get("label")})
        rows = list(Match.objects.filter(pk__in=ids).prefetch_related("seats__bot_version__bot").order_by("pk"))
        report.update(_pipeline(rows, tasks, background, ready, began, polled_end, cores, finished == len(ids)))
        report["cpu"] = {
            "workers_s": _r(cpu_end[0] - cpu_start[0], 2), "dockerd_containerd_s": _r(cpu_end[1] - cpu_start[1], 2),
            # every container of the engine (other users' too), and the whole machine's busy cores
            "containers_s": _r(cpu_end[2] - cpu_start[2], 2) if cpu_start[2] is not None and cpu_end[2] is not None else None,
            "machine_busy_cores": _r((cpu_end[3][0] - cpu_start[3][0]) / (cpu_end[3][1] - cpu_start[3][1])
                                     * (os.cpu_count() or 1), 2),
            **{k: v for k, v in report.pop("_cpu").items()},
        }
        done = [m for m in rows if m.status == Match.Status.DONE]
        report["floors"] = {
            "inprocess": floor_inprocess(done, lambda d, t: progress("in-process floor", d, t)),
            "containers": floor_containers([len(m.seats.all()) for m in rows], workers, cores, tag,
                                           lambda d, t: progress("container floor", d, t)),
        }
        if two and not four:
            report["floors"]["containers_two_seat"] = report["floors"]["containers"]
        elif two:
            # The ceiling of the 2-seat target: the mixed floor above is lowered by the 4-seat matches.
            report["floors"]["containers_two_seat"] = floor_containers(
                [2] * two, workers, cores, tag, lambda d, t: progress("2-seat container floor", d, t))
        two_mine = report.get("two_seat_matches_per_s_per_core")
        two_floor = report["floors"].get("containers_two_seat", {}).get("matches_per_s_per_core")
        report["two_seat_floor_ratio"] = _r(two_mine / two_floor, 3) if two_mine and two_floor else None
        mine = report["matches_per_s_per_core"]
        report["floor_ratio"] = _r(mine / report["floors"]["containers"]["matches_per_s_per_core"], 3) if mine else None
        report["inprocess_ratio"] = _r(mine / report["floors"]["inprocess"]["matches_per_s_per_core"], 4) if mine else None
        report["targets"] = {
            "two_seat_matches_per_s_per_core >= 2": _met(report.get("two_seat_matches_per_s_per_core"), 2.0, True),
            "seat_start_p50_s < 0.050": _met(report.get("seat_start_p50_s"), 0.050, False),
            "bookkeeping < 10%": _met(report["shares"].get("bookkeeping"), 0.10, False),
        }
    finally:
        pool.stop()
        _delete_keys(redis_url, prefix)
        if not keep:
            remove_scratch(tag)
        shutil.rmtree(folder, ignore_errors=True)
    report["tag"] = tag
    report["match_ids"] = ids
    report["kept"] = keep
    return report


def _met(value, target: float, at_least: bool) -> bool | None:
    if value is None:
        return None
    return value >= target if at_least else value < target


def _delete_keys(redis_url: str, prefix: str) -> None:
    """Every Redis key of the run's prefix (its queues, unacknowledged messages, bindings)."""
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(match=prefix + "*", count=1000))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


def _steps(task: dict) -> dict:
    """A match task's wall seconds: seat start, decisions, stop, and the rest (bookkeeping)."""
    zero = [0.0]
    steps = task["steps"]
    sandbox, decisions, stop = (steps.get(k, zero)[0] for k in ("sandbox", "decisions", "stop"))
    return {"seat_start": sandbox - decisions - stop, "decisions": decisions, "stop": stop,
            "bookkeeping": task["t1"] - task["t0"] - sandbox}


def _pipeline(rows, tasks: list[dict], background: list[dict], ready: list[dict], began: float, polled_end: float,
              cores: int, complete: bool) -> dict:
    """The pipeline's figures from the matches' rows and the workers' records (``background``: the
    results their recorder threads stored after the tasks that played them had ended)."""
    from matches.models import Match

    plays = [t for t in tasks if t["match"] is not None]
    later = {b["match"]: b for b in background if b["stored"]}
    stored = {t["match"]: t for t in plays if t["stored"] or t["match"] in later}
    # the run ends when the last result is stored, by its task or its recorder
    end = max([t["t1"] for t in stored.values()] + [b["t1"] for b in later.values()] or [polled_end])
    wall = end - began
    done = [m for m in rows if m.status == Match.Status.DONE]
    decisions = sum(int(s.get("decisions") or 0) for m in done for s in (m.timings or {}).get("seats", []))
    seat_starts = [s["start"] for m in done for s in (m.timings or {}).get("seats", []) if s.get("start") is not None]
    seat_phase = [
        stored[m.pk]["steps"]["sandbox"][0] - stored[m.pk]["steps"]["decisions"][0] - stored[m.pk]["steps"].get("stop", [0.0])[0]
        for m in done if m.pk in stored and "decisions" in stored[m.pk]["steps"]
    ]
    shares = _shares(tasks, end, len(done))
    gap = shares["dispatch_gap_p50_s"] or 0.0
    two_seat = [stored[m.pk]["t1"] - stored[m.pk]["t0"] for m in done if m.pk in stored and len(m.seats.all()) == 2]
    two_seat_steps = [_steps(stored[m.pk]) for m in done if m.pk in stored and len(m.seats.all()) == 2]
    waits = [(m.started_at - m.enqueued_at).total_seconds() for m in done if m.started_at and m.enqueued_at]
    statuses: dict[str, int] = {}
    for m in rows:
        statuses[m.status] = statuses.get(m.status, 0) + 1
    per_s = len(done) / wall if wall > 0 else 0.0
    return {
        "complete": complete,
        "statuses": statuses,
        "attempts": sum(m.attempts for m in rows),
        "warm_seats": sorted({r.get("warm_seats") for r in ready}, key=str),
        "steps_timed": sorted({step for r in ready for step in r.get("timed", [])}),
        "wall_s": _r(wall, 2),
        "matches_per_s": _r(per_s, 3),
        "matches_per_s_per_core": _r(per_s / cores, 3),
        "decisions_per_s_per_core": _r(decisions / wall / cores, 0) if wall > 0 else None,
        # a run of 2-seat matches only: its measured rate; a mixed run: one worker (one core) playing only
        # 2-seat matches, from their mean time in the worker plus a dispatch gap
        "two_seat_matches_per_s_per_core": (_r(per_s / cores, 3) if two_seat and len(two_seat) == len(done)
                                            else _r(1 / (statistics.mean(two_seat) + gap), 3) if two_seat else None),
        "two_seat_basis": ("measured" if two_seat and len(two_seat) == len(done) else "derived" if two_seat else None),
        # where a 2-seat match's time in the worker goes (mean ms): the figure above is 1 / (their sum + a gap)
        "two_seat_ms": {k: _r(statistics.mean(t[k] for t in two_seat_steps) * 1000, 1) for k in two_seat_steps[0]}
        if two_seat_steps else None,
        "seat_start_p50_s": _r(_p(seat_starts, 50)),
        "seat_start_p95_s": _r(_p(seat_starts, 95)),
        "match_seat_start_p50_s": _r(_p(seat_phase, 50)),
        "queue_wait_p50_s": _r(_p(waits, 50), 3),
        "shares": shares["shares"],
        "bookkeeping_parts": shares["bookkeeping_parts"],
        "dispatch_gap_p50_s": shares["dispatch_gap_p50_s"],
        "busy_s": shares["busy_s"],
        # off the tasks' path, beside the next match: the recorder threads' wall (a share of the busy
        # time above, which it overlaps) and thread CPU a match, with its record and hooks steps
        "stored_in_background": _background(background, shares["busy_s"], len(done)),
        "_cpu": {"tasks_s": shares["tasks_cpu_s"], "shares": shares["cpu_shares"], "ms_per_match": shares["cpu_ms_per_match"]},
    }


def _background(rows: list[dict], busy: float, matches: int) -> dict | None:
    """The results stored by the workers' recorder threads (None: every task stored its own)."""
    if not rows:
        return None
    wall = sum(r["t1"] - r["t0"] for r in rows)
    per_match = max(1, matches)

    def step(name: str, i: int) -> float:
        return sum(r["steps"].get(name, [0.0, 0.0, 0.0])[i] for r in rows)

    return {
        "results": len(rows),
        "share_of_busy": _r(wall / busy) if busy else None,
        "wall_ms_per_match": _r(wall * 1000 / per_match, 1),
        "cpu_ms_per_match": _r(sum(r["cpu"] for r in rows) * 1000 / per_match, 1),
        # the thread's own CPU in the result's write and in its hooks (which run inside it)
        "record_cpu_ms": _r((step("record", 2) - step("hooks", 2)) * 1000 / per_match, 1),
        "hooks_cpu_ms": _r(step("hooks", 2) * 1000 / per_match, 1),
    }


def summary(report: dict) -> str:
    """The report as a few lines of text."""
    floors = report["floors"]
    shares = ", ".join(f"{k} {v:.1%}" for k, v in report["shares"].items() if v is not None)
    parts = ", ".join(f"{k} {v:.1%}" for k, v in report["bookkeeping_parts"].items() if v is not None)
    lines = [
        f"{report['matches']} matches ({report['two_seat']} two-seat, {report['four_seat']} four-seat), "
        f"{report['workers']} workers on {report['cores']} of {report['machine_cores']} cores, warm seats "
        f"{report['warm_seats']}; load {report['load_average_start']} -> {report.get('load_average_end')}",
        f"ended: {report['statuses']} in {report['wall_s']} s ({report['attempts']} attempts)",
        f"pipeline: {report['matches_per_s']} matches/s, {report['matches_per_s_per_core']} per core, "
        f"{report['decisions_per_s_per_core']} decisions/s per core; 2-seat {report['two_seat_matches_per_s_per_core']} "
        f"per s per core ({report['two_seat_basis']})",
        f"floors per core: in-process {floors['inprocess']['matches_per_s_per_core']} matches/s "
        f"(x{report['inprocess_ratio']}), bare containers {floors['containers']['matches_per_s_per_core']} "
        f"(floor ratio {report['floor_ratio']}; one container start+stop p50 {floors['containers']['container_p50_s']} s, "
        f"{floors['containers']['cpu_ms_per_container']} ms of the machine's CPU)"
        + (f"; 2-seat matches only {floors['containers_two_seat']['matches_per_s_per_core']} (2-seat floor ratio "
           f"{report['two_seat_floor_ratio']})" if "containers_two_seat" in floors else ""),
        f"seat start p50 {report['seat_start_p50_s']} s, p95 {report['seat_start_p95_s']} s "
        f"(a match's seats: p50 {report['match_seat_start_p50_s']} s)",
        f"shares of worker time: {shares}",
        f"bookkeeping: {parts}",
        *([f"stored in the background (beside the next match): {report['stored_in_background']}"]
          if report.get("stored_in_background") else []),
        f"CPU: workers {report['cpu']['workers_s']} s, dockerd+containerd {report['cpu']['dockerd_containerd_s']} s, "
        f"containers {report['cpu']['containers_s']} s, machine busy {report['cpu']['machine_busy_cores']} cores; "
        f"shares of the tasks' CPU {report['cpu']['shares']}; CPU ms per match {report['cpu']['ms_per_match']}",
        f"left behind: {report['left_behind']}",
        "targets: " + ", ".join(f"{k}: {'met' if v else 'not met' if v is False else 'n/a'}" for k, v in report["targets"].items()),
    ]
    return "\n".join(lines)
