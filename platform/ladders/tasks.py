"""Celery tasks of the ladders app: thin shells around services (beat runs them, docs/ratings.md)."""

from __future__ import annotations

import random

from celery import shared_task

from . import services


@shared_task
def ladder_matchmake_all(seed: int | None = None) -> dict[str, int]:
    """Beat's matchmaking run; ``seed`` makes its pairings and match seeds reproducible."""
    return services.ladder_matchmake_all(rng=None if seed is None else random.Random(seed))
