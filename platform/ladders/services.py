"""Services of the ladders app: entering and leaving, matchmaking, rating results, recomputing.

Ratings are written by ``ladder_match_finish``, the matches hook of kind
"ladder", inside the transaction that stores the match result: a result and
its rating changes are stored together, exactly once. The arithmetic is
``ladders.ratings`` (docs/ratings.md).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from bots.models import Bot, BotVersion
from bots.selectors import bot_playing_version
from engine.rules import Rules, RulesError
from matches.models import Match
from matches.services import MatchError, match_create

from . import ratings
from .models import Ladder, LadderEntry, LadderMatch, RatingChange

logger = logging.getLogger(__name__)

#: statuses of a ladder match that count against the ladder's cap
PENDING = (Match.Status.QUEUED, Match.Status.RUNNING)


class LadderError(ValueError):
    """A ladder request is refused; the message says what and with which value."""


def ladder_rules_clean(rules, seats: int) -> dict:
    """The complete rule set for a ladder of ``seats`` seats, or LadderError saying what is wrong.

    A rule set without ``players`` takes ``seats``; with it, the two must agree.
    """
    if not isinstance(rules, Mapping):
        raise LadderError(f"the rules must be a JSON object of RULES.md options, got {rules!r}")
    if isinstance(seats, bool) or not isinstance(seats, int) or not 2 <= seats <= 10:
        raise LadderError(f"seats per match must be 2 to 10, got {seats!r}")
    rules = dict(rules)
    players = rules.setdefault("players", seats)
    if players != seats:
        raise LadderError(f"the rules are for players={players!r} but the ladder has {seats} seats per match")
    try:
        return Rules.from_dict(rules).to_dict()
    except (RulesError, TypeError, ValueError) as exc:
        raise LadderError(str(exc)) from None


#: the ladder's fields that make up the format of its matches (and of challenges under its rules)
MATCH_FORMAT_FIELDS = ("games", "duplicate", "time_per_decision", "time_bank")


def ladder_match_format(ladder: Ladder) -> dict:
    """The match options a ladder gives its matches: games, duplicate and clock, within the model's bounds.

    The bounds are the Ladder fields' validators (the one place that states them); a stored value
    out of them (written around validation) is a LadderError naming the field, never a huge match.
    """
    others = [f.name for f in Ladder._meta.fields if f.name not in MATCH_FORMAT_FIELDS]
    try:
        ladder.clean_fields(exclude=others)
    except ValidationError as exc:
        problems = "; ".join(f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items())
        raise LadderError(f"the ladder {ladder.name!r} has settings out of bounds ({problems})") from None
    return {field: getattr(ladder, field) for field in MATCH_FORMAT_FIELDS}


def ladder_enter(ladder: Ladder, bot: Bot) -> LadderEntry:
    """Enter ``bot`` into ``ladder`` (or bring it back after it left or was suspended).

    The bot needs an active version; after a suspension, a different one than
    the version that was suspended. Its rating and history are kept.
    """
    if not ladder.active:
        raise LadderError(f"the ladder {ladder.name!r} is closed to new entries")
    version = bot_playing_version(bot)
    if version is None:
        raise LadderError(f"{bot} has no active version yet: upload one and wait for its validation")
    try:
        with transaction.atomic():
            entry, created = LadderEntry.objects.select_for_update().get_or_create(ladder=ladder, bot=bot)
    except IntegrityError:  # a concurrent request entered the same bot first
        raise LadderError(f"{bot} is already entered in {ladder.name}") from None
    if created:
        return entry
    with transaction.atomic():
        entry = LadderEntry.objects.select_for_update().get(pk=entry.pk)
        if entry.status == LadderEntry.Status.ACTIVE:
            raise LadderError(f"{bot} is already entered in {ladder.name}")
        if entry.status == LadderEntry.Status.SUSPENDED and entry.suspended_version_id == version.pk:
            raise LadderError(
                f"{bot} was suspended in {ladder.name} while playing version {version.number}; "
                "upload a new version to enter again"
            )
        entry.status = LadderEntry.Status.ACTIVE
        entry.fault_streak = 0
        entry.suspended_reason = ""
        entry.suspended_version = None
        entry.save(update_fields=["status", "fault_streak", "suspended_reason", "suspended_version"])
    return entry


def ladder_leave(ladder: Ladder, bot: Bot) -> LadderEntry:
    """Take ``bot`` out of matchmaking; its rating and matches stay on record."""
    with transaction.atomic():
        entry = LadderEntry.objects.select_for_update().filter(ladder=ladder, bot=bot).first()
        if entry is None or entry.status != LadderEntry.Status.ACTIVE:
            raise LadderError(f"{bot} is not entered in {ladder.name}")
        entry.status = LadderEntry.Status.LEFT
        entry.save(update_fields=["status"])
    return entry


@dataclass(frozen=True)
class _Candidate:
    entry: LadderEntry
    version: BotVersion


def ladder_matchmake(ladder: Ladder, *, rng: random.Random | None = None, now: datetime | None = None) -> list[Match]:
    """Create the ladder's next matches, up to its cap of queued and running matches.

    Each match starts from the free entry that has waited longest since its
    last match (never matched first), and fills the other seats with the free
    entries closest in rating after adding a random spread (wider for
    uncertain ratings, so new bots meet a variety and settle fast). An entry
    sits in at most one pending match; only active entries whose bot has an
    active playing version play. Returns the matches created (enqueued on commit).
    """
    rng = rng or random.Random()
    now = now or timezone.now()
    created: list[Match] = []
    with transaction.atomic():
        # One matchmaker per ladder at a time: a second beat run waits and then sees these matches.
        ladder = Ladder.objects.select_for_update().get(pk=ladder.pk)
        if not ladder.active:
            return created
        pending = list(
            Match.objects.filter(ladder_match__ladder=ladder, status__in=PENDING).prefetch_related("seats")
        )
        free_slots = ladder.max_pending - len(pending)
        if free_slots <= 0:
            return created
        busy_versions = {seat.bot_version_id for match in pending for seat in match.seats.all()}
        busy_bots = set(BotVersion.objects.filter(pk__in=busy_versions).values_list("bot_id", flat=True))
        candidates = []
        entries = (
            LadderEntry.objects.filter(ladder=ladder, status=LadderEntry.Status.ACTIVE)
            .exclude(bot_id__in=busy_bots)
            .select_related("bot")
        )
        for entry in entries:
            version = bot_playing_version(entry.bot)
            if version is not None:
                candidates.append(_Candidate(entry, version))
        rules = Rules.from_dict(ladder.rules)
        match_format = ladder_match_format(ladder)
        while free_slots > 0 and len(candidates) >= ladder.seats:
            candidates.sort(key=_waiting_order)
            table = ratings.pick_table(candidates[0], candidates[1:], ladder.seats, lambda c: c.entry.elo, rng)
            match = match_create(
                kind=Match.Kind.LADDER,
                rules=rules,
                seats=[c.version for c in table],
                seed=rng.getrandbits(62),
                **match_format,
            )
            LadderMatch.objects.create(ladder=ladder, match=match)
            LadderEntry.objects.filter(pk__in=[c.entry.pk for c in table]).update(last_matched_at=now)
            created.append(match)
            candidates = [c for c in candidates if c not in table]
            free_slots -= 1
    return created


def _waiting_order(candidate: _Candidate):
    entry = candidate.entry
    # Never matched sorts first; then the oldest last match; then the earliest entry.
    return (entry.last_matched_at is not None, entry.last_matched_at or entry.entered_at, entry.entered_at, entry.pk)


def ladder_matchmake_all(*, rng: random.Random | None = None) -> dict[str, int]:
    """Run matchmaking on every active ladder; returns ladder slug -> matches created."""
    created = {}
    for ladder in Ladder.objects.filter(active=True):
        try:
            created[ladder.slug] = len(ladder_matchmake(ladder, rng=rng))
        except (RulesError, MatchError, LadderError) as exc:
            # A ladder whose stored rules or settings no longer validate must not stop the others.
            logger.error("ladder %s: no matchmaking: %s", ladder.slug, exc)
            created[ladder.slug] = 0
    return created


def ladder_match_finish(match: Match) -> None:
    """Hook for finished ladder matches: store every rating change and track forfeits, once.

    A failed match (platform trouble, no bot to blame) changes nothing.
    """
    link = LadderMatch.objects.filter(match=match).first()
    if link is None:
        logger.warning("ladder match %s has no ladder; not rated", match.pk)
        return
    # The ladder's row lock orders all rating writes of a ladder: pk order is rating order.
    ladder = Ladder.objects.select_for_update().get(pk=link.ladder_id)
    link = LadderMatch.objects.select_for_update().get(pk=link.pk)
    if link.rated or match.status != Match.Status.DONE:
        return
    seats = [s for s in match.seats.select_related("bot_version").order_by("seat") if s.bot_version_id]
    entries = {
        e.bot_id: e
        for e in LadderEntry.objects.select_for_update().filter(
            ladder=ladder, bot_id__in=[s.bot_version.bot_id for s in seats]
        )
    }
    rated = [(s, entries[s.bot_version.bot_id]) for s in seats if s.bot_version.bot_id in entries and s.rank]
    if len({entry.pk for _, entry in rated}) != len(rated):
        # Matchmaking never seats a bot twice; a hand-made match that does is stored unrated
        # rather than raising, which would roll its result back.
        logger.error("ladder match %s seats one bot twice; not rated", match.pk)
        rated = []
    if len(rated) >= 2:
        before = {entry.pk: entry.elo for _, entry in rated}
        after = ratings.rate_match(before, [(entry.pk, seat.rank) for seat, entry in rated])
        RatingChange.objects.bulk_create(
            RatingChange(
                ladder=ladder,
                match=match,
                entry=entry,
                bot_version=seat.bot_version,
                rank=seat.rank,
                before=before[entry.pk].value,
                after=after[entry.pk].value,
                matches_after=after[entry.pk].matches,
            )
            for seat, entry in rated
        )
        for _, entry in rated:
            entry.rating = after[entry.pk].value
            entry.matches_played = after[entry.pk].matches
    for seat, entry in rated:
        _track_faults(ladder, entry, seat, match)
        entry.save(
            update_fields=["rating", "matches_played", "fault_streak", "status", "suspended_reason", "suspended_version"]
        )
    link.rated = True
    link.save(update_fields=["rated"])


def _track_faults(ladder: Ladder, entry: LadderEntry, seat, match: Match) -> None:
    if not seat.forfeited:
        entry.fault_streak = 0
        return
    entry.fault_streak += 1
    if entry.fault_streak >= ladder.fault_limit and entry.status == LadderEntry.Status.ACTIVE:
        entry.status = LadderEntry.Status.SUSPENDED
        entry.suspended_version = seat.bot_version
        entry.suspended_reason = (
            f"suspended after forfeiting {entry.fault_streak} ladder matches in a row "
            f"(limit {ladder.fault_limit}); the last, match #{match.pk} with version "
            f"{seat.bot_version.number}: {seat.fault_kind or 'forfeit'}: {seat.fault_reason}"
        )[:2000]


@dataclass(frozen=True)
class RatingDifference:
    """A stored value that recomputation from the history does not reproduce."""

    what: str
    stored: str
    recomputed: str

    def __str__(self) -> str:
        return f"{self.what}: stored {self.stored}, recomputed {self.recomputed}"


def ladder_ratings_recompute(ladder: Ladder, *, write: bool = False) -> list[RatingDifference]:
    """Rate the ladder's whole history again from START and compare with what is stored.

    The history is every stored rating change, match by match in the order
    they were rated, with the ranks stored. Returns the differences; with
    ``write`` the recomputed values replace the stored ones.
    """
    differences: list[RatingDifference] = []
    with transaction.atomic():
        ladder = Ladder.objects.select_for_update().get(pk=ladder.pk)
        changes = list(RatingChange.objects.filter(ladder=ladder).select_related("entry__bot").order_by("pk"))
        by_match: dict[int, list[RatingChange]] = {}
        for change in changes:
            by_match.setdefault(change.match_id, []).append(change)
        current: dict[int, ratings.Rating] = {}
        for match_id, rows in sorted(by_match.items(), key=lambda item: item[1][0].pk):
            after = ratings.rate_match(current, [(row.entry_id, row.rank) for row in rows])
            for row in rows:
                expected_before = current.get(row.entry_id, ratings.Rating())
                new = after[row.entry_id]
                label = f"match #{match_id} {row.entry.bot}"
                if row.before != expected_before.value:
                    differences.append(RatingDifference(f"{label} before", str(row.before), str(expected_before.value)))
                if row.after != new.value:
                    differences.append(RatingDifference(f"{label} after", str(row.after), str(new.value)))
                if row.matches_after != new.matches:
                    differences.append(RatingDifference(f"{label} matches", str(row.matches_after), str(new.matches)))
                if write:
                    row.before, row.after, row.matches_after = expected_before.value, new.value, new.matches
            current.update(after)
        if write:
            RatingChange.objects.bulk_update(changes, ["before", "after", "matches_after"])
        for entry in LadderEntry.objects.filter(ladder=ladder).select_related("bot"):
            new = current.get(entry.pk, ratings.Rating())
            if entry.rating != new.value:
                differences.append(RatingDifference(f"{entry.bot} rating", str(entry.rating), str(new.value)))
            if entry.matches_played != new.matches:
                differences.append(
                    RatingDifference(f"{entry.bot} matches", str(entry.matches_played), str(new.matches))
                )
            if write:
                LadderEntry.objects.filter(pk=entry.pk).update(rating=new.value, matches_played=new.matches)
    return differences
