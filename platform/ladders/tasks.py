"""Celery tasks of the ladders app: thin shells around services (beat runs them, docs/ratings.md)."""

from __future__ import annotations

from celery import shared_task

from . import services


@shared_task
def ladder_matchmake_all() -> dict[str, int]:
    return services.ladder_matchmake_all()
