"""Celery tasks of the core app: thin shells around services."""

from celery import shared_task

from . import services


@shared_task
def worker_heartbeat(hostname: str | None = None) -> int:
    return services.worker_heartbeat_record(hostname).pk
