"""Selectors of the ladders app (functions that read): lists, standings, history, head-to-head."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Count, F, OuterRef, Prefetch, Q, QuerySet, Subquery

from bots.models import Bot
from bots.selectors import bot_playing_version
from matches.models import Match, MatchSeat

from . import ratings
from .models import Ladder, LadderEntry, RatingChange


def ladder_list(*, active_only: bool = False) -> QuerySet[Ladder]:
    """Ladders with their numbers of active entries and rated matches, active ones first."""
    ladders = Ladder.objects.annotate(
        entry_count=Count("entries", filter=Q(entries__status=LadderEntry.Status.ACTIVE), distinct=True),
        rated_count=Count("ladder_matches", filter=Q(ladder_matches__rated=True), distinct=True),
    )
    if active_only:
        ladders = ladders.filter(active=True)
    return ladders.order_by("-active", "name")


@dataclass(frozen=True)
class Standing:
    """One row of a ladder table."""

    rank: int | None  # None for entries not in the ranking (left, suspended)
    entry: LadderEntry
    wins: int
    last_change: Decimal | None

    @property
    def rating(self) -> ratings.Rating:
        return self.entry.elo

    @property
    def win_rate(self) -> float | None:
        """Share of matches finished in first place (shared first places count)."""
        games = self.entry.matches_played
        return self.wins / games if games else None


def _entries_with_stats(entries: QuerySet[LadderEntry]) -> QuerySet[LadderEntry]:
    latest = RatingChange.objects.filter(entry=OuterRef("pk")).order_by("-pk")
    return entries.select_related("bot__owner").annotate(
        wins=Count("rating_changes", filter=Q(rating_changes__rank=1)),
        last_change=Subquery(latest.annotate(delta=F("after") - F("before")).values("delta")[:1]),
    )


def ladder_standings(ladder: Ladder) -> list[Standing]:
    """Active entries ranked by rating (equal ratings share a rank), then the others unranked."""
    rows: list[Standing] = []
    entries = _entries_with_stats(LadderEntry.objects.filter(ladder=ladder)).order_by("-rating", "entered_at", "pk")
    ranked = [e for e in entries if e.status == LadderEntry.Status.ACTIVE]
    previous, rank = None, 0
    for position, entry in enumerate(ranked, start=1):
        if entry.rating != previous:
            rank, previous = position, entry.rating
        rows.append(Standing(rank, entry, entry.wins, _decimal(entry.last_change)))
    rows.extend(
        Standing(None, e, e.wins, _decimal(e.last_change)) for e in entries if e.status != LadderEntry.Status.ACTIVE
    )
    return rows


def _decimal(value) -> Decimal | None:
    # SQLite hands back the subquery's difference as a float; PostgreSQL as a Decimal.
    return None if value is None else Decimal(str(value)).quantize(ratings.CENT)


def ladder_pending_count(ladder: Ladder) -> int:
    """The ladder's matches queued or running now (matchmaking keeps this at most ``max_pending``)."""
    return Match.objects.filter(
        ladder_match__ladder=ladder, status__in=[Match.Status.QUEUED, Match.Status.RUNNING]
    ).count()


def ladder_matches(ladder: Ladder, *, entry: LadderEntry | None = None, limit: int = 20) -> QuerySet[Match]:
    """The ladder's matches, newest first, with seats (and each seat's rating change when rated)."""
    matches = Match.objects.defer("replay_gz", "timings").filter(ladder_match__ladder=ladder)
    if entry is not None:
        matches = matches.filter(seats__bot_version__bot_id=entry.bot_id).distinct()
    return matches.prefetch_related(
        Prefetch(
            "seats",
            queryset=MatchSeat.objects.defer("log", "faults").select_related("bot_version__bot__owner").order_by("seat"),
        ),
        Prefetch("rating_changes", queryset=RatingChange.objects.order_by("pk")),
    ).order_by("-queued_at", "-pk")[:limit]


def entry_standing(ladder: Ladder, bot_id: int) -> Standing:
    """The standing of bot ``bot_id`` on ``ladder`` (LadderEntry.DoesNotExist when it never entered)."""
    entry = _entries_with_stats(LadderEntry.objects.filter(ladder=ladder)).get(bot_id=bot_id)
    rank = None
    if entry.status == LadderEntry.Status.ACTIVE:
        above = LadderEntry.objects.filter(ladder=ladder, status=LadderEntry.Status.ACTIVE, rating__gt=entry.rating)
        rank = above.count() + 1
    return Standing(rank, entry, entry.wins, _decimal(entry.last_change))


def entry_history(entry: LadderEntry) -> list[RatingChange]:
    """The entry's rating changes, oldest first."""
    return list(
        RatingChange.objects.filter(entry=entry).select_related("bot_version", "match").order_by("pk")
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
    own = dict(RatingChange.objects.filter(entry=entry).values_list("match_id", "rank"))
    tallies: dict[int, list[int]] = {}
    others = RatingChange.objects.filter(match_id__in=own).exclude(entry=entry).values_list("match_id", "entry_id", "rank")
    for match_id, opponent_id, rank in others:
        tally = tallies.setdefault(opponent_id, [0, 0, 0])
        mine = own[match_id]
        tally[0 if mine < rank else 1 if mine == rank else 2] += 1
    opponents = LadderEntry.objects.select_related("bot__owner").in_bulk(list(tallies))
    rows = [HeadToHead(opponents[pk], sum(t), t[0], t[1], t[2]) for pk, t in tallies.items()]
    return sorted(rows, key=lambda row: (-row.matches, -row.score, row.opponent.bot.name))


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
