"""Selectors of the ladders app (functions that read): lists, standings, history, head-to-head."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from core.cachekeys import digest
from django.db import connection
from django.db.models import (
    BooleanField,
    Case,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
    Window,
)
from django.db.models.functions import Coalesce, Rank

from bots.models import Bot, BotVersion
from bots.selectors import bot_playing_version, version_deferred
from engine import glossary
from matches.models import Match, MatchSeat
from matches.selectors import LIST_DEFERRED, match_seats

from . import ratings
from .models import Ladder, LadderEntry, LadderMatch, RatingChange


def _count(queryset: QuerySet) -> Coalesce:
    # A scalar subquery per count: two joined counts would build the cross product of entries and matches.
    counted = queryset.order_by().values("ladder_id").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def ladder_list(*, active_only: bool = False) -> QuerySet[Ladder]:
    """Ladders with their numbers of active entries (``entry_count``) and rated matches (the stored
    ``rated_matches``), active ones first."""
    ladders = Ladder.objects.annotate(
        entry_count=_count(LadderEntry.objects.filter(ladder=OuterRef("pk"), status=LadderEntry.Status.ACTIVE)),
    )
    if active_only:
        ladders = ladders.filter(active=True)
    return ladders.order_by("-active", "name")


@dataclass(frozen=True)
class LadderStanding:
    """An entry's line in a ladder's table (stored columns only: no fit on page load); a tournament's
    line is ``tournaments.standings.TournamentStanding``."""

    rank: int | None  # None for entries not in the ranking (left, suspended)
    entry: LadderEntry
    wins: int
    last_change: Decimal | None
    below: LadderEntry | None = None  # the next row of the ranking, whom ``los_below`` is about

    @property
    def rating(self) -> ratings.Shown:
        return self.entry.elo

    @property
    def win_rate(self) -> float | None:
        """Share of matches finished in first place (shared first places count)."""
        games = self.entry.matches_played
        return self.wins / games if games else None

    @property
    def los_percent(self) -> int | None:
        """The likelihood (whole percent) that this version is stronger than the next row's."""
        return ratings.los_percent(self.entry.los_below) if self.rank is not None else None

    @property
    def games(self) -> int:
        """Games played in the entry's rated matches (each deal once per rotation under duplicate)."""
        ladder = self.entry.ladder
        return self.entry.matches_played * glossary.games_of(ladder.deals, ladder.seats, ladder.duplicate)


#: rows per page of a ladder table
TABLE_PAGE_SIZE = 50


#: what a table row reads of an entry's bot and owner: their names (a user row holds a password
#: hash and dates, a bot its description: 4 model rows and 2 dates a row more, for nothing shown)
ENTRY_ROW_FIELDS = ("bot__name", "bot__owner_id", "bot__owner__username")


def _entries_with_stats(entries: QuerySet[LadderEntry]) -> QuerySet[LadderEntry]:
    # wins and the last change are stored columns (the result hook and the refit write them)
    return entries.select_related("bot__owner", "ladder")


def _table_rows(entries: QuerySet[LadderEntry]) -> QuerySet[LadderEntry]:
    """A table's entries with their bots' and owners' names; the ladder is not joined to every row
    (the caller sets the table's own on each row as it is read)."""
    fields = [f.attname for f in LadderEntry._meta.concrete_fields]
    return entries.select_related("bot__owner").only(*fields, *ENTRY_ROW_FIELDS)


def _table_order(entries: QuerySet[LadderEntry]) -> QuerySet[LadderEntry]:
    # Active entries ranked first (by rating), then the others: the order of the refit's LOS.
    unranked = Case(When(status=LadderEntry.Status.ACTIVE, then=Value(0)), default=Value(1))
    return entries.annotate(unranked=unranked).order_by("unranked", "-rating", "entered_at", "pk")


@dataclass(frozen=True)
class TablePage:
    """A page of a ladder table: its rows, the page number, whether there are more, the search."""

    rows: list[LadderStanding]
    number: int
    has_previous: bool
    has_next: bool
    query: str
    total: int


def ladder_table_page(ladder: Ladder, *, page: int = 1, query: str = "", size: int = TABLE_PAGE_SIZE) -> TablePage:
    """One page of the ladder table, optionally only bots whose name or owner contains ``query``.

    A constant number of queries whatever the number of entries: the page's
    rows (with their wins and last change as subqueries), their ranks among
    the active entries (equal ratings share one) and the count. Ranks and LOS
    come from the stored columns the last refit wrote.
    """
    table = LadderTable(ladder, query)
    page = min(max(1, page), 1_000_000)
    standings, has_next = table.rows((page - 1) * size, size)
    return TablePage(standings, page, page > 1, has_next, table.query, table.count())


class LadderTable:
    """The ladder table (optionally searched) as a sequence of LadderStanding rows a paginator slices: its
    length is one count, a slice one page of rows (``rows``); the API's standings page over it."""

    def __init__(self, ladder: Ladder, query: str = "") -> None:
        self.ladder = ladder
        self.query = (query or "").strip()[:100]
        entries = LadderEntry.objects.filter(ladder=ladder)
        if self.query:
            entries = entries.filter(
                Q(bot__name__icontains=self.query) | Q(bot__owner__username__icontains=self.query)
            )
        self.entries = entries

    def count(self) -> int:
        return self.entries.count()

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, index: slice) -> list[LadderStanding]:
        if not isinstance(index, slice) or index.step not in (None, 1):
            raise TypeError("a ladder table is read a slice at a time")
        start = index.start or 0
        stop = index.stop if index.stop is not None else start + TABLE_PAGE_SIZE
        return self.rows(start, max(0, stop - start))[0]

    def rows(self, start: int, size: int) -> tuple[list[LadderStanding], bool]:
        """``size`` rows from ``start`` in table order, and whether more follow.

        Two queries whatever the size of the ladder: the rows (one more than asked: whether more
        follow, and the last row's LOS neighbour) with their stored columns, and their ranks among
        the active entries.
        """
        if size <= 0:
            return [], False
        rows = list(_table_rows(_table_order(self.entries))[start : start + size + 1])
        for entry in rows:
            entry.ladder = self.ladder
        active = [e.pk for e in rows if e.status == LadderEntry.Status.ACTIVE]
        ranks = {}
        if active:
            ranked = LadderEntry.objects.filter(ladder=self.ladder, status=LadderEntry.Status.ACTIVE).annotate(
                position=Window(Rank(), order_by=F("rating").desc())
            )
            ranks = _ranks(ranked, active)
        standings = [LadderStanding(ranks.get(e.pk), e, e.wins, e.last_change) for e in rows]
        # each ranked row's LOS is about the next active row of the unfiltered table (a page past
        # the end has no rows)
        if not self.query and standings:
            standings = [
                LadderStanding(s.rank, s.entry, s.wins, s.last_change, nxt.entry if nxt.rank is not None else None)
                if s.rank is not None
                else s
                for s, nxt in zip(standings, [*standings[1:], LadderStanding(None, None, 0, None)], strict=True)
            ]
        return standings[:size], len(rows) > size


#: seconds a rendered part of a ladder page is kept. Its key names what it shows, so a result, a
#: refit, an entry or a departure is a new key at once; the lifetime bounds only what the key leaves
#: out: a bot renamed in a match list or head-to-head, and a match list's "queued ... ago".
FRAGMENT_SECONDS = 60
#: seconds a part is kept whose key holds every value it shows (the table, the API's history)
EXACT_KEY_SECONDS = 600


def ladder_table_key(ladder: Ladder, table: TablePage) -> str:
    """A name for ``table`` as the ladder page shows it: a digest of every value its rows show (rank,
    bot and owner names, status, rating and interval, LOS and whom it is about, matches, wins, last
    change), the ladder's format (games per match) and the pager. Any change of these, by a result, a
    refit, an entry, a departure or a rename, is another name; no hook has to drop it."""
    shown = [
        (
            row.rank, e.pk, e.bot_id, e.bot.name, e.bot.owner.username, e.status, e.rating, e.rating_low,
            e.rating_high, e.los_below, row.below.bot.name if row.below else None, e.matches_played, row.wins,
            row.last_change,
        )
        for row in table.rows
        for e in [row.entry]
    ]
    page = (ladder.slug, ladder.seats, ladder.deals, ladder.duplicate, table.number, table.has_next, table.total,
            table.query)
    return f"{ladder.pk}:{digest((page, shown))}"


def _ranks(ranked: QuerySet[LadderEntry], pks: list[int]) -> dict[int, int]:
    """{pk: rank} of ``pks`` in the window ``ranked`` (one query: the window is computed, then filtered)."""
    sql, params = ranked.annotate(entry_pk=F("pk")).values("entry_pk", "position").query.sql_with_params()
    marks = ", ".join(["%s"] * len(pks))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM ({sql}) AS ranked WHERE ranked.entry_pk IN ({marks})", [*params, *pks])
        return {pk: position for pk, position in cursor.fetchall()}


def ladder_pending_count(ladder: Ladder) -> int:
    """The ladder's matches queued or running now (matchmaking keeps this at most ``max_pending``)."""
    return Match.objects.filter(
        ladder_match__ladder=ladder, status__in=[Match.Status.QUEUED, Match.Status.RUNNING]
    ).count()


#: the columns a ladder's match list reads of each seat (a seat row and its version, bot and owner
#: hold uploads, logs, reports and password hashes the list never shows)
LADDER_MATCH_SEAT_FIELDS = (
    "match", "seat", "bot_version", "reference_bot", "rank", "forfeited",
    "bot_version__number", "bot_version__bot", "bot_version__bot__name", "bot_version__bot__owner",
    "bot_version__bot__owner__username",
)


def ladder_matches_query(ladder: Ladder, *, entry: LadderEntry | None = None, limit: int = 20) -> QuerySet[Match]:
    """The ladder's ``limit`` newest matches (of ``entry``'s bot when given), newest first.

    The ladder's are its newest ladder matches by id on the (ladder, -match) index: walking every
    match of the site newest first until ``limit`` of this ladder turned up read the whole
    history for a ladder that other ladders had outplayed. A bot's come from its seats' (bot,
    queued_at, match) index."""
    if entry is not None:
        newest = match_seats(bot=entry.bot_id).filter(match__ladder_match__ladder=ladder).values("match_id")[:limit]
    else:
        newest = LadderMatch.objects.filter(ladder=ladder).order_by("-match_id").values("match_id")[:limit]
    return Match.objects.defer(*LIST_DEFERRED).filter(pk__in=newest).order_by("-queued_at", "-pk")


def ladder_matches(ladder: Ladder, *, entry: LadderEntry | None = None, limit: int = 20) -> list[Match]:
    """The ladder's matches (``ladder_matches_query``) with seats, each seat with its
    ``rating_change`` (the RatingChange of its version in the match, None when there is none)."""
    matches = ladder_matches_query(ladder, entry=entry, limit=limit)
    shown = list(matches.prefetch_related(
        Prefetch(
            "seats",
            # what the list shows of a seat: its version's label and bot, its rank, a forfeit
            queryset=MatchSeat.objects.select_related("bot_version__bot__owner").only(*LADDER_MATCH_SEAT_FIELDS)
            .order_by("seat"),
        ),
        Prefetch("rating_changes", queryset=RatingChange.objects.order_by("pk")),
    ))
    for match in shown:
        changes = {change.bot_version_id: change for change in match.rating_changes.all()}
        for seat in match.seats.all():
            seat.rating_change = changes.get(seat.bot_version_id)  # a reference bot's seat (None) has none
    return shown


def ladder_matches_key(ladder: Ladder, *, entry: LadderEntry | None = None, limit: int = 20) -> str:
    """A name for the list ``ladder_matches`` shows now, from one light query: its matches' ids and
    statuses (a new match, a start, a result) and the ladder's ``refit_through`` (the refit that fills
    its rating changes' deltas). Left to FRAGMENT_SECONDS: renamed bots, "queued ... ago"."""
    rows = list(ladder_matches_query(ladder, entry=entry, limit=limit).values_list("pk", "status"))
    return f"{ladder.pk}:{entry.pk if entry else 0}:{ladder.refit_through}:{digest(rows)}"


def entry_standing(ladder: Ladder, bot_id: int) -> LadderStanding:
    """The standing of bot ``bot_id`` on ``ladder`` (LadderEntry.DoesNotExist when it never entered)."""
    entry = (
        _with_newest_changes(_entries_with_stats(LadderEntry.objects.filter(ladder=ladder)))
        .select_related("rated_version")
        .defer("rated_version__source", "rated_version__validation_log")
        .get(bot_id=bot_id)
    )
    rank = None
    if entry.status == LadderEntry.Status.ACTIVE:
        above = LadderEntry.objects.filter(ladder=ladder, status=LadderEntry.Status.ACTIVE, rating__gt=entry.rating)
        rank = above.count() + 1
    return LadderStanding(rank, entry, entry.wins, entry.last_change)


def _with_newest_changes(entries: QuerySet[LadderEntry]) -> QuerySet[LadderEntry]:
    """``entries`` with their newest rating change's id (``newest_change``) and newest fitted one's
    (``newest_fitted``), two lookups on the (entry, -id) index: what the keys of an entry's kept
    head-to-head, chart and history are made of."""
    changes = RatingChange.objects.filter(entry=OuterRef("pk")).order_by("-pk").values("pk")[:1]
    fitted = RatingChange.objects.filter(entry=OuterRef("pk"), after__isnull=False).order_by("-pk").values("pk")[:1]
    return entries.annotate(newest_change=Subquery(changes), newest_fitted=Subquery(fitted))


def ladder_entry(ladder: Ladder, bot_id: int) -> LadderEntry | None:
    """Bot ``bot_id``'s entry on ``ladder`` (None when it never entered), with its newest changes."""
    return _with_newest_changes(LadderEntry.objects.filter(ladder=ladder, bot_id=bot_id)).first()


def entry_history_key(entry: LadderEntry, address: str) -> str:
    """A name for the page at ``address`` of the entry's rating history as it is now: its newest change
    (a result) and newest fitted one (a refit fills the pending ones in order). Needs
    ``ladder_entry``'s or ``entry_standing``'s entry."""
    return f"{entry.pk}:{entry.newest_change or 0}:{entry.newest_fitted or 0}:{digest(address)}"


def entry_head_to_head_key(entry: LadderEntry) -> str:
    """A name for the entry's head-to-head as it is now: its newest rating change (every change of its
    matches, its opponents' too, is written with its own, ``ladder_match_finish``). Needs the entry
    from ``entry_standing``. Left to FRAGMENT_SECONDS: renamed opponents."""
    return f"{entry.pk}:{entry.newest_change or 0}"


def entry_chart_key(entry: LadderEntry) -> str:
    """A name for the entry's rating chart as it is now: its newest fitted change (a refit fills the
    pending ones in order, so the window of ``entry_chart_changes`` ends there). Needs the entry from
    ``entry_standing``. Its label names the bot and its number of matches: they are in the key too."""
    return f"{entry.pk}:{entry.newest_fitted or 0}:{entry.matches_played}:{digest(entry.bot.name)}"


#: points of a bot's rating chart at most: its newest fitted changes
CHART_POINTS = 200
#: rows per page of a bot's rating history on its ladder page
HISTORY_PAGE_SIZE = 20


def entry_chart_changes(entry: LadderEntry, *, limit: int = CHART_POINTS) -> list[RatingChange]:
    """The entry's newest ``limit`` fitted rating changes, oldest first (read newest first from the
    (entry, -id) index: the cost is the window's, never the whole history's)."""
    newest = (
        RatingChange.objects.filter(entry=entry, after__isnull=False)
        .select_related("bot_version")
        .only("pk", "match_id", "rank", "before", "after", "after_low", "after_high", "matches_after", "bot_version__number")
        .order_by("-pk")[:limit]
    )
    return list(reversed(newest))


@dataclass(frozen=True)
class HistoryPage:
    """A page of an entry's rating history, newest first; ``older`` the cursor of the next page."""

    changes: list[RatingChange]
    older: int | None
    newest: bool


def entry_history_page(entry: LadderEntry, *, before: int | None = None, size: int = HISTORY_PAGE_SIZE) -> HistoryPage:
    """``size`` rating changes of the entry older than change ``before`` (the newest without it), by
    keyset on the (entry, -id) index: one query at any depth."""
    changes = entry_history(entry).order_by("-pk")
    if before is not None:
        changes = changes.filter(pk__lt=before)
    rows = list(changes[: size + 1])
    older = rows[size - 1].pk if len(rows) > size else None
    return HistoryPage(rows[:size], older, before is None)


def entry_history(entry: LadderEntry) -> QuerySet[RatingChange]:
    """The entry's rating changes, oldest first (a paginator reads only its page)."""
    return (
        RatingChange.objects.filter(entry=entry)
        .select_related("bot_version")
        .defer(*version_deferred("bot_version"))
        .order_by("pk")
    )


@dataclass(frozen=True)
class HeadToHead:
    """How an entry fared against one opponent over the matches they both played."""

    opponent: LadderEntry
    matches: int
    ahead: int
    tied: int
    behind: int

    @property
    def score(self) -> float:
        """Points per meeting: 1 ahead, 1/2 tied, 0 behind."""
        return (self.ahead + self.tied / 2) / self.matches


def entry_head_to_head(entry: LadderEntry) -> list[HeadToHead]:
    """Per opponent: meetings and how often the entry finished ahead, level, behind; most met first."""
    return entry_head_to_head_top(entry, limit=None)[0]


def entry_head_to_head_top(entry: LadderEntry, *, limit: int | None) -> tuple[list[HeadToHead], int]:
    """The ``limit`` opponents the entry met most (all when None), as ``entry_head_to_head`` orders
    them, and the number of opponents met.

    Two queries whatever the length of the history: one GROUP BY in the database (PostgreSQL, or SQLite in the embedded default) over the entry's
    rating changes joined to the other changes of the same matches (the unique (match, entry) index),
    ordered and cut there, and the shown opponents' entries. Tallying every change in Python made a
    ladder's bot page grow with the bot's history (34 -> 62 ms from 10,000 to 200,000 matches).
    """
    table = RatingChange._meta.db_table
    sql = (
        f"WITH own AS (SELECT match_id, rank FROM {table} WHERE entry_id = %s),"
        " tally AS (SELECT o.entry_id, count(*) AS matches,"
        " count(*) FILTER (WHERE own.rank < o.rank) AS ahead,"
        " count(*) FILTER (WHERE own.rank = o.rank) AS tied,"
        " count(*) FILTER (WHERE own.rank > o.rank) AS behind"
        f" FROM own JOIN {table} o ON o.match_id = own.match_id AND o.entry_id <> %s GROUP BY o.entry_id)"
        " SELECT tally.entry_id, tally.matches, tally.ahead, tally.tied, tally.behind, count(*) OVER () AS opponents"
        f" FROM tally JOIN {LadderEntry._meta.db_table} e ON e.id = tally.entry_id"
        f" JOIN {Bot._meta.db_table} b ON b.id = e.bot_id"
        " ORDER BY tally.matches DESC, CAST(2 * tally.ahead + tally.tied AS DOUBLE PRECISION) / tally.matches DESC, b.name, tally.entry_id"
    )
    params: list[int] = [entry.pk, entry.pk]
    if limit is not None:
        sql += " LIMIT %s"
        params.append(limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        tallies = cursor.fetchall()
    if not tallies:
        return [], 0
    opponents = LadderEntry.objects.select_related("bot__owner").in_bulk([row[0] for row in tallies])
    rows = [HeadToHead(opponents[pk], matches, ahead, tied, behind) for pk, matches, ahead, tied, behind, _ in tallies]
    return rows, tallies[0][5]


@dataclass(frozen=True)
class BotLadder:
    """A ladder as the bot page shows it: the bot's entry (or None) and whether it may enter."""

    ladder: Ladder
    entry: LadderEntry | None
    can_enter: bool
    why_not: str


def bot_ladders(bot: Bot) -> list[BotLadder]:
    """Every ladder the bot is on, then the active ladders it could enter."""
    playing = bot_playing_version(bot)
    entries = {e.ladder_id: e for e in LadderEntry.objects.filter(bot=bot).select_related("ladder")}
    rows = []
    for entry in sorted(entries.values(), key=lambda e: e.ladder.name):
        can, why = _may_enter(entry.ladder, entry, playing)
        rows.append(BotLadder(entry.ladder, entry, can, why))
    for ladder in Ladder.objects.filter(active=True).exclude(pk__in=list(entries)).order_by("name"):
        can, why = _may_enter(ladder, None, playing)
        rows.append(BotLadder(ladder, None, can, why))
    return rows


def _may_enter(ladder: Ladder, entry: LadderEntry | None, playing) -> tuple[bool, str]:
    if entry is not None and entry.status == LadderEntry.Status.ACTIVE:
        return False, "entered"
    if not ladder.active:
        return False, "the ladder is closed"
    if playing is None:
        return False, "needs an active version"
    if entry is not None and entry.status == LadderEntry.Status.SUSPENDED and entry.suspended_version_id == playing.pk:
        return False, "upload a new version to enter again"
    return True, ""


# --- public bots: the ones anyone may challenge or play (the API, the play and versiontests apps)


def _public_filter() -> Q:
    # "Public" = anyone may already see the bot play: its source is public, or it
    # competes on a ladder (where everyone meets it anyway).
    on_ladder = LadderEntry.objects.filter(bot=OuterRef("pk"), status=LadderEntry.Status.ACTIVE)
    return Q(source_public=True) | Q(Exists(on_ladder))


def public_bots() -> QuerySet[Bot]:
    """Bots anyone may challenge: public by ``_public_filter`` and with an active version."""
    active = BotVersion.objects.filter(bot=OuterRef("pk"), status=BotVersion.Status.ACTIVE)
    return (
        Bot.objects.select_related("owner")
        .filter(_public_filter(), Exists(active))
        .annotate(is_public=Value(True))
        .order_by("name", "pk")
    )


def with_public(bots: QuerySet[Bot]) -> QuerySet[Bot]:
    """``bots`` annotated with ``is_public`` (see ``_public_filter``), for lists without a query per bot."""
    return bots.annotate(is_public=ExpressionWrapper(_public_filter(), output_field=BooleanField()))


def bot_is_public(bot: Bot) -> bool:
    return Bot.objects.filter(_public_filter(), pk=bot.pk).exists()


def challenge_ladders() -> QuerySet[Ladder]:
    """The ladders whose rules a challenge may use: the active ones, by name."""
    return Ladder.objects.filter(active=True).order_by("name")


def active_ladder_seats() -> int:
    """The most seats per match of an active ladder (0 without one): what each worker's warm seats
    are sized for (settings.SANDBOX_WARM_MOST_SEATS names this)."""
    return max(Ladder.objects.filter(active=True).values_list("seats", flat=True), default=0)


def match_event(match) -> dict | None:
    """The ladder a ladder ``match`` was played for, for its page (settings.MATCH_EVENTS): ``{"kind",
    "name", "url", "detail"}``, or None when no ladder links it. One query, on the link's unique index."""
    link = LadderMatch.objects.filter(match=match).select_related("ladder").only("ladder__slug", "ladder__name").first()
    if link is None:
        return None
    return {"kind": "ladder", "name": link.ladder.name, "url": link.ladder.get_absolute_url(), "detail": ""}


def match_rating_changes(match) -> dict[int, RatingChange]:
    """Bot version id -> its RatingChange in the ladder ``match`` (settings.MATCH_EVENTS). One query."""
    return {change.bot_version_id: change for change in RatingChange.objects.filter(match=match)}
