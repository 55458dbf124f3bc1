"""What every Celery worker does beside its tasks: heartbeat, health, sweeping.

- ``WorkerHeartbeatStep`` (worker bootstep): writes the worker's own
  ``WorkerHeartbeat`` at start and every ``WORKER_HEARTBEAT_SECONDS`` (database
  clock), with its health; marks it stopped at a graceful stop.
- ``WorkerHealthStep`` (consumer bootstep): checks the worker before it takes any
  match (before the event loop starts, so not one message is taken first), then
  every ``WORKER_HEALTH_SECONDS``: with the Docker backend the engine answers, the
  sandbox image is there, the seats' folder is usable and has
  ``WORKER_MIN_FREE_BYTES`` free. Unhealthy, the worker stops consuming the match
  queues (``consumer.cancel_task_queue``, what ``app.control.cancel_consumer``
  does), logs one clear line and shows the reason on its heartbeat (the queue
  page); healthy again, it consumes them again. A task that finds the worker
  unhealthy (``health_gate``) hands its match back instead of playing it.
- ``MatchSweepStep`` (worker bootstep): a thread that every ``MATCH_SWEEP_SECONDS``
  runs ``matches.services.match_sweep_stuck``, so a match whose lease expired is
  taken again within seconds by any worker, with or without beat, even while this
  worker plays a match.

- ``WarmSeatsStep`` (worker bootstep) and the pool-process signals: with the Docker
  backend every process that plays matches first removes what dead workers of this
  installation left on this host, then keeps warm seats
  (``matches.sandboxing.start_warm_seats``: the matches it plays at once times the most
  seats of an active ladder); its seats are removed in the background after the result of the
  match that used them was stored (by its task, or by the process's ``ResultRecorder``); at a
  graceful stop (and SIGTERM) it first lets the recorder store the result in hand, then removes
  them all.
  Prefork: each child keeps its own (``worker_process_init``/``worker_process_shutdown``);
  solo and threads: the worker's process.

With the solo pool the heartbeat and health timers wait while a match plays; a
prefork worker's main process keeps them going while its children play.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import time

from celery import bootsteps, signals

from arena import queues

log = logging.getLogger(__name__)

#: the queues whose tasks need a healthy sandbox: a sick worker stops consuming these
MATCH_QUEUES = (queues.MATCHES, queues.VALIDATION)
#: seconds a health result is reused by tasks (one Docker call per match at most this often)
HEALTH_CACHE_SECONDS = 5.0
#: a worker counts as alive for handing matches over while its heartbeat is this many intervals old
ALIVE_INTERVALS = 3


class _State:
    """This worker process's view of itself (a prefork child inherits the main process's copy)."""

    hostname: str = ""
    consumer = None
    main_pid: int | None = None
    serving: set[str] = set()  # the match queues this worker was started to consume
    cancelled: set[str] = set()  # those it stopped consuming while unhealthy
    problem: str | None = None
    checked_at: float = 0.0
    image_id: str | None = None  # the sandbox image's id the worker found at its first check


state = _State()


def worker_health() -> str | None:
    """Why this worker must not take matches now, or None when it may.

    With ``SANDBOX_BACKEND=docker``: the seats' folder can hold a seat's socket
    (``docker_backend.work_dir_problem``), the Docker engine answers and holds
    ``SANDBOX_IMAGE`` (``docker_backend.available``), and the folder has at least
    ``WORKER_MIN_FREE_BYTES`` free (0: not checked) and free inodes. Other backends:
    nothing to check here.
    """
    from django.conf import settings

    if settings.SANDBOX_BACKEND != "docker":
        return None
    from sandbox import docker_backend

    problem = docker_backend.work_dir_problem()
    if problem:
        return problem
    found = docker_backend.image_id(settings.SANDBOX_IMAGE)
    if found is None:
        return (
            f"the Docker engine does not answer or has no sandbox image {settings.SANDBOX_IMAGE!r} "
            "(build it with deploy/sandbox/build-offline.sh, or set SANDBOX_IMAGE)"
        )
    if state.image_id is None:
        state.image_id = found  # pinned: the image this worker started with
    elif found != state.image_id:
        return (
            f"the sandbox image {settings.SANDBOX_IMAGE!r} is now {found[:19]}, not {state.image_id[:19]} "
            "that this worker started with; restart the worker to use the new image"
        )
    minimum = settings.WORKER_MIN_FREE_BYTES
    if minimum:
        folder = docker_backend.WORK_DIR or tempfile.gettempdir()
        try:
            stat = os.statvfs(folder)
        except OSError as exc:
            return f"the seats' folder {folder} cannot be read: {exc}"
        free = stat.f_bavail * stat.f_frsize
        if free < minimum:
            return (
                f"the seats' folder {folder} has {free} bytes free, less than "
                f"WORKER_MIN_FREE_BYTES={minimum}"
            )
        if stat.f_files and stat.f_favail < 64:
            return f"the seats' folder {folder} has only {stat.f_favail} free inodes"
    return None


def _in_main_loop() -> bool:
    """True in the worker's main process and thread (where its consumer may be driven directly)."""
    return (
        state.consumer is not None
        and os.getpid() == state.main_pid
        and threading.current_thread() is threading.main_thread()
    )


def apply_health(problem: str | None) -> None:
    """Stop or resume consuming the match queues after a health check found ``problem``."""
    state.problem, state.checked_at = problem, time.monotonic()
    if not state.hostname:
        return  # not inside a worker: nothing to stop
    changed = False
    if problem is not None:
        to_cancel = sorted(state.serving - state.cancelled)
        if to_cancel:
            log.error(
                "worker %s is unhealthy: %s; it stops taking matches (not consuming %s) until healthy again",
                state.hostname, problem, ", ".join(to_cancel),
            )
            for name in to_cancel:
                _cancel(name)
            state.cancelled |= set(to_cancel)
            changed = True
    elif state.cancelled:
        if _in_main_loop():
            names = sorted(state.cancelled)
            for name in names:
                state.consumer.add_task_queue(name)
            state.cancelled = set()
            log.warning("worker %s is healthy again; consuming %s", state.hostname, ", ".join(names))
            changed = True
    if changed:
        record_heartbeat()


def _cancel(name: str) -> None:
    if _in_main_loop():
        state.consumer.cancel_task_queue(name)
        return
    # A prefork child or a pool thread: ask the main process through the broker.
    from celery import current_app

    try:
        current_app.control.cancel_consumer(name, destination=[state.hostname])
    except Exception:  # the main process's own check stops it at its next tick
        log.exception("could not ask worker %s to stop consuming %s", state.hostname, name)


def health_gate(*, fresh: bool = False) -> str | None:
    """For a task about to take a match: why this worker must not (it then stops consuming), or
    None. Reuses a check younger than HEALTH_CACHE_SECONDS unless ``fresh``. Outside a worker
    (tasks run in-process) always None."""
    if not state.hostname:
        return None
    if fresh or time.monotonic() - state.checked_at > HEALTH_CACHE_SECONDS:
        try:
            problem = worker_health()
        except Exception as exc:
            problem = f"the health check failed: {type(exc).__name__}: {exc}"
        apply_health(problem)
    return state.problem


def other_healthy_workers(hostname: str) -> bool:
    """Is a worker other than ``hostname`` alive, healthy and consuming (by its heartbeat)?"""
    from datetime import timedelta

    from core.models import WorkerHeartbeat
    from django.conf import settings

    from matches.services import database_now

    alive = database_now() - timedelta(seconds=ALIVE_INTERVALS * settings.WORKER_HEARTBEAT_SECONDS)
    return (
        WorkerHeartbeat.objects.filter(healthy=True, consuming=True, last_seen__gte=alive)
        .exclude(hostname=hostname)
        .exists()
    )


def record_heartbeat(*, stopped: bool = False) -> None:
    """Write this worker's heartbeat with its health; never raises."""
    from core.services import worker_heartbeat_record
    from django.db import close_old_connections

    if not state.hostname:
        return
    if stopped:
        healthy, reason, consuming = False, "stopped", False
    else:
        healthy, reason = state.problem is None, state.problem or ""
        consuming = bool(state.serving - state.cancelled)  # a maintenance-only worker takes no match
    try:
        close_old_connections()
        worker_heartbeat_record(state.hostname, healthy=healthy, reason=reason, consuming=consuming)
    except Exception as exc:  # a missed beat must never take the worker down
        log.warning("worker heartbeat not recorded: %s: %s", type(exc).__name__, str(exc).strip())
        _close_connection()


def _close_connection() -> None:
    from django.db import connection

    try:
        connection.close()
    except Exception:
        connection.connection = None


class WorkerHeartbeatStep(bootsteps.StartStopStep):
    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker, **kwargs):
        super().__init__(worker, **kwargs)
        self.timer_ref = None

    def start(self, worker):
        from django.conf import settings

        state.hostname = worker.hostname
        state.main_pid = os.getpid()
        record_heartbeat()
        self.timer_ref = worker.timer.call_repeatedly(
            settings.WORKER_HEARTBEAT_SECONDS, record_heartbeat, priority=10
        )

    def stop(self, worker):
        if self.timer_ref is not None:
            self.timer_ref.cancel()
            self.timer_ref = None
            record_heartbeat(stopped=True)


class MatchSweepStep(bootsteps.StartStopStep):
    """Runs the match sweeper every MATCH_SWEEP_SECONDS from a thread of every worker (leases
    expire in seconds). A thread, not the worker's timer: with the solo pool the timer waits
    while a match plays, and the sweep must not."""

    def __init__(self, worker, **kwargs):
        super().__init__(worker, **kwargs)
        self._stop = threading.Event()
        self._thread = None

    def start(self, worker):
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="match-sweeper", daemon=True)
        self._thread.start()

    def stop(self, worker):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None

    def _run(self):
        from django.conf import settings

        try:
            while not self._stop.wait(settings.MATCH_SWEEP_SECONDS):
                self.sweep()
        finally:
            _close_connection()

    def sweep(self):
        from matches.services import match_sweep_stuck

        try:
            match_sweep_stuck()
        except Exception as exc:  # the database or broker may be away; the next sweep tries again
            log.warning("sweeping matches failed: %s: %s", type(exc).__name__, str(exc).strip())
            _close_connection()


class WorkerHealthStep(bootsteps.StartStopStep):
    """Checks the worker before its consumer takes a message, then every WORKER_HEALTH_SECONDS."""

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def __init__(self, consumer, **kwargs):
        super().__init__(consumer, **kwargs)
        self.timer_ref = None

    def start(self, consumer):
        from django.conf import settings

        state.consumer = consumer
        state.main_pid = os.getpid()
        state.hostname = consumer.hostname
        if not state.serving:
            # (the queues it was told to consume; it starts consuming them in the event loop)
            state.serving = {queue.name for queue in consumer.task_consumer.queues if queue.name in MATCH_QUEUES}
        # The event loop has not run yet: no message was taken before this check.
        self.check()
        record_heartbeat()
        self.timer_ref = consumer.timer.call_repeatedly(settings.WORKER_HEALTH_SECONDS, self.check, priority=10)

    def stop(self, consumer):
        if self.timer_ref is not None:
            self.timer_ref.cancel()
            self.timer_ref = None

    shutdown = stop

    def check(self):
        health_gate(fresh=True)


def _matches_at_once(worker) -> int | None:
    """How many matches the worker's process plays at once; None with prefork and solo, whose
    processes send ``worker_process_init`` (each child of prefork, solo's own process) and play
    one at a time."""
    module = getattr(worker.pool_cls, "__module__", "") or ""
    if module.endswith((".prefork", ".solo")):
        return None
    return max(1, int(worker.concurrency or 1))  # threads, eventlet, gevent: one process


def start_warm_seats(matches_at_once: int) -> None:
    """Warm seats for this process (never raises: without them matches start cold)."""
    from django.conf import settings
    from django.utils.module_loading import import_string

    from matches import sandboxing

    try:
        most_seats = import_string(settings.SANDBOX_WARM_MOST_SEATS)
        sandboxing.start_warm_seats(matches_at_once, most_seats=most_seats, release_database=True)
    except Exception:
        log.exception("could not start warm sandbox seats; seats start cold")


def stop_warm_seats() -> None:
    from matches import sandboxing

    try:
        sandboxing.stop_warm_seats()
    except Exception:
        log.exception("could not remove the warm sandbox seats")


class WarmSeatsStep(bootsteps.StartStopStep):
    """Warm seats of a threads (eventlet, gevent) worker's one process, for ``concurrency``
    matches at once; prefork children and a solo worker start theirs at
    ``worker_process_init``. At the worker's stop its own process's seats are removed (a
    prefork child removes its own at ``worker_process_shutdown``)."""

    def start(self, worker):
        at_once = _matches_at_once(worker)
        if at_once is not None:
            start_warm_seats(at_once)

    def stop(self, worker):
        _stopping()

    shutdown = stop


#: the worker's main process (this module is imported when the Celery app is made, before forks)
_MAIN_PID = os.getpid()


def _drop_inherited_connections() -> None:
    """In a forked child: forget the parent's database connections without any network I/O
    (what Celery's Django fixup does at this signal too, possibly after this receiver)."""
    from django.db import connections

    for conn in connections.all(initialized_only=True):
        if conn.connection is not None:
            try:
                os.close(conn.connection.fileno())
            except Exception:
                pass
            conn.connection = None


@signals.worker_process_init.connect
def _child_started(**kwargs):
    if os.getpid() != _MAIN_PID:
        _drop_inherited_connections()
    start_warm_seats(1)


@signals.worker_process_shutdown.connect
def _child_stopping(**kwargs):
    _stopping()


def _stopping() -> None:
    """A process's graceful stop: the result its recorder holds is stored first (its seats'
    removal waits for that), then its seats are removed."""
    from matches import services

    if not services.results_settle(timeout=services.DB_RETRY_SECONDS + 30):
        log.warning("a match's result was still being stored at this worker's stop; its lease expires and it is played again")
    stop_warm_seats()


@signals.worker_shutting_down.connect
def _stopping_people_s_games(**kwargs):
    # a person's seat waiting for its answer gives its game back to the queue at once, instead of
    # holding the warm shutdown for up to a whole clock (matches.human)
    from matches import human

    human.STOPPING.set()


#: tasks a worker process plays on one database connection at most (Celery's DB_REUSE_MAX, set in
#: ``arena.celery``): Celery's Django fixup otherwise closes the connection before and after every
#: task, so each match and each ladder refit opened a new one (a server backend started, its catalog
#: caches cold: ~20 ms of a saturated machine's cores a task, pipeline_bench, docs/performance.md
#: session 14). Between those, ``_task_starts`` treats each task as Django treats a request: the
#: connection is kept while younger than CONN_MAX_AGE, closed after an error unless it still
#: answers, and checked once at the task's first query (CONN_HEALTH_CHECKS), so a database restart
#: costs a task a reconnection, not an error (a task that reconnects by itself, ``match_play``, skips
#: the check: its first query's retry is the reconnection).
DB_REUSE_TASKS = 1000


@signals.task_prerun.connect
def _task_starts(task=None, **kwargs):
    from django.db import close_old_connections, connection

    from sandbox import runner

    if task is None or not getattr(task.request, "is_eager", False):
        close_old_connections()
        if getattr(task, "reconnects_itself", False) and connection.connection is not None:
            # A task whose every query retries through a broken connection on a fresh one
            # (``matches.services.db_retry``: match_play) skips the health check of its first query
            # (CONN_HEALTH_CHECKS: a ``SELECT 1``, one round trip a match): a connection that died
            # since the last task fails that query, which reconnects and runs again.
            connection.health_check_done = True
    runner.hold_seat_removals(True)


@signals.task_postrun.connect
def _task_ended(**kwargs):
    from sandbox import runner

    runner.hold_seat_removals(False)
