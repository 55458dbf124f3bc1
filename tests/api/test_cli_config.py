"""The client's pieces that need no server: config file, server URL, multipart encoding."""

from __future__ import annotations

import email.parser
import email.policy
import stat

import pytest

from arena_cli import config
from arena_cli.client import encode_multipart
from arena_cli.main import main


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("ARENA_TOKEN", raising=False)
    monkeypatch.delenv("ARENA_SERVER", raising=False)
    return tmp_path


def test_tokens_are_kept_per_server_in_a_private_file(home):
    config.store_token("http://a.example", "ann", "ua_a")
    config.store_token("https://b.example", "ben", "ua_b")
    path = home / "uno-arena" / "config.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert config.stored_token("http://a.example") == "ua_a"
    assert config.stored_token("https://b.example") == "ua_b"
    assert config.stored_token("http://c.example") is None
    assert not [p.name for p in path.parent.iterdir() if p.name != "config.json"]  # no temporary file left


def test_arena_token_variable_overrides_the_stored_one(home, monkeypatch):
    config.store_token("http://a.example", "ann", "ua_a")
    monkeypatch.setenv("ARENA_TOKEN", "ua_env")
    assert config.stored_token("http://a.example") == "ua_env"


def test_server_comes_from_option_then_environment_then_default(home, monkeypatch):
    assert config.resolve_server(None) == "http://127.0.0.1:8000"
    monkeypatch.setenv("ARENA_SERVER", "https://arena.example/")
    assert config.resolve_server(None) == "https://arena.example"
    assert config.resolve_server("http://127.0.0.1:9000") == "http://127.0.0.1:9000"


def test_a_server_that_is_not_http_is_one_line_and_exit_2(home, capsys):
    assert main(["matches", "--server", "file:///etc/passwd"]) == 2
    assert capsys.readouterr().err == "arena: error: server must be an http:// or https:// URL, got 'file:///etc/passwd'\n"


def test_a_broken_config_file_is_one_line_and_exit_2(home, capsys):
    path = home / "uno-arena" / "config.json"
    path.parent.mkdir()
    path.write_text("{not json")
    assert main(["matches", "--bot", "mine", "--server", "http://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"arena: error: cannot read {path}") and err.count("\n") == 1


def test_multipart_keeps_a_hostile_filename_inside_its_header():
    body, content_type = encode_multipart({"note": "x"}, {"file": ('evil"\r\nX-Injected: 1.py', b"\x00data")})
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    parts = list(message.iter_parts())
    assert [p.get_param("name", header="content-disposition") for p in parts] == ["note", "file"]
    upload = parts[1]
    assert "X-Injected" not in upload  # no header smuggled in
    assert upload.get_filename() == "evil%22%0D%0AX-Injected: 1.py"
    assert upload.get_payload(decode=True) == b"\x00data"


def test_matches_json_of_an_unreachable_server_never_prints_a_traceback(home, capsys):
    assert main(["matches", "--json", "--server", "http://127.0.0.1:9"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
