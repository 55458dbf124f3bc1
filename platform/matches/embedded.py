"""The embedded default's worker: Celery's own worker, in a thread of the web server's process.

Without a broker (no REDIS_URL) the broker is kombu's in-memory transport, which
only reaches threads of one process. ``serve_embedded`` therefore starts a Celery
``WorkController`` (the same worker class ``celery worker`` runs, with the project's
bootsteps: heartbeat, health, sweeper) in a background thread of the server's own
process, consuming every queue, and switches that process from eager to sent
tasks. A request that queues matches (a tournament's start, a challenge, an
upload's validation) returns at once; the matches play beside it, and the site
shows their progress as it would with real workers. Other processes (``manage.py``
commands run by hand) still run their tasks eagerly, as before.

The in-memory broker's messages live and die with this process: when it starts, every
match still queued (sent by an earlier run of the server, which took its messages with it)
is sent again at once, instead of waiting for the sweeper's RESEND_QUEUED_AFTER.

It uses the ``threads`` pool (no fork of the web server) with
``EMBEDDED_WORKER_THREADS`` threads plus ``HUMAN_GAMES_AT_ONCE`` more: the site never
has more human games in play than that (``play.services``), and each holds its thread
for the whole game, so the other matches always keep ``EMBEDDED_WORKER_THREADS``. No
mingle, gossip or event heartbeats (there is one worker).
"""

from __future__ import annotations

import logging
import socket
import threading

from celery import Celery
from django.conf import settings

from arena import queues

log = logging.getLogger(__name__)


def resend_queued_matches() -> list[int]:
    """Send again every queued match: the in-memory broker starts empty, so the message of each
    (sent by an earlier run of this server) is gone. Returns their ids."""
    from django.db import transaction

    from matches.models import Match
    from matches.services import match_enqueue

    with transaction.atomic():
        queued = list(Match.objects.filter(status=Match.Status.QUEUED).order_by("pk"))
        for match in queued:
            match_enqueue(match)
    return [match.pk for match in queued]


class EmbeddedWorker:
    """A Celery worker running in a daemon thread of this process; ``stop()`` ends it warmly."""

    def __init__(self, app: Celery, *, threads: int | None = None):
        from celery.worker import WorkController

        self.app = app
        # the human games' threads on top: they never take the other matches' share
        self.threads = max(1, threads or settings.EMBEDDED_WORKER_THREADS) + max(0, settings.HUMAN_GAMES_AT_ONCE)
        self.worker = WorkController(
            app=app,
            hostname=f"embedded@{socket.gethostname()}",
            pool="threads",
            concurrency=self.threads,
            queues=list(queues.ALL),
            without_heartbeat=True,
            without_mingle=True,
            without_gossip=True,
            # The web server owns logging and the process's signals.
            loglevel=logging.INFO,
        )
        self._thread = threading.Thread(target=self.worker.start, name="embedded-worker", daemon=True)

    def start(self) -> EmbeddedWorker:
        if not str(self.app.conf.broker_url).startswith("memory://"):
            raise RuntimeError("the embedded worker only serves the in-memory broker of the embedded default")
        # From now on this process sends its tasks to the in-memory broker: the worker thread plays them.
        self.app.conf.task_always_eager = False
        self._thread.start()
        log.info("embedded worker: %d thread(s) consume %s in this process", self.threads, ", ".join(queues.ALL))
        resent = resend_queued_matches()
        if resent:
            log.warning("embedded worker: sent again the %d matches queued before this start", len(resent))
        return self

    def stop(self, timeout: float = 30.0) -> None:
        """Stop taking tasks and wait (up to ``timeout``) for the running ones; a person's seat
        waiting for its answer gives its game back to the queue at once (``matches.human.STOPPING``)."""
        from matches import human

        human.STOPPING.set()
        try:
            self.worker.stop()
            self._thread.join(timeout)
        finally:
            human.STOPPING.clear()  # the seats looked at it while the worker stopped (every WAIT_SLICE)
        self.app.conf.task_always_eager = True

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()
