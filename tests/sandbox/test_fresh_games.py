"""Module state lives for one game: each game of a match starts a fresh bot process (BOT_CONTRACT.md).

A hostile bot tries to remember a deal across the rotations of a duplicate
match: in module globals, a file in its working directory and in its temp
folder (/tmp in a sandbox), an environment variable, and (in a sandbox, where
they can be stopped) a background thread and a background process that keep
re-writing what they know. In the next game it finds nothing, on every backend.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from engine.faults import SeatFault
from engine.rules import Rules
from sandbox.backends import process
from sandbox.limits import Limits
from sandbox.package import BotPackage
from sandbox.runner import play_sandboxed_match

#: what the hostile bot prints: START at each game's first decision, FOUND when it remembers anything
MEMORY_BOT = textwrap.dedent(
    """
    import os, subprocess, sys, tempfile, threading, time
    SEEN = []                       # module globals
    HERE = os.getcwd()              # its working directory (the bot's folder)
    TMP = tempfile.gettempdir()     # /tmp in a sandbox, the game's own temp folder in-process
    KEEPERS = os.environ.get("MEMO_KEEPERS") == "1"  # in a sandbox: also its home, a thread, a process
    FOLDERS = list(dict.fromkeys((HERE, TMP, os.path.expanduser("~")))) if KEEPERS else [HERE, TMP]
    MARK = "memo-keeper-7f3a"

    def remembered():
        found = []
        if SEEN:
            found.append(f"globals {SEEN}")
        for folder in FOLDERS:
            for name in ("memo", "memo-thread", "memo-process"):
                path = os.path.join(folder, name)
                if os.path.exists(path):
                    found.append(f"file {path}")
        if os.environ.get("MEMO"):
            found.append(f"env {os.environ['MEMO']}")
        if KEEPERS:
            for pid in os.listdir("/proc"):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as handle:
                        if MARK.encode() in handle.read() and int(pid) != os.getpid():
                            found.append(f"process {pid}")
                except (OSError, ValueError):
                    pass
        return found

    def keep(text):
        while True:  # a thread that re-writes the memory after every wipe
            try:
                os.environ["MEMO"] = text
                for folder in (HERE, TMP):
                    with open(os.path.join(folder, "memo-thread"), "w") as handle:
                        handle.write(text)
            except OSError:
                pass
            time.sleep(0.005)

    def agent(observation, configuration):
        if not SEEN:
            print("START seat", observation["seat"], "hand", observation["hand"], flush=True)
            found = remembered()
            if found:
                print("FOUND", found, flush=True)
        hand = " ".join(observation["hand"])
        if not SEEN:
            SEEN.append(hand)
            os.environ["MEMO"] = hand
            for folder in FOLDERS:
                try:
                    with open(os.path.join(folder, "memo"), "w") as handle:
                        handle.write(hand)
                    print("wrote", "tmp" if folder == TMP else "here" if folder == HERE else "home", flush=True)
                except OSError:
                    pass  # a sandbox's bot folder is read-only
            if KEEPERS:
                threading.Thread(target=keep, args=(hand,), daemon=True).start()
                script = (f"import os, sys, time\\n"
                          f"while True:\\n"
                          f"    open(os.path.join({TMP!r}, 'memo-process'), 'w').write({hand!r})\\n"
                          f"    time.sleep(0.005)\\n")
                subprocess.Popen([sys.executable, "-c", script, MARK, *sys.argv])
                time.sleep(0.05)
        return observation["legal_actions"][0]
    """
)
PLAIN = "def agent(observation, configuration):\n    return observation['legal_actions'][0]\n"
LIMITS = Limits(time_per_decision=1.0, time_bank=2.0, start_seconds=10.0)


def play_memory_match(backend: str, *, keepers: bool, deals: int = 1):
    source = MEMORY_BOT.replace('os.environ.get("MEMO_KEEPERS") == "1"', "True" if keepers else "False")
    hostile = BotPackage.from_bytes("memory.py", source.encode())
    plain = BotPackage.from_bytes("plain.py", PLAIN.encode())
    rules = Rules.parse(["players=2", "rounds=1", "hand_size=5"])
    return play_sandboxed_match(rules, [hostile, plain], seed=3, deals=deals, duplicate=True, backend=backend,
                      limits=LIMITS, allow_process=True)


def assert_forgot(outcome, games: int) -> None:
    log = outcome.logs[0]
    assert log.count("START seat") == games, log  # every game's first decision came from a fresh import
    seats = [line.split()[2] for line in log.splitlines() if line.startswith("START seat")]
    assert seats == ["0", "1"] * (games // 2)  # the rotation put it in the other seat
    assert "FOUND" not in log, log
    assert log.count("wrote tmp") == games, log  # it did leave a file behind each time
    hostile = outcome.result.players[0]
    assert hostile.forfeit is None and hostile.faults == ()


def test_process_backend_forgets_everything_between_rotations(bwrap_path):
    outcome = play_memory_match("process", keepers=True, deals=2)
    assert_forgot(outcome, 4)


def test_process_backend_without_bubblewrap_forgets_too(monkeypatch):
    real_start = process.start_seat
    monkeypatch.setattr(process, "start_seat", lambda *a, **k: real_start(*a, **{**k, "bwrap": None}))
    monkeypatch.setattr(process, "_warned_weak", True)
    outcome = play_memory_match("process", keepers=True)
    assert_forgot(outcome, 2)


@pytest.mark.docker
def test_docker_backend_forgets_everything_between_rotations(docker_client):
    outcome = play_memory_match("docker", keepers=True, deals=2)
    assert_forgot(outcome, 4)


@pytest.mark.docker
def test_warm_docker_seats_forget_everything_between_rotations(docker_client):
    from sandbox import docker_backend
    from tests.hostile.helpers import warm_pool_for

    warm_pool_for(LIMITS)
    try:
        outcome = play_memory_match("docker", keepers=True)
    finally:
        docker_backend.configure_warm_pool(0)
    assert_forgot(outcome, 2)


def test_in_process_seats_forget_module_state_files_and_environment():
    before = dict(os.environ)
    outcome = play_memory_match("inprocess", keepers=False, deals=2)
    assert_forgot(outcome, 4)
    assert outcome.logs[0].count("wrote here") == 4  # in-process the bot's folder is writable: a new copy each game
    assert dict(os.environ) == before  # the bot's variable went with its game


def _process_seat(source: str):
    from sandbox.seat import SandboxSeat

    handle = process.start_seat(BotPackage.from_bytes("main.py", textwrap.dedent(source).encode()), LIMITS, label="fresh")
    seat = SandboxSeat(handle, LIMITS, "fresh")
    seat.wait_ready()
    seat.begin_game(0)
    return seat, Path(handle.workdir) / "bot"


OBSERVATION = {"legal_actions": [{"type": "draw"}]}


def test_an_import_error_in_a_later_game_forfeits_like_one_at_the_start(bwrap_path):
    seat, bot_dir = _process_seat(
        """
        import os
        if os.path.exists("broken"):
            raise RuntimeError("broken on a later import")
        def agent(observation, configuration):
            return observation["legal_actions"][0]
        """
    )
    try:
        assert seat.decide(OBSERVATION, {}) == {"type": "draw"}
        (bot_dir / "broken").write_text("")  # the referee's side changes the files between games
        left = seat.match_left
        seat.begin_game(1)
        with pytest.raises(SeatFault) as caught:
            seat.decide(OBSERVATION, {})
    finally:
        seat.stop()
    assert caught.value.kind == "exception"
    assert caught.value.reason == "exception at import: RuntimeError: broken on a later import"
    assert seat.match_left == left  # the new process's start did not run on the clocks


def test_bot_interpreter_runs_isolated_without_bytecode_and_ignores_smuggled_pyc(bwrap_path, tmp_path):
    seat, bot_dir = _process_seat(
        """
        import os, sys
        def agent(observation, configuration):
            import helper  # only there from the second game on
            return {"value": helper.VALUE, "isolated": sys.flags.isolated, "no_bytecode": sys.flags.dont_write_bytecode,
                    "env": os.environ.get("PYTHONDONTWRITEBYTECODE"), "caches": os.listdir("__pycache__")}
        """
    )
    try:
        (bot_dir / "helper.py").write_text("VALUE = 'source'\n")
        fake = tmp_path / "helper.py"
        fake.write_text("VALUE = 'bytecode'\n")
        tag = subprocess.run([process.find_interpreter(), "-c", "import sys; print(sys.implementation.cache_tag)"],
                             capture_output=True, text=True, check=True).stdout.strip()
        (bot_dir / "__pycache__").mkdir()
        subprocess.run([process.find_interpreter(), "-c",
                        "import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], "
                        "invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)",
                        str(fake), str(bot_dir / "__pycache__" / f"helper.{tag}.pyc")], check=True)
        seat.begin_game(1)
        answer = seat.decide(OBSERVATION, {})
    finally:
        seat.stop()
    # the source ran, not the smuggled bytecode, and no cache of the source was written beside it
    assert answer == {"value": "source", "isolated": 1, "no_bytecode": True, "env": "1", "caches": [f"helper.{tag}.pyc"]}


#: a bot that acts on every other process it can see named as the zygote (``host.ZYGOTE_NAME``)
ZYGOTE_BOT = """
import os, resource, signal
def others():
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                with open(f"/proc/{name}/comm", "rb") as handle:
                    if handle.read().strip() == b"uno-zygote":
                        yield int(name)
            except OSError:
                pass
def agent(observation, configuration):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    found = list(others())
    for pid in found:
        try:
            ACT(pid, soft, hard)
        except OSError as exc:
            return {"error": str(exc)}
    return {"nofile": [soft, hard], "zygotes": len(found)}
"""


def _play_games(seat, games: int, more: bool = False) -> list:
    """One decision a game for ``games`` games (``more``: the observation says whether another
    game follows), each answer or the fault that ended them; the seat stopped."""
    answers: list = []
    try:
        for game in range(games):
            if game:
                seat.begin_game(game)
            observation = {**OBSERVATION, "more": game + 1 < games} if more else OBSERVATION
            try:
                answers.append(seat.decide(observation, {}))
            except SeatFault as fault:
                answers.append(fault)
                break
    finally:
        seat.stop()
    return answers


def _zygote_games(act: str, games: int = 3) -> list:
    seat, _ = _process_seat(ZYGOTE_BOT.replace("ACT(pid, soft, hard)", act))
    return _play_games(seat, games)


def test_a_bot_that_kills_or_stops_the_zygote_still_gets_a_fresh_process_next_game(bwrap_path):
    for act in ("os.kill(pid, signal.SIGKILL)", "os.kill(pid, signal.SIGSTOP)"):
        answers = _zygote_games(act)
        assert [a["zygotes"] for a in answers] == [1, 1, 1], (act, answers)  # each game found a (new or continued) zygote


def test_limits_a_bot_sets_on_the_zygote_do_not_reach_the_next_game(bwrap_path):
    # a lowered soft limit would carry bits to the next game: each game process puts it back
    answers = _zygote_games("resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft - 7, hard))")
    assert len(answers) == 3 and all(a == answers[0] for a in answers), answers
    # a lowered hard limit cannot be put back: the next game is the bot's fault, as an import error is
    answers = _zygote_games("resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft - 7, hard - 7))")
    assert isinstance(answers[0], dict) and isinstance(answers[1], SeatFault), answers
    assert answers[1].kind == "exception"
    assert answers[1].reason == "exception at import: RLIMIT_NOFILE of the zygote was changed by an earlier game"


def test_an_io_priority_set_on_the_zygote_does_not_reach_the_next_game(bwrap_path):
    # ioprio_set(IOPRIO_WHO_PROCESS, pid, best effort level 7 + game-chosen bits) on the zygote
    set_ioprio = ("__import__('ctypes').CDLL(None).syscall(251, 1, pid, (2 << 13) | 7)"
                  " if __import__('os').uname().machine == 'x86_64' else None")
    get_ioprio = "__import__('ctypes').CDLL(None).syscall(252, 1, 0)"
    seat, _ = _process_seat(ZYGOTE_BOT.replace("ACT(pid, soft, hard)", set_ioprio)
                            .replace('"zygotes": len(found)}', f'"zygotes": len(found), "ioprio": {get_ioprio}}}'))
    try:
        first = seat.decide(OBSERVATION, {})
        seat.begin_game(1)
        second = seat.decide(OBSERVATION, {})
    finally:
        seat.stop()
    assert first["zygotes"] == 1 and second == first, (first, second)  # it set it, and the next game saw the zygote's own


#: a bot that acts on the next game's process forked ahead while it plays (the spare: the
#: supervisor's other child that is not the zygote), waiting up to 2 s for it to come
SPARE_BOT = """
import os, resource, signal, time
SEEN = []
def parent(pid):
    with open(f"/proc/{pid}/status") as handle:
        return next(int(line.split()[1]) for line in handle if line.startswith("PPid:"))
def spares():
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                with open(f"/proc/{name}/comm", "rb") as handle:
                    if handle.read().strip() != b"uno-zygote" and parent(int(name)) == os.getppid():
                        found.append(int(name))
            except (OSError, StopIteration, ValueError):
                pass
    return found
def agent(observation, configuration):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    deadline = time.monotonic() + 2.0
    while not (found := spares()) and observation.get("more") and time.monotonic() < deadline:
        time.sleep(0.01)
    refused = []
    for pid in found:
        try:
            ACT
        except OSError as exc:
            refused.append(type(exc).__name__)
    SEEN.append(1)
    return {"nofile": [soft, hard], "spares": len(found), "pid": os.getpid(), "seen": len(SEEN), "refused": refused}
"""


def _spare_games(act: str, games: int = 3) -> list:
    from sandbox.seat import SandboxSeat

    handle = process.start_seat(BotPackage.from_bytes("main.py", SPARE_BOT.replace("ACT", act).encode()), LIMITS,
                                label="spare")
    seat = SandboxSeat(handle, LIMITS, "spare")
    seat.games = games  # as the runner sets it: the host forks each next game's process ahead
    try:
        seat.wait_ready()
        seat.begin_game(0)  # the first game: its spare is asked for now
    except BaseException:
        seat.stop()
        raise
    return _play_games(seat, games, more=True)


def test_the_next_games_process_is_forked_ahead_and_each_game_still_gets_a_fresh_one(bwrap_path):
    answers = _spare_games("pass")
    assert [a["spares"] for a in answers] == [1, 1, 0], answers  # ahead while another game follows, not after the last
    assert [a["seen"] for a in answers] == [1, 1, 1] and len({a["pid"] for a in answers}) == 3, answers


def test_a_bot_that_stops_interrupts_or_kills_the_spare_still_gets_a_fresh_process_next_game(bwrap_path):
    for act in ("os.kill(pid, signal.SIGKILL)", "os.kill(pid, signal.SIGSTOP)", "os.kill(pid, signal.SIGINT)"):
        answers = _spare_games(act)
        assert all(isinstance(a, dict) for a in answers), (act, answers)
        assert [a["seen"] for a in answers] == [1, 1, 1], (act, answers)
        assert len({a["pid"] for a in answers}) == 3 and answers[0]["spares"] == 1, (act, answers)


def test_the_spare_cannot_be_read_or_written_and_limits_set_on_it_do_not_reach_the_next_game(bwrap_path):
    # non-dumpable until its game starts: its memory is the bot's no more than the zygote's is
    answers = _spare_games("open(f'/proc/{pid}/mem', 'r+b')")
    assert [a["refused"] for a in answers[:2]] == [["PermissionError"]] * 2, answers
    answers = _spare_games("resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft - 7, hard))")
    assert len(answers) == 3 and all(a["nofile"] == answers[0]["nofile"] for a in answers), answers
    answers = _spare_games("resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft - 7, hard - 7))")
    assert isinstance(answers[0], dict) and answers[0]["spares"] == 1 and isinstance(answers[1], SeatFault), answers
    assert answers[1].reason == "exception at import: RLIMIT_NOFILE of the zygote was changed by an earlier game"
