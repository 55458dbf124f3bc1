"""Selectors of tournaments (functions that read): list, progress, standings, rounds, crosstable, CSV rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction

from core.cachekeys import digest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db.models import (
    Count,
    IntegerField,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Coalesce

from tournaments import tables
from tournaments.schedule import meeting_counts
from tournaments.standings import crosstable
from tournaments.tables import table_sizes

from .models import Entry, Table, TableSeat, Tournament, TournamentEvent
from .services import (
    history,
    redact_seed,
    seed_is_public,
    tournament_standings_lines,
)

#: column titles of the tie-breaks
TIE_BREAK_TITLES = {
    "buchholz": "Buchholz",
    "sonneborn_berger": "Sonneborn-Berger",
    "head_to_head": "Head-to-head",
    "game_points": "Game points",
}


def fmt(value: Fraction | float | int | None) -> str:
    """A score for people: 2, 2.5, 1.67; empty for None."""
    if value is None:
        return ""
    return f"{round(float(value), 2):g}"


def rules_changed(rules: dict) -> list[str]:
    """``key=value`` for the table size and every option that differs from its default."""
    from engine.rules import Rules

    base = {"players": rules.get("players", 2), "scoring": rules.get("scoring", "winner")}
    try:
        defaults = Rules.from_dict(base).to_dict()
    except ValueError:
        defaults = {}
    return [f"{k}={v}" for k, v in rules.items() if k == "players" or defaults.get(k) != v]


def _count(rows: QuerySet) -> Coalesce:
    """``rows`` (filtered on ``OuterRef("pk")``) counted by one scalar subquery per tournament: joined
    counts would multiply entries by tables before grouping (the cross product)."""
    counted = rows.order_by().annotate(group=Value(1)).values("group").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def tournament_list() -> QuerySet[Tournament]:
    """Tournaments with their entry count and match counts (done, paired so far), newest first.

    Each count is its own scalar subquery over an indexed foreign key, evaluated for the rows shown.
    """
    entries = Entry.objects.filter(tournament=OuterRef("pk"))
    tables = Table.objects.filter(round__tournament=OuterRef("pk"), bye=False)
    return Tournament.objects.annotate(
        entry_count=_count(entries),
        active_count=_count(entries.filter(status=Entry.Status.ACTIVE)),
        matches_done=_count(tables.filter(done=True)),
        matches_paired=_count(tables),
    ).select_related("seed_ladder").order_by("-created_at", "-pk")


@dataclass(frozen=True)
class Progress:
    """Matches done of the total; the total counts rounds not yet paired by the current field."""

    status: str
    current_round: int
    total_rounds: int
    done: int
    total: int

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else (100 if self.status == "finished" else 0)

    def as_dict(self) -> dict:
        return {
            "status": self.status, "current_round": self.current_round, "total_rounds": self.total_rounds,
            "done": self.done, "total": self.total, "percent": self.percent,
        }


def tournament_progress(tournament: Tournament, *, done: int | None = None, paired: int | None = None,
                        active: int | None = None) -> Progress:
    """How far the tournament is; pass the counts when already read (annotated by tournament_list, or
    ``table_counts``)."""
    if done is None or paired is None:
        counts = Table.objects.filter(round__tournament=tournament, bye=False).aggregate(
            done=Count("pk", filter=Q(done=True)), paired=Count("pk")
        )
        done = counts["done"] if done is None else done
        paired = counts["paired"] if paired is None else paired
    total = paired
    remaining = (tournament.total_rounds or 0) - tournament.current_round
    if tournament.status in (Tournament.Status.RUNNING, Tournament.Status.PAUSED) and remaining > 0:
        if tournament.format == Tournament.Format.ROUND_ROBIN:
            total += sum(len(r["tables"]) for r in tournament.plan[tournament.current_round:])
        else:
            if active is None:
                active = tournament.entries.filter(status=Entry.Status.ACTIVE).count()
            try:
                total += remaining * len(table_sizes(active, tournament.seats))
            except ValueError:  # too few left to pair: the tournament ends after this round
                pass
    return Progress(tournament.status, tournament.current_round, tournament.total_rounds or 0, done, total)


def counted_progress(tournament: Tournament) -> Progress:
    """The progress of a tournament read through ``tournament_list()``, from its annotated counts
    (no further query)."""
    return tournament_progress(
        tournament, done=tournament.matches_done, paired=tournament.matches_paired, active=tournament.active_count
    )


def page_progress(tournament: Tournament, entries: list[Entry], counts: TableCounts) -> Progress:
    """The progress of a tournament whose entries (all of them, ``tournament_entries``) and
    ``table_counts`` its page or API answer read already (no further query)."""
    return tournament_progress(
        tournament, done=counts.done, paired=counts.paired,
        active=sum(entry.status == Entry.Status.ACTIVE for entry in entries),
    )


@dataclass(frozen=True)
class StandingRow:
    rank: int
    entry: Entry
    points: str
    tie_breaks: list[str]
    played: int
    byes: int
    status: str


#: seconds a tournament's computed standings stay cached (any new result changes the key at once)
STANDINGS_CACHE_SECONDS = 600


@dataclass(frozen=True)
class TableCounts:
    """A tournament's tables counted in one query: its matches ``done`` and ``paired`` (byes left out:
    the progress) and what its standings are computed from, the done tables and byes (``results``: how
    many, the sum of their match ids: a rerun's new match changes it, and the last one)."""

    done: int
    paired: int
    results: str


def table_counts(tournament: Tournament) -> TableCounts:
    done = Q(done=True)
    row = Table.objects.filter(round__tournament=tournament).aggregate(
        matches_done=Count("pk", filter=Q(done=True, bye=False)), matches_paired=Count("pk", filter=Q(bye=False)),
        results=Count("pk", filter=done), ids=Sum("match_id", filter=done), last=Max("pk", filter=done),
    )
    return TableCounts(row["matches_done"], row["matches_paired"], f"{row['results']}.{row['ids']}.{row['last']}")


def _results_stamp(tournament: Tournament, entries: list[Entry], counts: TableCounts | None = None) -> str:
    """What the standings are computed from: the done tables and byes (``TableCounts.results``; pass
    ``counts`` when already read) and the ``entries`` (all of the tournament's, as read for the page)
    that left."""
    counts = table_counts(tournament) if counts is None else counts
    left = sorted((e.pk, e.status) for e in entries if e.status != Entry.Status.ACTIVE)
    return f"{counts.results}.{left}"


def _standings_key(tournament: Tournament, entries: list[Entry] | None = None,
                   counts: TableCounts | None = None) -> str:
    """The cache key of the tournament's computed standings: the tournament, its settings and
    ``_results_stamp`` (a new result, a rerun or a withdrawal is a new key); kept on the object for
    the rest of the request."""
    known = getattr(tournament, "_computed_key", None)
    if known is not None:
        return known
    entries = list(tournament_entries(tournament)) if entries is None else entries
    settings_key = (tournament.status, tournament.current_round, tuple(tournament.tie_breaks), tournament.seats,
                    repr(sorted(tournament.rules.items())))
    key = "tournament-standings:" + digest(tournament.pk, settings_key, _results_stamp(tournament, entries, counts))
    tournament._computed_key = key
    return key


def _computed(tournament: Tournament, entries: list[Entry] | None = None, counts: TableCounts | None = None) -> dict:
    """The tournament's standings lines and two-seat crosstable cells, computed once per set of
    results: cached under ``_standings_key``, and kept on the object for the rest of the request.

    ``entries``: every entry of the tournament when already read (``tournament_entries``)."""
    known = getattr(tournament, "_computed", None)
    if known is not None:
        return known
    entries = list(tournament_entries(tournament)) if entries is None else entries
    key = _standings_key(tournament, entries, counts)
    known = cache.get(key)
    if known is None:
        results = history(tournament)  # read once for the standings and the crosstable
        lines = tournament_standings_lines(tournament, [e for e in entries if e.version_id], results)
        cells = crosstable(lines, results).cells if tournament.seats == 2 else {}
        known = {"lines": lines, "cells": cells}
        cache.set(key, known, STANDINGS_CACHE_SECONDS)
    tournament._computed = known
    return known


def tournament_results_key(tournament: Tournament, entries: list[Entry] | None = None,
                           counts: TableCounts | None = None) -> str:
    """A name for the tournament's standings and crosstable as they are now: the computed standings'
    cache key once it has started (a new result, rerun, withdrawal or change of settings is a new
    name), else one name for "not started". The page caches their rendered tables under it, the API
    its serialized lists; neither needs the standings themselves when that is cached.

    ``counts``: the tournament's ``table_counts`` when already read."""
    if tournament.started_at is None:
        return f"{tournament.pk}:not-started"
    return _standings_key(tournament, entries, counts)


#: places on a finished tournament's podium
PODIUM_PLACES = 3


def tournament_podium(tournament: Tournament, standings: list[StandingRow]) -> list[StandingRow]:
    """The podium of a finished tournament: its standings rows of rank 1 to PODIUM_PLACES (ties
    share a place), disqualified entries left out; none before it has finished."""
    if tournament.status != Tournament.Status.FINISHED:
        return []
    return [row for row in standings if row.rank <= PODIUM_PLACES and row.status != "disqualified"]


def tournament_standings(tournament: Tournament, entries: list[Entry] | None = None,
                         counts: TableCounts | None = None) -> list[StandingRow]:
    """The standings table: rank, entry, points, each tie-break in order, games played, byes, status.

    ``entries``: the tournament's entries when already read (``tournament_entries``); ``counts``: its
    ``table_counts``."""
    if tournament.started_at is None:
        return []
    entries = list(tournament_entries(tournament)) if entries is None else entries
    by_name = {e.name: e for e in entries if e.version_id}
    return [
        StandingRow(
            rank=line.rank, entry=by_name[line.entry], points=fmt(line.points),
            tie_breaks=[fmt(line.tie_breaks.get(tb)) for tb in tournament.tie_breaks],
            played=line.played, byes=line.byes, status=line.status,
        )
        for line in _computed(tournament, entries, counts)["lines"]
    ]


#: rows of a crosstable page (every column stays: a row is read across the whole field)
CROSSTABLE_PAGE_SIZE = 32


@dataclass(frozen=True)
class Crosstable:
    """One page of a crosstable: ``lines`` (each ``row`` and its ``cells``, one per column), the
    columns' count, the number of the first row, the page and the number of pages."""

    lines: list[dict]
    columns: int
    first: int
    page: int
    pages: int

    @property
    def last(self) -> int:
        return self.first + len(self.lines) - 1

    @property
    def has_previous(self) -> bool:
        return self.page > 1

    @property
    def has_next(self) -> bool:
        return self.page < self.pages


def crosstable_page(rows: list[StandingRow], page: int, *, size: int | None = None) -> int:
    """The crosstable page ``tournament_crosstable`` shows for the asked ``page`` (past the end: the last)."""
    size = CROSSTABLE_PAGE_SIZE if size is None else size
    return min(max(1, page), max(1, -(-len(rows) // size)))


def tournament_crosstable(tournament: Tournament, rows: list[StandingRow], *, page: int = 1,
                          size: int | None = None) -> Crosstable | None:
    """Two-seat events: per standings row of the page, its results against every row (``1``, ``=``, ``0``).

    A page holds ``size`` rows against all columns, so a large field's page stays a few thousand
    cells (64 entries: 2 pages of 32 x 64 instead of one of 4,096)."""
    if tournament.seats != 2 or not rows:
        return None
    results = _computed(tournament)["cells"]
    glyph = {Fraction(1): "1", Fraction(1, 2): "½", Fraction(0): "0"}
    size = CROSSTABLE_PAGE_SIZE if size is None else size
    pages = max(1, -(-len(rows) // size))
    page = crosstable_page(rows, page, size=size)
    start = (page - 1) * size
    out = []
    for row in rows[start : start + size]:
        cells = []
        for col in rows:
            if col.entry.pk == row.entry.pk:
                cells.append(None)
            else:
                scores = results.get((row.entry.name, col.entry.name), ())
                cells.append(" ".join(glyph[s] for s in scores))
        out.append({"row": row, "cells": cells})
    return Crosstable(out, len(rows), start + 1, page, pages)


#: rounds the tournament page shows at once (the newest); each older one is a page of its own
ROUNDS_SHOWN = 2


def entries_digest(entries: list[Entry]) -> str:
    """A name for what the page and the API show of ``entries`` (as read by ``tournament_entries``):
    name, bot and owner, version, status and seeding of each."""
    return digest([
        (e.pk, e.name, e.bot_id, e.bot.owner_id, e.version_id, e.version.number if e.version_id else None, e.status,
         e.seed_position, e.seed_rating)
        for e in entries
    ])


@dataclass(frozen=True)
class SeatShown:
    """A seat of a table as the rounds show it: the entry (an ``Entry``), its rank, game points, forfeit."""

    seat: int
    entry: Entry
    rank: int | None
    score: float | None
    forfeited: bool


@dataclass(frozen=True)
class TableShown:
    """A table of a round (or a bye): its number, whether its result is in, its current match's id and
    status (None: no match), and its seats in seat order."""

    number: int
    bye: bool
    done: bool
    match_id: int | None
    match_status: str | None
    seats: list[SeatShown]


@dataclass(frozen=True)
class RoundShown:
    number: int
    status: str
    explanation: list[str]
    tables: list[TableShown]  # in table order, byes last


@dataclass(frozen=True)
class Rounds:
    """Rounds as read for a page or an answer, newest first, and ``key``: a name for everything they
    show (every value read, and the seated entries' names), so a new result, a rerun's match, a match
    that starts or a new round is a new key: what shows them may be cached under it."""

    rounds: list[RoundShown]
    key: str

    def __iter__(self):
        return iter(self.rounds)

    def __getitem__(self, index):
        return self.rounds[index]

    def __len__(self) -> int:
        return len(self.rounds)


def tournament_rounds_shown(
    tournament: Tournament, choice: str | None, entries: list[Entry] | None = None
) -> tuple[Rounds, list[int]]:
    """The rounds the page shows (round ``choice`` when it is one, else the ``ROUNDS_SHOWN`` newest)
    and the numbers of every paired round, newest first, for the links to the others."""
    numbers = list(range(tournament.current_round, 0, -1))  # rounds are paired 1, 2, ... current
    try:
        wanted = [int(choice)] if choice else numbers[:ROUNDS_SHOWN]
    except ValueError:
        wanted = numbers[:ROUNDS_SHOWN]
    return tournament_rounds(tournament, numbers=wanted, entries=entries), numbers


def tournament_rounds(
    tournament: Tournament, *, numbers: list[int] | None = None, entries: list[Entry] | None = None
) -> Rounds:
    """Rounds (only ``numbers`` when given), newest first, with their tables (and byes), seats (in seat
    order) and matches (their id and status), in two queries of plain values whatever the field: the
    rounds, then their seats with their tables (a table has its seats from its pairing on).

    ``entries``: every entry of the tournament when already read (``tournament_entries``); each seat's
    ``entry`` is one of them (a 64-entry Swiss shows 128 seats a page, its API 384)."""
    if entries is None:
        entries = list(tournament_entries(tournament))
    rounds = tournament.round_set.order_by("-number")
    if numbers is not None:
        rounds = rounds.filter(number__in=numbers)
    round_rows = list(rounds.values_list("pk", "number", "status", "explanation"))
    seat_rows = list(
        TableSeat.objects.filter(table__round__in=[row[0] for row in round_rows])
        .order_by("table__round", "table__number", "seat")
        .values_list("table__round", "table", "table__number", "table__bye", "table__done", "table__match",
                     "table__match__status", "seat", "entry", "rank", "score", "forfeited")
    ) if round_rows else []
    by_pk = {entry.pk: entry for entry in entries}
    tables: dict[int, list[TableShown]] = {}
    last = None
    for round_pk, table, number, bye, done, match, status, seat, entry, rank, score, forfeited in seat_rows:
        if table != last:
            tables.setdefault(round_pk, []).append(TableShown(number, bye, done, match, status, []))
            last = table
        tables[round_pk][-1].seats.append(SeatShown(seat, by_pk[entry], rank, score, forfeited))
    shown = [
        RoundShown(number, status, list(explanation or ()), tables.get(pk, []))
        for pk, number, status, explanation in round_rows
    ]
    names = sorted({(row[8], by_pk[row[8]].name) for row in seat_rows})
    return Rounds(shown, digest(tournament.pk, round_rows, seat_rows, names))


@dataclass(frozen=True)
class LogLine:
    """A line of the tournament's log as a viewer may see it."""

    at: datetime
    who: str
    action: str
    message: str


def tournament_events(tournament: Tournament, user=None, limit: int = 200) -> list[LogLine]:
    """The log, newest first; the seed's number is hidden from whoever may not see it yet (``seed_visible``)."""
    reveal = seed_visible(tournament, user)
    username = f"actor__{get_user_model().USERNAME_FIELD}"
    events = tournament.events.order_by("-at", "-pk").values_list("at", "actor", username, "action", "message")
    return [
        LogLine(at, TournamentEvent.who_of(actor, username), action, message if reveal else redact_seed(message))
        for at, actor, username, action, message in events[:limit]
    ]


def seed_visible(tournament: Tournament, user=None) -> bool:
    """Organizers always see the seed; everyone else once the tournament is finished (every deal derives
    from it, so knowing it before the start would let an entrant tune a version to the deals)."""
    return seed_is_public(tournament) or (user is not None and can_organize(user))


@dataclass(frozen=True)
class PairCoverage:
    """How many pairs of entries share a table at least once in a round robin's schedule."""

    pairs: int
    met: int
    repeated: int  # pairs that share a table more than once

    @property
    def unmet(self) -> int:
        return self.pairs - self.met

    @property
    def text(self) -> str:
        if not self.unmet:
            text = f"every one of the {self.pairs} pairs of entries meets at a table in this schedule"
        else:
            text = f"{self.unmet} of {self.pairs} pairs of entries do not meet at a table in this schedule"
        if self.repeated:
            text += f"; {self.repeated} {'pair meets' if self.repeated == 1 else 'pairs meet'} more than once"
        return text


def round_robin_pair_coverage(tournament: Tournament) -> PairCoverage | None:
    """For a round robin of 3+ seats per table, scheduled (started): how many pairs meet in its schedule.

    The schedule is the stored plan (every round, played or not), over the entries it seats; later
    withdrawals are not taken out. None for other tournaments, and before the start (no schedule yet).
    """
    if tournament.format != Tournament.Format.ROUND_ROBIN or tournament.seats <= 2 or not tournament.plan:
        return None
    schedule = [  # the stored plan as the schedule it was made from
        tables.PairedRound(
            number,
            tuple(tables.Table(tuple(seats)) for seats in planned.get("tables", ())),
            tuple(planned.get("byes", ())),
        )
        for number, planned in enumerate(tournament.plan, start=1)
    ]
    names = {entry for rnd in schedule for entry in rnd.entries()}
    counts = meeting_counts(schedule)
    return PairCoverage(
        pairs=len(names) * (len(names) - 1) // 2,
        met=len(counts),
        repeated=sum(1 for count in counts.values() if count > 1),
    )


#: what pages, the API and the standings read of an entry's bot and version (their links, the
#: version's number, the owner's id): 64 entries' whole bots and versions were a quarter of a Swiss
#: page's queries' time
ENTRY_RELATED_FIELDS = ("bot__owner", "version__bot", "version__number")


def tournament_entries(tournament: Tournament) -> QuerySet[Entry]:
    """Every entry of the tournament (all its own fields) with what is shown of its bot and version."""
    own = [field.name for field in Entry._meta.concrete_fields]
    return tournament.entries.select_related("bot", "version").only(*own, *ENTRY_RELATED_FIELDS).order_by("pk")


def can_organize(user) -> bool:
    """Organizers are staff: they run tournaments from the admin."""
    return bool(user.is_authenticated and user.is_staff)


def standings_csv_rows(tournament: Tournament) -> list[list[str]]:
    """The standings as CSV rows, header first; values are plain text (see views for cell safety)."""
    header = ["rank", "entry", "version", "points",
              *[TIE_BREAK_TITLES.get(tb, tb) for tb in tournament.tie_breaks], "played", "byes", "status"]
    rows = [header]
    for row in tournament_standings(tournament):
        version = f"v{row.entry.version.number}" if row.entry.version_id else ""
        rows.append([str(row.rank), row.entry.name, version, row.points, *row.tie_breaks,
                     str(row.played), str(row.byes), row.status])
    return rows


def bots_to_enter(tournament: Tournament, user) -> list | None:
    """The user's bots that could enter now (registration open, an active version, not entered);
    None when the user cannot enter anything here."""
    if tournament.status != Tournament.Status.REGISTRATION or not user.is_authenticated:
        return None
    from bots.models import Bot, BotVersion

    entered = tournament.entries.values("bot_id")
    return list(
        Bot.objects.filter(owner=user, versions__status=BotVersion.Status.ACTIVE)
        .exclude(pk__in=entered).distinct().order_by("name")
    )


def seeding_rating(ladder, version) -> float | None:
    """The rating a tournament seeds ``version`` by on ``ladder``; None when it has none there (unrated).

    The one place that knows where a ladder keeps ratings: the version's last rated match on the
    ladder (RatingChange.after), else its bot's ladder entry once it has played a rated match.
    A ladder entry that never played keeps the start rating, which says nothing: unrated.
    """
    from ladders.models import LadderEntry, RatingChange

    if ladder is None or version is None:
        return None
    change = (
        RatingChange.objects.filter(ladder=ladder, bot_version=version).order_by("-pk").values_list("after", flat=True)
        .first()
    )
    if change is not None:
        return float(change)
    entry = LadderEntry.objects.filter(ladder=ladder, bot_id=version.bot_id).first()
    if entry is None or entry.matches_played == 0:
        return None
    return float(entry.rating)


@dataclass(frozen=True)
class SeedingRow:
    position: int
    entry: Entry
    rating: str  # whole points ("1512") or "unrated"


def tournament_seeding(tournament: Tournament, entries: list[Entry] | None = None) -> list[SeedingRow]:
    """The seeding read at the start (seeded from a ladder): place, entry, rating or "unrated"."""
    if entries is None:
        entries = tournament.entries.filter(seed_position__isnull=False).select_related("bot", "version")
    seeded = sorted((e for e in entries if e.seed_position is not None), key=lambda e: e.seed_position)
    return [
        SeedingRow(e.seed_position, e, "unrated" if e.seed_rating is None else f"{e.seed_rating:.0f}") for e in seeded
    ]


def same_owner_entries(tournament: Tournament, entries: list[Entry] | None = None) -> dict[int, list[str]]:
    """entry pk -> the names of the other entries of the same owner (entered: allowed, but flagged)."""
    if entries is None:
        entries = list(tournament.entries.select_related("bot").order_by("pk"))
    by_owner: dict[int, list[Entry]] = {}
    for e in entries:
        by_owner.setdefault(e.bot.owner_id, []).append(e)
    return {
        e.pk: [o.name for o in group if o.pk != e.pk]
        for group in by_owner.values() if len(group) > 1 for e in group
    }


def tournament_clocks(tournament: Tournament) -> list[tuple[str, float]]:
    """The three clocks of the tournament's matches, in sandbox.limits.CLOCKS order: (title, seconds)."""
    from sandbox.limits import CLOCKS

    titles = {"time_per_decision": "per decision", "time_bank": "time bank", "time_per_match": "per match"}
    return [(titles[c], getattr(tournament, c)) for c in CLOCKS]


def match_event(match) -> dict | None:
    """The tournament a tournament ``match`` was played for, for its page (settings.MATCH_EVENTS):
    ``{"kind", "name", "url", "detail"}`` (detail: its round and table), or None when no table links it.
    One query, on the link's index."""
    table = (
        Table.objects.filter(match=match).select_related("round__tournament")
        .only("number", "round__number", "round__tournament__slug", "round__tournament__name").first()
    )
    if table is None:
        return None
    tournament = table.round.tournament
    return {"kind": "tournament", "name": tournament.name, "url": tournament.get_absolute_url(),
            "detail": f"round {table.round.number}, table {table.number}"}
