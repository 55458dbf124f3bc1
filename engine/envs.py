"""Environments for learning: a PettingZoo AEC environment and a Gymnasium wrapper.

Needs the optional extra ``rl`` (``pip install -e '.[rl]'``: pettingzoo,
gymnasium, numpy); they are imported when an environment is made, never by
``import engine``. Both drive the game of ``engine.compiled.new_game`` (the compiled core where it is built, else ``engine.game.Game``) through the int-action API
(``legal_action_ids``, ``step``; the encoding ``engine.game.ACTIONS``).

Observation (docs/engine.md, "Environments"): a dict with ``"observation"``,
an int8 vector from the seat's point of view (``encode``), and
``"action_mask"``, an int8 vector of ``NUM_ACTIONS`` with 1 for each legal id.
A game is ``Rules(players=..., rounds=1, ...)`` unless ``rules`` says
otherwise; at its end each seat gets +1 for rank 1 down to -1 for the last
rank, 0 for everyone when no one scored (a round ended by ``max_turns``).
An id that is not legal ends the game: the seat that chose it gets -1, the
others 0, and ``info["illegal"]`` is True (the PettingZoo classic convention).
"""

from __future__ import annotations

from typing import Any

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


def _mask(game: Game) -> Any:
    import numpy as np

    m = np.zeros(NUM_ACTIONS, dtype=np.int8)
    m[game.legal_action_ids()] = 1
    return m


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


def raw_env(players: int = 2, rules: Rules | None = None, seed: int | None = None) -> Any:
    """The PettingZoo AEC environment: agents ``player_0`` .. ``player_{n-1}`` (seats)."""
    from pettingzoo import AECEnv  # type: ignore[import-untyped]

    class UnoAECEnv(AECEnv):  # type: ignore[misc]
        metadata = {"name": "uno_arena_v0", "render_modes": [], "is_parallelizable": False}

        def __init__(self) -> None:
            super().__init__()
            self.rules = _rules(players, rules)
            self.possible_agents = [f"player_{s}" for s in range(players)]
            self.agents: list[str] = []
            obs_space, act_space = _spaces()
            self.observation_spaces = {a: obs_space for a in self.possible_agents}
            self.action_spaces = {a: act_space for a in self.possible_agents}
            self._seed = 0 if seed is None else seed
            self.game: Any = None

        def observation_space(self, agent: str) -> Any:
            return self.observation_spaces[agent]

        def action_space(self, agent: str) -> Any:
            return self.action_spaces[agent]

        def observe(self, agent: str) -> Any:
            import numpy as np

            game = self.game
            s = self.possible_agents.index(agent)
            mask = _mask(game) if not game.over and game.seat == s else np.zeros(NUM_ACTIONS, dtype=np.int8)
            return {"observation": encode(game, s), "action_mask": mask}

        def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
            if seed is not None:
                self._seed = seed
            else:
                self._seed += 1
            self.game = new_game(self.rules, self._seed)
            self.agents = list(self.possible_agents)
            self.rewards = {a: 0.0 for a in self.agents}
            self._cumulative_rewards = {a: 0.0 for a in self.agents}
            self.terminations = {a: False for a in self.agents}
            self.truncations = {a: False for a in self.agents}
            self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
            self.agent_selection = self.possible_agents[self.game.seat]

        def step(self, action: Any) -> None:
            agent = self.agent_selection
            if self.terminations[agent] or self.truncations[agent]:
                self._was_dead_step(action)
                return
            game = self.game
            self._cumulative_rewards[agent] = 0.0
            self.rewards = {a: 0.0 for a in self.agents}
            try:
                game.step(int(action))  # the legality check is step's own
            except IllegalAction:
                self.rewards[agent] = -1.0
                self.infos[agent] = {"illegal": True}
                self._end()
            else:
                if game.over:
                    self.rewards = dict(zip(self.possible_agents, _rewards(game), strict=True))
                    self._end()
                else:
                    self.agent_selection = self.possible_agents[game.seat]
            self._accumulate_rewards()

        def _end(self) -> None:
            self.terminations = {a: True for a in self.agents}

        def render(self) -> None:
            return None

        def close(self) -> None:
            pass

    return UnoAECEnv()


def env(players: int = 2, rules: Rules | None = None, seed: int | None = None) -> Any:
    """``raw_env`` inside PettingZoo's usual checks (order enforcing, bounds)."""
    from pettingzoo.utils import wrappers  # type: ignore[import-untyped]

    e = raw_env(players, rules, seed)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


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

    class UnoGymEnv(gymnasium.Env):
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
            import numpy as np

            game = self.game
            mask = _mask(game) if not (game.over or self._done) else np.zeros(NUM_ACTIONS, dtype=np.int8)
            return {"observation": encode(game, self.seat), "action_mask": mask}

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
