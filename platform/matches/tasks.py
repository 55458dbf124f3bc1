"""Celery tasks of the matches app: thin shells around services.

``match_play`` is sent to the ``matches`` or ``validation`` queue by
``services.match_enqueue``; it is idempotent because ``services.match_play`` is.
Queues of tasks sent without one are in settings.CELERY_TASK_ROUTES.
"""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

from . import sandboxing, services


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    # The sandbox's InfrastructureError is retried by the service (it requeues the
    # match with a delay); the database being unreachable is retried here.
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=5,
    retry_backoff_max=300,
    retry_jitter=True,
    max_retries=5,
    # every step of services.match_play that reads or writes retries through a broken connection
    # (services.db_retry): the task's first query needs no health check of its own (matches.worker)
    reconnects_itself=True,
)
def match_play(self, match_id: int) -> bool | None:
    # The worker's name: it checks its own health and hands over matches it should avoid.
    worker = "" if self.request.is_eager else (self.request.hostname or "")
    return services.match_play(match_id, worker=worker)


@shared_task
def match_sweep_stuck() -> list[int]:
    return services.match_sweep_stuck()


@shared_task
def sandbox_reap() -> int:
    return sandboxing.reap_sandboxes()
