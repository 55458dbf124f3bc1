"""Services of the core app (functions that write)."""

from __future__ import annotations

import platform
import socket

from django.db.models.functions import Now

from .models import WorkerHeartbeat


def worker_heartbeat_record(
    hostname: str | None = None, *, healthy: bool = True, reason: str = "", consuming: bool = True
) -> WorkerHeartbeat:
    """Record that the calling worker is alive, on the database's clock, with its health
    (matches.worker); returns the stored heartbeat."""
    beat, _ = WorkerHeartbeat.objects.update_or_create(
        hostname=hostname or socket.gethostname(),
        defaults={
            "last_seen": Now(), "python_platform": platform.platform()[:255],
            "healthy": healthy, "health_reason": reason[:2000], "consuming": consuming,
        },
    )
    beat.refresh_from_db(fields=["last_seen"])
    return beat
