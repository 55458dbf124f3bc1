"""The referee's live hook (``on_step``) and the public form of events (``engine.replay.public_event``)."""

from __future__ import annotations

import pytest

from engine import bots
from engine.match import AgentSeat, play_match
from engine.replay import HIDDEN_CARD, action_points, apply_event, public_event, state_at
from engine.replay import _initial as initial_state
from engine.rules import Rules


def _seats(n):
    return [AgentSeat(bots.get("random"), f"random{i}") for i in range(n)]


def test_on_step_sees_each_game_up_to_every_decision_and_at_its_end():
    calls = []

    def on_step(game, events, actions):
        calls.append((dict(game), len(events), len(actions), events[-1]["e"] if events else None))

    result = play_match(Rules(players=3), _seats(3), seed=5, deals=2, on_step=on_step)
    replay = result.replay
    for record in replay["games"]:
        mine = [c for c in calls if c[0]["index"] == record["index"]]
        *steps, last = mine
        points = action_points(record["actions"])
        # one call per decision asked of a bot (no seat forfeits here, so no fallback moves)
        assert len(steps) == len(record["actions"])
        # before decision k the referee has k earlier action records and the events up to its point
        for k, (game, events, actions, _) in enumerate(steps):
            assert (events, actions) == (points[k], k)
            assert game["over"] is False
            assert {key: game[key] for key in ("deal", "rotation", "seed", "seats", "names", "forfeited")} == {
                key: record[key] for key in ("deal", "rotation", "seed", "seats", "names", "forfeited")
            }
        game, events, actions, kind = last
        assert game["over"] is True and kind == "game_end"
        assert (events, actions) == (len(record["events"]), len(record["actions"]))


def test_on_step_changes_nothing_of_the_result():
    plain = play_match(Rules(players=2), _seats(2), seed=9, deals=1)
    watched = play_match(Rules(players=2), _seats(2), seed=9, deals=1, on_step=lambda *a: None)
    assert plain.replay == watched.replay


@pytest.mark.slow  # every event of many games under every rule option
def test_public_events_hide_every_hand_and_keep_every_count():
    replay = play_match(Rules(players=4), _seats(4), seed=3, deals=1).replay
    record = replay["games"][0]
    state = initial_state(4)
    for i, event in enumerate(record["events"]):
        public = public_event(event)
        assert public["e"] == event["e"]
        if event["e"] == "play":
            # a played card was the seat's own: the public state has one hidden card fewer
            hand = state["hands"][event["seat"]]
            hand.remove(HIDDEN_CARD)
            hand.append(event["card"])
        apply_event(state, public)
        full = state_at(replay, 0, i + 1)
        assert [len(h) for h in state["hands"]] == [len(h) for h in full["hands"]]
        assert all(set(h) <= {HIDDEN_CARD} for h in state["hands"])
        assert state["discard"] == full["discard"] and state["draw_pile"] == full["draw_pile"]
    assert record["events"][0]["hands"][0][0] != HIDDEN_CARD  # the replay itself is untouched


def test_the_sandbox_runner_passes_the_hook_to_the_referee():
    from sandbox import runner

    seen = []
    outcome = runner.play_sandboxed_match(Rules(players=2), ["random", "first"], seed=1, on_step=lambda g, e, a: seen.append(len(e)))
    assert seen and seen[-1] == len(outcome.result.replay["games"][0]["events"])
