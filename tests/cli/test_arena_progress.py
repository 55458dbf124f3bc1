"""The progress line: drawn on a terminal only, erased before the result."""

from __future__ import annotations

import io
import json

from arena_cli.main import main
from arena_cli.progress import Progress


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_bar_shows_done_of_total_on_a_terminal():
    stream = FakeTerminal()
    bar = Progress(4, label="x ", stream=stream)
    bar.update(4)
    assert "[" + "#" * 30 + "] 4/4" in stream.getvalue()
    bar.close()
    assert stream.getvalue().endswith("\r\033[K")


def test_nothing_is_drawn_when_not_a_terminal():
    stream = io.StringIO()
    bar = Progress(4, stream=stream)
    bar.update(2)
    bar.tick()
    bar.close()
    assert stream.getvalue() == ""


def test_play_draws_a_bar_of_games_done_on_a_terminal(capsys, monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr("sys.stderr", terminal)
    assert main(["play", "first", "greedy", "--deals", "3", "--duplicate", "--json"]) == 0
    drawn = terminal.getvalue()
    # 3 deals x 2 rotations: the last update is always drawn, then the line is erased
    assert "6/6" in drawn and drawn.endswith("\r\033[K")
    assert json.loads(capsys.readouterr().out)["games"] == 6


def test_play_keeps_stderr_clean_when_it_is_not_a_terminal(capsys):
    assert main(["play", "first", "greedy", "--deals", "2", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["games"] == 2
