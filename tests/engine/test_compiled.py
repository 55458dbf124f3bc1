"""The compiled core (engine._core) plays exactly the games of the pure engine (engine.game).

Differential tests: both engines from the same rules, seed and replies, compared on
every observation, legal-action list (dicts and ids), event, action record, error
message, score and rank; and the golden corpus replayed byte for byte with the core.
They skip when the core is not built, and fail then under ARENA_REQUIRE_SERVICES=1
(CI must run both engines). The selection (ARENA_ENGINE) and the fallback without
the core are tested in subprocesses.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from uno_scenarios import rule_sets

import engine.compiled
import engine.match
from engine.faults import SeatFault
from engine.game import Game, IllegalAction
from engine.match import AgentSeat, play_match
from engine.rules import Rules
from engine.snapshot import KEYS, Snapshot

ROOT = Path(__file__).resolve().parents[2]


#: every test here needs the compiled core (tests/conftest.py: core_built)
pytestmark = pytest.mark.usefixtures("core_built")


def _outcome(call, *args):
    """What a call did: None, or the IllegalAction message it raised."""
    try:
        call(*args)
    except IllegalAction as exc:
        return str(exc)
    return None


def play_both(rules: Rules, seed: int, choices: int) -> tuple[Game, object]:
    """Play one game in both engines with the same replies, comparing every step.

    The replies, drawn from ``random.Random(choices)``: mostly a legal action by id or as
    a dict (sometimes with a stray ``"uno"``), and now and then a strike, a forfeit
    fault, an illegal reply or an id that is not legal (the same message from both).
    """
    pure, core = Game(rules, seed), engine.compiled.CompiledGame(rules, seed)
    rng = random.Random(choices)
    step = 0
    while not pure.over:
        assert not core.over, f"step {step}: the core's game ended first"
        observation = pure.observation()
        assert core.observation() == observation, f"step {step}"
        assert json.dumps(core.observation()) == json.dumps(observation)
        ids = pure.legal_action_ids()
        assert core.legal_action_ids() == ids
        assert core.legal_actions() == pure.legal_actions() == observation["legal_actions"]
        # the snapshot: the same items as the pure engine's (tuples, views), to_dict() the observation
        snap, pure_snap = core.snapshot(), pure.snapshot()
        assert isinstance(snap, Snapshot) and type(snap) is engine.compiled._core.Snapshot
        assert list(snap) == list(pure_snap) and dict(snap) == dict(pure_snap) and snap == pure_snap
        assert [type(snap[k]) for k in KEYS] == [type(pure_snap[k]) for k in KEYS]
        assert snap.to_dict() == observation and json.dumps(snap.to_dict()) == json.dumps(observation)
        assert (core.seat, core.decision, core.current, core.pending, core.round) == (
            pure.seat, pure.decision, pure.current, pure.pending, pure.round)
        x = rng.random()
        if x < 0.02:
            strikes = rng.randrange(1, 4)
            for game in (pure, core):
                game.fault("timeout", "too slow", strikes=strikes, forfeit=None if strikes < 3 else "strikes: 3")
        elif x < 0.03:
            for game in (pure, core):
                game.fault("crash", "gone", forfeit="crash: gone")
                game.apply_fallback()
        elif x < 0.05:
            reply = rng.choice([{"type": "play", "card": "R1", "uno": 1}, {"type": "draw", "x": 1}, "draw",
                                {"type": "swap", "target": True}, {"type": "color", "color": "R"}, None])
            assert _outcome(core.apply, reply) == _outcome(pure.apply, reply)
            wrong = rng.choice([rng.randrange(-1, 80), True, 3.0])
            assert _outcome(core.step, wrong) == _outcome(pure.step, wrong)
        elif x < 0.2:  # a snapshot's listed view, as a seat that opts in to snapshots replies
            i = rng.randrange(len(ids))
            pure.apply(pure_snap["legal_actions"][i])
            core.apply(snap["legal_actions"][i])
        elif x < 0.5:
            reply = dict(observation["legal_actions"][rng.randrange(len(ids))])
            if rng.random() < 0.2:
                reply["uno"] = rng.choice([True, 1])
            pure.apply(reply)
            core.apply(dict(reply))
        else:
            pick = ids[rng.randrange(len(ids))]
            pure.step(pick)
            core.step(pick)
        step += 1
    assert core.over
    assert core.events == pure.events
    assert core.actions == pure.actions
    assert json.dumps(core.events) == json.dumps(pure.events)
    assert json.dumps(core.actions) == json.dumps(pure.actions)
    assert (core.scores, core.ranks(), core.round) == (pure.scores, pure.ranks(), pure.round)
    assert core.legal_action_ids() == core.legal_actions() == []
    assert _outcome(core.apply, {"type": "draw"}) == _outcome(pure.apply, {"type": "draw"})
    assert _outcome(core.step, 0) == _outcome(pure.step, 0)
    return pure, core


@pytest.mark.parametrize("players", range(2, 11))
def test_default_rules_play_the_same_games_at_every_seat_count(players):
    for seed in range(4):
        play_both(Rules(players=players, rounds=2), seed, seed)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rule_sets(), seed=st.integers(0, 2**63 - 1), choices=st.integers(0, 2**32))
def test_any_rule_set_plays_the_same_game_in_both_engines(rules, seed, choices):
    play_both(rules, seed, choices)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rule_sets(rounds=st.none(), max_turns=st.integers(1, 40)), seed=st.integers(0, 10**6))
def test_games_to_a_target_and_stalled_games_end_alike(rules, seed):
    """``rounds=none``: played to the target, or ended after 100 stalled rounds (short max_turns)."""
    play_both(Rules(**{**rules.to_dict(), "target": 60}), seed, seed)


def test_events_read_while_the_game_runs_are_one_growing_list():
    """``events``/``actions`` may be read at any time (the live hook does): one list, grown."""
    core = engine.compiled.CompiledGame(Rules(players=3), 5)
    pure = Game(Rules(players=3), 5)
    events = core.events
    while not core.over:
        assert core.events is events and core.event_count == len(events) == len(pure.events)
        action = pure.legal_actions()[0]
        pure.apply(action)
        core.apply(action)
    assert core.events is events and events == pure.events


def test_the_compiled_game_views_and_states_as_the_pure_one():
    pure, core = Game(Rules(players=4), 11), engine.compiled.CompiledGame(Rules(players=4), 11)
    for _ in range(40):
        assert core.state() == pure.state()
        assert [core.view(s) for s in range(4)] == [pure.view(s) for s in range(4)]
        assert core.hands == pure.hands and core.discard == pure.discard
        action = pure.legal_actions()[-1]
        pure.apply(action)
        core.apply(action)


@settings(max_examples=300, deadline=None)
@given(seed=st.one_of(st.text(max_size=300), st.integers().map(lambda i: f"{i}:{i % 7}:seat:{i % 10}")),
       count=st.integers(0, 700), below=st.integers(1, 200), k=st.integers(0, 108))
def test_the_cores_random_streams_are_random_random_number_for_number(seed, count, below, k):
    """String seeding (SHA-512), MT19937, random(), _randbelow and sample(range(108), k) as Python's."""
    rng = random.Random(seed)
    expected = ([rng.random() for _ in range(count)], rng._randbelow(below), rng.sample(range(108), k), rng.random())
    assert engine.compiled._core.stream_check(seed, count, below, k) == expected


@settings(max_examples=300, deadline=None)
@given(seed=st.one_of(st.integers(), st.integers(-(2**63), 2**63 - 1)), deal=st.integers(0, 2**70))
def test_the_cores_game_seed_is_engine_match_game_seed(seed, deal):
    """The core's deal seeds (SHA-256 in C) are the reference's for ints of 64 bits; None beyond."""
    fast = engine.compiled._core.game_seed(seed, deal)
    if -(2**63) <= seed < 2**63 and deal < 2**63:
        assert fast == engine.match.game_seed(seed, deal)
    else:
        assert fast is None
    assert engine.compiled._core.game_seed(True, 0) is None  # not an int as such: the reference decides


def test_rules_that_are_not_rules_are_refused():
    with pytest.raises(TypeError, match="engine.rules.Rules"):
        engine.compiled.CompiledGame({"players": 2}, 1)  # type: ignore[arg-type]


#: how ``_use_core`` has ``play_match`` play its compiled games: the Python turn loop, the C turn loop
#: (``engine.compiled.play_turns``) in the Python match loop, or the whole match loop in C
#: (``engine._core.play_games``, the common match's path)
CORE_MODES = ["python-loop", "c-loop", "c-match"]


def _use_core(monkeypatch, mode: str, made: list | None = None) -> None:
    """Make ``play_match`` play its games with the core, as ``mode`` (one of ``CORE_MODES``) says.

    Patched both where ``engine.match`` makes its games today and where it asks
    ``engine.compiled.new_game`` once wired to it.
    """
    assert mode in CORE_MODES

    class Counted(engine.compiled.CompiledGame):
        __slots__ = ()

        def __init__(self, rules, seed):
            if made is not None:
                made.append(seed)
            super().__init__(rules, seed)

    monkeypatch.setattr(engine.match, "Game", Counted)
    monkeypatch.setattr(engine.compiled, "CompiledGame", Counted)
    monkeypatch.setattr(engine.compiled, "COMPILED", True)
    monkeypatch.setattr(engine.match, "_core_play_games", engine.compiled._core.play_games if mode == "c-match" else None)
    if mode == "c-loop":
        python_loop = engine.match._play_turns

        def play_turns(game, *args):
            if isinstance(game, engine.compiled.CompiledGame):
                return engine.compiled.play_turns(game, *args)
            return python_loop(game, *args)

        monkeypatch.setattr(engine.match, "_play_turns", play_turns)


@pytest.mark.parametrize("mode", CORE_MODES)
def test_the_golden_corpus_replays_observes_and_ranks_byte_for_byte_with_the_core(monkeypatch, mode):
    import test_regression_corpus as corpus

    made: list[int] = []
    _use_core(monkeypatch, mode, made)
    entries = json.loads(corpus.CORPUS.read_text())
    differ = []
    for i, entry in enumerate(entries):
        got = corpus.fingerprint(entry)
        if got != entry["expect"]:
            changed = ", ".join(k for k in got if got[k] != entry["expect"][k])
            differ.append(f"entry {i} (rules {entry['rules']}, bots {entry['bots']}): {changed}")
    assert not differ, "\n".join(differ[:20])
    # every game on the core twice: played by play_match, then re-simulated by the fingerprint's
    # replay verification (engine.replay.replay_game, which makes its games with new_game too)
    assert len(made) == 2 * sum(e["games"] * (len(e["bots"]) if e["duplicate"] else 1) for e in entries)


class Flaky:
    """A timed seat that now and then times out, replies illegally, crashes or fails to start."""

    def __init__(self, name: str, crash_at: int = 0):
        self.name = name
        self.calls = 0
        self.crash_at = crash_at
        self.last_decision_seconds: object = None

    def begin_game(self, index):
        if index == 2 and self.name == "late":
            raise SeatFault("timeout", "slow start")

    def decide(self, observation, configuration):
        self.calls += 1
        self.last_decision_seconds = [0.001 * (self.calls % 7), True, None, "x", 2][self.calls % 5]
        if self.crash_at and self.calls == self.crash_at:
            raise SeatFault("crash", "gone")
        if self.calls % 13 == 0:
            raise SeatFault("timeout", "slow")
        if self.calls % 17 == 0:
            return {"type": "play", "card": "W"}
        if self.calls % 19 == 0:
            return [1]
        return observation["legal_actions"][self.calls % len(observation["legal_actions"])]


@pytest.mark.parametrize("mode", ["python-loop", "c-loop"])  # a live hook: never the C match loop
def test_a_match_with_faulty_timed_seats_and_a_live_hook_is_the_same_in_both_engines(monkeypatch, mode):
    def match():
        steps = []

        def on_step(game, events, actions):
            steps.append((json.dumps(game), len(events), len(actions), json.dumps(events[-3:]), json.dumps(actions[-2:])))

        calls = []

        def first_then_raise(o, c):  # an AgentSeat's agent: the C loop calls it without AgentSeat.decide
            calls.append(1)
            if len(calls) == 60:
                raise ValueError("a bug at call 60")
            return o["legal_actions"][0]

        seats = [Flaky("flaky"), AgentSeat(first_then_raise, "first"), Flaky("late"), Flaky("crash", crash_at=40)]
        rules = Rules(players=4, max_strikes=5, jump_in=True, seven_zero=True, rounds=2)
        result = play_match(rules, seats, seed=9, deals=2, duplicate=True, on_step=on_step)
        return result, steps

    pure, pure_steps = match()
    _use_core(monkeypatch, mode)
    core, core_steps = match()
    assert json.dumps(core.replay) == json.dumps(pure.replay)
    assert core.players == pure.players and any(p.forfeit for p in core.players)
    assert str(core.players[1].forfeit) == "exception: ValueError: a bug at call 60"
    assert (core.timings, core.decision_ms, core.games, core.rounds) == (
        pure.timings, pure.decision_ms, pure.games, pure.rounds)
    assert core_steps == pure_steps


def test_observations_written_in_place_are_plain_dicts_the_cyclic_gc_tracks():
    """The core's observation dict (values written into a copy of a template on CPython 3.11/3.12)
    is an ordinary dict: the pure engine's keys, order and values; a bot may change it and keep it,
    and a cycle through it is collected."""
    import gc

    if sys.version_info[:2] in ((3, 11), (3, 12)):
        assert engine.compiled._core.OBSERVATION_IN_PLACE == 1
    rules = Rules(players=3, rounds=1)
    core, pure = engine.compiled.CompiledGame(rules, 2), Game(rules, 2)
    for _ in range(30):
        observation, expected = core.observation(), pure.observation()
        assert type(observation) is dict and gc.is_tracked(observation)
        assert list(observation.items()) == list(expected.items())
        assert core.snapshot().to_dict() == expected and gc.is_tracked(core.snapshot().to_dict())
        core.step(core.legal_action_ids()[0])
        pure.step(pure.legal_action_ids()[0])
    observation = core.observation()
    del observation["seat"]
    observation.update(seat=9, mine=[observation])
    assert list(observation)[-2:] == ["seat", "mine"] and len(observation) == 18
    gc.collect()
    del observation
    assert gc.collect() >= 2  # the dict and the list that held it


def _pure_then_c_match(monkeypatch, play):
    """``play()`` once with the pure engine (the reference), once with the whole match loop in C
    (``engine._core.play_games``; the Python match loop refused, so the C one must play)."""
    with monkeypatch.context() as m:
        m.setattr(engine.compiled, "COMPILED", False)
        m.setattr(engine.match, "_core_play_games", None)
        pure = play()

    def python_match_loop(*args):
        raise AssertionError("the common match went through engine.match._play_games")

    with monkeypatch.context() as m:
        _use_core(m, "c-match")
        m.setattr(engine.match, "_play_games", python_match_loop)
        core = play()
    return pure, core


class Subclassed(AgentSeat):
    """An AgentSeat subclass: ``decide`` is called as a method (the agent not called directly)."""


def _match_case(case):
    first = lambda o, c: o["legal_actions"][0]  # noqa: E731
    last = lambda o, c: o["legal_actions"][-1]  # noqa: E731
    begun: list = []
    games: list = []
    if case == "two-seats-three-deals":
        rules, seats, kw = Rules(players=2, rounds=2), [AgentSeat(first, "a"), AgentSeat(last, "b")], {"deals": 3}
    elif case == "three-seats-duplicate-lazy-names":
        rules = Rules(players=3, rounds=1, scoring="penalty")
        seats = [AgentSeat(first, "a"), AgentSeat(last, "b", lazy_observation=True), Subclassed(first, "c")]
        kw = {"deals": 2, "duplicate": True, "names": ["x", 7, "z"], "configuration": {"extra": 1}}
    elif case == "four-seats-faults-timings-begin-game":
        calls = []

        def raises_at_30(o, c):
            calls.append(1)
            if len(calls) == 30:
                raise ValueError("a bug at call 30")
            return o["legal_actions"][-1]

        started = AgentSeat(first, "started")
        started.begin_game = begun.append
        seats = [Flaky("flaky"), AgentSeat(raises_at_30, "raises"), Flaky("late"), started]
        rules = Rules(players=4, max_strikes=4, jump_in=True, seven_zero=True, rounds=2)
        kw = {"deals": 2, "duplicate": True, "on_game": lambda done, total: games.append((done, total))}
    else:  # a seed beyond 64 bits (the reference's game_seed), a seat changing its decide
        odd = AgentSeat(first, "odd")
        odd.decide = lambda o, c: o["legal_actions"][-1]
        rules, seats, kw = Rules(players=2, rounds=1), [odd, AgentSeat(first, "a")], {"seed": -(2**70), "deals": 2}
    result = play_match(rules, seats, **kw)
    return result, begun, games


@pytest.mark.parametrize("case", ["two-seats-three-deals", "three-seats-duplicate-lazy-names",
                                  "four-seats-faults-timings-begin-game", "huge-seed-own-decide"])
def test_the_common_match_in_c_gives_the_pure_engines_result_and_replay(monkeypatch, case):
    pure, core = _pure_then_c_match(monkeypatch, lambda: _match_case(case))
    (p, p_begun, p_games), (c, c_begun, c_games) = pure, core
    assert json.dumps(c.replay) == json.dumps(p.replay)
    assert c.players == p.players and c == p
    assert (c.timings, c.decision_ms, c.games, c.rounds) == (p.timings, p.decision_ms, p.games, p.rounds)
    assert (c_begun, c_games) == (p_begun, p_games)
    if case == "four-seats-faults-timings-begin-game":
        assert c_begun == list(range(c.games)) and c_games[-1] == (8, 8)
        assert any(pl.forfeit for pl in c.players) and any(pl.strikes for pl in c.players)
        assert any(t["decisions"] for t in c.timings)


def test_the_common_match_in_c_passes_an_infrastructure_error_and_restores_the_collector(monkeypatch):
    import gc

    from engine.faults import InfrastructureError

    def lost(index):
        raise InfrastructureError("no container")

    seat, starting = AgentSeat(lambda o, c: o["legal_actions"][0], "first"), AgentSeat(lambda o, c: "x", "starting")
    starting.begin_game = lost

    class Lost:
        def decide(self, observation, configuration):
            raise InfrastructureError("docker gone")

    _use_core(monkeypatch, "c-match")
    for seats, message in (([seat, Lost()], "docker gone"), ([seat, starting], "no container")):
        with pytest.raises(InfrastructureError, match=message):
            play_match(Rules(players=2), seats, seed=1)
        assert gc.isenabled()


class CallableAgent:
    """An agent object: the C loop calls its class's ``__call__`` function itself, as CPython would."""

    def __init__(self, raise_at: int):
        self.calls, self.raise_at = 0, raise_at

    def __call__(self, observation, configuration):
        self.calls += 1
        if self.calls == self.raise_at:
            raise KeyError("a bug in __call__")
        return observation["legal_actions"][self.calls % len(observation["legal_actions"])]


class StaticCallAgent:
    __call__ = staticmethod(lambda observation, configuration: observation["legal_actions"][-1])


def test_agent_objects_of_every_kind_of_call_play_alike_in_both_engines(monkeypatch):
    import functools

    def match():
        seats = [AgentSeat(CallableAgent(raise_at=45), "object"), AgentSeat(StaticCallAgent(), "static"),
                 AgentSeat(functools.partial(lambda k, o, c: o["legal_actions"][k % len(o["legal_actions"])], 1),
                           "partial"),
                 AgentSeat(CallableAgent(raise_at=0), "lazy object", lazy_observation=True)]
        return play_match(Rules(players=4, rounds=2), seats, seed=3, deals=2)

    pure = match()
    _use_core(monkeypatch, "c-match")
    core = match()
    assert json.dumps(core.replay) == json.dumps(pure.replay) and core.players == pure.players
    assert str(core.players[0].forfeit) == "exception: KeyError: 'a bug in __call__'"


def test_an_infrastructure_error_goes_through_the_c_loop_untouched(monkeypatch):
    from engine.faults import InfrastructureError

    class Broken:
        name = "broken"

        def decide(self, observation, configuration):
            raise InfrastructureError("docker gone")

    for mode in ("c-loop", "c-match"):
        _use_core(monkeypatch, mode)
        with pytest.raises(InfrastructureError, match="docker gone"):
            play_match(Rules(players=2), [Broken(), Broken()], seed=1)


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "ARENA_ENGINE"}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**environ, **env},
                          capture_output=True, text=True, timeout=60)


SHOW = "from engine.compiled import new_game; from engine.rules import Rules; print(type(new_game(Rules(), 1)).__name__)"


def test_the_core_plays_by_default_and_arena_engine_pure_selects_the_pure_engine():
    assert _python(SHOW).stdout.strip() == "CompiledGame"
    assert _python(SHOW, ARENA_ENGINE="compiled").stdout.strip() == "CompiledGame"
    pure = _python(SHOW, ARENA_ENGINE="pure")
    assert (pure.stdout.strip(), pure.stderr) == ("Game", "")
    wrong = _python(SHOW, ARENA_ENGINE="fast")
    assert wrong.returncode != 0 and "ARENA_ENGINE='fast' is not one of auto, pure, compiled" in wrong.stderr


def test_without_the_core_the_pure_engine_plays_with_a_one_line_note():
    hide = "import sys; sys.modules['engine._core'] = None; "
    missing = _python(hide + SHOW)
    assert missing.returncode == 0 and missing.stdout.strip() == "Game"
    assert len(missing.stderr.splitlines()) == 1 and "pure-Python engine plays" in missing.stderr
    # asked for the core by name: an error, not a silent fallback
    forced = _python(hide + SHOW, ARENA_ENGINE="compiled")
    assert forced.returncode != 0 and "ARENA_ENGINE=compiled but the compiled core" in forced.stderr


def test_replay_verification_and_the_environments_run_on_the_core(monkeypatch):
    """The other places that make games (engine.replay, engine.envs) work with a CompiledGame."""
    import engine.replay

    result = play_match(Rules(players=3, jump_in=True, seven_zero=True, rounds=3),
                        [AgentSeat(lambda o, c: o["legal_actions"][-1], "last")] * 3, seed=4, deals=2)
    document = json.loads(json.dumps(result.replay))
    pure_states = [engine.replay.state_at(document, 0, i) for i in (0, 30, 60)]
    checked = engine.replay.verify(document)
    monkeypatch.setattr(engine.replay, "Game", engine.compiled.CompiledGame)
    assert engine.replay.verify(document) == checked > 0
    assert [engine.replay.state_at(document, 0, i) for i in (0, 30, 60)] == pure_states
    document["games"][1]["events"][40]["seat"] = 99
    with pytest.raises(engine.replay.ReplayError):
        engine.replay.verify(document)
    pytest.importorskip("pettingzoo")
    import engine.envs
    from engine.game import Game

    monkeypatch.setattr(engine.compiled, "COMPILED", True)  # the core even under ARENA_ENGINE=pure
    core_env = engine.envs.env(players=3)
    core_env.reset(seed=3)
    assert isinstance(core_env.game, engine.compiled.CompiledGame)
    monkeypatch.setattr(engine.envs, "new_game", Game)  # the same env on the pure engine
    pure_env = engine.envs.env(players=3)
    pure_env.reset(seed=3)
    assert type(pure_env.game) is Game
    for agent in pure_env.agent_iter(max_iter=500):
        assert core_env.agent_selection == agent
        pure_last, core_last = pure_env.last(), core_env.last()
        assert (pure_last[0]["observation"] == core_last[0]["observation"]).all()
        assert (pure_last[0]["action_mask"] == core_last[0]["action_mask"]).all()
        assert pure_last[1:4] == core_last[1:4]
        action = None if pure_last[2] or pure_last[3] else int(pure_last[0]["action_mask"].nonzero()[0][-1])
        pure_env.step(action)
        core_env.step(action)


def test_a_core_built_from_another_source_is_stale(tmp_path):
    source = tmp_path / "_core.c"
    source.write_bytes(b"int x;\n")
    digest = hashlib.sha256(b"int x;\n").hexdigest()
    assert engine.compiled.stale(digest, "core.so", source) is None
    assert engine.compiled.stale("", "core.so", source) is None  # built without the hash: trusted
    assert engine.compiled.stale(digest, "core.so", tmp_path / "gone.c") is None  # no source beside it
    source.write_bytes(b"int y;\n")
    assert "stale: core.so was built from another _core.c; rebuild it" in engine.compiled.stale(digest, "core.so", source)
    # the core this checkout loaded was built from the source beside it
    assert engine.compiled._core.SOURCE_SHA256 == hashlib.sha256(
        (ROOT / "engine" / "_core.c").read_bytes()).hexdigest()


def test_play_match_plays_on_the_core_and_its_c_loop_with_plain_and_snapshot_seats(monkeypatch):
    """engine.match wires the core in: the common match's games are the core's, played by the C match
    loop (engine._core.play_games), a match with a live hook's come from engine.compiled.new_game and
    their turns from the C turn loop; the same match as the pure engine's, also for seats that ask
    for snapshots (the core's own, engine._core.Snapshot)."""
    if not engine.compiled.COMPILED:
        pytest.skip("ARENA_ENGINE=pure: the pure engine plays by choice")
    looped: list[str] = []
    matches: list[int] = []
    c_loop, c_match = engine.compiled.play_turns, engine.match._core_play_games

    def counted(game, *args):
        looped.append(type(game).__name__)
        return c_loop(game, *args)

    def counted_match(*args):
        matches.append(1)
        return c_match(*args)

    monkeypatch.setattr(engine.compiled, "play_turns", counted)
    monkeypatch.setattr(engine.match, "_core_play_games", counted_match)
    rules = Rules(players=3, rounds=1)

    def agents(lazy):
        return [AgentSeat(lambda o, c: o["legal_actions"][0], f"first{i}", lazy_observation=lazy) for i in range(3)]

    def watched(game, events, actions):
        pass

    on_core = play_match(rules, agents(False), seed=11, deals=2, duplicate=True)
    assert (matches, looped) == ([1], [])
    monkeypatch.setattr(engine.compiled, "COMPILED", False)  # what ARENA_ENGINE=pure selects
    pure = play_match(rules, agents(False), seed=11, deals=2, duplicate=True)
    assert (matches, looped) == ([1], [])
    monkeypatch.setattr(engine.compiled, "COMPILED", True)
    lazy = play_match(rules, agents(True), seed=11, deals=2, duplicate=True)
    live = play_match(rules, agents(True), seed=11, deals=2, duplicate=True, on_step=watched)
    assert (matches, looped) == ([1, 1], ["CompiledGame"] * 6)
    for played in (on_core, lazy, live):
        assert json.dumps(played.replay, sort_keys=True) == json.dumps(pure.replay, sort_keys=True)


@pytest.mark.parametrize("seed", ["a\x00b", "é" * 150, 10**200])
def test_seeds_whose_text_holds_a_nul_or_is_long_play_the_same_game(seed):
    """The core seeds a round's streams from the seed's text byte for byte (a NUL kept, a long text
    on the heap), as random.Random(f"{seed}:...") does."""
    play_both(Rules(players=3, rounds=2), seed, 5)


@pytest.mark.parametrize("seed", [0, -1, -(2**63), 2**63 - 1, 2**63, -(2**63) - 1])
def test_seeds_at_the_ends_of_64_bits_play_the_same_game(seed):
    """A seed of 64 bits has its text written by the core itself (seed_round), a larger one made by
    str() (seed_round_text): either side of each end, the same streams as random.Random's."""
    play_both(Rules(players=3, rounds=2), seed, 5)
