"""``arena sprt``: verdicts on real pairs of games, the JSON document, the progress line, one-line errors."""

from __future__ import annotations

import json

import pytest

import arena_cli.progress
from arena_cli.main import main
from tournaments.sprt import llr

CRASH_BOT = "def agent(observation, configuration):\n    raise RuntimeError('boom')\n"


def sprt(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["sprt", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def sprt_json(capsys, *argv: str) -> dict:
    code, out, err = sprt(capsys, *argv, "--json")
    assert (code, err) == (0, ""), err
    return json.loads(out)


def test_expert_against_random_accepts_h1_quickly(capsys):
    doc = sprt_json(capsys, "expert", "random", "--elo1", "100")
    assert set(doc) == {"result", "llr", "pairs", "pentanomial", "elo", "elo_low", "elo_high"}
    assert doc["result"] == "H1"
    assert doc["pairs"] <= 30 and sum(doc["pentanomial"]) == doc["pairs"]
    assert doc["llr"] >= 2.944 and doc["llr"] == pytest.approx(llr(doc["pentanomial"], 0, 100), abs=1e-3)
    assert doc["elo_low"] > 0 and doc["elo_low"] <= doc["elo"] <= doc["elo_high"]


def test_a_weaker_new_version_accepts_h0(capsys):
    doc = sprt_json(capsys, "random", "expert", "--elo0", "0", "--elo1", "100")
    assert doc["result"] == "H0" and doc["llr"] <= -2.944
    assert doc["elo"] < 0


def test_the_cap_ends_inconclusive_and_the_text_report(capsys):
    code, out, err = sprt(capsys, "greedy", "first", "--max-games", "4", "--elo0", "0", "--elo1", "5")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("inconclusive: no verdict within 4 games")
    assert lines[1].startswith("LLR ") and "bounds -2.94, 2.94" in lines[1]
    assert lines[2].startswith("2 pairs (4 games), pentanomial [")


def test_a_crashing_new_version_loses_every_pair(tmp_path, capsys):
    bot = tmp_path / "crash.py"
    bot.write_text(CRASH_BOT, encoding="utf-8")
    doc = sprt_json(capsys, str(bot), "random", "--elo1", "100")
    assert doc["result"] == "H0" and doc["pentanomial"][0] == doc["pairs"]


def test_progress_line_on_a_terminal_only(capsys, monkeypatch):
    monkeypatch.setattr(arena_cli.progress, "_is_tty", lambda stream: True)
    code, out, err = sprt(capsys, "expert", "random", "--elo1", "200", "--json")
    assert code == 0 and json.loads(out)["result"] == "H1"
    assert "arena sprt: 1 pairs, score 100.0%, LLR" in err and "(-2.94, 2.94)" in err
    assert err.endswith("\r\033[K")  # erased before the result


@pytest.mark.parametrize(
    "argv, message",
    [
        (["expert", "random", "--elo0", "10", "--elo1", "5"], "--elo0 10 must be below --elo1 5"),
        (["expert", "random", "--elo1", "lots"], "expected a number"),
        (["expert", "random", "--elo1", "inf"], "finite"),
        (["expert", "random", "--alpha", "0.6"], "between 0 and 0.5"),
        (["expert", "random", "--beta", "0"], "between 0 and 0.5"),
        (["expert", "random", "--max-games", "1"], "at least 2 games"),
        (["expert", "nobody"], "unknown bot 'nobody'"),
        (["expert", "random", "--rules", "players=3"], "players=3 but 2 bots"),
        (["expert", "random", "--rules", "hand_size=banana"], "bad --rules"),
        (["expert"], "arguments are required"),
    ],
)
def test_bad_arguments_are_one_line_exit_2(capsys, argv, message):
    code, out, err = sprt(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("arena: error: ") and message in err
