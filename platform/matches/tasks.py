"""Celery tasks of the matches app: thin shells around services.

``match_play`` is sent to the ``matches`` or ``validation`` queue by
``services.match_enqueue``; it is idempotent because ``services.match_play`` is.
"""

from __future__ import annotations

import random

from celery import shared_task
from django.db import InterfaceError, OperationalError

from arena import queues
from engine.faults import InfrastructureError

from . import services

#: platform trouble worth retrying; a bot's fault is a result, never an error here
RETRYABLE = (InfrastructureError, OperationalError, InterfaceError)


@shared_task(bind=True, queue=queues.MATCHES, acks_late=True, reject_on_worker_lost=True, max_retries=5)
def match_play(self, match_id: int) -> bool:
    try:
        return services.match_play(match_id)
    except RETRYABLE as exc:
        if self.request.retries >= self.max_retries:
            services.match_fail(match_id, None, f"platform error, gave up after {self.request.retries} retries: {exc}")
            raise
        backoff = min(300, 5 * 2**self.request.retries) * random.uniform(0.8, 1.2)
        raise self.retry(exc=exc, countdown=backoff) from exc


@shared_task(queue=queues.MAINTENANCE)
def match_sweep_stuck() -> list[int]:
    return services.match_sweep_stuck()
