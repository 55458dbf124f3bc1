"""Types of the compiled core (engine/_core.c); see engine.compiled."""

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from engine.rules import Rules

NUM_ACTIONS: int
OBSERVATION_IN_PLACE: int
OBSERVATION_RECYCLED: int
SOURCE_SHA256: str
SNAPSHOT_KEYS: tuple[str, ...]

def set_illegal_hook(hook: Any) -> None: ...
def set_rules_type(rules_type: type) -> None: ...
def game_seed(seed: int, deal: int) -> int | None: ...
def set_match(
    referee_type: type, agent_seat: type, agent_decide: Any, agent_fault: Any, seat_fault: type[BaseException],
    game_seed: Any, seat_bots: Any, begin_game: Any, collect: Any, gc_every: int,
) -> None: ...
def play_games(
    game_type: type, rules: Rules, seats: Any, seed: int, deals: int, duplicate: bool, configs: list[dict[str, Any]],
    names: list[str], book: Any, timings: list[dict[str, Any]], on_game: Any, scoring: str,
) -> tuple[list[Any], list[list[float | None]], list[int], list[int], list[int], int]: ...

def frozen(cls: type, fields: dict[str, Any]) -> Any: ...

class GcPause:
    def __enter__(self) -> None: ...
    def __exit__(self, *exc: object) -> None: ...

def stream_check(seed: str, count: int, below: int, k: int) -> tuple[list[float], int, list[int], float]: ...

class Snapshot(Mapping[str, Any]):
    def __getitem__(self, key: str) -> Any: ...
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...
    def to_dict(self) -> dict[str, Any]: ...

class Core:
    rules: Rules
    seed: int
    n: int
    scores: list[int]
    events: list[dict[str, Any]]
    actions: list[dict[str, Any]]
    event_count: int
    round: int
    dealer: int
    over: bool
    decision: str | None
    seat: int | None
    current: int
    direction: int
    color: int
    pending: int
    turns: int
    pile_count: int
    uno: list[bool]
    hands: list[list[int]]
    hand_codes: list[list[str]]
    discard: list[int]
    discard_codes: list[str]
    def __init__(self, rules: Rules, seed: int) -> None: ...
    def legal_actions(self) -> list[dict[str, Any]]: ...
    def legal_action_ids(self) -> list[int]: ...
    def observation(self) -> dict[str, Any]: ...
    def snapshot(self) -> Snapshot: ...
    def apply(self, action: Any) -> None: ...
    def step(self, action_id: int) -> None: ...
    def play_ids(self, policy: Callable[[list[int]], int]) -> int: ...
    def apply_fallback(self) -> dict[str, Any]: ...
    def fault(self, kind: str, reason: str, *, strikes: int | None = None, forfeit: str | None = None) -> None: ...
    def ranks(self) -> list[int]: ...
    def _play_turns(
        self, seats: list[Any], lazy: list[bool], seat_bot: list[int], configs: list[dict[str, Any]], forfeits: list[Any],
        times: list[float | None], on_step: Any, step_game: dict[str, Any], decisions: int, charge: Any,
        timed: Any, seat_fault: type[BaseException], agent_fault: Any, collect: Any, gc_every: int,
    ) -> int: ...

# environments (engine/envs.py; the section of engine/_core.c so named)
class Observations:
    def __init__(self, new_pair: Any) -> None: ...
    def observe(self, game: Core, seat: int, live: bool) -> dict[str, Any]: ...

class AECBase:
    _game: Any
    _agents: tuple[str, ...]
    _observations: Observations | None
    _live: bool
    agent_selection: str
    agents: list[str]
    rewards: dict[str, float]
    _cumulative_rewards: dict[str, float]
    terminations: dict[str, bool]
    truncations: dict[str, bool]
    infos: dict[str, dict[str, Any]]
    _after_end: str
    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]: ...
    def step(self, action: Any) -> None: ...
    def agent_iter(self, max_iter: int = 2**63) -> Iterator[str]: ...
