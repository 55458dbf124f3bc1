"""``arena play --duplicate`` in-process: a bot file cannot carry a deal from one rotation to the next."""

from __future__ import annotations

import json

from arena_cli.main import main
from tests.sandbox.test_fresh_games import MEMORY_BOT


def test_a_bot_file_remembers_nothing_across_the_rotations_of_arena_play_duplicate(tmp_path, capsys):
    bot = tmp_path / "memory.py"
    bot.write_text(MEMORY_BOT.replace('os.environ.get("MEMO_KEEPERS") == "1"', "False"))
    logs = tmp_path / "logs"
    logs.mkdir()
    code = main(["play", str(bot), "first", "--duplicate", "--deals", "2", "--seed", "4",
                 "--rules", "rounds=1", "hand_size=5", "--logs", str(logs), "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    assert json.loads(out)["games"] == 4
    log = (logs / "1-memory.py.log").read_text()
    starts = [line.split()[2] for line in log.splitlines() if line.startswith("START seat")]
    assert starts == ["0", "1", "0", "1"], log  # each game's first decision: a fresh import, the other seat
    assert "FOUND" not in log, log
    assert log.count("wrote here") == 4 and log.count("wrote tmp") == 4  # it did try each time
    assert not (tmp_path / "memo").exists()  # the bot's file wrote into its own copy, never the author's folder
