"""Reference bots are graded: each heuristic beats the baselines, significantly.

Two-seat, one-round games over fixed seeds, every deal played from both seats
(duplicate), so luck of the cards cancels. A one-sided sign test over the
decisive games must give p < 0.01.
"""

from __future__ import annotations

import math

import pytest

from engine.bots import get
from engine.match import AgentSeat, play_match
from engine.rules import Rules

DEALS = 150
ALPHA = 0.01


def head_to_head(bot: str, other: str, deals: int = DEALS, seed: int = 2024) -> tuple[int, int]:
    """(games ``bot`` won, games ``other`` won) over ``deals`` duplicate deals."""
    rules = Rules(players=2, rounds=1)
    seats = [AgentSeat(get(bot), bot), AgentSeat(get(other), other)]
    replay = play_match(rules, seats, seed=seed, deals=deals, duplicate=True).replay
    won = [0, 0]
    for game in replay["games"]:
        ranks = game["ranks"]
        if ranks[0] != ranks[1]:  # a round stopped by max_turns scores nobody
            winner_seat = ranks.index(1)
            won[game["seats"][winner_seat]] += 1
    return won[0], won[1]


def sign_test_p(wins: int, losses: int) -> float:
    """One-sided P(at least ``wins`` of ``wins + losses`` fair coin flips)."""
    n = wins + losses
    return sum(math.comb(n, k) for k in range(wins, n + 1)) / 2**n


def test_sign_test_p_value():
    assert sign_test_p(10, 0) == pytest.approx(1 / 1024)
    assert sign_test_p(5, 5) > 0.5


@pytest.mark.parametrize(
    ("strong", "weak"),
    [
        ("expert", "random"),
        ("greedy", "random"),
        ("first", "random"),
        ("expert", "first"),
        ("greedy", "first"),
    ],
)
def test_stronger_bot_wins_significantly_more(strong, weak):
    wins, losses = head_to_head(strong, weak)
    assert wins > losses
    assert sign_test_p(wins, losses) < ALPHA, (strong, weak, wins, losses)


@pytest.mark.slow
def test_expert_beats_greedy_over_many_deals():
    # a ~5-point edge (55% of decisive games): it takes thousands of deals to show (about 15 s)
    wins, losses = head_to_head("expert", "greedy", deals=5000, seed=99)
    assert sign_test_p(wins, losses) < ALPHA, (wins, losses)
