"""Issue 20 point 4: on the embedded default (no broker) `serve_embedded` plays tasks in a worker
thread of its own process, so starting a tournament in the admin returns at once and its progress
can be watched as it plays, as with real workers.

The server runs as a real subprocess on its own SQLite database (the embedded default), with
the process sandbox; the organizer starts the tournament through the admin's own action.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SETUP = """
from django.contrib.auth import get_user_model
from bots import services as bot_services
from bots.models import BotVersion
from tournaments_app import services as t

source = b"def agent(observation):\\n    return observation['legal_actions'][0]\\n"
get_user_model().objects.create_superuser("boss", "boss@example.org", "boss-password-1")
tournament = t.tournament_create(name="Embedded Cup", slug="embedded-cup", rules=["players=2", "rounds=1"],
                                 format="round_robin", deals=1, duplicate=False)
for n in range(4):
    owner = get_user_model().objects.create_user(f"owner{n}", password="pw-owner-123")
    bot = bot_services.bot_create(owner=owner, name=f"bot{n}")
    version = bot_services.bot_version_create(bot=bot, filename="bot.py", data=source + f"# {n}\\n".encode(),
                                              validate=False)
    BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.ACTIVE)
    t.entry_add(tournament, bot)
print("TOURNAMENT", tournament.pk)
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _environment(tmp_path: Path) -> dict:
    env = {key: value for key, value in os.environ.items() if key not in ("REDIS_URL", "DATABASE_URL")}
    env.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'arena.sqlite3'}",
        ARENA_VAR_DIR=str(tmp_path / "var"),
        SANDBOX_BACKEND="process",
        SANDBOX_ALLOW_PROCESS="1",
        DEBUG="1",
        PYTHONUNBUFFERED="1",
    )
    return env


def _manage(env: dict, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.slow
def test_starting_a_tournament_on_the_embedded_default_returns_at_once_and_it_plays_in_the_background(
    tmp_path, bwrap_path
):
    env = _environment(tmp_path)
    _manage(env, "migrate", "--noinput")
    pk = int(re.search(r"TOURNAMENT (\d+)", _manage(env, "shell", "-c", SETUP)).group(1))

    port = _free_port()
    log = open(tmp_path / "server.log", "w")
    server = subprocess.Popen(
        [sys.executable, "manage.py", "serve_embedded", f"127.0.0.1:{port}"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    jar = CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                opener.open(f"{base}/healthz", timeout=5).read()
                break
            except OSError:
                assert server.poll() is None, (tmp_path / "server.log").read_text()
                assert time.monotonic() < deadline, "the embedded server did not answer in 60 s"
                time.sleep(0.3)

        def csrf() -> str:
            return next(cookie.value for cookie in jar if cookie.name == "csrftoken")

        def post(path: str, fields: dict) -> tuple[int, str]:
            data = urllib.parse.urlencode({**fields, "csrfmiddlewaretoken": csrf()}, doseq=True).encode()
            request = urllib.request.Request(f"{base}{path}", data=data, headers={"Referer": f"{base}{path}"})
            with opener.open(request, timeout=60) as response:
                return response.status, response.read().decode()

        opener.open(f"{base}/admin/login/", timeout=10).read()
        status, body = post("/admin/login/?next=/admin/", {"username": "boss", "password": "boss-password-1"})
        assert status == 200 and "Log out" in body, body[:500]
        opener.open(f"{base}/admin/tournaments/tournament/", timeout=10).read()

        started = time.monotonic()
        status, body = post(
            "/admin/tournaments/tournament/", {"action": "start", "_selected_action": [str(pk)], "index": "0"}
        )
        took = time.monotonic() - started
        assert status == 200
        # The request only plans and queues: 6 matches of a 4-bot round robin play after it returned.
        assert took < 5, f"starting took {took:.1f} s: the request played the tournament"

        def progress() -> dict:
            with opener.open(f"{base}/tournaments/embedded-cup/progress.json", timeout=10) as response:
                return json.loads(response.read())

        seen = [progress()]
        assert seen[0]["status"] == "running" and seen[0]["done"] < seen[0]["total"], seen[0]
        deadline = time.monotonic() + 240
        while seen[-1]["status"] != "finished":
            assert time.monotonic() < deadline, f"not finished in 240 s: {seen[-1]}"
            assert server.poll() is None, (tmp_path / "server.log").read_text()
            time.sleep(0.5)
            seen.append(progress())
        assert seen[-1]["done"] == seen[-1]["total"] == 6
        # The page showed it moving: counts between none and all were seen on the way.
        assert len({state["done"] for state in seen}) >= 2
    finally:
        os.killpg(server.pid, signal.SIGINT)
        try:
            server.wait(timeout=40)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()
    assert "tasks play in the background" in (tmp_path / "server.log").read_text()


def _serve(env: dict, tmp_path: Path, name: str) -> tuple[subprocess.Popen, Path]:
    """Start serve_embedded on a free port and wait until it answers."""
    port = _free_port()
    path = tmp_path / f"{name}.log"
    server = subprocess.Popen(
        [sys.executable, "manage.py", "serve_embedded", f"127.0.0.1:{port}"],
        cwd=ROOT, env=env, stdout=open(path, "w"), stderr=subprocess.STDOUT, start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).read()
            return server, path
        except OSError:
            assert server.poll() is None, path.read_text()
            assert time.monotonic() < deadline, "the embedded server did not answer in 60 s"
            time.sleep(0.3)


def _kill(server: subprocess.Popen) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()


@pytest.mark.slow
def test_sigterm_stops_the_embedded_server_as_ctrl_c_does(tmp_path):
    # A service manager (or `kill`) stops with SIGTERM: the server must end its worker (running
    # tasks finish) and exit 0, not die at once with matches left running on their leases.
    env = _environment(tmp_path)
    _manage(env, "migrate", "--noinput")
    server, log = _serve(env, tmp_path, "sigterm")
    try:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=40) == 0, log.read_text()
    finally:
        _kill(server)
    text = log.read_text()
    assert "stopping: the worker finishes its running tasks" in text and text.rstrip().endswith("stopped"), text


QUEUED = """
from matches.services import match_create
match = match_create(kind="challenge", rules={"players": 2, "rounds": 1}, seats=["first", "random"], enqueue=False)
print("MATCH", match.pk)
"""
STATUS = "from matches.models import Match; print('STATUS', Match.objects.get(pk={pk}).status)"


@pytest.mark.slow
def test_a_match_queued_before_the_embedded_server_starts_plays_at_once(tmp_path, bwrap_path):
    # The in-memory broker's messages die with the server that held them: a match still queued
    # when it stopped (here: queued with no message at all) must be sent again when it starts,
    # not after the sweeper's RESEND_QUEUED_AFTER (30 minutes).
    env = _environment(tmp_path)
    _manage(env, "migrate", "--noinput")
    pk = int(re.search(r"MATCH (\d+)", _manage(env, "shell", "-c", QUEUED)).group(1))
    server, log = _serve(env, tmp_path, "resend")
    try:
        deadline = time.monotonic() + 90
        while (status := re.search(r"STATUS (\w+)", _manage(env, "shell", "-c", STATUS.format(pk=pk))).group(1)) != "done":
            assert time.monotonic() < deadline, f"match {pk} still {status} 90 s after the start\n{log.read_text()}"
            assert server.poll() is None, log.read_text()
            time.sleep(2)
    finally:
        os.killpg(server.pid, signal.SIGINT)
        try:
            server.wait(timeout=40)
        except subprocess.TimeoutExpired:
            _kill(server)
    assert "sent again the 1 matches queued before this start" in log.read_text()
