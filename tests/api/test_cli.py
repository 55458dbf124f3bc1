"""The ``arena`` client commands against a live server: login, submit, matches, replay."""

from __future__ import annotations

import gzip
import json
import stat
import threading
import time

import pytest
from api_helpers import CRASHING_BOT, good_bot, make_bot, make_user

from api.models import ApiToken
from api.services import token_create
from arena_cli import config
from arena_cli.main import main
from bots.models import BotVersion
from matches.services import match_create


@pytest.fixture
def cli(tmp_path, monkeypatch, live_server, transactional_db, capsys):
    """Run ``arena`` in-process against the live server, with a config folder of its own."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("ARENA_TOKEN", raising=False)
    monkeypatch.setenv("ARENA_SERVER", live_server.url)

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def user(transactional_db):
    return make_user("carol")


def login(cli, user) -> str:
    _, key = token_create(user=user, name="cli")
    code, out, err = cli("login", "--token", key)
    assert code == 0, err
    return key


def test_login_with_token_stores_it_readable_only_by_you(cli, user, live_server):
    key = login(cli, user)
    path = config.config_path()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    stored = json.loads(path.read_text())
    assert stored["servers"][live_server.url] == {"username": "carol", "token": key}


def test_login_with_password_creates_a_token(cli, user, monkeypatch):
    monkeypatch.setattr("builtins.input", lambda prompt: "carol")
    monkeypatch.setattr("getpass.getpass", lambda prompt: "correct horse battery")
    code, out, err = cli("login")
    assert code == 0, err
    assert "logged in" in out and "as carol" in out
    assert ApiToken.objects.filter(user=user).count() == 1


def test_login_with_a_wrong_password_is_one_line_and_exit_2(cli, user, monkeypatch):
    monkeypatch.setattr("getpass.getpass", lambda prompt: "wrong")
    code, out, err = cli("login", "--username", "carol")
    assert code == 2
    assert err.count("\n") == 1 and "400 wrong username or password" in err
    assert not config.config_path().exists()


def test_unreachable_server_is_one_line_and_exit_2(cli):
    code, out, err = cli("matches", "--server", "http://127.0.0.1:9")
    assert code == 2
    assert err.strip().startswith("arena: error: cannot reach http://127.0.0.1:9")
    assert "Traceback" not in err and err.count("\n") == 1


def test_submit_refuses_a_broken_file_before_uploading(cli, user, tmp_path):
    login(cli, user)
    broken = tmp_path / "bot.py"
    broken.write_text("def not_agent(): pass\n")
    code, out, err = cli("submit", str(broken), "--bot", "alpha", "--create")
    assert code == 2
    assert "agent" in err and str(broken) in err
    assert not user.bots.exists()  # nothing was created or uploaded


def test_submit_without_login_says_how_to_log_in(cli, tmp_path):
    path = tmp_path / "bot.py"
    path.write_bytes(good_bot("x"))
    code, out, err = cli("submit", str(path), "--bot", "alpha")
    assert code == 2 and "arena login" in err


def test_submit_to_an_unknown_bot_lists_yours(cli, user, tmp_path):
    login(cli, user)
    make_bot(user, "known", status=None)
    path = tmp_path / "bot.py"
    path.write_bytes(good_bot("x"))
    code, out, err = cli("submit", str(path), "--bot", "unknown")
    assert code == 2 and "no bot named 'unknown'" in err and "known" in err


@pytest.mark.slow
def test_submit_waits_for_validation_and_reports_active(cli, user, tmp_path, monkeypatch):
    """Validation is played by a stand-in worker: a thread that marks the version active after a moment."""
    monkeypatch.setattr("validation.services.bot_version_validate", lambda version: None)
    login(cli, user)
    path = tmp_path / "bot.py"
    path.write_bytes(good_bot("waits"))

    def worker():
        deadline = time.monotonic() + 15
        while not BotVersion.objects.filter(bot__owner=user).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # the client polls at least once while the version is validating
        BotVersion.objects.filter(bot__owner=user).update(status="active")

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        code, out, err = cli("submit", str(path), "--bot", "alpha", "--create", "--timeout", "20")
    finally:
        thread.join()
    assert code == 0, err
    assert "created bot carol/alpha" in out
    assert "uploaded carol/alpha v1" in out
    assert "carol/alpha v1 passed validation and is active" in out


@pytest.mark.slow
def test_submit_gives_up_waiting_after_the_timeout(cli, user, tmp_path, monkeypatch):
    monkeypatch.setattr("validation.services.bot_version_validate", lambda version: None)
    login(cli, user)
    path = tmp_path / "bot.py"
    path.write_bytes(good_bot("slow"))
    code, out, err = cli("submit", str(path), "--bot", "alpha", "--create", "--timeout", "1")
    assert code == 1
    assert "still validating after 1 s" in err


@pytest.mark.slow
def test_submit_of_a_crashing_bot_prints_reason_and_log_and_fails(cli, user, tmp_path):
    """The real path: the validation match plays in the server (tasks run in-process) and rejects it."""
    from celery import current_app

    login(cli, user)
    path = tmp_path / "crash.py"
    path.write_bytes(CRASHING_BOT)
    eager = current_app.conf.task_always_eager
    current_app.conf.task_always_eager = True
    try:
        code, out, err = cli("submit", str(path), "--bot", "crashy", "--create")
    finally:
        current_app.conf.task_always_eager = eager
    assert code == 1, err
    assert "carol/crashy v1 was rejected: " in out and "my bot is broken" in out
    assert "--- validation log ---" in out and "thinking hard" in out


def _done_match(version):
    match = match_create(kind="challenge", rules={"players": 2, "rounds": 1}, seats=[version, "first"], enqueue=False)
    match.status = "done"
    match.replay_gz = gzip.compress(json.dumps({"version": 1, "games": [{"index": 0}]}).encode())
    match.save()
    match.seats.filter(seat=0).update(rank=1)
    match.seats.filter(seat=1).update(rank=2)
    return match


def test_matches_table_json_and_filters(cli, user):
    login(cli, user)
    bot = make_bot(user, "alpha")
    done = _done_match(bot.versions.get())
    queued = match_create(kind="challenge", rules={"players": 2}, seats=["first", "random"], enqueue=False)

    code, out, err = cli("matches")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["ID", "KIND", "STATUS", "QUEUED", "(UTC)", "SEATS"]
    assert lines[1].split()[:3] == [str(queued.pk), "challenge", "queued"]
    assert "carol/alpha v1 #1" in lines[2]

    code, out, err = cli("matches", "--status", "done", "--json")
    assert [m["id"] for m in json.loads(out)] == [done.pk]
    code, out, err = cli("matches", "--bot", "alpha", "--json")
    assert [m["id"] for m in json.loads(out)] == [done.pk]
    code, out, err = cli("matches", "--limit", "1", "--json")
    assert len(json.loads(out)) == 1


def test_replay_is_written_to_the_file(cli, user, tmp_path):
    bot = make_bot(user, "alpha")
    done = _done_match(bot.versions.get())
    target = tmp_path / "replay.json"
    code, out, err = cli("replay", str(done.pk), "-o", str(target))
    assert code == 0, err
    assert json.loads(target.read_text()) == {"version": 1, "games": [{"index": 0}]}
    assert f"match {done.pk}" in out


def test_replay_of_an_unknown_match_is_exit_2_and_writes_nothing(cli, tmp_path):
    target = tmp_path / "replay.json"
    code, out, err = cli("replay", "987654", "-o", str(target))
    assert code == 2
    assert "404" in err and "987654" in err
    assert not target.exists()


def test_login_with_a_revoked_token_stores_nothing(cli, user):
    token, key = token_create(user=user, name="old")
    token.delete()
    code, out, err = cli("login", "--token", key)
    assert code == 2
    assert "401 invalid or revoked token" in err
    assert not config.config_path().exists()
