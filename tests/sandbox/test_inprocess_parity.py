"""In-process package seats behave like the sandbox: own modules, own directory, same faults.

Real bots, real matches (``play_sandboxed_match(..., backend="inprocess")`` and ``arena play``).
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

from arena_cli.main import main
from engine.rules import Rules
from sandbox.package import BotPackage
from sandbox.runner import play_sandboxed_match

RULES = Rules.parse(["players=2", "rounds=2", "hand_size=3"])
ARENA = Path(sys.executable).with_name("arena")


def zipped(name: str, files: dict[str, str]) -> BotPackage:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return BotPackage.from_bytes(name, buffer.getvalue())


def helper_bot(name: str, tag: str) -> BotPackage:
    """Prints which helper it sees and how many calls that helper counted."""
    return zipped(name, {
        "main.py": (
            "import helper\n"
            "print('import sees', helper.NAME)\n"
            "def agent(observation, configuration):\n"
            "    helper.CALLS.append(1)\n"
            "    print('agent sees', helper.NAME, len(helper.CALLS))\n"
            "    return observation['legal_actions'][0]\n"
        ),
        "helper.py": f"NAME = {tag!r}\nCALLS = []\n",
    })


def decision_lines(log: str) -> list[tuple[str, int]]:
    return [(line.split()[2], int(line.split()[3])) for line in log.splitlines() if line.startswith("agent sees")]


@pytest.fixture
def process_state():
    """What a match must leave as it found it: sys.modules, sys.path, the directory, SIGINT."""
    before = (dict(sys.modules), list(sys.path), os.getcwd(), signal.getsignal(signal.SIGINT))
    yield
    modules, path, cwd, handler = before
    added = {name for name in set(sys.modules) - set(modules) if not name.startswith(("encodings.", "_"))}
    bot_modules = {n for n in added if "helper" in n or n in ("main", "data_reader") or n.startswith("uno_arena_bot")}
    assert bot_modules == set()
    assert all(sys.modules.get(name) is module for name, module in modules.items())
    assert sys.path == path
    assert os.getcwd() == cwd
    assert signal.getsignal(signal.SIGINT) is handler


def test_two_bots_with_a_helper_of_the_same_name_each_see_their_own(process_state):
    outcome = play_sandboxed_match(RULES, [helper_bot("a.zip", "A"), helper_bot("b.zip", "B")], seed=3, backend="inprocess")
    for log, tag in zip(outcome.logs, "AB", strict=True):
        assert log.startswith(f"import sees {tag}\n")
        seen = decision_lines(log)
        assert seen and {name for name, _ in seen} == {tag}
        assert [count for _, count in seen] == list(range(1, len(seen) + 1))  # nobody else counted
    assert all(p.forfeit is None for p in outcome.result.players)


def test_one_bot_in_two_seats_keeps_separate_module_state(process_state):
    bot = helper_bot("same.zip", "S")
    outcome = play_sandboxed_match(RULES, [bot, bot], seed=5, backend="inprocess")
    for log in outcome.logs:
        counts = [count for _, count in decision_lines(log)]
        assert counts == list(range(1, len(counts) + 1)) and counts


def test_a_helper_named_like_an_arena_package_is_the_bots_own(process_state):
    import engine

    bot = zipped("engine.zip", {
        "main.py": (
            "import engine\n"
            "from engine import pick\n"
            "assert engine.MINE\n"
            "def agent(observation, configuration):\n"
            "    import engine\n"
            "    assert engine.MINE\n"
            "    return pick(observation['legal_actions'])\n"
        ),
        "engine.py": "MINE = True\ndef pick(actions):\n    return actions[0]\n",
    })
    outcome = play_sandboxed_match(RULES, [bot, "first"], seed=3, backend="inprocess")
    assert outcome.result.players[0].faults == () and outcome.result.players[0].forfeit is None
    assert sys.modules["engine"] is engine and not hasattr(engine, "MINE")


def test_a_module_named_like_a_standard_one_is_used_as_in_the_sandbox(process_state):
    import random

    # The bot host imports json itself, so a bot's json.py is never used there; random.py is.
    bot = zipped("std.zip", {
        "main.py": (
            "import json, random\n"
            "assert not hasattr(json, 'MINE') and json.dumps([1]) == '[1]'\n"
            "def agent(observation, configuration):\n"
            "    return random.pick(observation['legal_actions'])\n"
        ),
        "json.py": "MINE = True\n",
        "random.py": "def pick(actions):\n    return actions[0]\n",
    })
    outcome = play_sandboxed_match(RULES, [bot, "first"], seed=3, backend="inprocess")
    assert outcome.result.players[0].faults == ()
    assert sys.modules["random"] is random and not hasattr(random, "pick")


def test_modules_imported_during_a_decision_stay_the_bots(process_state):
    def lazy(name: str, tag: str) -> BotPackage:
        return zipped(name, {
            "main.py": (
                "def agent(observation, configuration):\n"
                "    import lazyhelper, main\n"
                "    lazyhelper.SEEN += 1\n"
                "    assert main.agent is agent and __name__ == 'main'\n"  # the entry module is `main`, as in the sandbox
                "    print('lazy', lazyhelper.TAG, lazyhelper.SEEN)\n"
                "    return observation['legal_actions'][0]\n"
            ),
            "lazyhelper.py": f"TAG = {tag!r}\nSEEN = 0\n",
        })

    outcome = play_sandboxed_match(RULES, [lazy("x.zip", "X"), lazy("y.zip", "Y")], seed=3, backend="inprocess")
    assert [p.faults for p in outcome.result.players] == [(), ()]
    for log, tag in zip(outcome.logs, "XY", strict=True):
        lines = log.splitlines()
        assert lines == [f"lazy {tag} {n}" for n in range(1, len(lines) + 1)] and lines
    assert "lazyhelper" not in sys.modules


def test_relative_paths_are_the_bots_folder(process_state, tmp_path):
    bot = zipped("data.zip", {
        "main.py": (
            "import json\n"
            "WEIGHTS = json.load(open('data/w.json'))\n"
            "def agent(observation, configuration):\n"
            "    with open('data/w.json') as f:\n"
            "        assert json.load(f) == WEIGHTS == {'x': 1}\n"
            "    return observation['legal_actions'][0]\n"
        ),
        "data/w.json": '{"x": 1}',
    })
    arena_cwd = os.getcwd()
    os.chdir(tmp_path)  # anywhere but the bot's folder
    try:
        outcome = play_sandboxed_match(RULES, [bot, "first"], seed=3, backend="inprocess")
        assert os.getcwd() == str(tmp_path)
    finally:
        os.chdir(arena_cwd)
    assert outcome.result.players[0].faults == ()


def test_a_reply_nested_too_deep_for_json_is_a_strike_not_a_crash(process_state):
    bot = BotPackage.from_bytes("deep.py", (
        b"def agent(observation, configuration):\n"
        b"    reply = []\n"
        b"    for _ in range(100000):\n"
        b"        reply = [reply]\n"
        b"    return reply\n"
    ))
    outcome = play_sandboxed_match(RULES, [bot, "first"], seed=3, backend="inprocess")
    assert outcome.result.players[0].faults
    assert all(f.startswith("illegal: agent returned a value that is not JSON (list): ") for f in map(str, outcome.result.players[0].faults))
    assert "recursion" in outcome.result.players[0].faults[0].reason
    assert str(outcome.result.players[0].forfeit).startswith("strikes: 3 strikes")


def test_a_bot_raising_keyboard_interrupt_forfeits_and_the_match_goes_on(process_state):
    bot = BotPackage.from_bytes("kb.py", b"def agent(observation, configuration):\n    raise KeyboardInterrupt('bot')\n")
    outcome = play_sandboxed_match(RULES, [bot, "first"], seed=3, backend="inprocess")
    assert [str(f) for f in outcome.result.players[0].faults] == ["exception: exception in agent: KeyboardInterrupt: bot"]
    assert str(outcome.result.players[0].forfeit) == "exception: exception in agent: KeyboardInterrupt: bot"
    assert outcome.result.games == 1 and outcome.result.rounds >= 1


def test_keyboard_interrupt_from_a_bot_is_a_fault_in_another_thread_too(process_state):
    bot = BotPackage.from_bytes("kb.py", b"def agent(observation, configuration):\n    raise KeyboardInterrupt\n")
    outcomes = []
    thread = threading.Thread(target=lambda: outcomes.append(play_sandboxed_match(RULES, [bot, "first"], seed=3, backend="inprocess")))
    thread.start()
    thread.join(60)
    assert outcomes and str(outcomes[0].result.players[0].forfeit) == "exception: exception in agent: KeyboardInterrupt"


def test_keyboard_interrupt_at_import_is_a_fault(process_state):
    bot = BotPackage.from_bytes("kbi.py", b"raise KeyboardInterrupt('at import')\ndef agent(o, c):\n    return o['legal_actions'][0]\n")
    outcome = play_sandboxed_match(RULES, [bot, "first"], seed=3, backend="inprocess")
    assert str(outcome.result.players[0].forfeit) == "exception: exception at import: KeyboardInterrupt: at import"


def test_arena_play_runs_the_bots_as_the_sandbox_does(capsys, tmp_path, process_state):
    a = tmp_path / "a.zip"
    b = tmp_path / "b.zip"
    for path, tag in ((a, "A"), (b, "B")):
        path.write_bytes(zipfile_bytes(helper_bot(path.name, tag)))
    logs = tmp_path / "logs"
    logs.mkdir()
    code = main(["play", str(a), str(b), "--deals", "2", "--json", "--logs", str(logs)])
    out, err = capsys.readouterr()
    assert (code, err) == (0, "")
    assert all(p["forfeit"] is None for p in json.loads(out)["players"])
    assert {name for name, _ in decision_lines((logs / "1-a.zip.log").read_text())} == {"A"}
    assert {name for name, _ in decision_lines((logs / "2-b.zip.log").read_text())} == {"B"}


def zipfile_bytes(package: BotPackage) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(package.files):
            archive.writestr(path, package.files[path])
    return buffer.getvalue()


@pytest.mark.parametrize("swallows", [False, True], ids=["plain", "bot-swallows-it"])
def test_ctrl_c_still_interrupts_arena_play(tmp_path, swallows):
    marker = tmp_path / "deciding"
    bot = tmp_path / "slow.py"
    sleep = "    try:\n        time.sleep(30)\n    except KeyboardInterrupt:\n        pass\n" if swallows else "    time.sleep(30)\n"
    bot.write_text(
        "import time\n"
        "def agent(observation, configuration):\n"
        f"    open({str(marker)!r}, 'w').close()\n"
        f"{sleep}"
        "    return observation['legal_actions'][0]\n"
    )
    # SIGINT at its default in the child, as a terminal's foreground job has it: a test run started
    # in the background by a shell (CI under nohup, `make test &`) ignores SIGINT, the child would
    # inherit that, and Python installs no KeyboardInterrupt handler for an ignored signal.
    proc = subprocess.Popen(
        [str(ARENA), "play", str(bot), "first", "--deals", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr.read() if proc.poll() is not None else "no decision"
            time.sleep(0.05)
        started = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "arena: interrupted" in err
    assert time.monotonic() - started < 10  # the bot's sleep was cut short


def test_seats_restoring_the_environment_in_parallel_do_not_race():
    """The runner stops a match's seats on a thread pool; each in-process seat puts ``os.environ``
    back. Restores running at once must neither raise (a dict changed during iteration) nor leave
    a game's variable behind."""
    import os
    import threading

    from sandbox.backends.inprocess import _restore_environment

    saved = dict(os.environ)
    errors: list[str] = []

    def game_then_restore(n: int) -> None:
        try:
            for i in range(300):
                for k in range(20):
                    os.environ[f"ARENA_RACE_{n}_{i}_{k}"] = "1"
                _restore_environment(saved)
        except Exception as exc:  # noqa: BLE001 - the race shows as any exception
            errors.append(repr(exc))

    threads = [threading.Thread(target=game_then_restore, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    _restore_environment(saved)
    assert errors == []
    assert not [key for key in os.environ if key.startswith("ARENA_RACE_")]
