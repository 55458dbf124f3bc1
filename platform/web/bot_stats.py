"""Selectors of the bot pages: a version's numbers for its author and each bot's results per version.

Moved from bots.selectors (issue 15 point 1): they read the matches' seats and the ladders'
rating changes, so they sit with the bot pages in web, above those apps.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from core.services import cache_delete_on_commit
from django.core.cache import cache
from django.db.models import Count, F, Sum

from bots.models import Bot, BotVersion

# --- a version's numbers for its author (the version page): every figure is one aggregate in the
# database over the version's seats, read on the seat index (bot_version, -queued_at, -match); no
# query per match, per seat or per opponent, so the page costs the same at 10 matches or 100,000.

#: the opponents listed on a version's page: the most played against
STATS_OPPONENTS = 20
#: the version's most recent faults listed with their reasons
STATS_RECENT_FAULTS = 10
#: the version's most recent rated matches listed with their rating change
STATS_RATING_MATCHES = 20
#: upper bounds (seconds) of the decision-time histogram's buckets; the last bucket is open
DECISION_BUCKETS = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0)

#: the newest seats of a version (or, on the bot page, of each version) its numbers are computed
#: over: the aggregates read at most this many rows whatever the history (100,000 matches of one
#: version took 2.7 s a page over the whole history, measured; over 2,000 seats 16-60 ms each)
STATS_WINDOW = 2000


#: bot page: versions whose lines one statement reads (a UNION ALL branch each). Few: PostgreSQL
#: estimates a branch over a full window at about 11,000, and above jit_above_cost (100,000 by
#: default) it JIT-compiles every branch (100 branches took 1.4 s, measured; 10 statements of 10,
#: 0.35 s); SQLite takes at most 500 branches in one compound SELECT anyway.
STATS_BATCH = 8
#: the percentiles of the per-match mean decision times shown (percent, PostgreSQL's percentile_cont)
DECISION_PERCENTILES = (50, 95)

# The SQL of these numbers is one text for PostgreSQL and SQLite (the embedded default): counts by
# SUM(CASE ...) rather than FILTER, LIMIT ... OFFSET, buckets by CASE, percentiles by ROW_NUMBER, a
# UNION ALL branch per version rather than LATERAL. Only what the two spell differently is chosen by
# vendor, each in one function here: how a JSON value is read (_json, _json_elements, _json_is_array)
# and a planner hint (_materialized).


def _postgresql() -> bool:
    from django.db import connection

    return connection.vendor == "postgresql"


class _Index(NamedTuple):
    """A position in a JSON path given by a SQL integer expression (a column), not a constant key."""

    sql: str


def _json(column: str, *path: str | _Index, vendor: str | None = None) -> str:
    """SQL of the scalar at ``path`` (keys, or ``_Index`` positions in an array) in the JSON
    ``column``: text on PostgreSQL, the SQL value on SQLite, NULL where the JSON has no such value or
    not that shape, so callers CAST it. Keys are this module's constants, never user input.
    ``vendor``: the connection's unless given.

    >>> _json("m.timings", "seats", _Index("s.seat"), "mean", vendor="postgresql")
    "m.timings->'seats'->(s.seat)->>'mean'"
    >>> _json("m.timings", "seats", _Index("s.seat"), "mean", vendor="sqlite")
    "json_extract(m.timings, '$.seats[' || (s.seat) || '].mean')"
    """
    for key in path:
        assert isinstance(key, _Index) or re.fullmatch(r"[a-z_]+", key), key
    if (vendor or ("postgresql" if _postgresql() else "sqlite")) == "postgresql":
        steps = [f"({key.sql})" if isinstance(key, _Index) else f"'{key}'" for key in path]
        return column + "".join(f"->{step}" for step in steps[:-1]) + f"->>{steps[-1]}"
    where = "".join(f"[' || ({key.sql}) || ']" if isinstance(key, _Index) else f".{key}" for key in path)
    return f"json_extract({column}, '${where}')"


def _json_elements(column: str, alias: str) -> str:
    """A FROM item of the elements of the JSON array ``column`` (after a comma: each row's own):
    ``alias.value`` an element, ``alias.key`` its position, ascending."""
    if _postgresql():
        return f"jsonb_array_elements({column}) WITH ORDINALITY AS {alias}(value, key)"
    return f"json_each({column}) AS {alias}"


def _json_is_array(column: str) -> str:
    return f"{'jsonb_typeof' if _postgresql() else 'json_type'}({column}) = 'array'"


def _materialized() -> str:
    """``WITH w AS {_materialized()}(...)``: PostgreSQL computes the CTE first (its planner, given the
    window's JSON filters inside the join, scans every match: 450 ms at 100,000); SQLite, which reads
    a version's seats on the index anyway, before 3.35 does not know the word."""
    return "MATERIALIZED " if _postgresql() else ""


def _count_if(condition: str) -> str:
    """How many rows of the group meet ``condition`` (FILTER, which SQLite lacks, as a sum)."""
    return f"coalesce(sum(CASE WHEN {condition} THEN 1 ELSE 0 END), 0)"


#: the figures of a version's seats: a win is rank 1, a fault any strike (fault_kind is the forfeit
#: or the first strike)
_WIN, _FORFEIT, _FAULTY = "s.rank = 1", "s.forfeited", "s.fault_kind <> ''"


def _played(extra_from: str = "", key: str = "%s") -> str:
    """FROM and WHERE of a version's played seats: its newest STATS_WINDOW seats on the seat index
    (bot_version, -queued_at, -match), of finished matches, validation matches left out (they are
    the platform's test, not competition). ``key``: the version id (a parameter, or a column of an
    outer query); ``extra_from``: joins after the match's."""
    return (
        " FROM (SELECT match_id, seat, bot_version_id, rank, score, forfeited, strikes, fault_kind, faults, queued_at"
        f" FROM matches_matchseat WHERE bot_version_id = {key} ORDER BY queued_at DESC, match_id DESC"
        f" LIMIT {STATS_WINDOW}) s JOIN matches_match m ON m.id = s.match_id{extra_from}"
        " WHERE m.status = 'done' AND m.kind <> 'validation'"
    )


def _windowed(key: str = "%s") -> str:
    """True when the version (``key`` as in ``_played``) has seats older than its window: the pages
    then say the numbers are its newest matches'."""
    return (
        f"EXISTS (SELECT 1 FROM matches_matchseat WHERE bot_version_id = {key}"
        f" ORDER BY queued_at DESC, match_id DESC LIMIT 1 OFFSET {STATS_WINDOW})"
    )


def _rows(sql: str, params) -> list[dict]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        names = [c[0] for c in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _results(row: dict) -> dict:
    games = row["matches"] or 0
    row["win_rate"] = (row["wins"] / games) if games else None
    if "windowed" in row:
        row["windowed"] = bool(row["windowed"])  # SQLite answers 0 or 1
    return row


def version_results_by_seats(version: BotVersion) -> list[dict]:
    """Per seat count (2, 3, 4...): matches, wins (rank 1), mean rank, mean score, forfeits, strikes.
    One GROUP BY over the version's played seats (``_played``: its newest STATS_WINDOW); ``windowed``
    on each row when the version has older seats than that."""
    return [_results(row) for row in _rows(
        f"SELECT CAST({_json('m.rules', 'players')} AS INTEGER) AS players, count(*) AS matches,"
        f" {_count_if(_WIN)} AS wins, CAST(avg(s.rank) AS DOUBLE PRECISION) AS mean_rank,"
        f" CAST(avg(s.score) AS DOUBLE PRECISION) AS mean_score, {_count_if(_FORFEIT)} AS forfeits,"
        f" coalesce(sum(s.strikes), 0) AS strikes, {_windowed()} AS windowed" + _played() + " GROUP BY 1 ORDER BY 1",
        [version.pk, version.pk],
    )]


def version_results_by_opponent(version: BotVersion, limit: int = STATS_OPPONENTS) -> list[dict]:
    """The ``limit`` opponents (a bot, any of its versions, or a reference bot) the version met most:
    matches together, how often it finished ahead of them / behind them, and its wins (rank 1) in those
    matches, with the bot's name and owner. One GROUP BY over the version's seats joined to the other
    seats of the same matches, the names joined to the ``limit`` rows only. Ties: bots before
    reference bots (``bot_id IS NULL``: the same order on either database)."""
    rows = _rows(
        "WITH top AS (SELECT o.bot_id, o.reference_bot, count(DISTINCT s.match_id) AS matches,"
        f" {_count_if('s.rank < o.rank')} AS ahead, {_count_if('s.rank > o.rank')} AS behind,"
        f" count(DISTINCT CASE WHEN {_WIN} THEN s.match_id END) AS wins"
        + _played(" JOIN matches_matchseat o ON o.match_id = s.match_id AND o.seat <> s.seat")
        + " GROUP BY o.bot_id, o.reference_bot ORDER BY 3 DESC, o.bot_id IS NULL, 1, 2 LIMIT %s)"
        " SELECT top.*, b.name AS bot_name, u.username AS owner FROM top"
        " LEFT JOIN bots_bot b ON b.id = top.bot_id LEFT JOIN auth_user u ON u.id = b.owner_id"
        " ORDER BY top.matches DESC, top.bot_id IS NULL, top.bot_id, top.reference_bot",
        [version.pk, limit],
    )
    return [_results(row) for row in rows]


def version_faults(version: BotVersion, recent: int = STATS_RECENT_FAULTS) -> dict:
    """The version's faults over its played seats: ``kinds`` (kind, count, matches with it; timeouts
    are the kind ``timeout``), ``forfeits`` by the kind that ended them, and the ``recent`` newest
    faults with their reasons (match, game, round, kind, reason). Two queries."""
    faulty = f" AND {_FAULTY} AND {_json_is_array('s.faults')}"
    counted = _rows(
        f"SELECT 'fault' AS what, {_json('f.value', 'kind')} AS kind, count(*) AS faults,"
        " count(DISTINCT s.match_id) AS matches" + _played(", " + _json_elements("s.faults", "f")) + faulty
        + " GROUP BY 2 UNION ALL SELECT 'forfeit', s.fault_kind, count(*), count(*)" + _played()
        + f" AND {_FORFEIT} GROUP BY 2 ORDER BY 1, 3 DESC, 2",
        [version.pk, version.pk],
    )
    kinds = [row for row in counted if row["what"] == "fault"]
    forfeits = [row for row in counted if row["what"] == "forfeit"]
    # newest first on the seat index; only seats with a fault are expanded
    latest = _rows(
        f"SELECT s.match_id AS match_id, s.seat AS seat, {_json('f.value', 'kind')} AS kind,"
        f" {_json('f.value', 'reason')} AS reason, CAST({_json('f.value', 'game')} AS INTEGER) AS game,"
        f" CAST({_json('f.value', 'round')} AS INTEGER) AS round FROM ("
        "  SELECT s.match_id, s.seat, s.faults, s.queued_at" + _played() + faulty
        + f"  ORDER BY s.queued_at DESC, s.match_id DESC LIMIT %s) s, {_json_elements('s.faults', 'f')}"
        " ORDER BY s.queued_at DESC, s.match_id DESC, f.key DESC LIMIT %s",
        [version.pk, recent, recent],
    )
    return {"kinds": kinds, "forfeits": forfeits, "recent": latest}


def _bucket(value: str) -> str:
    """The DECISION_BUCKETS bucket of ``value`` (SQL): 0 below the first bound, i from the i-th on,
    as PostgreSQL's width_bucket; NULL for NULL.

    >>> _bucket("x").startswith("CASE WHEN x IS NULL THEN NULL WHEN x < 0.001 THEN 0 WHEN x < 0.003 THEN 1")
    True
    """
    steps = " ".join(f"WHEN {value} < {bound!r} THEN {i}" for i, bound in enumerate(DECISION_BUCKETS))
    return f"CASE WHEN {value} IS NULL THEN NULL {steps} ELSE {len(DECISION_BUCKETS)} END"


def _percentile(percent: int, n: int, ranked: dict[int, float]) -> float | None:
    """PostgreSQL's percentile_cont of ``n`` values, ``ranked`` holding those at the positions the
    query read (``(percent * (n - 1)) / 100`` and the next): the two interpolated.

    >>> _percentile(50, 4, {1: 2.0, 2: 4.0}), _percentile(95, 1, {0: 7.0}), _percentile(50, 0, {})
    (3.0, 7.0, None)
    """
    if not n:
        return None
    low, rest = divmod(percent * (n - 1), 100)
    value = ranked[low]
    return value + (ranked[low + 1] - value) * rest / 100 if rest else value


def version_decision_times(version: BotVersion) -> dict:
    """The distribution of the version's decision times, computed in SQL over its played seats
    (buckets on DECISION_BUCKETS): per match, its mean and its slowest decision (the match's
    ``timings``; single decisions' times are only in the gzipped per-match blobs, which SQL cannot
    read). ``buckets``: label, matches by mean, matches by max; ``matches`` counted; ``p50``/``p95`` of
    the means and ``max`` of the maxima, in seconds. One query."""
    def seat(key):
        return _json("m.timings", "seats", _Index("s.seat"), key)

    positions = ", ".join(f"({p} * (n - 1)) / 100, ({p} * (n - 1)) / 100 + 1" for p in DECISION_PERCENTILES)
    rows = _rows(
        # the window's timings first, then the seats that were timed
        f"WITH w AS {_materialized()}(SELECT CAST({seat('mean')} AS DOUBLE PRECISION) AS mean,"
        f" CAST({seat('max')} AS DOUBLE PRECISION) AS max, CAST({seat('decisions')} AS INTEGER) AS decisions"
        + _played() + "),"
        " t AS (SELECT mean, max FROM w WHERE decisions > 0),"
        " r AS (SELECT mean, ROW_NUMBER() OVER (ORDER BY mean) - 1 AS i, count(*) OVER () AS n"
        "  FROM t WHERE mean IS NOT NULL)"
        f" SELECT 'mean' AS what, {_bucket('mean')} AS bucket, count(*) AS n, CAST(NULL AS DOUBLE PRECISION) AS value FROM t GROUP BY 2"
        f" UNION ALL SELECT 'max', {_bucket('max')}, count(*), NULL FROM t GROUP BY 2"
        " UNION ALL SELECT 'top', NULL, count(*), max(max) FROM t"
        f" UNION ALL SELECT 'rank', i, n, mean FROM r WHERE i IN ({positions})",
        [version.pk],
    )
    counts = {(r["what"], r["bucket"]): r["n"] for r in rows if r["what"] in ("mean", "max")}
    ranked = {r["bucket"]: r["value"] for r in rows if r["what"] == "rank"}
    timed = next((r["n"] for r in rows if r["what"] == "rank"), 0)
    top = next((r["value"] for r in rows if r["what"] == "top"), None)
    bounds = (0.0, *DECISION_BUCKETS)
    buckets = []
    for i in range(len(bounds)):
        low, high = bounds[i], (bounds[i + 1] if i + 1 < len(bounds) else None)
        label = f"< {_ms(bounds[1])}" if i == 0 else (f"≥ {_ms(low)}" if high is None else _ms_range(low, high))
        buckets.append({"label": label, "mean": counts.get(("mean", i), 0), "max": counts.get(("max", i), 0)})
    total = sum(b["mean"] for b in buckets)
    peak = max([b["mean"] for b in buckets] + [b["max"] for b in buckets] + [1])
    for b in buckets:
        b["mean_pct"], b["max_pct"] = round(100 * b["mean"] / peak), round(100 * b["max"] / peak)
    p50, p95 = (_percentile(p, timed, ranked) for p in DECISION_PERCENTILES)
    return {"buckets": buckets, "matches": total, "p50": p50, "p95": p95, "max": top}


def _ms(seconds: float) -> str:
    """A bucket bound as read: milliseconds below a second.

    >>> _ms(0.003), _ms(1.0)
    ('3 ms', '1 s')
    """
    return f"{seconds * 1000:g} ms" if seconds < 1 else f"{seconds:g} s"


def _ms_range(low: float, high: float) -> str:
    """A bucket's range, its unit written once when both bounds share it.

    >>> _ms_range(0.001, 0.003), _ms_range(0.3, 1.0), _ms_range(1.0, 3.0)
    ('1–3 ms', '300 ms–1 s', '1–3 s')
    """
    if high < 1:
        return f"{low * 1000:g}–{high * 1000:g} ms"
    if low >= 1:
        return f"{low:g}–{high:g} s"
    return f"{_ms(low)}–{_ms(high)}"


def version_rating_changes(version: BotVersion, limit: int = STATS_RATING_MATCHES) -> dict:
    """The version's rating change in each of its ``limit`` newest rated ladder matches (newest first,
    with the ladder), and over all of them: rated matches and the sum of the changes. The newest come
    from the seat index (the version's newest seats), the totals from one aggregate."""
    from ladders.models import RatingChange
    from matches.models import MatchSeat

    newest = MatchSeat.objects.filter(bot_version=version, match__kind="ladder").order_by("-queued_at", "-match_id")
    changes = list(
        RatingChange.objects.filter(bot_version=version, match_id__in=newest.values("match_id")[:limit])
        .select_related("ladder").only("match_id", "rank", "forfeited", "before", "after", "matches_after",
                                       "ladder__slug", "ladder__name", "created_at")
        .order_by("-match_id")[:limit]
    )
    totals = RatingChange.objects.filter(bot_version=version, after__isnull=False).aggregate(
        rated=Count("pk"), gained=Sum(F("after") - F("before"))
    )
    return {"changes": changes, "rated": totals["rated"], "gained": totals["gained"]}


#: seconds a version's numbers are kept at most: a result of one of its matches drops them at once
#: (``version_stats_clear``); a ladder refit, which rewrites the rating changes, shows within this
VERSION_STATS_SECONDS = 60


def _version_stats_key(version_id: int) -> str:
    return f"version-stats:{version_id}"


def _version_results_key(version_id: int) -> str:
    return f"version-results:{version_id}"


def bot_version_results(bot: Bot, versions=None) -> dict[int, dict]:
    """Version id -> its finished non-validation matches (of its newest STATS_WINDOW seats), wins
    (rank 1), win rate, forfeits and seats with a fault, ``windowed`` when it has older seats: the bot
    page's line per version (``versions``: the bot's, when already loaded). One query per STATS_BATCH
    versions: a UNION ALL branch each, each reading that version's window on the seat index."""
    ids = [v.pk for v in versions] if versions is not None else list(bot.versions.values_list("pk", flat=True))
    # each version's line is cached with its numbers (VERSION_STATS_SECONDS, dropped by its results);
    # only the lines not cached are read, STATS_BATCH versions a query
    known = cache.get_many([_version_results_key(pk) for pk in ids])
    missing = [pk for pk in ids if _version_results_key(pk) not in known]
    computed: dict[int, dict] = {}
    for start in range(0, len(missing), STATS_BATCH):
        chunk = missing[start:start + STATS_BATCH]
        branch = (
            f"SELECT CAST(%s AS INTEGER) AS version_id, count(*) AS matches, {_count_if(_WIN)} AS wins,"
            f" {_count_if(_FORFEIT)} AS forfeits, {_count_if(_FAULTY)} AS faulty, {_windowed()} AS windowed"
            + _played()
        )
        rows = _rows(" UNION ALL ".join([branch] * len(chunk)), [pk for pk in chunk for _ in range(3)])
        computed.update({row["version_id"]: _results(row) for row in rows if row["matches"]})
    # a version without a finished match is cached as {} (and left out of the answer)
    cache.set_many({_version_results_key(pk): computed.get(pk, {}) for pk in missing}, VERSION_STATS_SECONDS)
    lines = {**{pk: known[_version_results_key(pk)] for pk in ids if _version_results_key(pk) in known}, **computed}
    return {pk: lines[pk] for pk in ids if lines.get(pk)}


def version_stats(version: BotVersion) -> dict:
    """Everything the version page shows of its play, in a fixed number of queries, cached per
    version (its five aggregates read up to STATS_WINDOW seats each: 22 ms at 776 seats, measured)."""
    key = _version_stats_key(version.pk)
    stats = cache.get(key)
    if stats is None:
        by_seats = version_results_by_seats(version)
        stats = {
            "window": STATS_WINDOW,
            "windowed": any(row["windowed"] for row in by_seats),
            "by_seats": by_seats,
            "by_opponent": version_results_by_opponent(version),
            "faults": version_faults(version),
            "decisions": version_decision_times(version),
            "ratings": version_rating_changes(version),
        }
        cache.set(key, stats, VERSION_STATS_SECONDS)
    return stats


def version_stats_clear(match) -> None:
    """A result hook (``settings.MATCH_RESULT_HOOKS``, every kind): drop the cached numbers (the
    version page's and the bot page's line) of every version that played in ``match`` once the
    result's transaction commits (with the other hooks' keys, one ``delete_many``). The seats as the
    result read them (no query), else read here."""
    keys = [
        key(seat.bot_version_id)
        for seat in match.seats.all()
        if seat.bot_version_id is not None
        for key in (_version_stats_key, _version_results_key)
    ]
    if keys:
        cache_delete_on_commit(keys)
