"""``Game.snapshot()``: the opt-in read-only observation (docs/engine.md, "Observations: plain or snapshot")."""

from __future__ import annotations

import copy
import json
import pickle
import random
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

import pytest

from engine.bots import REFERENCE_BOTS
from engine.game import Game, IllegalAction
from engine.match import AgentSeat, play_match
from engine.rules import Rules
from engine.snapshot import KEYS, Snapshot

CORPUS = Path(__file__).with_name("regression_corpus.json")


def _engines() -> list:
    """The pure engine's Game and, when built, the compiled core's game: each hands out its own snapshots."""
    import engine.compiled

    games = [pytest.param(Game, id="pure")]
    if engine.compiled._core is not None:
        games.append(pytest.param(engine.compiled.CompiledGame, id="core"))
    return games


@pytest.fixture(params=_engines())
def make(request):
    return request.param


def corpus_rules() -> list[Rules]:
    """The golden corpus's rule sets: random house rules at 2-10 seats and the official ones."""
    seen: dict[str, Rules] = {}
    for entry in json.loads(CORPUS.read_text()):
        seen.setdefault(json.dumps(entry["rules"], sort_keys=True), Rules.from_dict(entry["rules"]))
    return list(seen.values())


def test_every_decision_of_the_corpus_rule_sets_snapshots_to_the_observation(make):
    """For every decision of a game per corpus rule set (2-10 seats, every option), both ways of
    replying: ``to_dict()`` is the observation, JSON-equal, and the replies play the same game."""
    rule_sets = corpus_rules()
    assert len(rule_sets) > 100 and {r.players for r in rule_sets} == set(range(2, 11))
    decisions = 0
    for i, rules in enumerate(rule_sets):
        bot = REFERENCE_BOTS[("random", "first", "greedy", "expert")[i % 4]]
        configuration = {"rules": rules.to_dict()}
        lazy, plain = make(rules, i), Game(rules, i)
        rng = random.Random(i)
        while not plain.over:
            # both orders: the last one asked is what the game matches replies against by identity
            if decisions % 2:
                snap, observation = lazy.snapshot(), lazy.observation()
            else:
                observation, snap = lazy.observation(), lazy.snapshot()
            expected = plain.observation()
            assert snap.to_dict() == observation == expected
            assert json.dumps(snap.to_dict()) == json.dumps(expected)
            assert list(snap) == list(expected) == list(KEYS) and len(snap) == len(KEYS)
            assert all(type(snap[k]) is tuple for k in ("hand", "hand_sizes", "uno", "scores", "discard", "legal_actions"))
            assert all(type(a) is MappingProxyType for a in snap["legal_actions"])
            # a reference bot chooses the same on either; a random listed action now and then
            choice = bot(snap, configuration)
            index = list(snap["legal_actions"]).index(choice)
            assert bot(expected, configuration) == expected["legal_actions"][index]
            if rng.random() < 0.2:
                index = rng.randrange(len(expected["legal_actions"]))
            lazy.apply(snap["legal_actions"][index])
            plain.apply(expected["legal_actions"][index])
            decisions += 1
        assert lazy.events == plain.events and lazy.actions == plain.actions
    assert decisions > 10_000


def test_a_snapshot_is_read_only_and_not_json(make):
    game = make(Rules(players=3), seed=4)
    snap = game.snapshot()
    assert isinstance(snap, Mapping) and not isinstance(snap, dict)
    with pytest.raises(TypeError):
        snap["hand"] = []  # type: ignore[index]
    with pytest.raises(TypeError):
        snap["legal_actions"][0]["type"] = "draw"
    with pytest.raises(AttributeError):
        snap["hand"].append("R1")
    with pytest.raises(TypeError, match="not JSON serializable"):
        json.dumps(snap)
    with pytest.raises(TypeError, match="to_dict"):
        pickle.dumps(snap)
    assert copy.deepcopy(snap) is snap and copy.copy(snap) is snap
    with pytest.raises(KeyError):
        snap["nothing"]
    assert snap.get("nothing", 7) == 7 and "hand" in snap and "nothing" not in snap
    assert dict(snap) == {k: snap[k] for k in KEYS}
    # to_dict is the caller's own: changing it changes nothing in the game or the snapshot
    mine = snap.to_dict()
    mine["legal_actions"][0]["type"] = "bogus"
    mine["hand"].clear()
    assert snap.to_dict() == game.observation() != mine


def test_a_snapshot_kept_after_its_decision_shows_that_decision(make):
    rules = Rules(players=4, seven_zero=True, jump_in=True, wd4="free", stacking="stack")
    game = make(rules, seed=11)
    kept = []
    while not game.over:
        snap = game.snapshot()
        kept.append((snap, game.observation()))
        if len(kept) % 3:
            snap["discard"]  # read now, or only at the end
        game.apply(snap["legal_actions"][len(kept) % len(snap["legal_actions"])])
    assert len(kept) > 50
    for snap, observation in kept:
        assert snap.to_dict() == observation


def test_listed_actions_are_shared_views_between_decisions(make):
    game = make(Rules(players=2), seed=3)
    draws = []
    while not game.over and len(draws) < 20:
        snap = game.snapshot()
        draws += [a for a in snap["legal_actions"] if a["type"] == "draw"]
        game.apply(snap["legal_actions"][0])
    assert len(draws) >= 2 and all(d is draws[0] for d in draws)


@pytest.mark.parametrize("reply", [
    lambda view: view,
    lambda view: MappingProxyType(dict(view)),  # a view the bot made itself: parsed like a dict
])
def test_a_view_reply_is_recorded_as_the_listed_dict(reply, make):
    rules = Rules(players=3, rounds=1)
    by_view, by_dict = make(rules, seed=9), Game(rules, seed=9)
    while not by_dict.over:
        view = by_view.snapshot()["legal_actions"][-1]
        by_view.apply(reply(view))
        by_dict.apply(by_dict.legal_actions()[-1])
    assert by_view.actions == by_dict.actions and by_view.events == by_dict.events
    assert all(type(record["action"]) is dict for record in by_view.actions)


def test_a_view_that_is_not_legal_now_is_refused(make):
    game = make(Rules(players=2), seed=5)
    old = game.snapshot()["legal_actions"]
    while {a["type"] for a in game.snapshot()["legal_actions"]} != {"play", "pass"}:
        game.apply(game.snapshot()["legal_actions"][-1])  # draw until a drawn card is playable
    stale = next(a for a in old if a["type"] == "draw")
    with pytest.raises(IllegalAction, match="'draw'"):
        game.apply(stale)


def test_a_deep_copied_game_plays_on_like_the_original():
    game = Game(Rules(players=3, jump_in=True, rounds=1), seed=2)
    for _ in range(30):
        game.apply(game.snapshot()["legal_actions"][0])
    twin = copy.deepcopy(game)
    while not game.over:
        action = game.snapshot()["legal_actions"][-1]
        game.apply(action)
        twin.apply(twin.snapshot()["legal_actions"][-1])
    assert twin.events == game.events


@pytest.mark.parametrize("players", [2, 4, 7])
def test_play_match_gives_opted_in_seats_snapshots_and_the_same_replay(players):
    """Every reference bot plays the same match on snapshots as on dicts (its choices are
    functions of what it reads); only seats that opt in get snapshots."""
    rules = Rules(players=players, jump_in=players > 2, seven_zero=players == 4)
    names = [list(REFERENCE_BOTS)[i % 4] for i in range(players)]
    seen: dict[int, set[type]] = {}

    def watched(i: int, name: str):
        def agent(observation, configuration):
            seen.setdefault(i, set()).add(Snapshot if isinstance(observation, Snapshot) else type(observation))
            return REFERENCE_BOTS[name](observation, configuration)
        return agent

    plain = play_match(rules, [AgentSeat(REFERENCE_BOTS[n], n) for n in names], seed=5, deals=2, duplicate=True)
    lazy = play_match(
        rules,
        [AgentSeat(watched(i, n), n, lazy_observation=i % 2 == 0) for i, n in enumerate(names)],
        seed=5, deals=2, duplicate=True,
    )
    assert json.dumps(lazy.replay) == json.dumps(plain.replay)
    assert lazy.players == plain.players
    assert {i: seen[i] for i in range(players)} == {i: {Snapshot} if i % 2 == 0 else {dict} for i in range(players)}


def test_lazy_observation_must_be_a_bool():
    with pytest.raises(TypeError, match="lazy_observation"):
        AgentSeat(REFERENCE_BOTS["first"], lazy_observation="yes")  # type: ignore[arg-type]
