"""The real services are the ones in use when the environment names them."""

import os

import pytest

pytestmark = pytest.mark.services


@pytest.mark.django_db
def test_database_is_postgresql_when_database_url_says_so():
    from django.db import connection

    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        from testsupport import service_missing

        service_missing("PostgreSQL (DATABASE_URL is not a postgresql:// URL)")
    assert connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        cursor.execute("select version()")
        assert cursor.fetchone()[0].startswith("PostgreSQL")
    # psycopg 3, not psycopg2
    assert type(connection.connection).__module__.startswith("psycopg")


def test_redis_broker_is_used_when_redis_url_is_set(redis_url):
    from django.conf import settings

    if not os.environ.get("REDIS_URL"):
        from testsupport import service_missing

        service_missing("Redis broker (REDIS_URL is not set)")
    assert settings.CELERY_BROKER_URL == os.environ["REDIS_URL"]
    assert settings.CELERY_TASK_ALWAYS_EAGER is False


@pytest.mark.docker
def test_sandbox_image_runs_python_without_network(docker_client):
    from testsupport import SANDBOX_IMAGE

    code = (
        "import json, os, socket; "
        "print(json.dumps({'uid': os.getuid(), 'ifaces': sorted(n for _, n in socket.if_nameindex())}))"
    )
    out = docker_client.containers.run(
        SANDBOX_IMAGE, ["python3", "-c", code], network_mode="none", remove=True
    )
    import json

    info = json.loads(out.decode())
    assert info["uid"] != 0, "the sandbox image must run as a non-root user"
    assert info["ifaces"] == ["lo"]
