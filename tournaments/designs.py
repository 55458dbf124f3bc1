"""Resolvable designs: round robins at k-seat tables where every pair meets exactly once.

A resolvable design on v points with blocks of k splits into r = (v-1)/(k-1)
parallel classes (rounds), each a partition of the points into tables of k, and
every pair of points shares exactly one block. Up to 40 entries they exist for
(9, 3), (15, 3), (21, 3), (27, 3), (33, 3), (39, 3) (Kirkman triple systems),
(16, 4), (28, 4), (40, 4) and (25, 5); (36, 6) would be an affine plane of
order 6, which does not exist. Two constructions:

- **Affine geometry** AG(d, q) for v = q**d, k = q a prime power: the lines of
  each direction form one parallel class. Computed here (GF(q) for q <= 16).
- **Developed base classes**: points Z_m x {levels} plus fixed points; a base
  class is moved by x -> x + 1 (mod m) on every level, which keeps the fixed
  points; its translates are the rounds. The base classes in ``BASE_CLASSES``
  were found by the backtracking searches below (``python -m tournaments.designs
  --search`` finds them again, in about a minute); ``resolvable_design``
  checks every developed design before it is used, so a wrong table can never
  reach a schedule.

Pure: no Django, no I/O, deterministic.

>>> [len(c) for c in resolvable_design(9, 3)]
[3, 3, 3, 3]
"""

from __future__ import annotations

import sys
from functools import lru_cache
from itertools import combinations, product
from typing import cast

Block = tuple[int, ...]
Resolution = list[list[Block]]

#: (v, k) -> (m, base classes): the points are 0..v-1, point p < L*m is x = p % m on level p // m
#: (L = v // m), the v % m points from L*m up are fixed; round i + j*(r // len(classes)) is base
#: class j moved i times by x -> x + 1 (mod m). Found by ``_search_levels`` ("levels") and
#: ``_search_rotational`` ("rotational", m = v - 1, the class fixed by x -> x + r) below.
BASE_CLASSES: dict[tuple[int, int], tuple[int, list[list[Block]]]] = {
    # levels: Z_7 x 2 + 1 fixed point (Kirkman's schoolgirls)
    (15, 3): (7, [[(0, 1, 3), (2, 7, 9), (4, 12, 13), (5, 8, 11), (6, 10, 14)]]),
    # levels: Z_5 x 4 + 1 fixed point, two base classes
    (21, 3): (5, [
        [(0, 1, 5), (2, 4, 10), (3, 6, 15), (7, 8, 13), (9, 16, 19), (11, 14, 18), (12, 17, 20)],
        [(0, 6, 20), (1, 8, 10), (2, 12, 18), (3, 16, 17), (4, 11, 19), (5, 13, 14), (7, 9, 15)],
    ]),
    # rotational: Z_32 + 1 fixed point
    (33, 3): (32, [[(32, 0, 16), (1, 2, 19), (17, 18, 3), (4, 8, 14), (20, 24, 30), (5, 25, 12), (21, 9, 28),
                    (6, 27, 29), (22, 11, 13), (7, 10, 15), (23, 26, 31)]]),
    # levels: Z_19 x 2 + 1 fixed point
    (39, 3): (19, [[(0, 1, 3), (2, 6, 11), (4, 10, 19), (5, 12, 22), (7, 15, 20), (8, 24, 28), (9, 34, 35),
                    (13, 31, 38), (14, 33, 36), (16, 27, 37), (17, 21, 29), (18, 26, 32), (23, 25, 30)]]),
    # levels: Z_9 x 3 + 1 fixed point
    (28, 4): (9, [[(0, 1, 3, 9), (2, 14, 18, 20), (4, 8, 15, 23), (5, 22, 25, 26), (6, 16, 19, 27),
                   (7, 11, 12, 21), (10, 13, 17, 24)]]),
    # rotational: Z_39 + 1 fixed point
    (40, 4): (39, [[(39, 0, 13, 26), (1, 5, 8, 25), (14, 18, 21, 38), (27, 31, 34, 12), (2, 3, 36, 11),
                    (15, 16, 10, 24), (28, 29, 23, 37), (4, 6, 33, 22), (17, 19, 7, 35), (30, 32, 20, 9)]]),
}


def is_resolvable_design(classes: Resolution, v: int, k: int) -> bool:
    """Every class a partition of 0..v-1 into blocks of k, and every pair in exactly one block."""
    if len(classes) * (k - 1) != v - 1:
        return False
    seen: set[tuple[int, int]] = set()
    for blocks in classes:
        points = [p for b in blocks for p in b]
        if sorted(points) != list(range(v)) or any(len(b) != k for b in blocks):
            return False
        for b in blocks:
            for pair in combinations(sorted(b), 2):
                if pair in seen:
                    return False
                seen.add(pair)
    return len(seen) == v * (v - 1) // 2


@lru_cache(maxsize=64)
def _cached(v: int, k: int) -> tuple[tuple[Block, ...], ...] | None:
    classes = _affine(v, k)
    if classes is None and (v, k) in BASE_CLASSES:
        m, base = BASE_CLASSES[(v, k)]
        classes = _develop(v, k, m, base)
    if classes is None or not is_resolvable_design(classes, v, k):
        return None
    return tuple(tuple(tuple(sorted(b)) for b in blocks) for blocks in classes)


def resolvable_design(v: int, k: int) -> Resolution | None:
    """The parallel classes of a resolvable design on points 0..v-1 with blocks of k, or None if none is known here."""
    found = _cached(v, k)
    return None if found is None else [list(blocks) for blocks in found]


def _develop(v: int, k: int, m: int, base: list[list[Block]]) -> Resolution:
    r = (v - 1) // (k - 1)
    moves = r // len(base)
    levels = v // m

    def shift(p: int, i: int) -> int:
        if p >= levels * m:
            return p
        level, x = divmod(p, m)
        return level * m + (x + i) % m

    return [[tuple(shift(p, i) for p in b) for b in cls] for cls in base for i in range(moves)]


# --- affine geometry ------------------------------------------------------------------------


def _prime_power(q: int) -> tuple[int, int] | None:
    for p in range(2, q + 1):
        if q % p == 0:
            e, x = 0, q
            while x % p == 0:
                x //= p
                e += 1
            return (p, e) if x == 1 else None
    return None


class _Field:
    """GF(p**e) on the integers 0..q-1 (base-p digits are polynomial coefficients)."""

    def __init__(self, p: int, e: int):
        self.p, self.e, self.q = p, e, p**e
        self.modulus = self._irreducible() if e > 1 else None
        self.add = [[self._add(a, b) for b in range(self.q)] for a in range(self.q)]
        self.mul = [[self._mul(a, b) for b in range(self.q)] for a in range(self.q)]

    def _digits(self, a: int) -> list[int]:
        return [(a // self.p**i) % self.p for i in range(self.e)]

    def _number(self, digits: list[int]) -> int:
        return sum(d * self.p**i for i, d in enumerate(digits))

    def _add(self, a: int, b: int) -> int:
        return self._number([(x + y) % self.p for x, y in zip(self._digits(a), self._digits(b), strict=True)])

    def _irreducible(self) -> list[int]:
        """The first monic polynomial of degree e with no monic factor of lower degree (coefficients, low first)."""
        p, e = self.p, self.e
        for low in product(range(p), repeat=e):
            poly = [*low, 1]
            if low[0] and all(
                any(_poly_mod(poly, [*f, 1], p)) for d in range(1, e // 2 + 1) for f in product(range(p), repeat=d)
            ):
                return poly
        raise ValueError(f"no irreducible polynomial of degree {e} over GF({p})")  # pragma: no cover

    def _mul(self, a: int, b: int) -> int:
        if self.e == 1:
            return a * b % self.p
        assert self.modulus is not None  # e > 1
        x, y = self._digits(a), self._digits(b)
        prod = [0] * (2 * self.e - 1)
        for i, xi in enumerate(x):
            for j, yj in enumerate(y):
                prod[i + j] = (prod[i + j] + xi * yj) % self.p
        return self._number(_poly_mod(prod, self.modulus, self.p))


def _poly_mod(poly: list[int], modulus: list[int], p: int) -> list[int]:
    """poly mod a monic modulus over GF(p); the remainder has len(modulus) - 1 coefficients."""
    poly = poly[:]
    d = len(modulus) - 1
    for top in range(len(poly) - 1, d - 1, -1):
        c = poly[top] % p
        if c:
            for i in range(d + 1):
                poly[top - d + i] = (poly[top - d + i] - c * modulus[i]) % p
    out = [c % p for c in poly[:d]]
    return out + [0] * (d - len(out))


def _affine(v: int, k: int) -> Resolution | None:
    """The lines of AG(d, k) by direction, if v = k**d (d >= 2) and k is a prime power."""
    power = _prime_power(k)
    if power is None or k > 16:
        return None
    d, x = 0, 1
    while x < v:
        x *= k
        d += 1
    if x != v or d < 2:
        return None
    field = _Field(*power)
    add, mul = field.add, field.mul
    points = list(product(range(k), repeat=d))
    index = {pt: i for i, pt in enumerate(points)}
    classes = []
    for u in points:
        lead = next((c for c in u if c), 0)
        if lead != 1:  # one direction per projective point: first nonzero coordinate 1
            continue
        covered: set[int] = set()
        blocks = []
        for pt in points:
            if index[pt] in covered:
                continue
            line = tuple(index[tuple(add[a][mul[t][b]] for a, b in zip(pt, u, strict=True))] for t in range(k))
            covered.update(line)
            blocks.append(line)
        classes.append(blocks)
    return classes


# --- the searches that found BASE_CLASSES ---------------------------------------------------


def _search_levels(v: int, k: int, m: int, classes: int, limit: int = 5_000_000) -> list[list[Block]] | None:
    """Base classes on Z_m x levels + fixed points whose translates form a resolvable design (m odd).

    Backtracking, smallest free point first; each pair orbit under x -> x + 1 must be covered once.
    """
    levels, fixed = divmod(v, m)

    def orbit(a: int, b: int) -> tuple[str | int, ...]:
        a, b = min(a, b), max(a, b)
        if b >= levels * m:
            return ("fixed", b, a // m) if a < levels * m else ("fixed pair", a, b)
        (la, xa), (lb, xb) = divmod(a, m), divmod(b, m)
        if la == lb:
            d = (xb - xa) % m
            return ("pure", la, min(d, m - d))
        return ("mixed", la, lb, (xb - xa) % m)

    covered: set[tuple[str | int, ...]] = set()
    found: list[list[Block]] = []
    steps = 0

    def next_class() -> bool:
        if len(found) == classes:
            return True
        found.append([])
        if next_block(frozenset(range(v))):
            return True
        found.pop()
        return False

    def next_block(free: frozenset[int]) -> bool:
        nonlocal steps
        steps += 1
        if steps > limit:
            raise TimeoutError
        if not free:
            return next_class()
        first = min(free)
        return grow([first], free - {first})

    def grow(block: list[int], free: frozenset[int]) -> bool:
        if len(block) == k:
            found[-1].append(tuple(block))
            if next_block(free):
                return True
            found[-1].pop()
            return False
        for q in sorted(x for x in free if x > block[-1]):
            orbits = [orbit(p, q) for p in block]
            if any(o[0] == "fixed pair" or o in covered for o in orbits) or len(set(orbits)) < len(orbits):
                continue
            covered.update(orbits)
            if grow([*block, q], free - {q}):
                return True
            covered.difference_update(orbits)
        return False

    try:
        return found if next_class() else None
    except TimeoutError:
        return None


def _search_rotational(v: int, k: int, limit: int = 5_000_000) -> list[list[Block]] | None:
    """One base class on Z_(v-1) + a fixed point, fixed by x -> x + r: {inf} + <r> and orbits B + <r>.

    The base blocks B must take distinct residues mod r, and their differences cover
    Z_(v-1) minus the subgroup <r> exactly once.
    """
    g = v - 1
    r = g // (k - 1)
    sub = [j * r for j in range(k - 1)]
    banned = set(sub)
    used = {0}
    blocks: list[list[int]] = []
    steps = 0
    t = (r - 1) // k

    def differences(block: list[int], x: int) -> list[int] | None:
        out: list[int] = []
        for y in block:
            d1, d2 = (x - y) % g, (y - x) % g
            if d1 in banned or d2 in banned or d1 == d2 or d1 in out or d2 in out:
                return None
            out += [d1, d2]
        return out

    def start() -> bool:
        nonlocal steps
        steps += 1
        if steps > limit:
            raise TimeoutError
        if len(blocks) == t:
            return True
        first = min(x for x in range(r) if x not in used)
        used.add(first)
        if extend([first]):
            return True
        used.discard(first)
        return False

    def extend(block: list[int]) -> bool:
        if len(block) == k:
            blocks.append(block)
            if start():
                return True
            blocks.pop()
            return False
        for res in range(block[-1] % r + 1, r):
            if res in used:
                continue
            for x in (res + j * r for j in range(k - 1)):
                ds = differences(block, x)
                if ds is None:
                    continue
                used.add(res)
                banned.update(ds)
                if extend([*block, x]):
                    return True
                used.discard(res)
                banned.difference_update(ds)
        return False

    try:
        if not start():
            return None
    except TimeoutError:
        return None
    base = [tuple([g, *sub])]
    for b in blocks:
        base += [tuple((x + s) % g for x in b) for s in sub]
    return [base]


#: how ``--search`` finds each entry of BASE_CLASSES
SEARCHES: dict[tuple[int, int], tuple[str] | tuple[str, int, int]] = {
    (15, 3): ("levels", 7, 1),
    (21, 3): ("levels", 5, 2),
    (33, 3): ("rotational",),
    (39, 3): ("levels", 19, 1),
    (28, 4): ("levels", 9, 1),
    (40, 4): ("rotational",),
}


def search(v: int, k: int) -> tuple[int, list[list[Block]]] | None:
    """Run the search that found BASE_CLASSES[(v, k)] again."""
    how = SEARCHES[(v, k)]
    if how[0] == "rotational":
        found = _search_rotational(v, k)
        return None if found is None else (v - 1, found)
    _, m, classes = cast(tuple[str, int, int], how)  # every other entry names its levels
    found = _search_levels(v, k, m, classes)
    return None if found is None else (m, found)


def main(argv: list[str]) -> int:
    if argv[:1] != ["--search"]:
        print("usage: python -m tournaments.designs --search   (find BASE_CLASSES again and check them)")
        return 2
    ok = True
    for (v, k) in SEARCHES:
        found = search(v, k)
        good = found is not None and is_resolvable_design(_develop(v, k, *found), v, k)
        ok &= good
        stored = "the same as BASE_CLASSES" if found == BASE_CLASSES.get((v, k)) else "differs from BASE_CLASSES"
        print(f"({v}, {k}): {found!r}  {'resolvable design, ' + stored if good else 'NOT FOUND'}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
