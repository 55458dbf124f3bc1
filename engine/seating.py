"""Who sits where in each game of a match: duplicate rotations with balanced neighbours.

>>> seat_bots(3, deal=1, rotation=0, duplicate=True)
[0, 2, 1]

Under duplicate deals every deal is played once per rotation, so each bot plays
each seat of that deal exactly once. With one fixed cyclic order of the bots
(rotation ``r`` seating bot ``(s - r) % n`` at seat ``s``) bot B would always
sit directly after bot A: at 3+ seats a weak bot placed after a strong one
gains from it in every game (issue 14). So the *base* cyclic order changes from
deal to deal: deal ``d`` uses ``base_orders(n)[d % k]`` and its rotations; the
``k`` orders are chosen so that over every ``k`` deals each ordered pair (B
directly after A, in seat order) occurs equally often.

- odd n: Walecki's decomposition of K_n into (n-1)/2 Hamiltonian cycles, each
  in both directions: n-1 orders, every ordered pair exactly once;
- even n: a decomposition of the complete directed graph into n-1 directed
  Hamiltonian cycles exists for every even n except 4 and 6 (Tillson 1980);
  for 8 and 10 one found by search is written out below. For 4 and 6 none
  exists (tests/engine/test_seating.py checks it by exhaustive search), so the
  smallest balanced sets cover every ordered pair twice: 2(n-1) orders (all 6
  cyclic orders at 4 seats, 10 found by search at 6);
- 2 seats: the single order (the two rotations swap the bots).

Deal 0 always uses the identity order, as before this module. Without
``duplicate`` the seating is fixed: bot ``i`` at seat ``i`` in every game.
Pure and deterministic: no RNG, no I/O.
"""

from __future__ import annotations

import functools
from typing import Any

from engine.rules import BOUNDS

#: the replay's ``seating["scheme"]`` values
BALANCED_CYCLIC = "balanced-cyclic"
ROTATION = "rotation"
FIXED = "fixed"

# base orders found by search (each starts with bot 0; the first is the identity);
# tests/engine/test_seating.py verifies every ordered pair occurs equally often
_SEARCHED: dict[int, tuple[str, ...]] = {
    4: ("0123", "0132", "0213", "0231", "0312", "0321"),
    6: ("012345", "014325", "034251", "023541", "045132", "035214", "024153", "053124", "054213", "043152"),
    8: ("01234567", "07531462", "03541726", "04257613", "02473651", "05216374", "06432715"),
    10: ("0123456789", "0864715392", "0749165283", "0372419685", "0695827314", "0948136257", "0218435976",
         "0463298751", "0542617938"),
}


def _walecki(n: int) -> tuple[tuple[int, ...], ...]:
    """n-1 directed Hamiltonian cycles covering each ordered pair once, n odd.

    Vertex 0 is Walecki's centre, 1..n-1 the rim Z_{n-1}: cycle i is 0, then
    i, i+1, i-1, i+2, i-2, ... on the rim; each cycle is taken in both directions.
    """
    m = (n - 1) // 2
    cycles = []
    for i in range(m):
        rim = [i]
        for step in range(1, m + 1):
            rim.append((i + step) % (2 * m))
            if len(rim) < 2 * m:
                rim.append((i - step) % (2 * m))
        cycle = [0] + [1 + v for v in rim]
        cycles.append(cycle)
        cycles.append([0] + cycle[:0:-1])
    # relabel so that the first order is the identity (a relabelling keeps the balance)
    label = {b: i for i, b in enumerate(cycles[0])}
    return tuple(tuple(label[b] for b in c) for c in cycles)


@functools.cache
def base_orders(n: int) -> tuple[tuple[int, ...], ...]:
    """The cyclic orders of the bots for ``n`` seats, one per deal of a cycle of deals."""
    low, high = BOUNDS["players"]
    if isinstance(n, bool) or not isinstance(n, int) or not low <= n <= high:
        raise ValueError(f"seating: {n!r} seats (allowed: {low}..{high})")
    if n == 2:
        return ((0, 1),)
    if n % 2:
        return _walecki(n)
    return tuple(tuple(int(ch) for ch in order) for order in _SEARCHED[n])


def seat_bots(n: int, deal: int, rotation: int, duplicate: bool) -> list[int]:
    """The bot sitting at each seat of game (``deal``, ``rotation``)."""
    if not duplicate:
        return list(range(n))
    orders = base_orders(n)
    order = orders[deal % len(orders)]
    return [order[(s - rotation) % n] for s in range(n)]


def describe(n: int, deals: int, duplicate: bool) -> dict[str, Any]:
    """The replay's ``seating`` entry: the scheme, its cycle of orders and whether it is complete.

    >>> describe(3, 4, True)["balanced"], describe(3, 3, True)["balanced"]
    (True, False)
    """
    if not duplicate:
        return {
            "scheme": FIXED,
            "orders": 1,
            "balanced": n == 2,
            "description": f"Fixed seats: bot i sits at seat i in all {deals} game{'s' if deals != 1 else ''}"
            " (no rotation).",
        }
    if n == 2:
        return {
            "scheme": ROTATION,
            "orders": 1,
            "balanced": True,
            "description": f"Duplicate: each of the {deals} deal{'s' if deals != 1 else ''} is played twice,"
            " the bots swapping seats.",
        }
    k = len(base_orders(n))
    balanced = deals % k == 0
    each = "once" if k == n - 1 else "twice"
    text = (
        f"Duplicate, balanced cyclic seating: each deal is played {n} times so every bot plays every seat of it;"
        f" the bots' cyclic order changes from deal to deal through {k} orders, in which each bot sits"
        f" directly after each other bot exactly {each}."
    )
    if balanced:
        text += f" {deals} deals: {deals // k} full cycle{'s' if deals // k != 1 else ''}, so neighbours are balanced."
    else:
        text += f" {deals} deal{'s' if deals != 1 else ''} (not a multiple of {k}): neighbours only partly balanced."
    return {"scheme": BALANCED_CYCLIC, "orders": k, "balanced": balanced, "description": text}
