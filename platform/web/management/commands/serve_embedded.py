"""Serve the site on the embedded default with a worker and the periodic tasks in-process.

Without a broker there is no `celery worker` and no `celery beat`; this command
plays both parts beside `runserver`, in its own process: a Celery worker thread
(matches.embedded) plays every task the site sends (matches, validations, a
tournament's rounds) in the background, so a request that queues work returns
at once, and a thread runs every entry of CELERY_BEAT_SCHEDULE (ladder
matchmaking, the sweeper, ...) at its interval. With a broker configured it
refuses: run `celery -A arena worker` and `celery -A arena beat` instead.
"""

from __future__ import annotations

import logging
import signal
import threading
from datetime import timedelta

from celery import current_app
from celery.schedules import schedule as every
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import close_old_connections

log = logging.getLogger(__name__)


def periodic_entries(beat_schedule: dict) -> list[tuple[str, dict, object]]:
    """(name, entry, celery schedule) for each beat entry; a number means every that many seconds."""
    # Outside a worker, tasks are registered only once their modules are imported.
    current_app.loader.import_default_modules()
    entries = []
    for name, entry in beat_schedule.items():
        when = entry["schedule"]
        if isinstance(when, int | float | timedelta):
            seconds = when.total_seconds() if isinstance(when, timedelta) else float(when)
            when = every(run_every=timedelta(seconds=seconds), app=current_app)
        entries.append((name, entry, when))
    return entries


def run_due(entries: list, last_run: dict, stop: threading.Event) -> float:
    """Run the entries that are due; return the seconds until the next one is."""
    next_in = 60.0
    for name, entry, when in entries:
        if stop.is_set():
            break
        if name not in last_run:
            last_run[name] = current_app.now()  # like beat: the first run comes one interval after start
        due, next_seconds = when.is_due(last_run[name])
        if due:
            last_run[name] = current_app.now()
            try:
                current_app.tasks[entry["task"]].apply(args=entry.get("args", ()), kwargs=entry.get("kwargs", {}))
            except Exception:  # one failing task must not stop the others
                log.exception("periodic task %s (%s) failed", name, entry["task"])
            finally:
                close_old_connections()
        next_in = min(next_in, next_seconds)
    return max(0.5, next_in)


def _stop_on_sigterm(signum, frame) -> None:
    """SIGTERM (a service manager's stop, ``kill``) stops the server as Ctrl-C does: runserver ends,
    and the worker finishes its running tasks before the process exits."""
    raise KeyboardInterrupt


def run_forever(beat_schedule: dict, stop: threading.Event) -> None:
    entries = periodic_entries(beat_schedule)
    last_run: dict = {}
    while not stop.is_set():
        stop.wait(run_due(entries, last_run, stop))


class Command(BaseCommand):
    help = "Serve the site with a worker thread and CELERY_BEAT_SCHEDULE in-process (the embedded default, no broker)."

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")

    def handle(self, *args, addrport: str, **options):
        if not str(current_app.conf.broker_url).startswith("memory://"):
            raise CommandError(
                "a broker is configured (REDIS_URL): run `celery -A arena worker` and "
                "`celery -A arena beat` beside the web server instead"
            )
        from matches.embedded import EmbeddedWorker

        worker = EmbeddedWorker(current_app).start()
        self.stdout.write(f"tasks play in the background: {worker.threads} worker thread(s) in this process")
        stop = threading.Event()
        names = ", ".join(settings.CELERY_BEAT_SCHEDULE) or "none"
        self.stdout.write(f"periodic tasks run in-process: {names}")
        thread = threading.Thread(
            target=run_forever, args=(settings.CELERY_BEAT_SCHEDULE, stop), name="embedded-beat", daemon=True
        )
        thread.start()
        previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
        try:
            call_command("runserver", addrport, use_reloader=False)
        finally:
            signal.signal(signal.SIGTERM, previous)
            self.stdout.write("stopping: the worker finishes its running tasks")
            stop.set()
            worker.stop()
            self.stdout.write("stopped")
