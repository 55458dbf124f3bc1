"""Without a broker, `serve_embedded` runs the beat schedule in-process."""

import threading
import time

import pytest
from core.models import WorkerHeartbeat
from django.core.management import CommandError, call_command

from web.management.commands.serve_embedded import periodic_entries, run_due

SCHEDULE = {
    "beat-test": {"task": "core.tasks.worker_heartbeat", "schedule": 0.05, "kwargs": {"hostname": "embedded"}},
    "broken": {"task": "core.tasks.worker_heartbeat", "schedule": 0.05, "args": ("too", "many", "args")},
}


# transaction=True: like the real beat thread, no transaction wraps the tasks
# (close_old_connections closes a connection left inside one).
@pytest.mark.django_db(transaction=True)
def test_periodic_tasks_run_one_interval_after_start_and_a_failing_one_stops_nothing(settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    entries = periodic_entries(SCHEDULE)
    last_run: dict = {}
    stop = threading.Event()
    wait = run_due(entries, last_run, stop)
    assert not WorkerHeartbeat.objects.filter(hostname="embedded").exists()  # not before one interval
    assert 0.5 <= wait <= 60
    time.sleep(0.1)
    run_due(entries, last_run, stop)
    assert WorkerHeartbeat.objects.filter(hostname="embedded").count() == 1


def test_serve_embedded_refuses_when_a_broker_is_configured():
    from celery import current_app

    broker = current_app.conf.broker_url
    current_app.conf.broker_url = "redis://127.0.0.1:6379/0"
    try:
        with pytest.raises(CommandError, match="celery -A arena beat"):
            call_command("serve_embedded", "127.0.0.1:0")
    finally:
        current_app.conf.broker_url = broker
