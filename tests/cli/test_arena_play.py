"""``arena play``: results, JSON shape and order, duplicate, replays, bot files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from arena_cli.main import main
from engine.replay import REPLAY_VERSION

ARENA = Path(sys.executable).with_name("arena")
FIRST_BOT = "def agent(observation, configuration):\n    return observation['legal_actions'][0]\n"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def play_json(capsys, *argv: str) -> dict:
    code, out, err = run(capsys, "play", *argv, "--json")
    assert (code, err) == (0, "")
    return json.loads(out)


def test_json_document_has_exactly_the_documented_keys(capsys):
    doc = play_json(capsys, "greedy", "random", "--deals", "2")
    assert set(doc) == {"games", "rounds", "players", "verdict"}
    assert doc["games"] == 2 and doc["rounds"] >= 2
    for player in doc["players"]:
        assert set(player) == {"bot", "score", "rank", "wins", "forfeit"}
        assert player["forfeit"] is None


def test_json_players_follow_command_line_order_not_rank(capsys):
    # random never beats expert over these games, so rank order is the reverse of the given order
    doc = play_json(capsys, "random", "first", "expert", "--deals", "3", "--seed", "5")
    assert [p["bot"] for p in doc["players"]] == ["random", "first", "expert"]
    ranks = {p["bot"]: p["rank"] for p in doc["players"]}
    assert ranks["random"] == 3
    assert sorted(ranks.values()) == [1, 2, 3]


def test_winner_scoring_ranks_higher_score_first(capsys):
    doc = play_json(capsys, "greedy", "first", "random", "expert", "--deals", "2")
    by_rank = sorted(doc["players"], key=lambda p: p["rank"])
    assert [p["score"] for p in by_rank] == sorted((p["score"] for p in by_rank), reverse=True)


def test_same_seed_gives_the_same_result(capsys):
    a = play_json(capsys, "random", "greedy", "--deals", "3", "--seed", "11")
    b = play_json(capsys, "random", "greedy", "--deals", "3", "--seed", "11")
    assert a == b


def test_rules_are_applied(capsys):
    # two rounds per game instead of a 500-point target
    doc = play_json(capsys, "first", "greedy", "--deals", "3", "--rules", "rounds=2", "wd4=free")
    assert doc["rounds"] == 6


def test_duplicate_plays_every_deal_once_per_rotation(capsys):
    doc = play_json(capsys, "first", "random", "greedy", "--deals", "2", "--duplicate", "--rules", "rounds=1")
    assert doc["games"] == 2 * 3
    assert doc["rounds"] == 6


def test_replay_file_holds_every_game(capsys, tmp_path):
    target = tmp_path / "match.json"
    code, out, err = run(
        capsys, "play", "expert", "first", "--deals", "2", "--duplicate", "--replay", str(target)
    )
    assert (code, err) == (0, "")
    replay = json.loads(target.read_text())
    assert replay["version"] == REPLAY_VERSION
    assert replay["names"] == ["expert", "first"]
    assert len(replay["games"]) == 4
    assert replay["rules"]["players"] == 2
    assert [name for name in os.listdir(tmp_path)] == ["match.json"]  # no temporary left behind


def test_table_lists_every_bot_best_first(capsys):
    code, out, err = run(capsys, "play", "random", "expert", "--deals", "2", "--seed", "3")
    assert (code, err) == (0, "")
    lines = out.strip().splitlines()
    assert lines[0].startswith("2 games,")
    assert lines[1].split() == ["rank", "bot", "score", "wins", "strikes", "forfeit"]
    assert lines[2].split()[:2] == ["1", "expert"]
    assert lines[3].split()[:2] == ["2", "random"]


def test_py_bot_file_plays_under_its_path(capsys, tmp_path):
    bot = tmp_path / "mine.py"
    bot.write_text(FIRST_BOT)
    doc = play_json(capsys, str(bot), "random", "--deals", "2")
    assert doc["players"][0]["bot"] == str(bot)
    assert doc["players"][0]["forfeit"] is None
    assert doc["players"][0]["rank"] == 1  # first beats random


def test_zip_bot_with_helper_module_plays(capsys, tmp_path):
    bot = tmp_path / "mine.zip"
    with zipfile.ZipFile(bot, "w") as archive:
        archive.writestr("main.py", "from helper import pick\n\ndef agent(o, c):\n    return pick(o)\n")
        archive.writestr("helper.py", "def pick(o):\n    return o['legal_actions'][0]\n")
    doc = play_json(capsys, str(bot), "random", "--deals", "1")
    assert doc["players"][0]["forfeit"] is None


def test_crashing_bot_file_forfeits_and_ranks_last(capsys, tmp_path):
    bot = tmp_path / "crash.py"
    bot.write_text("def agent(observation, configuration):\n    raise RuntimeError('boom')\n")
    doc = play_json(capsys, "first", str(bot), "--deals", "1")
    crashed = doc["players"][1]
    assert crashed["rank"] == 2
    assert "boom" in crashed["forfeit"]


def test_console_script_runs_and_prints_json():
    proc = subprocess.run(
        [str(ARENA), "play", "random", "first", "--deals", "20", "--json"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # not a terminal: no progress bar
    assert json.loads(proc.stdout)["games"] == 20


def test_bot_file_in_process_sandbox(capsys, tmp_path, bwrap_path):
    bot = tmp_path / "mine.py"
    bot.write_text(FIRST_BOT)
    doc = play_json(capsys, str(bot), "first", "--deals", "1", "--sandbox", "process")
    assert doc["players"][0]["forfeit"] is None


@pytest.mark.docker
def test_bot_file_in_docker_sandbox(capsys, tmp_path, docker_client):
    bot = tmp_path / "mine.py"
    bot.write_text(FIRST_BOT)
    doc = play_json(capsys, str(bot), "first", "--deals", "1", "--sandbox", "docker")
    assert doc["players"][0]["forfeit"] is None


def test_platform_failure_is_one_line_exit_1_and_leaves_no_replay(capsys, tmp_path, monkeypatch):
    from arena_cli import play
    from engine.faults import InfrastructureError

    def broken(rules, bots, args, on_game=None):
        raise InfrastructureError("Docker engine went away")

    monkeypatch.setattr(play, "_play", broken)
    code, out, err = run(capsys, "play", "random", "first", "--replay", str(tmp_path / "r.json"))
    assert code == 1 and out == ""
    assert err == "arena: failed: inprocess sandbox: Docker engine went away\n"
    assert os.listdir(tmp_path) == []


def test_table_shows_strikes_and_the_forfeit_reason(capsys, tmp_path):
    bot = tmp_path / "sloppy.py"
    bot.write_text("def agent(observation, configuration):\n    return {'type': 'nonsense'}\n")
    code, out, err = run(capsys, "play", str(bot), "first", "--deals", "1")
    assert (code, err) == (0, "")
    table = out.split("\nverdict")[0]  # the verdict follows the table
    last = table.strip().splitlines()[-1].split(None, 5)
    assert last[:2] == ["2", str(bot)]
    assert last[4] == "3"  # strikes, then the forfeit
    assert last[5].startswith("strikes: 3 strikes") and "nonsense" in last[5]


def test_bot_writing_to_the_stdout_descriptor_cannot_break_the_json(tmp_path):
    bot = tmp_path / "loud.py"
    bot.write_text(
        "import os\n\ndef agent(observation, configuration):\n"
        "    os.write(1, b'not json\\n')\n    return observation['legal_actions'][0]\n"
    )
    proc = subprocess.run(
        [str(ARENA), "play", str(bot), "random", "--deals", "1", "--json"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["players"][0]["bot"] == str(bot)
    assert "not json" in proc.stderr  # the bot's own noise stays visible, on stderr


def test_logs_hold_what_each_bot_printed(capsys, tmp_path):
    bot = tmp_path / "chatty.py"
    bot.write_text(
        "print('loaded')\n\ndef agent(observation, configuration):\n"
        "    print('deciding', observation['decision'])\n    return observation['legal_actions'][0]\n"
    )
    logs = tmp_path / "logs"
    logs.mkdir()
    code, out, err = run(capsys, "play", "random", str(bot), "--deals", "1", "--logs", str(logs))
    assert (code, err) == (0, "")
    assert sorted(os.listdir(logs)) == ["1-random.log", "2-chatty.py.log"]
    text = (logs / "2-chatty.py.log").read_text()
    assert text.startswith("loaded\n") and "deciding play" in text
    assert (logs / "1-random.log").read_text() == ""


@pytest.mark.slow
def test_json_stays_one_document_while_a_bots_thread_keeps_printing(tmp_path):
    bot = tmp_path / "chatter.py"
    bot.write_text(
        "import os, sys, threading, time\n"
        "def spam():\n"
        "    while True:\n"
        "        print('SPAM')\n"
        "        os.write(1, b'RAW\\n')\n"
        "        time.sleep(0.0005)\n"
        "threading.Thread(target=spam, daemon=True).start()\n"
        "def agent(o, c):\n"
        "    return o['legal_actions'][0]\n"
    )
    arena = Path(sys.executable).with_name("arena")
    for _ in range(5):
        proc = subprocess.run([str(arena), "play", str(bot), "first", "--json"], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-500:]
        assert json.loads(proc.stdout)["players"][1]["bot"] == "first"
        assert "SPAM" in proc.stderr or "RAW" in proc.stderr


def test_a_bot_importing_outside_the_standard_library_gets_a_note_in_process_only(capsys, tmp_path):
    bot = tmp_path / "np.py"
    bot.write_text("try:\n    import numpy\nexcept ImportError:\n    numpy = None\n"
                   "def agent(o, c):\n    return o['legal_actions'][0]\n")
    assert main(["play", str(bot), "first", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["games"] == 1
    assert err.count("\n") == 1 and "np.py imports numpy, not in the standard library" in err
    assert main(["play", str(bot), "first", "--json", "--sandbox", "process"]) in (0, 1)
    _, err = capsys.readouterr()
    assert "not in the standard library" not in err


CLOCK_BOT = (
    "import json\n\nSEEN = []\n\ndef agent(observation, configuration):\n"
    "    if not SEEN:\n"
    "        SEEN.append(1)\n"
    "        print('clocks', json.dumps({k: configuration[k] for k in "
    "('time_per_decision', 'time_bank', 'time_per_match')}))\n"
    "    return observation['legal_actions'][0]\n"
)


def _clocks_seen(capsys, tmp_path, *flags: str) -> dict:
    bot = tmp_path / "clocks.py"
    bot.write_text(CLOCK_BOT)
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    code, out, err = run(capsys, "play", str(bot), "first", "--deals", "1", "--logs", str(logs), *flags)
    assert (code, err) == (0, "")
    line = next(ln for ln in (logs / "1-clocks.py.log").read_text().splitlines() if ln.startswith("clocks "))
    return json.loads(line.removeprefix("clocks "))


def test_without_clock_flags_the_bot_sees_the_contracts_clocks(capsys, tmp_path):
    from sandbox.limits import DEFAULT_LIMITS

    assert _clocks_seen(capsys, tmp_path) == {"time_per_decision": 1.0, "time_bank": 10.0, "time_per_match": 300.0}
    assert DEFAULT_LIMITS.configuration() == {"time_per_decision": 1.0, "time_bank": 10.0, "time_per_match": 300.0}


@pytest.mark.parametrize(
    ("flag", "key", "value"),
    [("--time-per-decision", "time_per_decision", 0.25), ("--time-bank", "time_bank", 3.5),
     ("--time-per-match", "time_per_match", 42.0)],
)
def test_each_clock_flag_reaches_the_bots_configuration(capsys, tmp_path, flag, key, value):
    seen = _clocks_seen(capsys, tmp_path, flag, str(value))
    assert seen[key] == value
    assert {k: v for k, v in seen.items() if k != key} == {
        k: v for k, v in {"time_per_decision": 1.0, "time_bank": 10.0, "time_per_match": 300.0}.items() if k != key
    }


@pytest.mark.slow
def test_the_clock_flags_limit_the_bot_not_only_its_configuration(capsys, tmp_path):
    # 0.3 s a decision within --time-per-decision 0.2 and a bank of 0.25 s: a strike once the bank is gone.
    bot = tmp_path / "slowish.py"
    bot.write_text(
        "import time\n\ndef agent(observation, configuration):\n"
        "    time.sleep(0.3)\n    return observation['legal_actions'][0]\n"
    )
    code, out, err = run(
        capsys, "play", str(bot), "first", "--deals", "1", "--time-per-decision", "0.2", "--time-bank", "0.25",
        "--rules", "max_strikes=2", "--json",
    )
    assert (code, err) == (0, "")
    mine = json.loads(out)["players"][0]
    assert mine["forfeit"] is not None and "strikes" in mine["forfeit"]


@pytest.mark.slow
def test_a_bot_using_up_its_match_time_forfeits_out_of_match_time(capsys, tmp_path):
    # 0.3 s a decision is within the default 1 s per decision, so only the 1 s match clock can stop it.
    bot = tmp_path / "steady.py"
    bot.write_text(
        "import time\n\ndef agent(observation, configuration):\n"
        "    time.sleep(0.3)\n    return observation['legal_actions'][0]\n"
    )
    code, out, err = run(capsys, "play", str(bot), "first", "--deals", "1", "--time-per-match", "1", "--json")
    assert (code, err) == (0, "")
    mine, other = json.loads(out)["players"]
    assert "out of match time" in (mine["forfeit"] or "")
    assert mine["rank"] == 2 and other["forfeit"] is None
