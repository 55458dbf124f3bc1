"""Services of the ladders app: entering and leaving, matchmaking, rating results, refitting, checking.

``ladder_match_finish``, the matches hook of kind "ladder", stores each
result's rows (RatingChange: version, rank, forfeit) inside the transaction
that stores the match result, exactly once, and asks for a refit after the
commit. ``ladder_refit`` (the ``ladder_refit`` task, maintenance queue) fits
every stored result again with ``tournaments.rating.fit_ratings``, warm-started
from the stored ratings, without any lock, then writes the entries' columns in
one short transaction. The model: docs/ratings.md.
"""

from __future__ import annotations

import functools
import logging
import random
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from core.services import model_rows, rows_insert_update, update_returning
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import IntegrityError, connection, connections, transaction
from django.db.models import (
    Count,
    DecimalField,
    F,
    IntegerField,
    OuterRef,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from bots.models import Bot, BotVersion
from bots.selectors import bot_playing_version, bot_playing_versions
from engine.rules import Rules, RulesError
from matches.models import Challenge, Match
from matches.services import MatchError, match_create, seats_played
from tournaments import rating as fit_model

from . import ratings, selectors
from .checks import (
    LadderError,
    ladder_match_format,
)
from .models import Ladder, LadderEntry, LadderMatch, RatingChange

logger = logging.getLogger(__name__)

#: statuses of a ladder match that count against the ladder's cap
PENDING = (Match.Status.QUEUED, Match.Status.RUNNING)


def ladder_owners_check(ladder: Ladder, bots: list[Bot]) -> None:
    """LadderError when two of ``bots`` have one owner and ``ladder`` does not allow that at a table.

    Matchmaking keeps owners apart itself (``pick_table_informative``'s ``owner``); this is the same
    rule for a table someone asks for, such as a challenge under the ladder's rules.
    """
    if ladder.allow_same_owner:
        return
    seen: dict[int, Bot] = {}
    for bot in bots:
        if bot.owner_id in seen:
            raise LadderError(
                f"{seen[bot.owner_id]} and {bot} have the same owner, and the ladder {ladder.name!r} never seats "
                "one owner's bots at one table; pick another owner's bot, or a ladder that allows it"
            )
        seen[bot.owner_id] = bot


def ladder_configurations(ladder: Ladder) -> list:
    """The validation configuration of the ladder's matches (its rules, seat count included)."""
    from validation import configurations as validation

    return validation.event_configurations(f"ladder {ladder.name}", [ladder.rules])


def ladder_enter(ladder: Ladder, bot: Bot) -> LadderEntry:
    """Enter ``bot`` into ``ladder`` (or bring it back after it left or was suspended).

    The bot needs an active version; after a suspension, a different one than
    the version that was suspended. Its rating and history are kept. When the
    playing version has not passed the ladder's configuration (rules and seat
    count), its validation there is queued (``validation.services.validation_require``)
    and matchmaking leaves the entry out until it passed; a version that failed
    there is refused, naming the configuration (``ladder_entry_validation``
    says which of the two an entry waits for).
    """
    from validation import services as validation_services

    if not ladder.active:
        raise LadderError(f"the ladder {ladder.name!r} is closed to new entries")
    version = bot_playing_version(bot)
    if version is None:
        raise LadderError(f"{bot} has no active version yet: upload one and wait for its validation")
    with transaction.atomic():  # the entry, and the validation it waits for, or neither
        try:
            with transaction.atomic():
                entry, created = LadderEntry.objects.select_for_update().get_or_create(ladder=ladder, bot=bot)
        except IntegrityError:  # a concurrent request entered the same bot first
            raise LadderError(f"{bot} is already entered in {ladder.name}") from None
        if not created:
            entry = LadderEntry.objects.select_for_update().get(pk=entry.pk)
            if entry.status == LadderEntry.Status.ACTIVE:
                raise LadderError(f"{bot} is already entered in {ladder.name}")
            if entry.status == LadderEntry.Status.SUSPENDED and entry.suspended_version_id == version.pk:
                raise LadderError(
                    f"{bot} was suspended in {ladder.name} while playing version {version.number}; "
                    "upload a new version to enter again"
                )
        required = validation_services.validation_require(bot, ladder_configurations(ladder))
        if required.failed:
            raise LadderError(f"{bot} cannot enter {ladder.name}: {required.message}")
        if not created:
            entry.status = LadderEntry.Status.ACTIVE
            entry.fault_streak = 0
            entry.suspended_reason = ""
            entry.suspended_version = None
            entry.save(update_fields=["status", "fault_streak", "suspended_reason", "suspended_version"])
            transaction.on_commit(lambda: _request_refit(ladder.pk, force=True))
    return entry


def ladder_entry_validation(entry: LadderEntry) -> str:
    """What an active entry waits for before matchmaking seats it (its playing version's validation in
    the ladder's configuration: pending, or failed, with the reason), or "" when it plays."""
    from validation import configurations as validation
    from validation import services as validation_services

    version = bot_playing_version(entry.bot)
    if version is None:
        return ""
    runs = version.validation_runs or []
    state = validation_services.configuration_states({version.pk: runs}, entry.ladder.rules)[version.pk]
    if validation.cleared(state):
        return ""
    label = ladder_configurations(entry.ladder)[0].label
    run = validation.run_for(runs, entry.ladder.rules) if state == validation.FAILED else None
    if run is not None and run.get("platform"):
        return (f"the platform could not play {version.label}'s validation at {label} ({run['reason']}); "
                "matchmaking plays it again and seats the entry once that passes")
    if run is not None:
        return (f"{version.label} failed its validation at {label}: {run['reason']}; matchmaking never seats "
                "it there (the version's page shows that game's log): upload a version that plays this configuration")
    return (f"{version.label} is being validated at {label}; "
            "matchmaking seats the entry once that passes (the version's page shows the report)")


def ladder_validation_refusal(version: BotVersion, run: dict) -> list[str]:
    """Refusal handler (``validation.configurations.register_event_refusal``): ``version`` failed the configuration
    of ``run``; every active entry of its bot on an active ladder of that configuration, while the
    version plays for the bot, is suspended with the reason (entering again needs another version).
    Called under the version's row lock; locks the entries."""
    from validation import configurations as validation

    if bot_playing_version(version.bot) != version:
        return []
    key = validation.rules_key(run["rules"])
    entries = LadderEntry.objects.select_for_update().select_related("ladder").filter(
        bot_id=version.bot_id, status=LadderEntry.Status.ACTIVE, ladder__active=True
    )
    refused = []
    for entry in entries:
        try:
            same = validation.rules_key(entry.ladder.rules) == key
        except (RulesError, TypeError, ValueError):
            continue
        if not same:
            continue
        entry.status = LadderEntry.Status.SUSPENDED
        if run.get("platform"):  # not the bot's fault: the same version may enter again, and is validated again
            entry.suspended_version = None
            advice = "enter again to have it validated again"
        else:
            entry.suspended_version = version
            advice = "(its page shows that game's log); upload a version that plays this configuration to enter again"
        entry.suspended_reason = (
            f"suspended: version {version.number} failed its validation at {run['label']}: {run['reason']}; {advice}"
        )[:2000]
        entry.save(update_fields=["status", "suspended_version", "suspended_reason"])
        ladder_id = entry.ladder_id
        transaction.on_commit(lambda ladder_id=ladder_id: _request_refit(ladder_id, force=True))
        refused.append(f"ladder {entry.ladder.name}: entry suspended")
    return refused


def ladder_leave(ladder: Ladder, bot: Bot) -> LadderEntry:
    """Take ``bot`` out of matchmaking; its rating and matches stay on record."""
    with transaction.atomic():
        entry = LadderEntry.objects.select_for_update().filter(ladder=ladder, bot=bot).first()
        if entry is None or entry.status != LadderEntry.Status.ACTIVE:
            raise LadderError(f"{bot} is not entered in {ladder.name}")
        entry.status = LadderEntry.Status.LEFT
        entry.save(update_fields=["status"])
        transaction.on_commit(lambda: _request_refit(ladder.pk, force=True))
    return entry


@dataclass(frozen=True)
class _Candidate:
    entry: LadderEntry
    version: BotVersion


def ladder_matchmake(ladder: Ladder, *, rng: random.Random | None = None, now: datetime | None = None) -> list[Match]:
    """Create the ladder's next matches, up to its cap of queued and running matches.

    Each match starts from the free entry that has waited longest since its
    last match (never matched first); ``tournaments.rating.pick_table_informative``
    fills the other seats, drawing opponents by how much their result would
    teach the fit (neighbours of the fitted order whose order is uncertain, new
    and provisional versions: a version the fit does not know yet has the
    prior's wide interval) with a fairness factor that passes over entries
    already beyond their share of matches. The fit is the stored columns
    (``ratings.matchmaking_fit``): no refit here. An entry sits in at most one
    pending match; only active entries whose bot has an active playing version
    that passed the ladder's configuration in its validation play (one still being
    validated there waits; ``_validated_for_ladder``). Unless the ladder
    ``allow_same_owner``, every seat of a table has a different owner, and with
    fewer owners than seats among the free entries no match is made. A constant
    number of queries whatever the number of entries (no source bytes), and a
    few for each version whose validation there is queued now. Returns the matches created (enqueued on commit).
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
        free = LadderEntry.objects.filter(ladder=ladder, status=LadderEntry.Status.ACTIVE).exclude(bot_id__in=busy_bots)
        # only the columns read here (a thousand rows of every column cost more than the queries)
        entries = list(free.select_related("bot").only(*_MATCHMAKING_FIELDS))
        # the bots by a subquery, not an IN list of a thousand ids; the versions' keys only
        playing = bot_playing_versions([e.bot for e in entries], bot_ids=free.values("bot_id"), only=())
        # only versions validated in the ladder's configuration play (the others wait for it)
        cleared = _validated_for_ladder(ladder, [e.bot for e in entries if e.bot_id in playing], playing)
        candidates = [_Candidate(e, playing[e.bot_id]) for e in entries if e.bot_id in cleared]
        if len(candidates) < ladder.seats:
            return created
        # The fit as stored: a version is known to it once it has rated results.
        fit = ratings.matchmaking_fit(
            {
                c.version.pk: (c.entry.rating, c.entry.rating_low, c.entry.rating_high)
                for c in candidates
                if c.entry.rated_version_id == c.version.pk
            }
        )
        rules = Rules.from_dict(ladder.rules)
        match_format = ladder_match_format(ladder)
        # One owner's bots never share a table unless the ladder allows it (no bot feeding another).
        owner = None if ladder.allow_same_owner else (lambda c: c.entry.bot.owner_id)
        # The fit's players are versions: the table is drawn over the candidates' playing versions.
        by_version = {c.version.pk: c for c in candidates}
        # the longest waiting first; a table's entries leave the list, the others keep their order
        candidates.sort(key=_waiting_order)
        while free_slots > 0 and len(candidates) >= ladder.seats:
            drawn = fit_model.pick_table_informative(
                candidates[0].version.pk,
                [c.version.pk for c in candidates[1:]],
                ladder.seats,
                fit,
                rng,
                games=lambda v: by_version[v].entry.matches_played,
                owner=None if owner is None else (lambda v: owner(by_version[v])),
            )
            table = None if drawn is None else [by_version[v] for v in drawn]
            if table is None:
                # Fewer owners than seats among the free entries: no anchor can fill a table
                # without seating one owner twice, so wait for other owners' bots.
                break
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
            seated = {c.entry.pk for c in table}  # by pk: comparing the candidates compares model rows
            candidates = [c for c in candidates if c.entry.pk not in seated]
            free_slots -= 1
    return created


def _validated_for_ladder(ladder: Ladder, bots: list[Bot], playing: dict[int, BotVersion]) -> set[int]:
    """The ids of ``bots`` whose playing version may play the ladder's configuration (passed it, or
    made active without the platform's validation). A version validated by the platform that has no run
    for it (a ladder's rules changed, a version that became the playing one), or whose run the platform
    failed to play, gets it queued now (``validation_require``) and waits; one that failed it has its
    entries suspended with the reason (``ladder_validation_refusal``, as a failure at entry). Two
    queries, and a few per such version."""
    from validation import configurations as validation
    from validation import services as validation_services

    if not bots:
        return set()
    runs = dict(BotVersion.objects.filter(pk__in=[v.pk for v in playing.values()]).values_list("pk", "validation_runs"))
    states = validation_services.configuration_states({pk: runs.get(pk) or [] for pk in runs}, ladder.rules)
    for bot in bots:
        pk = playing[bot.pk].pk
        run = validation.run_for(runs.get(pk) or [], ladder.rules) if states.get(pk) == validation.FAILED else None
        if states.get(pk) == validation.MISSING or (run is not None and run.get("platform")):
            # as on entry: queued, and a run the platform failed to play is played again
            validation_services.validation_require(bot, ladder_configurations(ladder))
        elif run is not None:  # the version failed this configuration: refused as a failed run at entry
            _refuse_failed(pk, run)
    return {bot.pk for bot in bots if validation.cleared(states.get(playing[bot.pk].pk, validation.UNPLANNED))}


def _refuse_failed(version_id: int, run: dict) -> None:
    """The ladder's rules are now a configuration the playing version failed: its entries there are
    suspended with the run's reason (``ladder_validation_refusal``), and the run's report names them."""
    version = BotVersion.objects.defer("source").select_related("bot").get(pk=version_id)
    refused = ladder_validation_refusal(version, run)
    if not refused:
        return
    version = BotVersion.objects.select_for_update().defer("source").get(pk=version_id)
    version.validation_runs = [
        {**r, "refused": list(dict.fromkeys([*r.get("refused", []), *refused]))} if r["match"] == run["match"] else r
        for r in version.validation_runs
    ]
    version.save(update_fields=["validation_runs"])


#: what matchmaking reads of an entry and its bot (``_waiting_order``, the fit, fairness, owners)
_MATCHMAKING_FIELDS = (
    "bot_id", "rating", "rating_low", "rating_high", "rated_version_id", "matches_played", "last_matched_at",
    "entered_at", "bot__owner_id", "bot__pinned_version_id",
)


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


#: seconds between a result and its refit task: results arriving meanwhile share the one refit
#: (5, not 2: a refit task costs a match worker about as much CPU as storing a result, and two
#: workers of pipeline_bench queued one every 3 matches at 2 s; ratings show 3 s later for it)
REFIT_DELAY = 5
#: how long a queued refit counts as queued when it never starts (a lost task): the next result
#: after that queues one again, and beat's ``ladder_refit_stale`` catches the rest
REFIT_QUEUED_FOR = 60


def _refit_queued_key(ladder_id: int) -> str:
    return f"ladder-refit-queued:{ladder_id}"


def _refit_claim(ladder_id: int) -> bool:
    """Mark a refit of the ladder as queued; False when one is queued already and has not started."""
    return cache.add(_refit_queued_key(ladder_id), True, REFIT_QUEUED_FOR)


def ladder_match_finish(match: Match) -> None:
    """Hook for finished ladder matches: store each rated seat's result and track forfeits, once.

    A row per rated seat (RatingChange: version, rank, forfeit; ``before`` the
    entry's shown rating; ``after`` filled by the refit that first includes the
    match), the entries' match counts and fault tracking, all under the
    ladder's row lock (a few rows: the fit is not done here); after the commit
    a ``ladder_refit`` task refits the ladder. A failed match (platform
    trouble, no bot to blame) stores nothing and counts no fault.
    """
    if match.status != Match.Status.DONE:
        return
    # the seats the result's transaction read (and wrote) when it prefetched them, else read here
    seats = sorted((s for s in seats_played(match) if s.bot_version_id), key=lambda s: s.seat)
    ladder, entries = _rated_and_locked(match, [s.bot_version.bot_id for s in seats])
    if ladder is None:
        if not LadderMatch.objects.filter(match=match).exists():
            logger.warning("ladder match %s has no ladder; not rated", match.pk)
        return
    rated = [(s, entries[s.bot_version.bot_id]) for s in seats if s.bot_version.bot_id in entries and s.rank]
    if len({entry.pk for _, entry in rated}) != len(rated):
        # Matchmaking never seats a bot twice; a hand-made match that does is stored unrated
        # rather than raising, which would roll its result back.
        logger.error("ladder match %s seats one bot twice; not rated", match.pk)
        rated = []
    changes = []
    if len(rated) >= 2:
        changes = [
            RatingChange(
                ladder=ladder,
                match=match,
                entry=entry,
                bot_version=seat.bot_version,
                rank=seat.rank,
                forfeited=seat.forfeited,
                before=entry.rating,
                after=None,
                matches_after=entry.matches_played + 1,
            )
            for seat, entry in rated
        ]
        for seat, entry in rated:
            entry.matches_played += 1
            entry.wins += seat.rank == 1
        transaction.on_commit(lambda: _request_refit(ladder.pk))
    for seat, entry in rated:
        was = entry.status
        _track_faults(ladder, entry, seat, match, counted=bool(changes))
        if entry.status != was:
            transaction.on_commit(lambda: _request_refit(ladder.pk, force=True))
    # the result's rows and the entries' counts: one statement (PostgreSQL)
    rows_insert_update(
        changes,
        [entry for _, entry in rated],
        ["matches_played", "wins", "fault_streak", "status", "suspended_reason", "suspended_version"],
    )


def _rated_and_locked(match: Match, bot_ids: list[int]) -> tuple[Ladder | None, dict[int, LadderEntry]]:
    """Mark ``match``'s ladder link rated, count it in its ladder and lock the entries of ``bot_ids``
    there: the ladder (its fault limits read) and those entries by bot, or (None, {}) when the link
    is rated already (the hook run again) or missing.

    The ladder's row lock orders all result writes of a ladder (pk order is rating order): the
    link is locked first (only this match's result, whose row the caller holds locked, ever locks
    it), then the ladder, then the entries. PostgreSQL: one statement (data-modifying CTEs, each
    fed by the one before, so the locks are taken in that order); elsewhere three."""
    if connection.vendor != "postgresql":
        link = update_returning(LadderMatch.objects.filter(match=match, rated=False), ["ladder"], rated=True)
        if not link:
            return None, {}
        (ladder,) = update_returning(
            Ladder.objects.filter(pk=link[0].ladder_id), LADDER_FAULT_FIELDS, rated_matches=F("rated_matches") + 1
        )
        found = LadderEntry.objects.select_for_update().filter(ladder=ladder, bot_id__in=bot_ids)
        return ladder, {entry.bot_id: entry for entry in found}
    sql, ladder_fields, entry_fields = _rated_and_locked_sql(connection.alias)
    with connection.cursor() as cursor:
        cursor.execute(sql, [match.pk, list(bot_ids)])
        rows = cursor.fetchall()
    if not rows:
        return None, {}
    width = len(ladder_fields)
    (ladder,) = model_rows(Ladder, ladder_fields, [rows[0][:width]])
    found = model_rows(LadderEntry, entry_fields, [row[width:] for row in rows if row[width] is not None])
    return ladder, {entry.bot_id: entry for entry in found}


@functools.cache
def _rated_and_locked_sql(alias: str) -> tuple[str, tuple, tuple]:
    """PostgreSQL: ``_rated_and_locked``'s statement (parameters: the match's id, the bots' ids),
    with the ladder's and the entries' fields it returns in that order; built from the models'
    ``_meta`` once per process, not per result."""
    connection = connections[alias]
    quote = connection.ops.quote_name

    def column(model, name: str) -> str:
        return f"{quote(model._meta.db_table)}.{quote(model._meta.get_field(name).column)}"

    ladder_fields = (Ladder._meta.pk, *(Ladder._meta.get_field(name) for name in LADDER_FAULT_FIELDS))
    entry_fields = tuple(LadderEntry._meta.concrete_fields)
    link_ladder = quote(LadderMatch._meta.get_field("ladder").column)
    sql = f"""
        WITH link AS (
            UPDATE {quote(LadderMatch._meta.db_table)} SET {quote(LadderMatch._meta.get_field("rated").column)} = true
            WHERE {column(LadderMatch, "match")} = %s AND NOT {column(LadderMatch, "rated")}
            RETURNING {link_ladder}
        ), ladder AS (
            UPDATE {quote(Ladder._meta.db_table)} SET {quote(Ladder._meta.get_field("rated_matches").column)}
                = {column(Ladder, "rated_matches")} + 1
            FROM link WHERE {column(Ladder, "id")} = link.{link_ladder}
            RETURNING {", ".join(f"{quote(Ladder._meta.db_table)}.{quote(f.column)}" for f in ladder_fields)}
        ), entry AS (
            SELECT {", ".join(f"{quote(LadderEntry._meta.db_table)}.{quote(f.column)}" for f in entry_fields)}
            FROM {quote(LadderEntry._meta.db_table)}
            WHERE {column(LadderEntry, "ladder")} IN (SELECT {quote(Ladder._meta.pk.column)} FROM ladder)
            AND {column(LadderEntry, "bot")} = ANY(%s::{LadderEntry._meta.get_field("bot").db_type(connection)}[])
            FOR UPDATE
        )
        SELECT {", ".join(f"ladder.{quote(f.column)}" for f in ladder_fields)},
               {", ".join(f"entry.{quote(f.column)}" for f in entry_fields)}
        FROM ladder LEFT JOIN entry ON true
    """
    return sql, ladder_fields, entry_fields


#: what fault tracking reads of the ladder (``_track_faults``)
LADDER_FAULT_FIELDS = ["fault_limit", "fault_window", "fault_window_limit"]


def _request_refit(ladder_id: int, *, force: bool = False) -> None:
    """Queue the ladder's refit (``force``: even without new results, e.g. after a status change).

    A result's request is dropped while a refit of the ladder is queued and has not started: that
    refit reads the results committed before it starts (``ladder_refit`` clears the mark first),
    this one included. One refit task a ladder per REFIT_DELAY, not one a result (a refit task a
    result was 9% of the match workers' time in the pipeline bench, most of them finding nothing
    new). ``cache.add`` is atomic in a shared cache; with the per-process default each process
    queues its own, which is only more tasks."""
    from arena import queues

    from .tasks import ladder_refit

    if not force and not _refit_claim(ladder_id):
        return
    try:
        ladder_refit.apply_async(
            args=[ladder_id], kwargs={"force": force}, countdown=REFIT_DELAY, queue=queues.MAINTENANCE
        )
    except Exception:  # noqa: BLE001 - a broker hiccup must not fail the stored result; beat asks again
        if not force:  # give back the mark this request took (a forced one took none)
            cache.delete(_refit_queued_key(ladder_id))
        logger.exception("ladder %s: refit not queued (the next matchmaking run asks again)", ladder_id)


def _track_faults(ladder: Ladder, entry: LadderEntry, seat, match: Match, *, counted: bool) -> None:
    """Forfeits in a row, and the version's forfeits among its last ``fault_window`` rated matches.

    Only forfeits are faults: an infrastructure failure fails the match (no result, no hook run).
    """
    version = seat.bot_version
    entry.fault_streak = entry.fault_streak + 1 if seat.forfeited else 0
    if not seat.forfeited or entry.status != LadderEntry.Status.ACTIVE:
        return
    reason = None
    if entry.fault_streak >= ladder.fault_limit:
        reason = f"suspended after forfeiting {entry.fault_streak} ladder matches in a row (limit {ladder.fault_limit})"
    elif counted:
        # this result's row, written after the tracking (``ladder_match_finish``), is the newest
        earlier = RatingChange.objects.filter(entry=entry, bot_version=version).order_by("-pk")
        recent = [seat.forfeited, *earlier.values_list("forfeited", flat=True)[: max(0, ladder.fault_window - 1)]]
        recent = recent[: ladder.fault_window]
        faults = sum(recent)
        if faults >= ladder.fault_window_limit:
            reason = (
                f"suspended after forfeiting {faults} of its last {len(recent)} ladder matches "
                f"(limit {ladder.fault_window_limit} in {ladder.fault_window})"
            )
    if reason is None:
        return
    entry.status = LadderEntry.Status.SUSPENDED
    entry.suspended_version = version
    entry.suspended_reason = (
        f"{reason}; the last, match #{match.pk} with version "
        f"{version.number}: {seat.fault_kind or 'forfeit'}: {seat.fault_reason}"
    )[:2000]


@dataclass(frozen=True)
class LadderFit:
    """A refit of a ladder: the fit, the last rating change it includes, and each entry's rated version."""

    fit: fit_model.Fit
    through: int
    versions: dict[int, int]  # entry id -> version of its last rated result


def ladder_fit(ladder: Ladder, *, through: int | None = None, warm: bool = True) -> LadderFit:
    """Fit every stored result of ``ladder`` (up to rating change ``through``): no lock, one read.

    Results are the stored rows in the order they were rated; a forfeit ranks
    last. ``warm`` starts from the stored ratings of the entries' rated versions.
    """
    rows = RatingChange.objects.filter(ladder=ladder).order_by("pk")
    if through is not None:
        rows = rows.filter(pk__lte=through)
    data = list(rows.values_list("pk", "match_id", "entry_id", "bot_version_id", "rank", "forfeited"))
    results = ratings.ladder_results((m, v, r, f) for _, m, _, v, r, f in data)
    versions = {entry_id: version_id for _, _, entry_id, version_id, _, _ in data}
    start = None
    if warm:
        start = {
            v: float(r)
            for v, r in LadderEntry.objects.filter(ladder=ladder, rated_version__isnull=False).order_by().values_list(
                "rated_version_id", "rating"
            )
        }
    fit = fit_model.fit_ratings(results, start=start)
    return LadderFit(fit, data[-1][0] if data else 0, versions)


def ladder_refit(ladder: Ladder | int, *, force: bool = False) -> bool:
    """Refit ``ladder`` (a Ladder or its id: the task's, which reads no row of its own) when
    results arrived since the stored ratings; True when it wrote them (False for a ladder that
    is gone).

    Debounced: when the stored ratings already include the last rating change
    (another refit got there first), nothing is done: one statement reads both. The fit runs
    outside any transaction and lock; the write is one short transaction that takes the
    ladder's row only to keep refits in order (an older fit never overwrites a
    newer one), then the entries' columns and the pending history points.
    """
    ladder = ladder if isinstance(ladder, Ladder) else Ladder(pk=ladder)
    cache.delete(_refit_queued_key(ladder.pk))  # before reading: a result after this queues a refit of its own
    newest = RatingChange.objects.filter(ladder_id=OuterRef("pk")).order_by("-pk").values("pk")[:1]
    read = (
        Ladder.objects.filter(pk=ladder.pk).order_by()
        .annotate(last=Coalesce(Subquery(newest), Value(0)))
        .values_list("refit_through", "last")
        .first()
    )
    if read is None:
        return False
    done, last = read
    if last <= done and not force:
        return False
    result = ladder_fit(ladder, through=last)
    entries = list(LadderEntry.objects.filter(ladder=ladder).order_by("pk"))
    columns = _entry_columns(result, entries)
    pending = list(
        RatingChange.objects.filter(ladder=ladder, after__isnull=True, pk__lte=result.through)
        .only("pk", "bot_version_id", "entry_id", "before")
        .order_by("pk")
    )
    for change in pending:
        shown = ratings.shown(result.fit, change.bot_version_id)
        change.after, change.after_low, change.after_high = shown.rating, shown.low, shown.high
        # the entry's newest fitted change (pk order): the table's "last change"
        if change.entry_id in columns:
            columns[change.entry_id]["last_change"] = change.after - change.before
    changed = []
    for entry in entries:
        values = columns[entry.pk]
        if any(getattr(entry, field) != value for field, value in values.items()):
            for field, value in values.items():
                setattr(entry, field, value)
            changed.append(entry)
    # One statement (PostgreSQL: its own transaction): the ladder's row, taken only to keep refits in
    # order, then the entries' columns and the pending history points, written only when no refit of
    # more results was written meanwhile (one VALUES join for every row, not bulk_update's CASE over
    # each batch: seconds at 1,000 entries, with the rows a result waits for locked).
    written = update_returning(
        Ladder.objects.filter(pk=ladder.pk, refit_through__lte=result.through),
        ["refit_through"],
        rows=[(changed, [*ENTRY_COLUMNS, "last_change"]), (pending, ["after", "after_low", "after_high"])],
        refit_through=result.through,
    )
    return bool(written)


#: the entry columns a refit writes (and ``recompute_ratings --check`` compares)
ENTRY_COLUMNS = ("rating", "rating_low", "rating_high", "version_matches", "rated_version_id", "los_below")


def _entry_columns(result: LadderFit, entries: list[LadderEntry]) -> dict[int, dict]:
    """Each entry's columns from a fit: its rated version's rating, interval and results, and LOS below."""
    columns = {}
    for entry in entries:
        version = result.versions.get(entry.pk)
        shown = ratings.shown(result.fit, version)
        columns[entry.pk] = {
            "rating": shown.rating,
            "rating_low": shown.low,
            "rating_high": shown.high,
            "version_matches": shown.version_matches,
            "rated_version_id": version,
            "los_below": None,
        }
    # The table's order (active entries by rating, then entry order): each row's LOS over the next.
    active = [e for e in entries if e.status == LadderEntry.Status.ACTIVE and result.versions.get(e.pk)]
    active.sort(key=lambda e: (-columns[e.pk]["rating"], e.entered_at, e.pk))
    for above, below in zip(active, active[1:], strict=False):
        los = result.fit.los(result.versions[above.pk], result.versions[below.pk])
        columns[above.pk]["los_below"] = round(los, 4)
    return columns


def _last_change(ladder_id: int) -> int:
    return RatingChange.objects.filter(ladder_id=ladder_id).order_by("-pk").values_list("pk", flat=True).first() or 0


def ladder_refit_stale() -> list[int]:
    """Ask for a refit of every ladder with results newer than its stored ratings (beat's safety net).

    A refit request lost on the way (broker down when the result was stored) is made good here.
    """
    stale = [pk for pk, done in Ladder.objects.values_list("pk", "refit_through") if _last_change(pk) > done]
    for pk in stale:
        _request_refit(pk)
    return stale


@dataclass(frozen=True)
class RatingDifference:
    """A stored value that recomputation from the history does not reproduce."""

    what: str
    stored: str
    recomputed: str

    def __str__(self) -> str:
        return f"{self.what}: stored {self.stored}, recomputed {self.recomputed}"


def ladder_ratings_recompute(ladder: Ladder, *, write: bool = False) -> list[RatingDifference]:
    """Fit the ladder's stored results again from scratch and compare with the stored columns.

    The check refits the results the stored ratings were fitted on (rating
    changes up to ``refit_through``: later results are not shown yet) from a
    cold start and compares every entry's rating (within
    ``ratings.CHECK_TOLERANCE``), interval ends (plus ``CHECK_INTERVAL_SHARE`` of
    the half-width), results, rated version and LOS (within 0.002). It holds no lock and
    writes nothing. With ``write`` the ladder is refitted on all its results
    and the columns written (``ladder_refit``), and the differences returned are
    those found before. History rows are a record of each refit and are not
    recomputed.
    """
    through = Ladder.objects.filter(pk=ladder.pk).values_list("refit_through", flat=True).get()
    result = ladder_fit(ladder, through=through, warm=False)
    entries = list(LadderEntry.objects.filter(ladder=ladder).select_related("bot").order_by("pk"))
    columns = _entry_columns(result, entries)
    differences = []
    for entry in entries:
        for field, value in columns[entry.pk].items():
            stored = getattr(entry, field)
            if field == "los_below":
                same = (stored is None) == (value is None) and (value is None or abs(stored - value) <= 2e-3)
            elif field in ("version_matches", "rated_version_id"):
                same = stored == value
            elif field == "rating":
                same = abs(stored - value) <= ratings.CHECK_TOLERANCE
            else:
                half = (columns[entry.pk]["rating_high"] - columns[entry.pk]["rating_low"]) / 2
                same = abs(stored - value) <= ratings.CHECK_TOLERANCE + ratings.CHECK_INTERVAL_SHARE * half
            if not same:
                differences.append(RatingDifference(f"{entry.bot.name} {field}", str(stored), str(value)))
    differences += ladder_counts_check(ladder)
    if write:
        ladder_refit(ladder, force=True)
        ladder_counts_rewrite(ladder)
    return differences


def _history_counts() -> dict:
    """The stored counts of an entry (OuterRef "pk") as its rating changes give them: one place for
    what ``matches_played``, ``wins`` and ``last_change`` mean (the hook and the refit keep them)."""
    changes = RatingChange.objects.filter(entry=OuterRef("pk")).order_by().values("entry_id")
    fitted = RatingChange.objects.filter(entry=OuterRef("pk"), after__isnull=False).order_by("-pk")
    return {
        "matches_played": _counted(changes),
        "wins": _counted(changes.filter(rank=1)),
        "last_change": Subquery(
            fitted.annotate(delta=F("after") - F("before")).values("delta")[:1],
            output_field=DecimalField(max_digits=7, decimal_places=2),
        ),
    }


def _counted(rows) -> Coalesce:
    return Coalesce(Subquery(rows.annotate(n=Count("pk")).values("n"), output_field=IntegerField()), Value(0))


def _rated_count() -> Coalesce:
    """The ladder's (OuterRef "pk") rated matches as its match links give them."""
    return _counted(LadderMatch.objects.filter(ladder=OuterRef("pk"), rated=True).order_by().values("ladder_id"))


def ladder_counts_check(ladder: Ladder) -> list[RatingDifference]:
    """The stored counts (the ladder's rated matches, the entries' matches, wins and last change) that
    the history does not reproduce (each read one statement: one snapshot, so a result stored
    meanwhile is never a difference; no lock)."""
    stored, history = Ladder.objects.filter(pk=ladder.pk).values_list("rated_matches", _rated_count()).get()
    differences = []
    if stored != history:
        differences.append(RatingDifference("the ladder's rated matches", str(stored), str(history)))
    counts = _history_counts()
    rows = (
        LadderEntry.objects.filter(ladder=ladder)
        .annotate(**{f"history_{field}": value for field, value in counts.items()})
        .select_related("bot")
        .order_by("pk")
    )
    for entry in rows:
        for field in counts:
            stored, history = getattr(entry, field), getattr(entry, f"history_{field}")
            if history is not None and field == "last_change":
                history = Decimal(str(history)).quantize(ratings.CENT)  # SQLite: a float
            if stored != history:
                differences.append(RatingDifference(f"{entry.bot.name} {field}", str(stored), str(history)))
    return differences


def ladder_counts_rewrite(ladder: Ladder) -> int:
    """Write the ladder's and every entry's counts from the history (under the ladder's row lock, so
    no result is stored meanwhile); returns the entries updated."""
    with transaction.atomic():
        Ladder.objects.select_for_update().get(pk=ladder.pk)
        Ladder.objects.filter(pk=ladder.pk).update(rated_matches=_rated_count())
        return LadderEntry.objects.filter(ladder=ladder).update(**_history_counts())


# --- challenges: an unranked match under a ladder's rules (the model is matches.models.Challenge)


class ChallengeError(LadderError):
    """A challenge is refused; the message says what was wrong and with which value."""


def challenge_create(*, challenger, bot: Bot, opponent: Bot, ladder, address: str = "") -> Challenge:
    """Queue an unranked head-to-head match: ``bot`` (the challenger's) against a public ``opponent``,
    under ``ladder``'s rules with two players, its games, duplicate setting and clock.

    Only an active ladder lends its rules, and its match format within the ladders' bounds. At most
    API_CHALLENGES_PENDING challenges are queued or running per account, and as many per client
    ``address`` (core.clientip.client_address), so accounts opened from one address share one cap.
    """
    if not ladder.active:
        raise ChallengeError(f"the ladder {ladder.slug!r} is not active; challenge under an active ladder's rules")
    if bot.owner_id != challenger.pk:
        raise ChallengeError(f"bot {bot.pk} ({bot}) is not yours; challenge with one of your own bots")
    if opponent.pk == bot.pk:
        raise ChallengeError("a bot cannot challenge itself; pick another opponent")
    try:
        ladder_owners_check(ladder, [bot, opponent])
    except LadderError as exc:
        raise ChallengeError(str(exc)) from None
    if not selectors.bot_is_public(opponent):
        raise ChallengeError(
            f"bot {opponent.pk} ({opponent}) is not public: only bots with public source "
            "or an active ladder entry can be challenged"
        )
    mine, theirs = bot_playing_version(bot), bot_playing_version(opponent)
    if mine is None:
        raise ChallengeError(f"your bot {bot} has no active version yet; wait for its validation")
    if theirs is None:
        raise ChallengeError(f"bot {opponent} has no active version to play")
    try:
        rules = Rules.from_dict({**ladder.rules, "players": 2})
    except (RulesError, TypeError) as exc:
        raise ChallengeError(f"the rules of ladder {ladder.slug!r} do not fit a two-player match: {exc}") from None
    try:
        match_format = ladder_match_format(ladder)
    except LadderError as exc:
        raise ChallengeError(str(exc)) from None
    limit = settings.API_CHALLENGES_PENDING
    with transaction.atomic():
        # The user's row lock, and a lock on the address, make concurrent requests count one after
        # the other (from one account, and from several accounts at one address).
        get_user_model().objects.select_for_update().filter(pk=challenger.pk).first()
        live = Challenge.objects.filter(match__status__in=[Match.Status.QUEUED, Match.Status.RUNNING])
        pending = live.filter(challenger=challenger).count()
        if pending >= limit:
            raise ChallengeError(
                f"you have {pending} challenges queued or running, the most allowed ({limit}); "
                "wait for one to finish"
            )
        if address:
            if connection.vendor == "postgresql":  # SQLite (the embedded default) serialises writers already
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"challenge-address:{address}"])
            from_address = live.filter(address=address).count()
            if from_address >= limit:
                raise ChallengeError(
                    f"{from_address} challenges from your address are queued or running, the most allowed "
                    f"({limit}, counted per address as well as per account); wait for one to finish"
                )
        match = match_create(
            kind=Match.Kind.CHALLENGE,
            rules=rules,
            seats=[mine, theirs],
            **match_format,
        )
        return Challenge.objects.create(challenger=challenger, match=match, ladder=ladder, address=address)
