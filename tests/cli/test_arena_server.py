"""``arena login`` remembers its server, ``arena logout`` revokes and forgets, and the README's recipe
works exactly as written: against pytest-django's live server, with no $ARENA_SERVER set."""

from __future__ import annotations

import json
import re
import shlex
import stat
from pathlib import Path

import pytest
from testsupport import make_user

from api.models import ApiToken
from api.services import token_create
from arena_cli import config
from arena_cli.main import main
from bots.models import Bot, BotVersion

README = Path(__file__).resolve().parents[2] / "README.md"
#: the README's placeholder for the reader's server
PLACEHOLDER_SERVER = "https://your-arena.example"


@pytest.fixture
def arena(tmp_path, monkeypatch, capsys, settings, transactional_db):
    """Run ``arena`` in-process with a config folder of its own and no server in the environment."""
    from django.core.cache import cache

    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    cache.clear()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("ARENA_TOKEN", raising=False)
    monkeypatch.delenv("ARENA_SERVER", raising=False)

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    yield run
    cache.clear()


def test_login_makes_its_server_the_default_of_later_commands(arena, live_server, tmp_path):
    user = make_user("carol")
    bot = tmp_path / "bot.py"
    bot.write_text("def agent(observation, configuration):\n    return observation['legal_actions'][0]\n")
    _, key = token_create(user=user, name="cli")
    code, out, err = arena("login", "--server", live_server.url + "/", "--token", key)
    assert code == 0, err
    assert f"later arena commands use {live_server.url}" in out
    stored = json.loads(config.config_path().read_text())
    assert stored["default"] == live_server.url
    assert stat.S_IMODE(config.config_path().stat().st_mode) == 0o600

    # no --server: the command goes to the remembered server, with its token (it lists carol's bots)
    code, out, err = arena("submit", str(bot), "--bot", "nobody")
    assert code == 2
    assert "you have no bot named 'nobody' (your bots: none yet)" in err
    # an explicit --server still wins
    code, out, err = arena("matches", "--server", "http://127.0.0.1:9")
    assert code == 2 and "cannot reach http://127.0.0.1:9" in err


def test_logout_revokes_the_token_on_the_server_and_forgets_it(arena, live_server):
    user = make_user("carol")
    _, other = token_create(user=user, name="laptop")  # another token of carol's stays
    _, key = token_create(user=user, name="cli")
    assert arena("login", "--server", live_server.url, "--token", key)[0] == 0

    code, out, err = arena("logout")
    assert (code, err) == (0, "")
    assert out.startswith(f"logged out of {live_server.url}: token revoked and removed from ")
    assert list(ApiToken.objects.filter(user=user).values_list("name", flat=True)) == ["laptop"]
    stored = json.loads(config.config_path().read_text())
    assert stored == {"servers": {}}  # no token, no default
    assert stat.S_IMODE(config.config_path().stat().st_mode) == 0o600

    code, out, err = arena("logout", "--server", live_server.url)
    assert code == 0 and "not logged in to" in out
    # with the default gone, commands go to the built-in default again
    assert config.resolve_server(None) == config.DEFAULT_SERVER


def test_logout_forgets_the_token_even_when_the_server_is_gone(arena, tmp_path):
    config.store_token("http://127.0.0.1:9", "carol", "ua_gone")
    code, out, err = arena("logout")
    assert code == 0
    assert "could not be revoked on the server" in err and "profile page" in err
    assert "logged out of http://127.0.0.1:9: token removed" in out
    assert config.stored_token("http://127.0.0.1:9") is None


def _recipe_block(text: str) -> list[str]:
    """The README's command block for bot authors: the fenced block that runs ``arena login``."""
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, flags=re.S | re.M):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        if any(line.startswith(".venv/bin/arena login") for line in lines):
            return lines
    raise AssertionError("README.md has no block with `.venv/bin/arena login`")


def _starter_bot(text: str) -> str:
    """The README's bot: its first ```python block."""
    return re.search(r"^```python\n(.*?)^```", text, flags=re.S | re.M)[1]


@pytest.mark.slow
def test_the_readme_recipe_works_exactly_as_written(arena, live_server, tmp_path, monkeypatch, eager_tasks):
    """Each line of the README's block runs as written, in a folder holding the README's bot as
    mybot.py; only the placeholder server becomes the live server. Validation plays for real."""
    text = README.read_text(encoding="utf-8")
    lines = _recipe_block(text)
    make_user("carol")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mybot.py").write_text(_starter_bot(text))
    monkeypatch.setattr("builtins.input", lambda prompt: "carol")
    monkeypatch.setattr("getpass.getpass", lambda prompt: "correct horse battery")
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url, *a, **k: opened.append(url) or True)

    outputs = []
    for line in lines:
        argv = shlex.split(line.replace(PLACEHOLDER_SERVER, live_server.url))
        assert argv[0] == ".venv/bin/arena", f"not an arena command: {line}"
        code, out, err = arena(*argv[1:])
        assert code == 0, f"{line}\n{out}{err}"
        outputs.append(out)

    assert any(line.startswith(".venv/bin/arena submit") for line in lines)
    bot = Bot.objects.get(owner__username="carol")
    assert bot.versions.get().status == BotVersion.Status.ACTIVE
    assert any("passed validation and is active" in out for out in outputs)
    if any(" replay view " in line for line in lines):  # the page was opened in the browser
        assert opened and opened[0].startswith("file://") and opened[0].endswith(".html")
