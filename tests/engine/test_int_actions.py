"""The int-action API: ``ACTIONS``, ``Game.legal_action_ids``, ``Game.step``."""

from __future__ import annotations

import random

import pytest

from engine.cards import CODES, COLORS
from engine.game import (
    ACTION_ID,
    ACTIONS,
    COLOR,
    NUM_ACTIONS,
    PLAY,
    SWAP,
    Game,
    IllegalAction,
    _action_dict,
)
from engine.rules import Rules


def test_encoding_is_derived_from_the_card_kinds_and_fixed():
    assert NUM_ACTIONS == len(ACTIONS) == len(set(ACTIONS)) == 4 + 52 + 2 * 4 + 10 + 4
    # the four plain actions first, then every card kind (wilds once per colour), then swaps and colours
    assert [_action_dict(a, False) for a in ACTIONS[:4]] == [{"type": t} for t in ("draw", "pass", "accept", "challenge")]
    plays = [a for a in ACTIONS if a[0] == PLAY]
    assert [CODES[a[1]] for a in plays[:13]] == list(CODES[:13])
    assert [_action_dict(a, False) for a in plays[-4:]] == [{"type": "play", "card": "W+4", "color": c} for c in COLORS]
    assert _action_dict(ACTIONS[4], False) == {"type": "play", "card": "R0"}
    assert all(ACTION_ID[a] == i for i, a in enumerate(ACTIONS))
    # the table of docs/engine.md, "Int actions"
    assert [ACTIONS[i][0] for i in (63, 64, 73, 74, 77)] == [PLAY, SWAP, SWAP, COLOR, COLOR]
    assert ACTIONS[64] == (SWAP, 0) and ACTIONS[74] == (COLOR, 0)


@pytest.mark.parametrize("rules", [
    Rules(players=2),
    Rules(players=4, wd4="enforced", stacking="stack", jump_in=True, seven_zero=True),
    # draw until playable makes long games: 8 s through both paths
    pytest.param(Rules(players=3, draw="until_playable", wd4="challenge"), marks=pytest.mark.slow),
])
def test_step_plays_the_same_game_as_apply(rules):
    """Ids chosen at random give the same events and actions as the dicts they stand for."""
    for seed in range(3):
        by_id, by_dict = Game(rules, seed), Game(rules, seed)
        rng = random.Random(seed)
        while not by_id.over:
            ids = by_id.legal_action_ids()
            dicts = by_dict.legal_actions()
            assert len(ids) == len(dicts)
            assert [_action_dict(ACTIONS[i], "uno" in d) for i, d in zip(ids, dicts, strict=True)] == dicts
            pick = rng.randrange(len(ids))
            by_id.step(ids[pick])
            by_dict.apply(dicts[pick])
        assert by_dict.over and by_id.events == by_dict.events and by_id.actions == by_dict.actions
        assert by_id.legal_action_ids() == []


def test_step_refuses_what_is_not_a_legal_id():
    game = Game(Rules(players=2), 3)
    legal = set(game.legal_action_ids())
    illegal = next(i for i in range(NUM_ACTIONS) if i not in legal)
    before = (list(game.events), list(game.actions))
    for bad in (illegal, -1, NUM_ACTIONS, True, 1.0, "0", None):
        with pytest.raises(IllegalAction):
            game.step(bad)
    assert (game.events, game.actions) == before  # nothing changed
    with pytest.raises(IllegalAction, match="legal ids"):
        game.step(illegal)


def test_a_play_leaving_one_card_declares_uno():
    game = Game(Rules(players=2, hand_size=2), 5)
    while not game.over:
        dicts = game.legal_actions()
        ids = game.legal_action_ids()
        plays = [i for i, d in zip(ids, dicts, strict=True) if d["type"] == "play"]
        if plays and len(game.hands[game.seat]) == 2:
            game.step(plays[0])
            assert game.actions[-1]["action"]["uno"] is True
            assert game.uno[game.actions[-1]["seat"]]
            return
        game.step(plays[0] if plays else ids[0])
    pytest.fail("no play from two cards came up")


def _engines():
    """The pure engine, and the core when it is built (its play_ids loop is C)."""
    import engine.compiled

    makers = [Game]
    if engine.compiled._core is not None:
        makers.append(engine.compiled.CompiledGame)
    return makers


@pytest.mark.parametrize("make", _engines(), ids=lambda m: m.__name__)
def test_play_ids_plays_the_game_step_plays_with_the_same_policy(make):
    """``play_ids(policy)`` is ``step(policy(legal_action_ids()))`` until over, in either engine."""
    rules = Rules(players=4, rounds=1, wd4="enforced", stacking="stack", jump_in=True, seven_zero=True)
    for seed in range(4):
        looped, stepped = make(rules, seed), Game(rules, seed)
        rng, seen = random.Random(seed), []

        def policy(ids, rng=rng, seen=seen):
            seen.append(list(ids))
            return ids[rng.randrange(len(ids))]

        played = looped.play_ids(policy)
        rng2, n = random.Random(seed), 0
        while not stepped.over:
            ids = stepped.legal_action_ids()
            assert ids == seen[n]
            stepped.step(ids[rng2.randrange(len(ids))])
            n += 1
        assert played == n == len(seen) and looped.over
        assert looped.events == stepped.events and looped.actions == stepped.actions
        assert looped.play_ids(policy) == 0  # over: no decision


@pytest.mark.parametrize("make", _engines(), ids=lambda m: m.__name__)
def test_play_ids_stops_at_an_illegal_id_or_a_policy_error_where_step_would(make):
    game = make(Rules(players=2), 3)
    with pytest.raises(IllegalAction, match="legal ids") as refused:
        game.play_ids(lambda ids: next(i for i in range(NUM_ACTIONS) if i not in ids))
    reference = Game(Rules(players=2), 3)
    with pytest.raises(IllegalAction) as by_step:
        reference.step(next(i for i in range(NUM_ACTIONS) if i not in reference.legal_action_ids()))
    assert str(refused.value) == str(by_step.value) and len(game.actions) == 0

    calls = []

    def breaks_at_five(ids):
        calls.append(1)
        if len(calls) == 5:
            raise ZeroDivisionError("policy bug")
        return ids[0]

    with pytest.raises(ZeroDivisionError, match="policy bug"):
        game.play_ids(breaks_at_five)
    assert len(game.actions) == 4 and not game.over
    with pytest.raises(IllegalAction, match="not an action id"):
        game.play_ids(lambda ids: True)
