"""The Celery app. Its reliability settings live in settings.py (CELERY_*)."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")

app = Celery("arena")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def _add_worker_steps(app: Celery) -> None:
    from matches.worker import (
        DB_REUSE_TASKS,
        MatchSweepStep,
        WarmSeatsStep,
        WorkerHealthStep,
        WorkerHeartbeatStep,
    )

    # read by Celery's Django fixup under this name only: the database connection is kept from
    # task to task (matches.worker.DB_REUSE_TASKS says why, and what checks it instead)
    app.conf.CELERY_DB_REUSE_MAX = DB_REUSE_TASKS

    app.steps["worker"].add(WorkerHeartbeatStep)
    app.steps["worker"].add(MatchSweepStep)
    app.steps["worker"].add(WarmSeatsStep)
    app.steps["consumer"].add(WorkerHealthStep)


_add_worker_steps(app)
