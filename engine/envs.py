"""Environments for learning: a PettingZoo AEC environment and a Gymnasium wrapper.

Needs the optional extra ``rl`` (``pip install -e '.[rl]'``: pettingzoo,
gymnasium, numpy); they are imported when an environment is made, never by
``import engine``. Both drive the game of ``engine.compiled.new_game`` (the compiled core where it is built, else ``engine.game.Game``) through the int-action API
(``legal_action_ids``, ``step``; the encoding ``engine.game.ACTIONS``).

Observation (docs/engine.md, "Environments"): a dict with ``"observation"``,
an int8 vector from the seat's point of view (``encode``), and
``"action_mask"``, an int8 vector of ``NUM_ACTIONS`` with 1 for each legal id;
the AEC environment's ``info["legal_action_ids"]`` is the tuple of those ids,
ascending (``()`` for an agent not asked), for loops that want them without numpy.
A game is ``Rules(players=..., rounds=1, ...)`` unless ``rules`` says
otherwise; at its end each seat gets +1 for rank 1 down to -1 for the last
rank, 0 for everyone when no one scored (a round ended by ``max_turns``).
An id that is not legal ends the game: the seat that chose it gets -1, the
others 0, and ``info["illegal"]`` is True (the PettingZoo classic convention).
"""

from __future__ import annotations

import functools
from typing import Any, cast

from engine.bots import get
from engine.cards import DECK, NUM_KINDS
from engine.compiled import new_game
from engine.game import DECISIONS, NUM_ACTIONS, Game, IllegalAction
from engine.rules import BOUNDS, Rules

#: the most seats a game can have: the observation's per-seat blocks have this many slots
MAX_SEATS = BOUNDS["players"][1]
#: observation layout, in order: (name, length)
LAYOUT = (
    ("hand", NUM_KINDS),  # copies of each card kind in the seat's hand
    ("top_card", NUM_KINDS),  # one-hot kind of the discard pile's top card
    ("color", 4),  # one-hot active colour (R, Y, G, B)
    ("decision", len(DECISIONS)),  # one-hot decision asked
    ("hand_sizes", MAX_SEATS),  # cards held, from this seat on in seat order, 0 past the last seat
    ("uno", MAX_SEATS),  # UNO flags, same order
    ("direction", 1),  # 1 clockwise, 0 counter-clockwise
    ("pending_draw", 1),
    ("draw_pile", 1),
)
OBSERVATION_SIZE = sum(length for _, length in LAYOUT)
#: the largest value any entry takes (a count of cards)
OBSERVATION_HIGH = len(DECK)


def _offsets() -> dict[str, int]:
    at, out = 0, {}
    for name, length in LAYOUT:
        out[name] = at
        at += length
    return out


OFFSET = _offsets()


def encode(game: Game, seat: int) -> Any:
    """The numeric observation of ``seat`` (numpy int8 vector of ``OBSERVATION_SIZE``)."""
    import numpy as np

    v = np.zeros(OBSERVATION_SIZE, dtype=np.int8)
    hand = OFFSET["hand"]
    for c in game.hands[seat]:
        v[hand + DECK[c]] += 1
    v[OFFSET["top_card"] + DECK[game.discard[-1]]] = 1
    if game.color >= 0:
        v[OFFSET["color"] + game.color] = 1
    if not game.over:
        v[OFFSET["decision"] + DECISIONS.index(game.decision)] = 1
    n = game.n
    sizes, uno = OFFSET["hand_sizes"], OFFSET["uno"]
    for i in range(n):
        s = (seat + i) % n
        v[sizes + i] = min(len(game.hands[s]), OBSERVATION_HIGH)
        v[uno + i] = game.uno[s]
    v[OFFSET["direction"]] = game.direction == 1
    if not game.over and game.decision in ("stack", "challenge"):
        v[OFFSET["pending_draw"]] = min(game.pending, OBSERVATION_HIGH)
    v[OFFSET["draw_pile"]] = min(game.pile_count, OBSERVATION_HIGH)
    return v


def observe_into(game: Game, seat: int, live: bool) -> dict[str, Any]:
    """The observation dict of ``seat``, in new arrays: the pure version of the core's ``Observations.observe``.

    ``"observation"`` is ``encode(game, seat)``; ``"action_mask"`` has 1 for
    each legal id when ``live`` and the game asks ``seat`` now, else all 0
    (tests/engine/test_envs.py compares the two on many states).
    """
    import numpy as np

    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    if live and not game.over and game.seat == seat:
        mask[game.legal_action_ids()] = 1
    return {"observation": encode(game, seat), "action_mask": mask}


def step_into(game: Game, action: Any, agents: tuple[str, ...]) -> str | None:
    """``game.step(action)``, then the agent asked next, None once the game is over."""
    game.step(action)
    return None if game.over else agents[cast(int, game.seat)]


def _new_pair() -> tuple[Any, Any]:
    """A fresh observation array and mask array (what ``Observations`` fills)."""
    import numpy as np

    return np.zeros(OBSERVATION_SIZE, dtype=np.int8), np.zeros(NUM_ACTIONS, dtype=np.int8)


@functools.cache
def _core() -> Any:
    """``engine._core`` when it is built and not stale, else None (it serves an env's pure games too)."""
    from engine import compiled

    return compiled._core  # type: ignore[attr-defined]


class _Observer:
    """The observations of one environment: its own ``Observations`` (C) for compiled games.

    Each observation is a pair of arrays no one else holds: fresh, or a pair
    handed out before that no one holds any more (``engine._core.Observations``),
    so a loop that drops each observation before the next but one allocates none.
    """

    def _observer_for(self, game: Game) -> Any:
        """observe(game, seat, live) for ``game``: this env's ``Observations`` for a compiled game, else ``observe_into``."""
        core = _core()
        if core is None or isinstance(game, Game):
            return observe_into
        observations = getattr(self, "_observations", None)
        if observations is None:
            observations = self._observations = core.Observations(_new_pair)
        return observations.observe

    def __getstate__(self) -> dict[str, Any]:
        """A copy (``copy.deepcopy``, of a pure game's env) gets ``Observations`` of its own."""
        state = dict(self.__dict__)
        state.pop("_observations", None)
        return state


def _spaces() -> tuple[Any, Any]:
    import numpy as np
    from gymnasium import spaces

    observation = spaces.Dict(
        {
            "observation": spaces.Box(0, OBSERVATION_HIGH, (OBSERVATION_SIZE,), dtype=np.int8),
            "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
        }
    )
    return observation, spaces.Discrete(NUM_ACTIONS)


def _rewards(game: Game) -> list[float]:
    """+1 for rank 1 down to -1 for the last rank; all 0 when no one scored."""
    n = game.n
    if len(set(game.scores)) == 1:
        return [0.0] * n
    return [(n + 1 - 2 * r) / (n - 1) for r in game.ranks()]


def _rules(players: int, rules: Rules | None) -> Rules:
    if rules is None:
        return Rules(players=players, rounds=1)
    if rules.players != players:
        raise ValueError(f"rules.players is {rules.players}, players is {players}")
    return rules


def _before_reset(call: str) -> AttributeError:
    return AttributeError(f"{call} before reset(): call reset() first (as PettingZoo's OrderEnforcingWrapper says)")


class _NoCore:
    """The AEC environment's first base where the core is not built: its state is plain attributes."""


#: what ``engine._core.AECBase`` keeps in slots, not in ``__dict__`` (``__getstate__`` copies them)
_AEC_SLOTS = ("_game", "_agents", "agent_selection", "agents", "rewards", "_cumulative_rewards",
              "terminations", "truncations", "infos", "_after_end", "_live")


@functools.cache
def _aec_class() -> type:
    """The AEC environment class (made once: PettingZoo is imported only when an environment is made)."""
    import itertools
    import operator
    import sys

    from pettingzoo import AECEnv  # type: ignore[import-untyped]

    core = _core()
    base: Any = _NoCore if core is None else core.AECBase

    class UnoAECEnv(base, _Observer, AECEnv):  # type: ignore[misc]
        """A PettingZoo AEC environment that does itself what ``env()``'s wrappers would.

        Order: ``step``, ``observe``, ``last``, ``agent_iter`` and ``render``
        before ``reset()`` raise AttributeError, and so does reading what
        ``reset`` sets (``agents``, ``rewards``, ...), as with PettingZoo's
        OrderEnforcingWrapper. Bounds: an action outside the action space
        raises AssertionError, as with AssertOutOfBoundsWrapper. Neither costs
        a legal step anything: the attributes are missing before ``reset`` (no
        ``__getattr__``, which would slow every attribute read), and the bounds
        are checked only when the game refuses an action.

        Where the core is built, ``engine._core.AECBase`` holds the state PettingZoo
        names and does ``last``, ``step`` and ``agent_iter`` for a compiled game's
        usual case, and ``reset``'s state (``_reset_state``); everything else it
        leaves to ``_py_last``, ``_py_step``, ``_py_agent_iter`` and the rest of
        ``reset`` here, which are those methods where it is not built.
        """

        metadata = {"name": "uno_arena_v0", "render_modes": [], "is_parallelizable": False}

        def __init__(self, players: int, rules: Rules | None, seed: int | None) -> None:
            super().__init__()
            self.rules = _rules(players, rules)
            self.possible_agents = [f"player_{s}" for s in range(players)]
            self._agents = tuple(self.possible_agents)
            self._seat = {a: s for s, a in enumerate(self.possible_agents)}
            obs_space, act_space = _spaces()
            self.observation_spaces = {a: obs_space for a in self.possible_agents}
            self.action_spaces = {a: act_space for a in self.possible_agents}
            self._seed = 0 if seed is None else seed

        def __getstate__(self) -> dict[str, Any]:
            state = _Observer.__getstate__(self)
            state.update((name, getattr(self, name)) for name in _AEC_SLOTS if hasattr(self, name))
            return state

        def __setstate__(self, state: dict[str, Any]) -> None:
            for name, value in state.items():
                setattr(self, name, value)

        def observation_space(self, agent: str) -> Any:
            return self.observation_spaces[agent]

        def action_space(self, agent: str) -> Any:
            return self.action_spaces[agent]

        def observe(self, agent: str) -> Any:
            try:
                game = self._game
            except AttributeError:
                raise _before_reset("observe()") from None
            return self._observe(game, self._seat[agent], self._live)

        def _py_last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
            try:
                agent = self.agent_selection
            except AttributeError:
                raise _before_reset("last()") from None
            obs = self._observe(self._game, self._seat[agent], self._live) if observe else None
            return obs, self._cumulative_rewards[agent], self.terminations[agent], self.truncations[agent], self.infos[agent]

        def _py_agent_iter(self, max_iter: int = 2**63) -> Any:
            """The agent to act, until no agent is left (or ``max_iter`` steps): PettingZoo's ``agent_iter``."""
            try:
                self._game  # noqa: B018 - set by reset()
            except AttributeError:
                raise _before_reset("agent_iter()") from None
            return self._agents_to_act(max_iter)

        def _agents_to_act(self, max_iter: int) -> Any:
            for _ in itertools.repeat(None, max_iter) if max_iter < sys.maxsize else itertools.repeat(None):
                if not self.agents:
                    return
                yield self.agent_selection

        def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
            if seed is not None:
                self._seed = seed
            else:
                self._seed += 1
            game = self.game = self._game = new_game(self.rules, self._seed)
            self._observe = self._observer_for(game)
            if core is not None and self._reset_state(self.possible_agents):
                return  # the core did what follows, for a compiled game
            self._live = True
            agents = self.agents = list(self.possible_agents)
            # zero until the game ends (no step of a running game changes them)
            self.rewards = dict.fromkeys(agents, 0.0)
            self._cumulative_rewards = dict.fromkeys(agents, 0.0)
            self.terminations = dict.fromkeys(agents, False)
            self.truncations = dict.fromkeys(agents, False)
            self.infos: dict[str, dict[str, Any]] = {a: {"legal_action_ids": ()} for a in agents}
            self.agent_selection = agents[cast(int, game.seat)]
            self._set_ids(self.agent_selection, tuple(sorted(game.legal_action_ids())))

        def _set_ids(self, agent: str, ids: tuple[int, ...]) -> None:
            """``info["legal_action_ids"]`` of ``agent``: the ids its mask has 1 for (() unless it is asked)."""
            self.infos[agent]["legal_action_ids"] = ids

        def _py_step(self, action: Any) -> None:
            try:
                game = self._game
            except AttributeError:
                raise _before_reset("step()") from None
            if not self._live:
                self._dead_step(action)
                return
            try:
                agent = step_into(game, action, self._agents)  # the legality check is the game's own
            except IllegalAction:
                self._refused(action)
                return
            if agent is None:
                self._game_over()
                return
            if agent != self.agent_selection:
                self._set_ids(self.agent_selection, ())
            self._set_ids(agent, tuple(sorted(game.legal_action_ids())))
            self.agent_selection = agent

        if core is None:
            last, step, agent_iter = _py_last, _py_step, _py_agent_iter

        def _game_over(self) -> None:
            """The last step ended the game: every agent terminates with its rank's reward."""
            self._end(_rewards(self._game))

        def _refused(self, action: Any) -> None:
            """The game refused ``action``: an id of another int type, out of bounds, or illegal."""
            if type(action) is not int and action is not None:
                try:
                    action = operator.index(action)  # numpy integers (Discrete.sample gives np.int64)
                except TypeError:
                    pass
                else:
                    self.step(action)
                    return
            agent = self.agent_selection
            if not self.action_space(agent).contains(action):
                raise AssertionError(f"action {action!r} is not in the action space (Discrete({NUM_ACTIONS}))")
            self.infos[agent] = {"illegal": True, "legal_action_ids": ()}
            self._end([-1.0 if a == agent else 0.0 for a in self.agents])

        def _end(self, rewards: list[float]) -> None:
            """Every agent terminates with these rewards (the last step's, added to the cumulative ones)."""
            self._live = False
            agents = self.agents
            for a in agents:
                self._set_ids(a, ())
            self.rewards = dict(zip(agents, rewards, strict=True))
            cumulative = self._cumulative_rewards
            for a, r in zip(agents, rewards, strict=True):
                cumulative[a] += r
            self.terminations = dict.fromkeys(agents, True)
            self._after_end = self.agent_selection

        def _dead_step(self, action: Any) -> None:
            """``step(None)`` of a terminated agent (PettingZoo's ``_was_dead_step``): it leaves."""
            if action is not None:
                raise ValueError("when an agent is dead, the only valid action is None")
            if not self.agents:
                return  # as PettingZoo's OrderEnforcingWrapper (which warns)
            agent = self.agent_selection
            for d in (self.terminations, self.truncations, self.rewards, self._cumulative_rewards, self.infos):
                del d[agent]
            self.agents.remove(agent)
            # every agent terminates at once: the next to leave is the first one left
            self.agent_selection = self.agents[0] if self.agents else self._after_end
            self.rewards = dict.fromkeys(self.agents, 0.0)

        def render(self) -> None:
            try:
                self._game  # noqa: B018 - set by reset()
            except AttributeError:
                raise _before_reset("render()") from None
            return None

        def close(self) -> None:
            pass

    return UnoAECEnv


def raw_env(players: int = 2, rules: Rules | None = None, seed: int | None = None) -> Any:
    """The PettingZoo AEC environment: agents ``player_0`` .. ``player_{n-1}`` (seats).

    It checks the order of calls and the bounds of actions itself (see
    ``_aec_class``), so ``env()`` is this same environment.
    """
    return _aec_class()(players, rules, seed)


def env(players: int = 2, rules: Rules | None = None, seed: int | None = None) -> Any:
    """The environment to use: ``raw_env``, which does the checks of PettingZoo's usual
    wrappers (order enforcing, bounds) itself instead of behind attribute-forwarding wrappers."""
    return raw_env(players, rules, seed)


def gym_env(players: int = 2, seat: int = 0, opponents: str | list[str] = "random", rules: Rules | None = None) -> Any:
    """A Gymnasium single-agent environment: this ``seat`` learns, reference bots play the others.

    ``opponents`` is one reference bot's name for every other seat, or one name
    per other seat in seat order. ``info["action_mask"]`` and ``action_masks()``
    give the mask too (as sb3-contrib's MaskablePPO reads it).
    """
    import gymnasium

    rules_ = _rules(players, rules)
    if not 0 <= seat < players:
        raise ValueError(f"seat must be 0..{players - 1}, got {seat}")
    names = [opponents] * (players - 1) if isinstance(opponents, str) else list(opponents)
    if len(names) != players - 1:
        raise ValueError(f"opponents names {len(names)} bots for {players - 1} other seats")
    bots = [get(name) for name in names]

    class UnoGymEnv(_Observer, gymnasium.Env):
        metadata = {"render_modes": []}

        def __init__(self) -> None:
            self.rules = rules_
            self.seat = seat
            self.observation_space, self.action_space = _spaces()
            self.game: Any = None
            self._done = False
            self._agents = {s: bots[s if s < seat else s - 1] for s in range(players) if s != seat}
            self._configuration = {"rules": rules_.to_dict()}

        def _obs(self) -> dict[str, Any]:
            return self._observe(self.game, self.seat, not self._done)  # type: ignore[no-any-return]

        def _others(self) -> None:
            game = self.game
            while not game.over and game.seat != self.seat:
                agent = self._agents[game.seat]
                game.apply(agent(game.observation(), dict(self._configuration)))

        def action_masks(self) -> Any:
            return self._obs()["action_mask"].astype(bool)

        def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
            super().reset(seed=seed)
            self._done = False
            self.game = new_game(self.rules, int(self.np_random.integers(0, 2**62)))
            self._observe = self._observer_for(self.game)
            self._others()
            obs = self._obs()
            return obs, {"action_mask": obs["action_mask"]}

        def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
            game = self.game
            if game is None or game.over or self._done:
                raise RuntimeError("the game is over: call reset()")
            info: dict[str, Any] = {}
            try:
                game.step(int(action))  # the legality check is step's own
            except IllegalAction:
                self._done = True
                obs = self._obs()
                info.update(illegal=True, action_mask=obs["action_mask"])
                return obs, -1.0, True, False, info
            self._others()
            obs = self._obs()
            info["action_mask"] = obs["action_mask"]
            reward = _rewards(game)[self.seat] if game.over else 0.0
            return obs, reward, game.over, False, info

    return UnoGymEnv()
