"""The platform image (deploy/Dockerfile) runs as deploy/compose.yaml runs it.

Built by ``deploy/build-image.sh --offline`` (CI does it before the tests).
The containers use the host's network to reach this machine's PostgreSQL and
Redis, and the worker the host's Docker engine, as compose's worker does.
"""

from __future__ import annotations

import os
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from composefile import load, raw
from testsupport import service_missing, service_urls, validated_on_worker, wait_for

pytestmark = [pytest.mark.services, pytest.mark.docker, pytest.mark.slow]

BOT = b"""def agent(observation, configuration):
    return observation["legal_actions"][-1]
# uploaded by the platform image test
"""
PLATFORM_IMAGE = os.environ.get("PLATFORM_IMAGE", "uno-arena:latest")
COMPOSE = raw()
# What compose's .env must give (deploy/compose.yaml); the values are the test's own.
PRODUCTION_ENV = {
    **{k: v for k, v in COMPOSE["x-platform"]["environment"].items() if not v.startswith("${")},
    "SECRET_KEY": "image-test-only-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ",
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
}


class ContainerLog:
    """A container's output as ``wait_for`` shows a worker's log."""

    def __init__(self, container):
        self.container = container

    @property
    def log(self) -> str:
        return self.container.logs().decode(errors="replace")


@pytest.fixture
def platform_image(docker_client):
    from docker.errors import ImageNotFound

    try:
        docker_client.images.get(PLATFORM_IMAGE)
    except ImageNotFound:
        service_missing(f"platform image {PLATFORM_IMAGE} (build it: deploy/build-image.sh --offline)")
    return PLATFORM_IMAGE


@pytest.fixture
def containers(docker_client):
    """Start containers of the platform image; all are removed at the end."""
    started = []

    def run(command, environment, **kwargs):
        container = docker_client.containers.run(
            PLATFORM_IMAGE, command, environment=environment, network_mode="host", detach=True, **kwargs
        )
        started.append(container)
        return container

    yield run
    for container in started:
        container.remove(force=True)


@pytest.fixture
def fresh_database(db):
    """The URL of a new, empty PostgreSQL database, dropped at the end."""
    import psycopg

    database_url, _ = service_urls()
    base, _, _ = database_url.rpartition("/")
    name = f"arena_image_{os.getpid()}"
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    yield f"{base}/{name}"
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def finished(container, timeout: float = 120) -> tuple[int, str]:
    status = container.wait(timeout=timeout)
    return status["StatusCode"], container.logs().decode(errors="replace")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def fetch(url: str, **headers) -> tuple[int, dict, bytes]:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(urllib.request.Request(url, headers=headers), timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_the_image_migrates_passes_the_deploy_checks_and_serves_the_site(
    platform_image, containers, fresh_database
):
    env = {**PRODUCTION_ENV, "DATABASE_URL": fresh_database, "REDIS_URL": service_urls()[1]}

    code, out = finished(containers(COMPOSE["services"]["migrate"]["command"], env))
    assert code == 0, out
    assert "Applying matches.0001_initial... OK" in out
    code, out = finished(containers(["python", "manage.py", "check", "--deploy"], env))
    assert (code, out.strip()) == (0, "System check identified no issues (0 silenced)."), out

    port = free_port()
    # compose's web command is the image's own CMD; only the port differs here
    web = containers(["gunicorn", "arena.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "2"], env)
    assert web.client.images.get(PLATFORM_IMAGE).attrs["Config"]["User"] == "arena"
    site = f"http://127.0.0.1:{port}"
    wait_for("gunicorn to listen", lambda: "Listening at" in ContainerLog(web).log, 60, ContainerLog(web))

    # behind the proxy compose expects (SECURE_PROXY_SSL_HEADER), plain HTTP goes to HTTPS
    status, headers, _ = fetch(f"{site}/ladders/")
    assert status == 301 and headers["Location"] == f"https://127.0.0.1:{port}/ladders/"
    status, headers, body = fetch(f"{site}/", **{"X-Forwarded-Proto": "https"})
    assert status == 200, body[:500]
    page = body.decode()
    assert "<title>Home · Uno Arena" in page
    assert "Strict-Transport-Security" in headers
    # the static files were collected at build time and are served by the app (WhiteNoise)
    stylesheet = page.split('href="/static/', 1)[1].split('"', 1)[0]
    status, headers, body = fetch(f"{site}/static/{stylesheet}", **{"X-Forwarded-Proto": "https"})
    assert status == 200 and headers["Content-Type"].startswith("text/css") and len(body) > 1000
    assert "max-age=315360000" in headers.get("Cache-Control", "")
    status, _, _ = fetch(f"{site}/no-such-page/", **{"X-Forwarded-Proto": "https"})
    assert status == 404


@pytest.fixture
def seats_folder():
    """A short folder for the seats (a Unix socket's path is at most 107 bytes), removed at the end."""
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="arena-seats-")
    yield Path(folder)
    shutil.rmtree(folder, ignore_errors=True)


def test_a_worker_of_the_image_validates_a_bot_and_plays_a_match_in_docker_sandboxes(
    platform_image, containers, celery_worker_factory, seats_folder
):
    from arena import queues
    from bots.models import BotVersion
    from engine.rules import Rules
    from matches import services as match_services
    from matches.models import Match

    database_url, redis_url = service_urls()
    seats = seats_folder
    # compose's worker service as a worker host's deploy/.env makes it (the values the test's own)
    host_env = {
        "SECRET_KEY": PRODUCTION_ENV["SECRET_KEY"], "ALLOWED_HOSTS": PRODUCTION_ENV["ALLOWED_HOSTS"],
        "DATABASE_URL": database_url, "REDIS_URL": redis_url,
        "HOST_NAME": f"image-{os.getpid()}", "SEATS_DIR": str(seats),
    }
    services = load(host_env)["services"]
    worker_service = services["worker"]
    command = worker_service["command"]
    play_command = services["play-worker"]["command"]
    # compose's workers serve every queue the platform sends to, human games on slots of their own
    assert set(command[command.index("-Q") + 1].split(",")) == set(queues.MATCH_WORK)
    assert play_command[play_command.index("-Q") + 1] == queues.PLAY
    assert set(queues.MATCH_WORK) | {queues.PLAY} == set(queues.ALL)
    env = worker_service["environment"]
    assert env["SANDBOX_WORK_DIR"] == str(seats)
    assert env["WORKER_CONCURRENCY"] == ""  # compose's default: one match per core (the command below asks for 1)
    volumes = {}
    for mount in worker_service["volumes"]:
        source, target = mount.split(":")
        volumes[source] = {"bind": target, "mode": "rw"}
    assert volumes[str(seats)]["bind"] == str(seats)  # same path both sides
    worker = containers(command + ["--concurrency", "1"], env, user=worker_service["user"], volumes=volumes)
    log = ContainerLog(worker)
    wait_for("the worker to be ready", lambda: " ready." in log.log, 90, log)

    version = validated_on_worker("ines", "image-bot", BOT, log)
    assert version.status == BotVersion.Status.ACTIVE, version.rejection_reason
    match = match_services.match_create(
        kind=Match.Kind.CHALLENGE, rules=Rules.parse(["players=3", "rounds=1"]),
        seats=[version, "greedy", "random"], seed=5,
    )
    wait_for(
        "the challenge match",
        lambda: Match.objects.filter(pk=match.pk, status__in=("done", "failed")).exists(),
        120, log,
    )
    match.refresh_from_db()
    assert match.status == Match.Status.DONE, match.error
    assert match.timings["backend"] == "docker"
    assert match.replay_gz
    # at a graceful stop (compose's `stop`: SIGTERM) the worker removes its seats, warm ones too
    worker.stop(timeout=60)
    assert worker.wait(timeout=30)["StatusCode"] == 0, log.log[-3000:]
    assert list(seats.iterdir()) == []
    mounting = [
        row["Id"][:12] for row in worker.client.api.containers(all=True, filters={"label": "uno-arena.installation"})
        if any(m.get("Source", "").startswith(f"{seats}/") for m in row.get("Mounts", []))
    ]
    assert mounting == [], f"seat containers of the stopped worker left: {mounting}"
