"""sandbox.runner.play_sandboxed_match: backends, faults, logs and the process-backend switch."""

from __future__ import annotations

import pytest

from engine.rules import Rules
from sandbox.limits import Limits
from sandbox.package import BotPackage
from sandbox.runner import SandboxNotAllowed, play_sandboxed_match

RULES = Rules.parse(["players=2", "rounds=1", "hand_size=3"])
CHATTY = BotPackage.from_bytes(
    "chatty.py",
    b"print('imported')\n"
    b"seen = 0\n"
    b"def agent(observation, configuration):\n"
    b"    global seen\n"
    b"    seen += 1\n"
    b"    print('decision', seen, configuration['time_per_decision'])\n"
    b"    return observation['legal_actions'][0]\n",
)
CRASHER = BotPackage.from_bytes("crash.py", b"def agent(observation, configuration):\n    return {}['missing']\n")


def test_reference_bots_play_in_process_and_the_result_reads_through():
    outcome = play_sandboxed_match(RULES, ["first", "random"], seed=3)
    assert outcome.backend == "inprocess"
    assert [p.name for p in outcome.result.players] == ["first", "random"]
    assert outcome.result.players is outcome.result.players
    assert all(p.forfeit is None for p in outcome.result.players)


def test_in_process_package_keeps_module_state_and_logs_its_prints():
    outcome = play_sandboxed_match(RULES, [CHATTY, "first"], seed=3, limits=Limits(time_per_decision=0.25))
    log = outcome.logs[0]
    assert log.startswith("imported\ndecision 1 0.25\n")
    decisions = outcome.result.timings[0]["decisions"]
    assert f"decision {decisions} 0.25\n" in log  # module state lived the whole match
    assert outcome.result.players[0].name == CHATTY.short_name


def test_exception_in_agent_forfeits_only_that_bot():
    outcome = play_sandboxed_match(RULES, [CRASHER, "first"], seed=3)
    assert str(outcome.result.players[0].forfeit) == "exception: exception in agent: KeyError: 'missing'"
    assert outcome.result.players[0].rank == 2
    assert outcome.result.players[1].forfeit is None
    assert [str(f) for f in outcome.result.players[0].faults] == ["exception: exception in agent: KeyError: 'missing'"]


def test_process_backend_is_refused_for_packages_unless_allowed():
    with pytest.raises(SandboxNotAllowed, match="allow_process=True"):
        play_sandboxed_match(RULES, [CHATTY, "first"], seed=3, backend="process")


def test_process_backend_plays_a_package_when_allowed(bwrap_path):
    outcome = play_sandboxed_match(RULES, [CHATTY, CRASHER], seed=3, backend="process", allow_process=True)
    assert outcome.result.players[0].forfeit is None
    assert str(outcome.result.players[1].forfeit) == "exception: exception in agent: KeyError: 'missing'"
    assert outcome.logs[0].startswith("imported\ndecision 1 1.0\n")


@pytest.mark.docker
@pytest.mark.services
def test_docker_backend_plays_a_package(docker_client):
    outcome = play_sandboxed_match(RULES, [CHATTY, "first"], seed=3, backend="docker", match_id="runnertest1")
    assert outcome.result.players[0].forfeit is None
    assert outcome.logs[0].startswith("imported\ndecision 1 1.0\n")
    assert docker_client.containers.list(all=True, filters={"label": "uno-arena.match=runnertest1"}) == []


def test_same_seed_same_bots_same_replay_across_backends(bwrap_path):
    inprocess = play_sandboxed_match(RULES, [CHATTY, "random"], seed=9)
    process = play_sandboxed_match(RULES, [CHATTY, "random"], seed=9, backend="process", allow_process=True)
    assert inprocess.result.replay == process.result.replay


def _decision_logs(outcome, bot):
    marks = outcome.log_marks[bot]
    return [outcome.logs[bot][a:b] for a, b in zip(marks, marks[1:], strict=False)]


@pytest.mark.parametrize("backend", ["inprocess", "process", pytest.param("docker", marks=[pytest.mark.docker, pytest.mark.services])])
def test_log_marks_split_the_log_into_what_each_decision_printed(backend, request):
    request.getfixturevalue({"inprocess": "tmp_path", "process": "bwrap_path", "docker": "docker_client"}[backend])
    outcome = play_sandboxed_match(RULES, [CHATTY, "first"], seed=3, backend=backend, allow_process=True, match_id=f"marks{backend}")
    chunks = _decision_logs(outcome, 0)
    decisions = outcome.result.timings[0]["decisions"]
    assert len(chunks) == decisions > 1
    assert chunks == [f"decision {k} 1.0\n" for k in range(1, decisions + 1)]  # the import print is before marks[0]
    assert outcome.logs[0][: outcome.log_marks[0][0]] == "imported\n"
    assert outcome.log_marks[1] == [0] * (outcome.result.timings[1]["decisions"] + 1)  # a reference bot prints nothing


SLEEPER = BotPackage.from_bytes(
    "sleeper.py",
    b"import time\n"
    b"def agent(observation, configuration):\n"
    b"    if observation['decision'] == 'play':\n"
    b"        time.sleep(0.03)\n"
    b"    return observation['legal_actions'][0]\n",
)


@pytest.mark.parametrize("backend", ["inprocess", "process"])
def test_a_bot_that_sleeps_shows_at_least_that_time_on_those_decisions(backend, request):
    if backend == "process":
        request.getfixturevalue("bwrap_path")
    outcome = play_sandboxed_match(RULES, [SLEEPER, "first"], seed=3, backend=backend, allow_process=True)
    replay = outcome.result.replay
    slept = 0
    for game, times in zip(replay["games"], outcome.result.decision_ms, strict=True):
        for record, ms in zip(game["actions"], times, strict=True):
            if game["seats"][record["seat"]] != 0:
                continue
            if record["decision"] == "play":
                assert ms >= 30.0, record
                slept += 1
    assert slept > 0


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"backend": "vm"}, ValueError, "unknown sandbox backend 'vm'"),
        ({"configuration": {"time_bank": 99}}, ValueError, "configuration may not set time_bank"),
    ],
)
def test_bad_arguments_are_refused_with_the_value(kwargs, error, message):
    with pytest.raises(error, match=message):
        play_sandboxed_match(RULES, ["first", "first"], seed=1, **kwargs)


def test_a_bot_that_is_neither_name_nor_package_is_refused():
    with pytest.raises(TypeError, match="bot 1 must be a reference bot name or a BotPackage, got bytes"):
        play_sandboxed_match(RULES, ["first", b"def agent(o, c): pass"], seed=1)


def test_in_process_decision_over_the_bank_is_a_timeout_strike():
    slow = BotPackage.from_bytes(
        "slow.py",
        b"import time\ndef agent(observation, configuration):\n    time.sleep(0.12)\n    return observation['legal_actions'][0]\n",
    )
    outcome = play_sandboxed_match(RULES, [slow, "first"], seed=3, limits=Limits(time_per_decision=0.05, time_bank=0.1))
    kinds = [f.kind for f in outcome.result.players[0].faults]
    assert kinds and set(kinds) == {"timeout"}


@pytest.mark.parametrize("backend", ["process", pytest.param("docker", marks=[pytest.mark.docker, pytest.mark.services])])
def test_last_prints_before_a_crash_reach_the_log(backend, request):
    request.getfixturevalue("docker_client" if backend == "docker" else "bwrap_path")
    dying = BotPackage.from_bytes(
        "dying.py",
        b"import sys\n"
        b"def agent(observation, configuration):\n"
        b"    print('last words', observation['hand'])\n"
        b"    sys.stderr.write('to stderr, no newline')\n"
        b"    return 1 / 0\n",
    )
    outcome = play_sandboxed_match(RULES, [dying, "first"], seed=3, backend=backend, allow_process=True)
    assert str(outcome.result.players[0].forfeit) == "exception: exception in agent: ZeroDivisionError: division by zero"
    assert outcome.logs[0].startswith("last words [")
    assert outcome.logs[0].endswith("to stderr, no newline")


def test_unknown_reference_bot_fails_before_any_sandbox_starts(bwrap_path, monkeypatch):
    from sandbox.backends import process

    started = []
    monkeypatch.setattr(process, "start_seat", lambda *a, **k: started.append(a))
    with pytest.raises(KeyError, match="unknown reference bot: 'nobody'"):
        play_sandboxed_match(RULES, [CHATTY, "nobody"], seed=1, backend="process", allow_process=True)
    assert started == []
