"""engine.envs: PettingZoo's and Gymnasium's own API checkers, masks, rewards.

Needs the optional extra ``rl``; under ARENA_REQUIRE_SERVICES=1 (CI) a missing
extra fails these tests instead of skipping them.
"""

from __future__ import annotations

import importlib.util
import os
import random
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from testsupport import service_missing, stdout_on_the_core
from uno_scenarios import rule_sets

import engine.compiled
from engine.game import NUM_ACTIONS, Game
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


def test_pettingzoo_seed_test():
    from pettingzoo.test import seed_test

    from engine import envs

    seed_test(lambda: envs.env(players=3), num_cycles=300)


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


def _ids_of_every_mask(e):
    """Each agent's ``info["legal_action_ids"]`` is the ids its mask has 1 for, ascending."""
    for a in e.agents:
        mask_ids = tuple(e.observe(a)["action_mask"].nonzero()[0].tolist())
        assert e.infos[a]["legal_action_ids"] == mask_ids, a
        assert type(e.infos[a]["legal_action_ids"]) is tuple


@pytest.mark.parametrize("engine_name", ["core", "pure"])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_info_gives_the_legal_ids_of_the_mask_at_every_step(players, engine_name):
    from engine import envs

    if engine_name == "core" and engine.compiled._core is None:
        pytest.skip(f"the compiled core is not built ({engine.compiled.CORE_ERROR})")
    e = envs.raw_env(players=players)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine.compiled, "COMPILED", True)  # the core even under ARENA_ENGINE=pure
        if engine_name == "pure":
            patch.setattr(envs, "new_game", Game)
        rng = random.Random(players)
        for seed in range(6):
            e.reset(seed=seed)
            assert isinstance(e.game, Game) == (engine_name == "pure")
            steps = 0
            for agent in e.agent_iter():
                _ids_of_every_mask(e)
                _, _, terminated, _, info = e.last()
                assert info is e.infos[agent]
                if terminated:
                    assert info["legal_action_ids"] == ()
                    e.step(None)
                    continue
                ids = info["legal_action_ids"]
                assert ids and ids == tuple(sorted(e.game.legal_action_ids()))
                e.step(rng.choice(ids))
                steps += 1
            assert steps > 10 and e.game.over


def test_aec_illegal_id_ends_the_game_with_minus_one():
    from engine import envs

    e = envs.raw_env(players=2)
    e.reset(seed=1)
    agent = e.agent_selection
    legal = set(e.game.legal_action_ids())
    e.step(next(i for i in range(NUM_ACTIONS) if i not in legal))
    assert all(e.terminations.values())
    assert e.rewards[agent] == -1.0 and e.infos[agent] == {"illegal": True, "legal_action_ids": ()}
    assert all(info["legal_action_ids"] == () for info in e.infos.values())


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


def _observations():
    """A compiled game's observe(game, seat, live), with a pool of its own."""
    from engine import envs

    return engine.compiled._core.Observations(envs._new_pair).observe


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rule_sets(), seed=st.integers(0, 2**32), choices=st.integers(0, 2**32))
def test_the_cores_observations_are_the_pure_ones(rules, seed, choices):
    """Observations.observe (C) on a compiled game == observe_into on the pure game, every state."""
    if engine.compiled._core is None:
        pytest.skip(f"the compiled core is not built ({engine.compiled.CORE_ERROR})")
    from engine import envs

    observe_c = _observations()
    pure, core = Game(rules, seed), engine.compiled.CompiledGame(rules, seed)
    rng = random.Random(choices)
    while True:
        for seat in range(rules.players):
            for live in (True, False):
                want = envs.observe_into(pure, seat, live)
                got = observe_c(core, seat, live)
                assert got.keys() == want.keys() == {"observation", "action_mask"}
                assert got["observation"].tolist() == want["observation"].tolist() == envs.encode(pure, seat).tolist()
                assert got["action_mask"].tolist() == want["action_mask"].tolist()
                assert got["observation"].dtype == got["action_mask"].dtype == want["action_mask"].dtype
                if live and not pure.over and seat == pure.seat:
                    assert got["action_mask"].nonzero()[0].tolist() == sorted(pure.legal_action_ids())
                else:
                    assert not got["action_mask"].any()
        if pure.over:
            break
        ids = pure.legal_action_ids()
        pick = ids[rng.randrange(len(ids))]
        pure.step(pick)
        core.step(pick)
    assert core.over and core.events == pure.events


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rule_sets(), seed=st.integers(0, 2**32), choices=st.integers(0, 2**32))
def test_the_core_env_plays_as_the_pure_env(rules, seed, choices):
    """engine._core.AECBase's last/step/agent_iter on a compiled game == the Python methods on the pure game."""
    if engine.compiled._core is None:
        pytest.skip(f"the compiled core is not built ({engine.compiled.CORE_ERROR})")
    from engine import envs

    core_env = envs.raw_env(players=rules.players, rules=rules)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine.compiled, "COMPILED", True)  # the core even under ARENA_ENGINE=pure
        core_env.reset(seed=seed)
    assert isinstance(core_env.game, engine.compiled.CompiledGame)
    pure_env = envs.raw_env(players=rules.players, rules=rules)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(envs, "new_game", Game)
        pure_env.reset(seed=seed)
    assert type(pure_env.game) is Game
    rng = random.Random(choices)
    steps = 0
    for agent in pure_env.agent_iter(max_iter=3000):
        assert core_env.agent_selection == agent
        pure_last, core_last = pure_env.last(), core_env.last()
        assert pure_last[0].keys() == core_last[0].keys()
        for key in pure_last[0]:
            assert pure_last[0][key].tolist() == core_last[0][key].tolist()
        assert pure_last[1:] == core_last[1:]
        if pure_last[2] or pure_last[3]:
            action = None
        else:
            ids = pure_last[0]["action_mask"].nonzero()[0].tolist()
            # now and then an id that is not legal, which ends the game
            action = rng.randrange(NUM_ACTIONS) if rng.random() < 0.01 else ids[rng.randrange(len(ids))]
        pure_env.step(action)
        core_env.step(action)
        steps += 1
        for name in ("agents", "rewards", "_cumulative_rewards", "terminations", "truncations", "infos"):
            assert getattr(core_env, name) == getattr(pure_env, name), name
    assert list(core_env.agent_iter(max_iter=3000 - steps)) == list(pure_env.agent_iter(max_iter=3000 - steps))


def test_an_observation_is_reused_only_once_no_one_holds_it():
    """Observations hands out a pair again only when nothing else refers to either array."""
    if engine.compiled._core is None:
        pytest.skip(f"the compiled core is not built ({engine.compiled.CORE_ERROR})")
    import weakref

    from engine.envs import encode as envs_encode

    game = engine.compiled.CompiledGame(Rules(players=3), 2)
    observe = _observations()

    def arrays(obs):
        return obs["observation"], obs["action_mask"]

    first = observe(game, 0, True)
    ids = [id(a) for a in arrays(first)]
    held = [first]  # the dict is held: the next observation is another pair
    second = observe(game, 1, True)
    assert {id(a) for a in arrays(second)}.isdisjoint(ids)
    # what keeps a pair as it was: the dict, either array, a view, a weak reference, an exported buffer
    keepers = [
        (lambda obs: obs, lambda kept: (kept["observation"].tolist(), kept["action_mask"].tolist())),
        (lambda obs: obs["action_mask"], lambda kept: (None, kept.tolist())),
        (lambda obs: obs["observation"][3:9], lambda kept: (kept.tolist(), None)),
        (lambda obs: weakref.ref(obs["action_mask"]), lambda kept: (None, kept().tolist())),
        (lambda obs: memoryview(obs["observation"]), lambda kept: (kept.tolist(), None)),
    ]
    for seat, (keep, read) in enumerate(keepers):
        obs = observe(game, seat % 3, True)
        kept = keep(obs)
        want = read(kept)
        del obs
        for other in (0, 1, 2) * 4:  # more than the pairs kept for reuse
            observe(game, other, other != seat % 3)
        assert read(kept) == want
        held.append(kept)
    assert held[0]["observation"].tolist() == envs_encode(game, 0).tolist()
    # an array changed in anything but content is not handed out again
    obs = observe(game, 0, True)
    obs["action_mask"].flags.writeable = False
    a, m = arrays(obs)
    del obs, a, m
    for seat in (0, 1, 2) * 4:
        obs = observe(game, seat, True)
        assert obs["action_mask"].flags.writeable and obs["observation"].flags.writeable
        del obs
    # a pair no one holds comes back: a loop that drops each observation allocates none
    seen = set()
    for seat in (0, 1, 2) * 10:
        obs = observe(game, seat, True)
        seen.add(id(obs["observation"]))
        del obs
    assert len(seen) <= 4


def test_every_observation_is_its_own_and_stays_as_it_was():
    from engine import envs

    e = envs.env(players=2)
    e.reset(seed=3)
    kept = []
    for _ in e.agent_iter():
        obs, _, terminated, truncated, _ = e.last()
        kept.append((obs, obs["observation"].copy(), obs["action_mask"].copy()))
        if terminated or truncated:
            e.step(None)
            continue
        e.step(int(obs["action_mask"].nonzero()[0][0]))
    assert len(kept) > 10
    for obs, observation, mask in kept:
        assert (obs["observation"] == observation).all() and (obs["action_mask"] == mask).all()
        assert obs["observation"].flags.writeable and obs["observation"].dtype.name == "int8"
    import numpy as np

    for (a, _, _), (b, _, _) in zip(kept, kept[1:], strict=False):
        assert not np.shares_memory(a["observation"], b["observation"])
        assert not np.shares_memory(a["action_mask"], b["action_mask"])


def test_last_and_step_see_every_change_to_the_envs_dicts():
    """last() and step() read the dicts as they are now, however they were changed since the last read."""
    from engine import envs

    e = envs.env(players=2)
    e.reset(seed=3)
    for _ in range(3):
        a = e.agent_selection
        assert e.last()[1:] == (0.0, False, False, e.infos[a])
        e._cumulative_rewards[a] = 5.0  # a value replaced in place
        e.terminations = dict(e.terminations)  # an equal dict in its place, then changed
        e.terminations[a] = "t"
        e.truncations.update({a: "u"})
        info = e.infos[a] = {"mine": 1, "legal_action_ids": e.infos[a]["legal_action_ids"]}
        assert e.last()[1:] == (5.0, "t", "u", info) and e.last()[4] is info
        e._cumulative_rewards[a], e.terminations[a], e.truncations[a] = 0.0, False, False
        e.step(e.infos[a]["legal_action_ids"][0])
        if e.agent_selection != a:
            assert info["legal_action_ids"] == ()  # step wrote into the info in infos now
    # the seats' agents in another order: each agent's own values still
    a = e.agent_selection
    b = next(x for x in e.agents if x != a)
    e.terminations[b] = "b"
    for agent in (b, a):
        e.agent_selection = agent
        assert e.last()[2] == ("b" if agent == b else False)
    e._agents = e._agents[::-1]
    assert e.last()[2] is False


def test_the_env_checks_order_and_bounds_itself():
    """What PettingZoo's OrderEnforcingWrapper and AssertOutOfBoundsWrapper would refuse, env() refuses."""
    import numpy as np

    from engine import envs

    e = envs.env(players=2)
    for call in (lambda: e.step(0), e.last, lambda: e.observe("player_0"), e.agent_iter, e.render):
        with pytest.raises(AttributeError, match="before reset"):
            call()
    with pytest.raises(AttributeError):
        e.agents  # noqa: B018
    assert not hasattr(e, "rewards")
    e.reset(seed=5)
    agent = e.agent_selection
    for wrong in (NUM_ACTIONS, -1, None, 2.0, "draw"):
        with pytest.raises(AssertionError, match="action space"):
            e.step(wrong)
        assert e.agent_selection == agent and not any(e.terminations.values())
    legal = e.game.legal_action_ids()
    e.step(np.int64(legal[0]))  # what Discrete.sample gives
    assert e.game.actions and e.game.actions[0]["seat"] == int(agent[-1])


def test_dead_steps_take_none_only_and_every_agent_leaves():
    from engine import envs

    e = envs.env(players=3)
    e.reset(seed=8)
    illegal = next(i for i in range(NUM_ACTIONS) if i not in set(e.game.legal_action_ids()))
    e.step(illegal)
    assert all(e.terminations.values()) and not any(e.last()[0]["action_mask"])
    with pytest.raises(ValueError):
        e.step(0)
    left = []
    for agent in e.agent_iter():
        assert e.last()[2]
        left.append(agent)
        e.step(None)
    assert sorted(left) == sorted(e.possible_agents) and e.agents == [] and e.rewards == {}


def test_the_pure_engine_passes_the_api_test_too():
    code = (
        "import copy; from pettingzoo.test import api_test; from engine import envs; from engine.game import Game;"
        "e = envs.env(players=3); e.reset(seed=1); assert isinstance(e.game, Game), type(e.game);"
        "api_test(e, num_cycles=100);"
        # a pure game can be copied (the core's cannot), and the copy observes on its own
        "e.reset(seed=2); e.step(e.game.legal_action_ids()[0]); c = copy.deepcopy(e);"
        "a, b = e.last()[0], c.last()[0]; assert (a['observation'] == b['observation']).all();"
        "assert (a['action_mask'] == b['action_mask']).all() and a['action_mask'].any()"
    )
    env = {**os.environ, "ARENA_ENGINE": "pure"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, capture_output=True)



FINALIZERS_IN_THE_INFOS = """
import random, sys
from engine.envs import raw_env

env = raw_env(players=2, seed=1)
env.reset(seed=1)
what = sys.argv[1]

class Finalizer:
    # put in an info as its legal ids: freed when the environment writes the ids again
    def __del__(self):
        if what == "agents" and env._game.over:
            env.agents.clear()
        if what == "game":
            env._game = env.game = env._observations = env._observe = None

rng = random.Random(0)
try:
    while True:
        agent = env.agent_selection
        _, _, terminated, truncated, info = env.last()
        if terminated or truncated or env.game is None:
            break
        ids = info["legal_action_ids"]
        for a in env.possible_agents:
            if what == "game" or a != agent:
                env.infos[a]["legal_action_ids"] = Finalizer()
        env.step(rng.choice(ids))
        if what == "game":
            break
except RuntimeError as exc:
    print("refused:", exc)
print("done")
"""


@pytest.mark.usefixtures("core_built")
@pytest.mark.parametrize("what", ["agents", "game"])
def test_a_finalizer_run_by_a_step_cannot_break_the_environment(what):
    """Writing an agent's legal ids frees what its info held before; that object's finalizer may
    empty ``env.agents`` at the game's end or drop the environment's game during the step: the C step
    holds what it reads after (it used to read freed memory or crash) and refuses a changed agents list."""
    out = stdout_on_the_core(FINALIZERS_IN_THE_INFOS, what)
    assert out.strip().endswith("done")
    if what == "agents":
        assert "refused: the environment's agents changed while its game ended" in out


def _env_digest(players: int, seeds: range) -> str:
    """sha256 of everything the AEC environment shows, step by step: each last(), and after reset and
    each step the agents, the agent selected and the dicts PettingZoo names (the bench's loop, with an
    illegal id now and then)."""
    import hashlib

    from engine import envs

    h = hashlib.sha256()
    e = envs.env(players=players)

    def state() -> bytes:
        return repr((e.agents, e.agent_selection, sorted(e.rewards.items()), sorted(e._cumulative_rewards.items()),
                     sorted(e.terminations.items()), sorted(e.truncations.items()),
                     sorted((a, sorted(i.items())) for a, i in e.infos.items()))).encode()

    for seed in seeds:
        rng = random.Random(seed)
        e.reset(seed=seed)
        h.update(state())
        for agent in e.agent_iter():
            obs, reward, term, trunc, info = e.last()
            h.update(repr((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, term, trunc,
                           sorted(info.items()))).encode())
            if term or trunc:
                action = None
            else:
                ids = info["legal_action_ids"]
                action = rng.randrange(NUM_ACTIONS) if rng.random() < 0.003 else rng.choice(ids)
            e.step(action)
            h.update(state())
    return h.hexdigest()


#: _env_digest(players, range(200)) of main at ca68364 (issue 21 point 6's baseline), the compiled and the
#: pure engine alike: the environment's speedups change nothing it shows
ENV_DIGESTS = {
    2: "cd5b5d1528c82cad30b4e9c925b22748cb7919b9b844198031199f2a6582dddc",
    3: "2b8ce07f9e092b4824e672ddcf754e225e66593ae3a36411f3a561a5a785648d",
    4: "d6b7c986f4d18db8bbc1e931d5c9ff4b71c55f76548c782bfb0c5fdfbca07170",
    6: "5d6a684dc1fa979c3aa9eed575c802681e44e949c950ec220fadfc8f228938c2",
}


@pytest.mark.parametrize("players", sorted(ENV_DIGESTS))
def test_the_env_shows_what_it_showed_before_its_speedups(players):
    assert _env_digest(players, range(200)) == ENV_DIGESTS[players]


#: found by review (session 19): Python code that a finalizer or a dict subclass runs in the middle of the C
#: environment's reset, last(), observe() and dead step; each script crashed, read freed memory, leaked or
#: printed a wrong value before its fix
REENTRANT = {
    "reset": ("""
import gc, engine.envs as envs
env = envs.raw_env(2, seed=1)
env.reset(seed=1)
keep = []
class Marker: pass
class Drop:  # an old info's finalizer replaces the agents tuple reset reads
    def __del__(self):
        env._agents = tuple(["player_0x"[:8], "player_1x"[:8]])
        keep.append((Marker(), Marker()))  # a 2-tuple taking the freed one's memory
env.infos["player_0"]["x"] = Drop()
gc.disable()
env.reset(seed=2)
print("agent_selection", repr(env.agent_selection))
""", "agent_selection 'player_1'"),
    "last-tuple": ("""
import gc, engine.envs as envs
env = envs.raw_env(2, seed=1)
env.reset(seed=1)
class Drop:  # dropped while last() empties the tuple it hands out again: gc must not show it half made
    def __del__(self):
        for o in gc.get_objects():
            if type(o) is tuple and len(o) == 5 and repr(o) == "(<NULL>, <NULL>, <NULL>, <NULL>, <NULL>)":
                print("found the emptied tuple", type(o[0]))
agent = env.agent_selection
env.infos[agent]["x"] = Drop()
env.last()
env.infos[agent] = {"legal_action_ids": env.infos[agent]["legal_action_ids"]}
env.last()
print("ok")
""", "ok"),
    "observe-ring": ("""
import gc, weakref, engine.envs as envs
env = envs.raw_env(2, seed=1)
env.reset(seed=1)
a = env.agent_selection
got = []
class Drop:  # freed when the ring lets its oldest pair go; observes again from there
    def __del__(self):
        got.append(env.observe(a))
d = env.observe(a); d["x"] = Drop(); del d
kept = [env.observe(a) for _ in range(3)]
out = env.observe(a)
w = weakref.ref(got[0]["observation"])
del got[:], kept, out, env
gc.collect()
print("leaked", w() is not None)
""", "leaked False"),
    "dead-step": ("""
import engine.envs as envs
env = envs.raw_env(2, seed=1)
env.reset(seed=1)
legal = set(env.infos[env.agent_selection]["legal_action_ids"])
env.step(next(i for i in range(200) if i not in legal))  # an illegal id: the game ends
class Drop:  # freed as the dead step deletes the info; replaces the agents list it works on
    def __del__(self):
        env.agents = ["x", "y"]
env.infos[env.agent_selection]["x"] = Drop()
env.step(None)
print("agents", env.agents)
""", "agents ['x', 'y']"),
    "last-lookups": ("""
import engine.envs as envs
env = envs.raw_env(2, seed=1)
env.reset(seed=1)
junk = []
class Terms(dict):  # its lookup replaces the infos last() reads next
    def __getitem__(self, k):
        env.infos = {a: {"legal_action_ids": ()} for a in env.possible_agents}
        junk.extend({"reused": i} for i in range(200))
        return False
env.terminations = Terms(env.terminations)
print(env.last()[4])
""", "{'legal_action_ids': ()}"),
}


@pytest.mark.usefixtures("core_built")
@pytest.mark.parametrize("case", sorted(REENTRANT))
def test_python_code_run_inside_the_c_environment_breaks_nothing(case):
    code, expected = REENTRANT[case]
    assert stdout_on_the_core(code).strip().splitlines() == [expected]
