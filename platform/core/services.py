"""Services of the core app (functions that write)."""

from __future__ import annotations

import platform
import socket

from django.utils import timezone

from .models import WorkerHeartbeat


def worker_heartbeat_record(hostname: str | None = None) -> WorkerHeartbeat:
    """Record that the calling worker is alive; returns the stored heartbeat."""
    beat, _ = WorkerHeartbeat.objects.update_or_create(
        hostname=hostname or socket.gethostname(),
        defaults={"last_seen": timezone.now(), "python_platform": platform.platform()[:255]},
    )
    return beat
