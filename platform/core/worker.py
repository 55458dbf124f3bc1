"""A worker bootstep that records, from every worker, that it is alive.

Each worker (not just the one that happens to take a task) writes its own
``WorkerHeartbeat`` at start and then every ``WORKER_HEARTBEAT_SECONDS``
from the worker's timer, so the queue page can count the workers alive.
With the solo pool the timer waits while a match plays; a prefork worker's
main process keeps beating while its children play.
"""

from __future__ import annotations

import logging

from celery import bootsteps

log = logging.getLogger(__name__)


class WorkerHeartbeatStep(bootsteps.StartStopStep):
    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker, **kwargs):
        super().__init__(worker, **kwargs)
        self.timer_ref = None

    def start(self, worker):
        from django.conf import settings

        self.beat(worker)
        self.timer_ref = worker.timer.call_repeatedly(
            settings.WORKER_HEARTBEAT_SECONDS, self.beat, (worker,), priority=10
        )

    def stop(self, worker):
        if self.timer_ref is not None:
            self.timer_ref.cancel()
            self.timer_ref = None

    def beat(self, worker):
        from django.db import close_old_connections

        from .services import worker_heartbeat_record

        try:
            close_old_connections()
            worker_heartbeat_record(worker.hostname)
        except Exception:  # a missed beat must never take the worker down
            log.exception("worker heartbeat not recorded")
