"""The progress line: drawn on a terminal only, erased before the result."""

from __future__ import annotations

import io
import json
import time

from arena_cli.main import main
from arena_cli.progress import Progress, Ticker


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


def test_ticker_spins_while_work_runs_and_stops_after():
    stream = FakeTerminal()
    bar = Progress(None, label="play ", stream=stream)
    with Ticker(bar, interval=0.01):
        time.sleep(0.1)
    bar.close()
    drawn = stream.getvalue()
    assert drawn.count("play ") >= 2 and drawn.endswith("\r\033[K")
    after = len(drawn)
    time.sleep(0.05)
    assert len(stream.getvalue()) == after  # the thread has stopped


def test_play_keeps_stderr_clean_when_it_is_not_a_terminal(capsys):
    assert main(["play", "first", "greedy", "--games", "2", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["games"] == 2
