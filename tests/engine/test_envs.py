"""engine.envs: PettingZoo's and Gymnasium's own API checkers, masks, rewards.

Needs the optional extra ``rl``; under ARENA_REQUIRE_SERVICES=1 (CI) a missing
extra fails these tests instead of skipping them.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest
from testsupport import service_missing

from engine.game import NUM_ACTIONS
from engine.rules import Rules


@pytest.fixture(autouse=True)
def _needs_rl_extra():
    for module in ("pettingzoo", "gymnasium", "numpy"):
        if importlib.util.find_spec(module) is None:
            service_missing(f"the optional extra rl ({module}): pip install -e '.[rl]'")


def test_import_engine_never_needs_the_extra():
    code = (
        "import sys; import engine, engine.game, engine.match, engine.envs;"
        "assert not {'pettingzoo', 'gymnasium', 'numpy'} & set(sys.modules), sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("players", [2, 4])
def test_pettingzoo_api_test(players):
    from pettingzoo.test import api_test

    from engine import envs

    api_test(envs.env(players=players), num_cycles=200)


@pytest.mark.parametrize("players", [2, 3])
def test_gymnasium_check_env(players):
    from gymnasium.utils.env_checker import check_env

    from engine import envs

    check_env(envs.gym_env(players=players, seat=1, opponents="greedy"), skip_render_check=True)


def test_aec_masks_are_the_legal_ids_and_rewards_sum_to_the_ranks():
    from engine import envs

    e = envs.raw_env(players=3, seed=4)
    e.reset(seed=4)
    total = {a: 0.0 for a in e.possible_agents}
    steps = 0
    for agent in e.agent_iter(max_iter=20_000):
        obs, reward, terminated, truncated, _ = e.last()
        total[agent] += reward
        if terminated or truncated:
            e.step(None)
            continue
        game = e.game
        assert e.possible_agents[game.seat] == agent
        ids = game.legal_action_ids()
        assert obs["action_mask"].shape == (NUM_ACTIONS,)
        assert sorted(obs["action_mask"].nonzero()[0].tolist()) == sorted(ids)
        assert obs["observation"][: 54].sum() == len(game.hands[game.seat])
        e.step(ids[-1] if len(ids) > 1 else ids[0])
        steps += 1
    assert steps > 10 and e.game.over
    assert sorted(total.values()) == sorted(envs._rewards(e.game))


def test_aec_illegal_id_ends_the_game_with_minus_one():
    from engine import envs

    e = envs.raw_env(players=2)
    e.reset(seed=1)
    agent = e.agent_selection
    legal = set(e.game.legal_action_ids())
    e.step(next(i for i in range(NUM_ACTIONS) if i not in legal))
    assert all(e.terminations.values())
    assert e.rewards[agent] == -1.0 and e.infos[agent]["illegal"] is True


def test_gym_wrapper_plays_the_other_seats_with_reference_bots():
    from engine import envs

    e = envs.gym_env(players=4, seat=2, opponents=["first", "greedy", "expert"])
    obs, info = e.reset(seed=9)
    done, reward, turns = False, 0.0, 0
    while not done:
        assert e.game.seat == 2
        ids = obs["action_mask"].nonzero()[0]
        assert (info["action_mask"] == obs["action_mask"]).all() and (e.action_masks() == (obs["action_mask"] == 1)).all()
        obs, reward, done, truncated, info = e.step(ids[0])
        turns += 1
    assert turns > 3 and -1.0 <= reward <= 1.0
    assert reward == envs._rewards(e.game)[2]
    # the others are reference bots: every decision not of seat 2 came from one of them
    assert {a["seat"] for a in e.game.actions} == {0, 1, 2, 3}
    with pytest.raises(RuntimeError):
        e.step(0)


def test_bad_arguments_are_refused():
    from engine import envs

    with pytest.raises(ValueError):
        envs.gym_env(players=2, seat=2)
    with pytest.raises(ValueError):
        envs.gym_env(players=3, opponents=["first"])
    with pytest.raises(ValueError):
        envs.raw_env(players=2, rules=Rules(players=3))
