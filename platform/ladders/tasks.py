"""Celery tasks of the ladders app: thin shells around services (beat runs them, docs/ratings.md)."""

from __future__ import annotations

import random

from celery import shared_task

from . import services


@shared_task
def ladder_matchmake_all(seed: int | None = None) -> dict[str, int]:
    """Beat's matchmaking run; ``seed`` makes its pairings and match seeds reproducible.

    It also asks for the refit of any ladder whose stored ratings are behind its results
    (a refit request lost with the broker).
    """
    created = services.ladder_matchmake_all(rng=None if seed is None else random.Random(seed))
    services.ladder_refit_stale()
    return created


@shared_task
def ladder_refit(ladder_id: int, force: bool = False) -> bool:
    """Refit one ladder's ratings (maintenance queue; queued after each result, debounced by the service)."""
    return services.ladder_refit(ladder_id, force=force)
