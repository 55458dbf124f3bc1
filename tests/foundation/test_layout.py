"""The project layout keeps the standard library's `platform` module reachable."""

import platform
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from testsupport import wait_for

ROOT = Path(__file__).resolve().parents[2]


def _is_stdlib_platform(module) -> bool:
    stdlib = Path(sysconfig.get_paths()["stdlib"]).resolve()
    return Path(module.__file__).resolve().parent == stdlib and callable(module.python_version)


def test_platform_folder_is_a_plain_folder_not_a_package():
    assert (ROOT / "platform" / "arena" / "settings.py").is_file()
    assert not (ROOT / "platform" / "__init__.py").exists()


def test_import_platform_inside_django_is_the_standard_library():
    import django
    from django.conf import settings

    django.setup()
    assert settings.ROOT_URLCONF == "arena.urls"
    assert _is_stdlib_platform(platform)


def test_import_platform_in_manage_py_process_is_the_standard_library():
    code = (
        "import django, platform, sys; django.setup(); "
        "print(platform.__file__); print(platform.python_version())"
    )
    out = subprocess.run(
        [sys.executable, "manage.py", "shell", "-v", "0", "-c", code],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()
    assert Path(out[0]).resolve().parent == Path(sysconfig.get_paths()["stdlib"]).resolve()
    assert out[1] == platform.python_version()


@pytest.mark.services
def test_celery_worker_runs_task_through_redis_and_sees_stdlib_platform(celery_worker_process):
    from core.models import WorkerHeartbeat
    from core.tasks import worker_heartbeat

    worker_heartbeat.delay("layout-test-worker")
    wait_for("the heartbeat task", WorkerHeartbeat.objects.filter(hostname="layout-test-worker").exists, 30,
             celery_worker_process)
    beat = WorkerHeartbeat.objects.get(hostname="layout-test-worker")
    # platform.platform() from the stdlib looks like "Linux-6.1.0-...-x86_64-with-glibc2.36"
    assert beat.python_platform == platform.platform()
    assert "Task core.tasks.worker_heartbeat[" in celery_worker_process.log


def test_test_module_basenames_are_unique():
    # pytest's default import mode imports test files by basename: two
    # test_x.py in different folders stop the whole run at collection.
    names = [p.name for p in (ROOT / "tests").rglob("test_*.py")]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    assert duplicates == [], f"rename these test modules, their basenames clash: {duplicates}"


@pytest.mark.services
def test_every_worker_records_its_own_heartbeat_without_any_task(celery_worker_process):
    import os

    from core.models import WorkerHeartbeat

    name_prefix = f"test-{os.getpid()}@"  # the name start_worker_process gives the worker
    wait_for("the worker's own heartbeat", WorkerHeartbeat.objects.filter(hostname__startswith=name_prefix).exists,
             30, celery_worker_process)
    beat = WorkerHeartbeat.objects.get(hostname__startswith=name_prefix)
    assert beat.python_platform == platform.platform()
