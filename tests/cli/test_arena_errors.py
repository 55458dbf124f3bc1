"""Every mistake in ``arena`` arguments is one line on stderr and exit code 2."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from arena_cli.main import main

ARENA = Path(sys.executable).with_name("arena")


def fails(capsys, *argv: str) -> str:
    """Run ``arena argv``; assert exit 2, nothing on stdout, one line on stderr; return it."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("arena: error: ")
    return err


def test_unknown_bot_names_it_and_lists_reference_bots(capsys):
    err = fails(capsys, "play", "random", "nobody")
    assert "'nobody'" in err and "random, first, greedy, expert" in err


def test_bad_rule_value_names_option_and_allowed_values(capsys):
    err = fails(capsys, "play", "random", "first", "--rules", "wd4=sometimes")
    assert "'wd4'" in err and "'sometimes'" in err and "challenge" in err


def test_unknown_rule_option_is_refused(capsys):
    err = fails(capsys, "play", "random", "first", "--rules", "colour=red")
    assert "'colour'" in err and "unknown option" in err


def test_rule_without_equals_is_refused(capsys):
    err = fails(capsys, "play", "random", "first", "--rules", "stacking")
    assert "'stacking'" in err


def test_forbidden_rule_combination_is_refused(capsys):
    err = fails(capsys, "play", "random", "first", "--rules", "stacking=stack")
    assert "wd4" in err


def test_players_rule_must_match_the_bots(capsys):
    err = fails(capsys, "play", "random", "first", "--rules", "players=3")
    assert "players=3" in err and "2 bots" in err


@pytest.mark.parametrize("bots", [["random"], ["random"] * 11])
def test_too_few_or_too_many_bots(capsys, bots):
    err = fails(capsys, "play", *bots)
    assert f"got {len(bots)}" in err


def test_unknown_option_is_refused(capsys):
    err = fails(capsys, "play", "random", "first", "--turbo")
    assert "--turbo" in err


def test_unknown_command_is_refused(capsys):
    err = fails(capsys, "dance")
    assert "'dance'" in err


@pytest.mark.parametrize("deals", ["0", "-3", "many"])
@pytest.mark.parametrize("option", ["--deals", "--games"])  # --games: the option's old name, still read
def test_deals_must_be_a_positive_integer(capsys, deals, option):
    err = fails(capsys, "play", "random", "first", option, deals)
    assert repr(deals) in err


def test_seed_must_be_an_integer(capsys):
    err = fails(capsys, "play", "random", "first", "--seed", "abc")
    assert "'abc'" in err


def test_unknown_sandbox_is_refused(capsys):
    err = fails(capsys, "play", "random", "first", "--sandbox", "vm")
    assert "'vm'" in err


def test_missing_bot_file(capsys, tmp_path):
    missing = tmp_path / "gone.py"
    err = fails(capsys, "play", str(missing), "random")
    assert str(missing) in err and "No such file" in err


def test_bot_file_that_does_not_compile(capsys, tmp_path):
    bot = tmp_path / "broken.py"
    bot.write_text("def agent(observation, configuration)\n    return 1\n")
    err = fails(capsys, "play", str(bot), "random")
    assert "broken.py" in err and "does not compile" in err


def test_bot_file_without_agent(capsys, tmp_path):
    bot = tmp_path / "noagent.py"
    bot.write_text("def play(observation):\n    return None\n")
    err = fails(capsys, "play", str(bot), "random")
    assert "agent" in err


def test_bot_file_with_wrong_extension(capsys, tmp_path):
    bot = tmp_path / "bot.txt"
    bot.write_text("def agent(o, c):\n    return o['legal_actions'][0]\n")
    err = fails(capsys, "play", str(bot), "random")
    assert ".txt" in err


def test_zip_with_path_escape_is_refused(capsys, tmp_path):
    bot = tmp_path / "evil.zip"
    with zipfile.ZipFile(bot, "w") as archive:
        archive.writestr("main.py", "def agent(o, c):\n    return o['legal_actions'][0]\n")
        archive.writestr("../escape.py", "x = 1\n")
    err = fails(capsys, "play", str(bot), "random")
    assert "'..'" in err


def test_file_name_with_newline_still_gives_one_line(capsys, tmp_path):
    bot = tmp_path / "two\nlines.py"
    bot.write_text("this is not python(\n")
    fails(capsys, "play", str(bot), "random")


def test_replay_into_missing_directory_is_refused_before_playing(capsys, tmp_path):
    err = fails(capsys, "play", "random", "first", "--replay", str(tmp_path / "nowhere" / "r.json"))
    assert "does not exist" in err


def test_replay_onto_a_directory_is_refused(capsys, tmp_path):
    err = fails(capsys, "play", "random", "first", "--replay", str(tmp_path))
    assert "is a directory" in err


def test_console_script_error_has_no_traceback():
    proc = subprocess.run(
        [str(ARENA), "play", "random", "nobody", "--json"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_more_games_than_one_match_holds_is_refused(capsys):
    err = fails(capsys, "play", "random", "first", "greedy", "--deals", "4000", "--duplicate")
    assert "12000 games" in err and "--seed" in err


def test_logs_into_missing_directory_is_refused(capsys, tmp_path):
    err = fails(capsys, "play", "random", "first", "--logs", str(tmp_path / "nowhere"))
    assert "nowhere" in err and "not an existing directory" in err


@pytest.mark.parametrize("option", ["--replay", "--logs"])
def test_an_empty_replay_or_logs_name_is_refused(capsys, option):
    err = fails(capsys, "play", "random", "first", option, "")
    assert option in err and "empty" in err


def test_a_rule_given_twice_is_refused(capsys):
    err = fails(capsys, "play", "random", "first", "--rules", "wd4=free", "wd4=enforced")
    assert "'wd4'" in err and "given twice" in err


def test_a_bot_whose_agent_is_a_literal_is_refused(capsys, tmp_path):
    bot = tmp_path / "five.py"
    bot.write_text("agent = 5\n")
    err = fails(capsys, "play", str(bot), "random")
    assert "five.py" in err and "literal (int)" in err


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        ("--time-per-decision", "0", "0.1 to 60 seconds"),
        ("--time-per-decision", "61", "0.1 to 60 seconds"),
        ("--time-per-decision", "inf", "0.1 to 60 seconds"),
        ("--time-bank", "nan", "0.1 to 600 seconds"),
        ("--time-bank", "-1", "0.1 to 600 seconds"),
        ("--time-per-match", "0.5", "1 to 3600 seconds"),
        ("--time-per-match", "1e300", "1 to 3600 seconds"),
        ("--time-per-match", "five", "expected seconds (a number)"),
        ("--time-per-match", "", "expected seconds (a number)"),
    ],
)
def test_a_clock_out_of_its_bounds_is_one_line_naming_flag_value_and_bounds(capsys, flag, value, expected):
    err = fails(capsys, "play", "random", "first", flag, value)
    assert flag in err and repr(value) in err and expected in err


def test_the_clock_bounds_of_arena_play_are_the_events(capsys):
    from sandbox.limits import CLOCK_BOUNDS

    for clock, (low, high) in CLOCK_BOUNDS.items():
        flag = f"--time-{clock.removeprefix('time_').replace('_', '-')}"
        assert main(["play", "random", "first", "--json", flag, f"{low:g}"]) == 0
        assert main(["play", "random", "first", "--json", flag, f"{high:g}"]) == 0
        capsys.readouterr()
        assert f"{high * 1.01:g}" in fails(capsys, "play", "random", "first", flag, f"{high * 1.01:g}")
