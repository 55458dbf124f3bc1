"""Selectors of tournaments (functions that read): list, progress, standings, rounds, crosstable, CSV rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction

from django.db.models import Count, Prefetch, Q, QuerySet

from tournaments import tables
from tournaments.schedule import meeting_counts
from tournaments.standings import crosstable
from tournaments.tables import table_sizes

from .models import Entry, Pairing, PairingSeat, Round, Tournament, TournamentEvent
from .services import (
    frozen_entries,
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


def tournament_list() -> QuerySet[Tournament]:
    """Tournaments with their entry count and match counts (done, paired so far)."""
    return Tournament.objects.annotate(
        entry_count=Count("entries", distinct=True),
        active_count=Count("entries", filter=Q(entries__status=Entry.Status.ACTIVE), distinct=True),
        matches_done=Count(
            "round_set__pairings", filter=Q(round_set__pairings__bye=False, round_set__pairings__done=True),
            distinct=True,
        ),
        matches_paired=Count("round_set__pairings", filter=Q(round_set__pairings__bye=False), distinct=True),
    ).order_by("-created_at", "-pk")


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
    """How far the tournament is; pass the counts when already annotated (tournament_list)."""
    pairings = Pairing.objects.filter(round__tournament=tournament, bye=False)
    done = pairings.filter(done=True).count() if done is None else done
    paired = pairings.count() if paired is None else paired
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


@dataclass(frozen=True)
class StandingRow:
    rank: int
    entry: Entry
    points: str
    tie_breaks: list[str]
    played: int
    byes: int
    status: str


def tournament_standings(tournament: Tournament) -> list[StandingRow]:
    """The standings table: rank, entry, points, each tie-break in order, games played, byes, status."""
    if tournament.started_at is None:
        return []
    entries = {e.name: e for e in frozen_entries(tournament)}
    return [
        StandingRow(
            rank=line.rank, entry=entries[line.entry], points=fmt(line.points),
            tie_breaks=[fmt(line.tie_breaks.get(tb)) for tb in tournament.tie_breaks],
            played=line.played, byes=line.byes, status=line.status,
        )
        for line in tournament_standings_lines(tournament)
    ]


def tournament_crosstable(tournament: Tournament, rows: list[StandingRow]) -> list[dict] | None:
    """Two-seat events: per standings row, its results against every other row (``1``, ``=``, ``0``)."""
    if tournament.seats != 2 or not rows:
        return None
    lines = tournament_standings_lines(tournament)
    table = crosstable(lines, history(tournament))
    glyph = {Fraction(1): "1", Fraction(1, 2): "½", Fraction(0): "0"}
    out = []
    for row in rows:
        cells = []
        for col in rows:
            if col.entry.pk == row.entry.pk:
                cells.append(None)
            else:
                scores = table.cells.get((row.entry.name, col.entry.name), ())
                cells.append(" ".join(glyph[s] for s in scores))
        out.append({"row": row, "cells": cells})
    return out


def tournament_rounds(tournament: Tournament) -> list[Round]:
    """Rounds, newest first, with pairings, seats (in seat order) and matches."""
    seats = PairingSeat.objects.select_related("entry").order_by("seat")
    pairings = Pairing.objects.select_related("match").prefetch_related(Prefetch("seats", queryset=seats))
    return list(
        tournament.round_set.prefetch_related(Prefetch("pairings", queryset=pairings.order_by("number")))
        .order_by("-number")
    )


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
    events: QuerySet[TournamentEvent] = tournament.events.select_related("actor").order_by("-at", "-pk")[:limit]
    return [
        LogLine(event.at, event.who, event.action, event.message if reveal else redact_seed(event.message))
        for event in events
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
            text = f"every one of the {self.pairs} pairs meets at a table in this schedule"
        else:
            text = f"{self.unmet} of {self.pairs} pairs do not meet at a table in this schedule"
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
        tables.Round(
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


def tournament_entries(tournament: Tournament) -> QuerySet[Entry]:
    return tournament.entries.select_related("bot__owner", "version").order_by("pk")


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
