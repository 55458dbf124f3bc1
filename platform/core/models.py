"""Site-wide data: which workers are alive."""

from django.db import models


class WorkerHeartbeat(models.Model):
    """The last time a Celery worker answered, shown on the queue page."""

    hostname = models.CharField(max_length=255, unique=True)
    last_seen = models.DateTimeField()
    # What `platform` resolved to inside the worker: proves the stdlib module
    # is not shadowed by the project's platform/ folder.
    python_platform = models.CharField(max_length=255, blank=True)
    # The worker's own check before taking matches (matches.worker.worker_health): Docker engine,
    # sandbox image, seats' folder. Unhealthy, it stops consuming the match queues.
    healthy = models.BooleanField(default=True)
    health_reason = models.TextField(blank=True)
    consuming = models.BooleanField(default=True)

    class Meta:
        ordering = ["-last_seen"]

    def __str__(self) -> str:
        return f"{self.hostname} ({self.last_seen:%Y-%m-%d %H:%M:%S})"
