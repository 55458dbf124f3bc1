"""Services of tournaments: create, register, start, pair, record results, and the organizer's actions.

Rounds advance from the matches' hook for kind "tournament"
(``tournament_match_finished``), which runs inside the transaction that stores
a match result and holds the tournament's row lock: a round is paired once,
whichever of its matches finishes last. Every organizer action and every step
the system takes by itself is written to the tournament's event log.
"""

from __future__ import annotations

import logging
import math
import random
import re
import secrets
from collections.abc import Sequence

from django.db import IntegrityError, transaction
from django.db.models import Prefetch
from django.utils import timezone
from django.utils.text import slugify

from engine import glossary
from engine.rules import BOUNDS, Rules, RulesError
from matches.models import MAX_COMPETITION_DEALS, MIN_COMPETITION_DEALS
from sandbox.limits import CLOCK_BOUNDS, DEFAULT_LIMITS
from tournaments.pairing import default_swiss_rounds, seeding_order, swiss_round
from tournaments.schedule import round_robin
from tournaments.standings import TIE_BREAKS, standings
from tournaments.tables import Bye, TableResult, table_size_bounds, table_sizes

from .models import Entry, Table, TableSeat, Tournament, TournamentEvent, TournamentRound

logger = logging.getLogger(__name__)

#: limits on what an organizer may ask for, so a typo cannot schedule a million matches
MIN_DEALS, MAX_DEALS = MIN_COMPETITION_DEALS, MAX_COMPETITION_DEALS
MAX_ROUNDS = 200
MAX_CYCLES = 10
MIN_PLAYERS, MAX_PLAYERS = BOUNDS["players"]


class TournamentError(ValueError):
    """A tournament action is refused; the message says what and with which value.

    ``field`` names the option at fault (a form shows the message on that field), or is empty.
    """

    def __init__(self, message: str, *, field: str = ""):
        super().__init__(message)
        self.field = field


# --- creating and registering -------------------------------------------------------------


def tournament_create(*, actor=None, **options) -> Tournament:
    """Create a draft tournament from ``tournament_options``; the table size is the rules' ``players``.

    >>> tournament_create(name="Cup", rules=["players=2", "rounds=1"], format="round_robin")  # doctest: +SKIP
    """
    fields = tournament_options(**options)
    with transaction.atomic():
        tournament = Tournament.objects.create(**fields, created_by=actor if _is_user(actor) else None)
        _log(tournament, "created", f"created: {_summary(tournament)}", actor)
    return tournament


def tournament_update(tournament: Tournament, *, actor=None, **options) -> Tournament:
    """Change a tournament's options before it starts; the clocks, the seed ladder and the owner rule
    keep their values unless given."""
    for key in KEPT_UNLESS_GIVEN:
        options.setdefault(key, getattr(tournament, key))
    fields = tournament_options(**options, exclude_pk=tournament.pk)
    with transaction.atomic():
        tournament = _locked(tournament)
        _require(tournament, (Tournament.Status.DRAFT, Tournament.Status.REGISTRATION), "change the options")
        changed = [key for key, value in fields.items() if getattr(tournament, key) != value]
        if changed:
            for key in changed:
                setattr(tournament, key, fields[key])
            tournament.save(update_fields=changed)
            _log(tournament, "updated", f"changed {', '.join(changed)}: {_summary(tournament)}", actor)
    return tournament


#: options tournament_update keeps when they are not given
KEPT_UNLESS_GIVEN = ("time_per_decision", "time_bank", "time_per_match", "seed_ladder", "allow_same_owner")


def tournament_options(
    *,
    name: str,
    rules: Rules | dict | Sequence[str],
    format: str = Tournament.Format.SWISS,
    slug: str = "",
    deals: int = 1,
    duplicate: bool = True,
    rounds: int | None = None,
    cycles: int = 1,
    tie_breaks: Sequence[str] | None = None,
    seed: int | None = None,
    description: str = "",
    time_per_decision: float = DEFAULT_LIMITS.time_per_decision,
    time_bank: float = DEFAULT_LIMITS.time_bank,
    time_per_match: float = DEFAULT_LIMITS.time_per_match,
    seed_ladder=None,
    allow_same_owner: bool = False,
    exclude_pk: int | None = None,
) -> dict:
    """Check a tournament's options and return its field values; TournamentError names a bad value."""
    name = (name or "").strip()
    if not name or len(name) > 100:
        raise TournamentError(f"a tournament needs a name of 1 to 100 characters, got {name!r}", field="name")
    slug = slugify(slug or name)[:100]
    if not slug:
        raise TournamentError(
            f"cannot make a web address (slug) from {name!r}; give one with letters or digits", field="slug"
        )
    if Tournament.objects.filter(slug=slug).exclude(pk=exclude_pk).exists():
        raise TournamentError(f"the slug {slug!r} is taken by another tournament", field="slug")
    try:
        rules = parse_rules(rules)
    except TournamentError as exc:
        raise TournamentError(str(exc), field="rules") from None
    if format not in Tournament.Format.values:
        raise TournamentError(
            f"unknown format {format!r} (allowed: {', '.join(Tournament.Format.values)})", field="format"
        )
    _check_int("deals per match", deals, MIN_DEALS, MAX_DEALS, field="deals")
    _check_int("cycles", cycles, 1, MAX_CYCLES, field="cycles")
    if rounds is not None:
        _check_int("rounds", rounds, 1, MAX_ROUNDS, field="rounds")
        if format == Tournament.Format.ROUND_ROBIN and rules.players == 2:
            raise TournamentError(
                "a 2-seat round robin has its rounds fixed by the field; set cycles instead", field="rounds"
            )
    if cycles != 1 and not (format == Tournament.Format.ROUND_ROBIN and rules.players == 2):
        raise TournamentError(f"cycles applies to 2-seat round robins only, got cycles={cycles}", field="cycles")
    tie_breaks = list(TIE_BREAKS) if tie_breaks is None else tie_breaks
    if not isinstance(tie_breaks, list | tuple) or not all(isinstance(t, str) for t in tie_breaks):
        raise TournamentError(
            f"tie-breaks must be a list of names from {', '.join(TIE_BREAKS)}; got {tie_breaks!r}", field="tie_breaks"
        )
    tie_breaks = list(tie_breaks)
    unknown = [t for t in tie_breaks if t not in TIE_BREAKS]
    if unknown or len(set(tie_breaks)) != len(tie_breaks):
        raise TournamentError(
            f"tie-breaks must be distinct names from {', '.join(TIE_BREAKS)}; got {tie_breaks!r}", field="tie_breaks"
        )
    # Fields that do not divide evenly play at tables of one seat fewer or more.
    low, high = table_size_bounds(rules.players)
    for players in range(low, high + 1):
        try:
            rules_for_players(rules.to_dict(), players)
        except TournamentError as exc:
            raise TournamentError(str(exc), field="rules") from None
    # No seed: one is drawn when the tournament starts (tournament_start), so nobody knows the deals before.
    if seed is not None:
        _check_int("seed", seed, -(2**63), 2**63 - 1, field="seed")
    clocks = {"time_per_decision": time_per_decision, "time_bank": time_bank, "time_per_match": time_per_match}
    for clock, value in clocks.items():
        _check_clock(clock, value)
    _check_match_time(rules, deals, bool(duplicate), clocks)
    if seed_ladder is not None:
        from ladders.models import Ladder

        if not isinstance(seed_ladder, Ladder):
            found = Ladder.objects.filter(pk=seed_ladder).first() if isinstance(seed_ladder, int) else None
            if found is None:
                raise TournamentError(f"no ladder {seed_ladder!r} to seed from", field="seed_ladder")
            seed_ladder = found
    return {
        "name": name, "slug": slug, "description": description or "", "rules": rules.to_dict(),
        "format": format, "seats": rules.players, "deals": deals, "duplicate": bool(duplicate),
        "rounds": rounds, "cycles": cycles, "tie_breaks": tie_breaks, "seed": seed,
        **{clock: float(value) for clock, value in clocks.items()},
        "seed_ladder": seed_ladder, "allow_same_owner": bool(allow_same_owner),
    }


def _check_clock(clock: str, value) -> None:
    """TournamentError on the field unless ``value`` is finite seconds within sandbox.limits.CLOCK_BOUNDS."""
    low, high = CLOCK_BOUNDS[clock]
    ok = not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value)
    if not ok or not low <= value <= high:
        raise TournamentError(
            f"{clock.replace('_', ' ')} must be {low:g} to {high:g} seconds, got {value!r}", field=clock
        )


def _check_match_time(rules: Rules, deals: int, duplicate: bool, clocks: dict) -> None:
    """TournamentError on time_per_match when a match of the largest table could outlast MATCH_TIME_LIMIT
    (match_create would refuse it, and the round could never be paired)."""
    from matches.sandboxing import match_limits
    from matches.selectors import match_time_excess

    largest = table_size_bounds(rules.players)[1]
    limits = match_limits(clocks["time_per_decision"], clocks["time_bank"], clocks["time_per_match"])
    excess = match_time_excess(players=largest, deals=deals, duplicate=duplicate, limits=limits)
    if excess:
        raise TournamentError(f"a match at a table of {largest} {excess}", field="time_per_match")


def _summary(tournament: Tournament) -> str:
    """The options for the log; the seed's number is redacted from the public log (``redact_seed``)."""
    seed = f"seed {tournament.seed}" if tournament.seed is not None else "seed drawn at the start"
    return (
        f"{tournament.get_format_display()}, {tournament.seats} seats, {glossary.count(tournament.deals, 'deal')} per match"
        f"{' (duplicate)' if tournament.duplicate else ''}, clocks {tournament.time_per_decision:g} s per decision, "
        f"{tournament.time_bank:g} s bank, {tournament.time_per_match:g} s per match, "
        f"{'same-owner tables allowed' if tournament.allow_same_owner else 'owners kept apart'}"
        f"{f', seeded from the ladder {tournament.seed_ladder.name}' if tournament.seed_ladder_id else ''}, {seed}"
    )


#: how the log writes a seed ("seed 1408355813"); see redact_seed
_SEED_IN_LOG = re.compile(r"\bseed -?\d+")
SEED_HIDDEN = "seed hidden until the tournament finishes"


def seed_is_public(tournament: Tournament) -> bool:
    """Every deal derives from the seed (``round_seed``): the public sees it once the tournament is finished,
    so nobody can tune a bot to the deals before the versions are frozen."""
    return tournament.status == Tournament.Status.FINISHED


def redact_seed(message: str) -> str:
    """A log message with every seed number replaced by a note that it is hidden."""
    return _SEED_IN_LOG.sub(SEED_HIDDEN, message)


def draw_seed() -> int:
    """A fresh random tournament seed."""
    return secrets.randbits(62)


def parse_rules(rules: Rules | dict | Sequence[str]) -> Rules:
    """Rules from a Rules, a dict (JSON) or ``key=value`` lines; TournamentError when invalid."""
    if isinstance(rules, Rules):
        return rules
    try:
        if isinstance(rules, dict):
            return Rules.from_dict(rules)
        if isinstance(rules, list | tuple) and all(isinstance(x, str) for x in rules):
            return Rules.parse(rules)
    except (RulesError, TypeError, ValueError) as exc:
        raise TournamentError(f"invalid rules: {exc}") from None
    raise TournamentError(f"rules must be an object of rule options, got {type(rules).__name__}")


def rules_for_players(rules: dict, players: int) -> Rules:
    """The tournament's rules for a table of ``players`` seats."""
    try:
        return Rules.from_dict({**rules, "players": players})
    except (RulesError, TypeError, ValueError) as exc:
        raise TournamentError(f"the rules do not allow a table of {players} seats: {exc}") from None


def tournament_open_registration(tournament: Tournament, *, actor=None) -> Tournament:
    with transaction.atomic():
        tournament = _locked(tournament)
        _require(tournament, (Tournament.Status.DRAFT,), "open registration")
        tournament.status = Tournament.Status.REGISTRATION
        tournament.save(update_fields=["status"])
        _log(tournament, "registration", "registration opened", actor)
    return tournament


def entry_add(tournament: Tournament, bot, *, actor=None) -> Entry:
    """Enter a bot; it must have an active version now (the version itself is frozen at the start)."""
    from bots.selectors import bot_playing_version

    with transaction.atomic():
        tournament = _locked(tournament)
        _require(tournament, (Tournament.Status.DRAFT, Tournament.Status.REGISTRATION), "add entries")
        if tournament.entries.filter(bot=bot).exists():
            raise TournamentError(f"{bot} is already entered in {tournament}")
        if bot_playing_version(bot) is None:
            raise TournamentError(
                f"{bot} has no active version: upload one and wait until its validation passes"
            )
        name = str(bot)
        max_length = Entry._meta.get_field("name").max_length
        if len(name) > max_length:  # cannot happen with the current user and bot models; never truncate
            raise TournamentError(f"{name[:60]}… cannot enter: its name is longer than {max_length} characters")
        try:
            with transaction.atomic():  # a savepoint: a refused row leaves the caller's transaction usable
                entry = Entry.objects.create(tournament=tournament, bot=bot, name=name)
                required = _validation_require(tournament, bot)
                if required.failed:
                    raise TournamentError(f"{bot} cannot enter {tournament}: {required.message}")
        except IntegrityError:
            raise TournamentError(
                f"{bot} cannot enter {tournament}: it or an entry of the same name is already entered"
            ) from None
        same = list(tournament.entries.filter(bot__owner_id=bot.owner_id).exclude(pk=entry.pk).values_list("name", flat=True))
        note = ""
        if same:  # allowed, but flagged: the pairing keeps them apart unless the event allows otherwise
            rule = ("may share a table (allowed on this event)" if tournament.allow_same_owner
                    else "are kept at different tables")
            note = f" (same owner as {', '.join(same)}: they {rule})"
        if required.held:
            note += f"; {required.message}"
        _log(tournament, "entry", f"entry {entry.name} added{note}", actor)
    return entry


def tournament_configurations(tournament: Tournament) -> list:
    """The validation configurations of the tournament's tables: its rules at each table size it may
    seat (``tournaments.tables.table_size_bounds``), as a new version's plan lists them."""
    from validation import configurations as validation

    low, high = table_size_bounds(tournament.seats)
    return validation.event_configurations(
        f"tournament {tournament.name}", [{**tournament.rules, "players": n} for n in range(low, high + 1)]
    )


def _validation_require(tournament: Tournament, bot):
    """Queue the validation of ``bot``'s playing version in each of the tournament's configurations it
    has not passed (``validation.services.validation_require``); returns what the entry waits for."""
    from validation import services as validation_services

    return validation_services.validation_require(bot, tournament_configurations(tournament))


def _queue_missing_validations(tournament: Tournament) -> None:
    """Before a start: queue the validations the entries' playing versions lack in the tournament's
    configurations (the rules changed since the entry, a new playing version), in a transaction of its
    own, committed even when the start is then refused. A few queries whatever the number of entries,
    and a few per entry that needs one."""
    from bots.models import BotVersion
    from bots.selectors import bot_playing_versions
    from validation import configurations as validation
    from validation import services as validation_services

    with transaction.atomic():
        locked = _locked(tournament)
        if locked.status not in (Tournament.Status.DRAFT, Tournament.Status.REGISTRATION):
            return
        bots = [e.bot for e in locked.entries.filter(status=Entry.Status.ACTIVE).select_related("bot")]
        playing = bot_playing_versions(bots, only=())
        runs = dict(BotVersion.objects.filter(pk__in=[v.pk for v in playing.values()])
                    .values_list("pk", "validation_runs"))
        lacking: set[int] = set()
        for configuration in tournament_configurations(locked):
            states = validation_services.configuration_states({pk: runs.get(pk) or [] for pk in runs}, configuration.rules)
            lacking |= {pk for pk, state in states.items() if state == validation.MISSING}
            lacking |= {pk for pk in runs if (run := validation.run_for(runs[pk] or [], configuration.rules))
                        and run["status"] == validation.FAILED and run.get("platform")}
        for bot in bots:
            if bot.pk in playing and playing[bot.pk].pk in lacking:
                _validation_require(locked, bot)


def entries_validation_pending(tournament: Tournament, entries: Sequence[Entry]) -> list[str]:
    """Why entries (their ``version`` set to the playing one) cannot start yet: one line per entry whose
    version has not passed one of the tournament's configurations (pending, waiting, failed, or not
    validated there yet). Empty when every one may play. Two queries whatever the number."""
    from bots.models import BotVersion
    from validation import configurations as validation
    from validation import services as validation_services

    versions = {e.version.pk for e in entries if e.version is not None}
    runs = dict(BotVersion.objects.filter(pk__in=versions).values_list("pk", "validation_runs"))
    lines = []
    for configuration in tournament_configurations(tournament):
        states = validation_services.configuration_states({pk: runs.get(pk) or [] for pk in versions}, configuration.rules)
        for entry in entries:
            state = states.get(entry.version.pk) if entry.version is not None else None
            if state is None or validation.cleared(state):
                continue
            what = {validation.FAILED: "failed (the version's page shows why)",
                    validation.MISSING: "not validated there yet (queued)"}.get(state, "still being validated")
            lines.append(f"{entry.version.label} at {configuration.label}: {what}")
    return lines


def tournament_validation_refusal(version, run: dict) -> list[str]:
    """Refusal handler (``validation.configurations.register_event_refusal``): ``version`` failed the configuration
    of ``run``; the bot's active entries in tournaments not started yet that seat that configuration,
    while the version plays for the bot, are withdrawn (removed, as an entry that leaves before the
    start, so a fixed version may enter again), the reason written to the tournament's log. An entry of
    a running tournament is never touched: its start needed every configuration passed. A run the
    platform failed to play (``run["platform"]``) blames no one: the entry is kept, held until the start
    plays that configuration again (``_queue_missing_validations``), and nothing is logged."""
    from bots.selectors import bot_playing_version
    from validation import configurations as validation

    if bot_playing_version(version.bot) != version:
        return []
    key = validation.rules_key(run["rules"])
    refused = []
    entries = Entry.objects.filter(
        bot_id=version.bot_id, status=Entry.Status.ACTIVE,
        tournament__status__in=[Tournament.Status.DRAFT, Tournament.Status.REGISTRATION],
    ).select_related("tournament")
    for entry in entries:
        tournament = _locked(entry.tournament)
        if tournament.status not in (Tournament.Status.DRAFT, Tournament.Status.REGISTRATION):
            continue
        if key not in {validation.rules_key(c.rules) for c in tournament_configurations(tournament)}:
            continue
        if run.get("platform"):  # not the bot's fault: the entry stays, held; the start plays the run again
            refused.append(f"tournament {tournament.name}: entry kept, validated again at the start")
            continue
        if Entry.objects.filter(pk=entry.pk).delete()[0]:
            _log(tournament, "entry",
                 f"entry {entry.name} withdrawn: version {version.number} failed its validation at {run['label']}: "
                 f"{run['reason']}")
            refused.append(f"tournament {tournament.name}: entry withdrawn before the start")
    return refused


def bulk_entry_bots(*, ladder=None, names: str = "") -> tuple[list, list[str]]:
    """The bots a bulk entry names: every bot with an active entry on ``ladder`` (in ladder order), then each
    ``owner/bot`` of ``names`` (one a line or comma-separated; repeats once). Returns (bots, unknown names)."""
    from bots.models import Bot

    bots: list = []
    if ladder is not None:
        from ladders.models import LadderEntry

        entries = ladder.entries.filter(status=LadderEntry.Status.ACTIVE).select_related("bot__owner").order_by("pk")
        bots.extend(e.bot for e in entries)
    unknown: list[str] = []
    wanted = list(dict.fromkeys(w.strip() for w in re.split(r"[\n,]", names or "") if w.strip()))
    pairs = [tuple(w.split("/", 1)) if "/" in w else (None, w) for w in wanted]
    found = {}
    query = [p for p in pairs if p[0]]
    if query:
        from django.db.models import Q

        condition = Q()
        for owner, name in query:
            condition |= Q(owner__username=owner.strip(), name=name.strip())
        found = {f"{b.owner.get_username()}/{b.name}": b for b in Bot.objects.filter(condition).select_related("owner")}
    seen = {b.pk for b in bots}
    for text, (owner, name) in zip(wanted, pairs, strict=True):
        bot = found.get(f"{owner.strip()}/{name.strip()}") if owner else None
        if bot is None:
            unknown.append(text)
        elif bot.pk not in seen:
            seen.add(bot.pk)
            bots.append(bot)
    return bots, unknown


def entries_add_bulk(tournament: Tournament, *, ladder=None, names: str = "", actor=None) -> tuple[list[Entry], list[str]]:
    """Enter every bot of ``bulk_entry_bots`` in one transaction: all or nothing.

    Refused as a whole (TournamentError listing every name at fault) when a name is unknown or a bot has
    no active version; a bot already entered is skipped. Returns (entries added, names skipped).
    """
    from bots.selectors import bot_playing_versions

    bots, unknown = bulk_entry_bots(ladder=ladder, names=names)
    if unknown:
        raise TournamentError(
            f"no bot named {', '.join(unknown)} (write owner/bot, one a line); nothing was added", field="names")
    if not bots:
        raise TournamentError("no bot to enter: the ladder has no active entry and no name was given", field="names")
    with transaction.atomic():
        tournament = _locked(tournament)
        _require(tournament, (Tournament.Status.DRAFT, Tournament.Status.REGISTRATION), "add entries")
        entered = set(tournament.entries.values_list("bot_id", flat=True))
        skipped = [str(b) for b in bots if b.pk in entered]
        new = [b for b in bots if b.pk not in entered]
        playing = bot_playing_versions(new)
        inactive = [str(b) for b in new if b.pk not in playing]
        if inactive:
            raise TournamentError(
                f"no active version for {', '.join(inactive)}: upload one and wait until its validation passes; "
                "nothing was added", field="names")
        added, refused = [], []
        for bot in new:
            try:
                with transaction.atomic():
                    added.append(entry_add(tournament, bot, actor=actor))
            except TournamentError as exc:
                refused.append(str(exc))
        if refused:  # all or nothing: every refusal named, none of the others kept
            transaction.set_rollback(True)
            raise TournamentError(f"{'; '.join(refused)}; nothing was added", field="names")
    return added, skipped


def entry_register(tournament: Tournament, bot, *, user) -> Entry:
    """A bot's owner enters it while registration is open."""
    if bot.owner_id != getattr(user, "pk", None):
        raise TournamentError(f"only the owner of {bot} can enter it")
    if tournament.status != Tournament.Status.REGISTRATION:
        raise TournamentError(f"{tournament} is {tournament.status}: entries are open only during registration")
    return entry_add(tournament, bot, actor=user)


def entry_leave_before_start(entry: Entry, *, actor=None) -> None:
    """Remove an entry before the start (it has no results); the bot may enter again."""
    with transaction.atomic():
        tournament = _locked(entry.tournament)
        _require(tournament, (Tournament.Status.DRAFT, Tournament.Status.REGISTRATION), "leave before the start")
        deleted, _ = Entry.objects.filter(pk=entry.pk, tournament=tournament).delete()
        if deleted:
            _log(tournament, "entry", f"entry {entry.name} left before the start", actor)


# --- starting and advancing ---------------------------------------------------------------


def tournament_start(tournament: Tournament, *, actor=None) -> Tournament:
    """Freeze every active entry's playing version, plan the rounds, pair and enqueue round 1.

    Refused, naming each entry and configuration, while an entry's version has not passed its validation
    in one of the tournament's configurations (``entries_validation_pending``): those not queued yet (the
    rules changed since the entry, a new playing version) are queued first, in a transaction of their own
    that the refusal does not roll back, so starting again once they passed succeeds."""
    from bots.selectors import bot_playing_version

    _queue_missing_validations(tournament)
    with transaction.atomic():
        tournament = _locked(tournament)
        _require(tournament, (Tournament.Status.DRAFT, Tournament.Status.REGISTRATION), "start")
        entries = list(
            tournament.entries.filter(status=Entry.Status.ACTIVE).select_related("bot__owner").order_by("pk")
        )
        if len(entries) < MIN_PLAYERS:
            raise TournamentError(f"cannot start {tournament}: it needs at least {MIN_PLAYERS} entries, has {len(entries)}")
        missing = []
        for entry in entries:
            entry.version = bot_playing_version(entry.bot)
            if entry.version is None:
                missing.append(entry.name)
        if missing:
            raise TournamentError(
                f"cannot start {tournament}: no active version for {', '.join(missing)}; "
                "withdraw these entries or wait until a version passes validation"
            )
        unvalidated = entries_validation_pending(tournament, entries)
        if unvalidated:
            raise TournamentError(
                f"cannot start {tournament}: not every entry's version passed its validation in this "
                f"tournament's configurations: {'; '.join(unvalidated)}. An entry never plays a configuration "
                "its version did not pass: start again once these validations have passed (a minute or two), "
                "or withdraw the entries that failed"
            )
        names = [e.name for e in entries]
        drawn = tournament.seed is None
        if drawn:  # drawn only now, after the last version could change: nobody knew the deals before
            tournament.seed = draw_seed()
        seeding_text = _seed_entries(tournament, entries)
        try:
            table_sizes(len(names), tournament.seats)
            if tournament.format == Tournament.Format.ROUND_ROBIN:
                plan = round_robin(
                    names, tournament.seats, cycles=tournament.cycles,
                    rounds=tournament.rounds if tournament.seats > 2 else None, seed=tournament.seed,
                    apart=owners_apart(tournament, entries),
                )
                tournament.plan = [
                    {"tables": [list(t.seats) for t in r.tables], "byes": list(r.byes),
                     "explanation": list(r.explanation)}
                    for r in plan
                ]
                tournament.total_rounds = len(plan)
            else:
                tournament.total_rounds = tournament.rounds or default_swiss_rounds(len(names))
        except ValueError as exc:
            raise TournamentError(f"cannot start {tournament}: {exc}") from None
        Entry.objects.bulk_update(entries, ["version", "seed_rating", "seed_position"])
        tournament.status = Tournament.Status.RUNNING
        tournament.started_at = timezone.now()
        tournament.current_round = 0
        tournament.save(update_fields=["status", "started_at", "current_round", "plan", "total_rounds", "seed"])
        frozen = ", ".join(f"{e.name} v{e.version.number}" for e in entries)
        _log(tournament, "started",
             f"started with {len(entries)} entries over {tournament.total_rounds} round(s)"
             f"{f', seed {tournament.seed} drawn' if drawn else ''}; versions frozen: {frozen}"
             f"{seeding_text}",
             actor)
        _advance(tournament)
        if tournament.status == Tournament.Status.PAUSED:
            # Round 1 could not be paired: refuse the start (rolled back) with the reason.
            reason = tournament.events.filter(action="error").values_list("message", flat=True).first()
            raise TournamentError(f"cannot start {tournament}: {reason}")
    return tournament


def _seed_entries(tournament: Tournament, entries: list[Entry]) -> str:
    """Read each entry's rating on the seed ladder and store its seeding (Swiss round 1 pairs by it).

    The rating comes from ``selectors.seeding_rating`` (the one place that knows where ratings
    live). Without a seed ladder nothing is stored and round 1 stays a seeded draw. Returns the
    log's text.
    """
    from .selectors import seeding_rating

    ladder = tournament.seed_ladder
    for entry in entries:
        entry.seed_rating = seeding_rating(ladder, entry.version) if ladder is not None else None
        entry.seed_position = None
    if ladder is None:
        return ""
    ratings = {e.name: e.seed_rating for e in entries}
    order = seeding_order([e.name for e in entries], ratings, tournament.seed)
    place = {name: i for i, name in enumerate(order, start=1)}
    for entry in entries:
        entry.seed_position = place[entry.name]
    rated = sum(1 for e in entries if e.seed_rating is not None)
    return f"; seeded from the ladder {ladder.name}: {rated} rated, {len(entries) - rated} unrated"


def seeded_names(tournament: Tournament, entries: Sequence[Entry]) -> tuple[list[str], dict | None, int | None]:
    """(entry names in tie order, ratings for the pairing or None, seed for the tie order).

    Seeded from a ladder: the stored seeding order, the stored ratings, no further shuffle.
    Otherwise: registration order, no ratings, the tournament's seed (a seeded shuffle).
    """
    if tournament.seed_ladder_id is None and not any(e.seed_position for e in entries):
        return [e.name for e in entries], None, tournament.seed
    ordered = sorted(entries, key=lambda e: (e.seed_position is None, e.seed_position or 0, e.pk))
    return [e.name for e in ordered], {e.name: e.seed_rating for e in ordered}, None


def owners_apart(tournament: Tournament, entries: Sequence[Entry]) -> dict | None:
    """entry name -> owner's username for the pairing, or None when the event allows same-owner tables."""
    if tournament.allow_same_owner:
        return None
    return {e.name: e.bot.owner.get_username() for e in entries}


def _advance(tournament: Tournament) -> None:
    """Close the current round when every result is in, then pair the next or finish.

    Called with the tournament's row locked and its status running.
    """
    while tournament.status == Tournament.Status.RUNNING:
        if tournament.current_round:
            rnd = tournament.round_set.get(number=tournament.current_round)
            if rnd.status == TournamentRound.Status.PLAYING:
                if rnd.tables.filter(done=False).exists():
                    return
                rnd.status = TournamentRound.Status.DONE
                rnd.finished_at = timezone.now()
                rnd.save(update_fields=["status", "finished_at"])
                _log(tournament, "round done", f"round {rnd.number} finished")
            if tournament.current_round >= tournament.total_rounds:
                _finish(tournament)
                return
        _pair_round(tournament, tournament.current_round + 1)


def _pair_round(tournament: Tournament, number: int) -> None:
    """Pair round ``number`` with the pure code, store it, create and enqueue its matches.

    A field too small to pair finishes the tournament; a pairing the pure code
    refuses pauses it with the reason, so a match result is never rolled back.
    """
    entries = frozen_entries(tournament)
    by_name = {e.name: e for e in entries}
    active = [e.name for e in entries if e.status == Entry.Status.ACTIVE]
    if len(active) < MIN_PLAYERS:
        _finish(tournament, f"only {len(active)} active entr{'y' if len(active) == 1 else 'ies'} left to pair")
        return
    try:
        if tournament.format == Tournament.Format.SWISS:
            names, ratings, seed = seeded_names(tournament, entries)
            paired = swiss_round(
                names, history(tournament, entries), number, seats=tournament.seats,
                tie_breaks=tournament.tie_breaks, seed=seed, ratings=ratings,
                withdrawn=[e.name for e in entries if e.status == Entry.Status.WITHDRAWN],
                disqualified=[e.name for e in entries if e.status == Entry.Status.DISQUALIFIED],
                apart=owners_apart(tournament, entries),
            )
            tables = [list(t.seats) for t in paired.tables]
            byes, explanation = list(paired.byes), list(paired.explanation)
        else:
            tables, byes, explanation = _planned_round(tournament.plan[number - 1], set(active))
    except Exception as exc:  # pure code, no database: whatever it raises must not lose the result
        logger.exception("tournament %s: pairing round %s failed", tournament.pk, number)
        _pause_on_error(tournament, f"round {number} could not be paired: {type(exc).__name__}: {exc}")
        return
    try:
        with transaction.atomic():  # a savepoint: a refused match leaves no half-paired round
            rnd = TournamentRound.objects.create(
                tournament=tournament, number=number, seed=round_seed(tournament.seed, number),
                explanation=explanation,
            )
            for index, seats in enumerate(tables, start=1):
                table = Table.objects.create(round=rnd, number=index)
                TableSeat.objects.bulk_create(
                    TableSeat(table=table, seat=s, entry=by_name[name]) for s, name in enumerate(seats)
                )
                _new_match(tournament, table)
            for index, name in enumerate(byes, start=len(tables) + 1):
                table = Table.objects.create(round=rnd, number=index, bye=True, done=True)
                TableSeat.objects.create(table=table, seat=0, entry=by_name[name])
    except TournamentError as exc:
        _pause_on_error(tournament, f"round {number} could not be paired: {exc}")
        return
    tournament.current_round = number
    tournament.save(update_fields=["current_round"])
    bye_text = f"; bye: {', '.join(byes)}" if byes else ""
    _log(tournament, "round paired", f"round {number} of {tournament.total_rounds} paired: {len(tables)} table(s){bye_text}")


def _planned_round(planned: dict, active: set[str]) -> tuple[list[list[str]], list[str], list[str]]:
    """A stored round-robin round without the entries that left: a table of one becomes a bye."""
    tables, byes, explanation = [], list(n for n in planned["byes"] if n in active), list(planned["explanation"])
    for seats in planned["tables"]:
        staying = [n for n in seats if n in active]
        gone = [n for n in seats if n not in active]
        if len(staying) >= MIN_PLAYERS:
            tables.append(staying)
            if gone:
                explanation.append(f"{', '.join(staying)} play without {', '.join(gone)} (left the tournament)")
        elif staying:
            byes.append(staying[0])
            explanation.append(f"bye to {staying[0]}: opponent(s) {', '.join(gone)} left the tournament")
    return tables, byes, explanation


def _new_match(tournament: Tournament, table: Table):
    """Create the pairing's match (same seats, rules and seed); enqueue it unless the tournament is paused."""
    from matches.services import MatchError, match_create

    seats = list(table.seats.select_related("entry__version").order_by("seat"))
    try:
        match = match_create(
            kind="tournament",
            rules=rules_for_players(tournament.rules, len(seats)),
            seats=[s.entry.version for s in seats],
            seed=table.round.seed,
            deals=tournament.deals,
            duplicate=tournament.duplicate,
            time_per_decision=tournament.time_per_decision,
            time_bank=tournament.time_bank,
            time_per_match=tournament.time_per_match,
            enqueue=tournament.status == Tournament.Status.RUNNING,
        )
    except MatchError as exc:
        raise TournamentError(f"round {table.round.number} table {table.number}: {exc}") from None
    table.match = match
    table.save(update_fields=["match"])
    return match


def round_seed(seed: int, number: int) -> int:
    """The deals of round ``number``: every table of the round plays the same ones."""
    return random.Random(f"{seed}/{number}").getrandbits(62)


def tournament_podium_store(tournament: Tournament, lines=None) -> list[dict]:
    """Store (and return) the finished tournament's podium from its final standings: places 1 to
    ``selectors.PODIUM_PLACES``, ties sharing a place, disqualified entries left out."""
    from .selectors import PODIUM_PLACES, fmt

    lines = tournament_standings_lines(tournament) if lines is None else lines
    bots = dict(tournament.entries.values_list("name", "bot_id"))
    tournament.podium = [
        {"rank": line.rank, "name": line.entry, "bot": bots.get(line.entry),
         "points": fmt(line.points)}
        for line in lines
        if line.rank <= PODIUM_PLACES and line.status != "disqualified"
    ]
    tournament.save(update_fields=["podium"])
    return tournament.podium


def _finish(tournament: Tournament, why: str = "") -> None:
    tournament.status = Tournament.Status.FINISHED
    tournament.finished_at = timezone.now()
    tournament.save(update_fields=["status", "finished_at"])
    lines = tournament_standings_lines(tournament)
    tournament_podium_store(tournament, lines)
    winners = [line.entry for line in lines if line.rank == 1 and line.status != "disqualified"]
    text = "finished" + (f" early: {why}" if why else "")
    if winners:
        text += f"; first place: {', '.join(winners)}"
    _log(tournament, "finished", text)


def _pause_on_error(tournament: Tournament, reason: str) -> None:
    logger.warning("tournament %s paused: %s", tournament.pk, reason)
    tournament.status = Tournament.Status.PAUSED
    tournament.save(update_fields=["status"])
    _log(tournament, "error", f"paused by the system: {reason}")


# --- results ------------------------------------------------------------------------------


def tournament_match_finished(match) -> None:
    """Hook of matches of kind "tournament" (inside the result's transaction): store the result, advance.

    A failed match is logged and blocks its round until an organizer re-runs it.
    A match that no table points at any more (replaced by a re-run) is ignored.
    """
    table = Table.objects.filter(match_id=match.pk).select_related("round").first()
    if table is None:
        return
    tournament = Tournament.objects.select_for_update().get(pk=table.round.tournament_id)
    table = Table.objects.select_for_update().select_related("round").get(pk=table.pk)
    if table.done or table.match_id != match.pk:
        return
    where = f"round {table.round.number} table {table.number}"
    if match.status != match.Status.DONE:
        _log(tournament, "match failed",
             f"{where}: match #{match.pk} {match.status}: {match.error or 'no reason given'}; "
             "re-run it when the cause is fixed")
        return
    seats = list(table.seats.order_by("seat"))
    played = {s.seat: s for s in match.seats.all()}
    for seat in seats:
        result = played[seat.seat]
        seat.rank, seat.score, seat.forfeited = result.rank, result.score, result.forfeited
    TableSeat.objects.bulk_update(seats, ["rank", "score", "forfeited"])
    table.done = True
    table.save(update_fields=["done"])
    if tournament.status == Tournament.Status.RUNNING:
        _advance(tournament)


def history(tournament: Tournament, entries: Sequence[Entry] | None = None) -> list:
    """The tournament's results as the pure code's TableResult and Bye values, in entry names."""
    negate = tournament.rules.get("scoring") == "penalty"  # game points are higher-better there
    items: list = []
    seat_rows = TableSeat.objects.select_related("entry")  # seats and their entries: one query
    tables = (
        Table.objects.filter(round__tournament=tournament, done=True)
        .exclude(bye=False, match__isnull=True)  # a void table (table_void) counts for nobody
        .select_related("round").prefetch_related(Prefetch("seats", queryset=seat_rows))
        .order_by("round__number", "number")
    )
    for table in tables:
        seats = sorted(table.seats.all(), key=lambda s: s.seat)
        if table.bye:
            items.append(Bye(table.round.number, seats[0].entry.name))
            continue
        scores = [s.score for s in seats]
        known = all(score is not None for score in scores)
        items.append(
            TableResult(
                table.round.number,
                tuple(s.entry.name for s in seats),
                tuple(s.rank for s in seats),
                tuple((-x if negate else x) for x in scores) if known else (),
            )
        )
    return items


def frozen_entries(tournament: Tournament) -> list[Entry]:
    """The entries that took part from the start (version frozen), in seeding (registration) order."""
    return list(
        tournament.entries.filter(version__isnull=False).select_related("bot__owner", "version__bot").order_by("pk")
    )


def tournament_standings_lines(tournament: Tournament, entries: Sequence[Entry] | None = None,
                               results: list | None = None):
    """The pure standings of the tournament so far (entry names as ids).

    ``entries`` (its ``frozen_entries``) and ``results`` (its ``history``): when already read."""
    entries = frozen_entries(tournament) if entries is None else entries
    results = history(tournament, entries) if results is None else results
    names, _, seed = seeded_names(tournament, entries)
    return standings(
        names, results, tie_breaks=tournament.tie_breaks,
        withdrawn=[e.name for e in entries if e.status == Entry.Status.WITHDRAWN],
        disqualified=[e.name for e in entries if e.status == Entry.Status.DISQUALIFIED],
        seed=seed,
    )


# --- the organizer's actions --------------------------------------------------------------


def tournament_pause(tournament: Tournament, *, actor=None) -> Tournament:
    """Stop pairing and hold the current round's queued matches (cancelled; resume plays them again)."""
    from matches.services import match_cancel

    with transaction.atomic():
        tournament = _locked(tournament)
        _require(tournament, (Tournament.Status.RUNNING,), "pause")
        tournament.status = Tournament.Status.PAUSED
        tournament.save(update_fields=["status"])
        held = [p.match for p in _open_tables(tournament) if p.match and match_cancel(p.match)]
        _log(tournament, "paused", f"paused; {len(held)} queued match(es) held"
             + (f": {', '.join(f'#{m.pk}' for m in held)}" if held else ""), actor)
    return tournament


def tournament_resume(tournament: Tournament, *, actor=None) -> Tournament:
    """Play the held matches again and carry on pairing."""
    from matches.models import Match

    with transaction.atomic():
        tournament = _locked(tournament)
        _require(tournament, (Tournament.Status.PAUSED,), "resume")
        tournament.status = Tournament.Status.RUNNING
        tournament.save(update_fields=["status"])
        replaced = []
        for table in _open_tables(tournament):
            if table.match is None or table.match.status == Match.Status.CANCELLED:
                old = table.match_id
                new = _new_match(tournament, table)
                replaced.append(f"#{new.pk}" + (f" (for #{old})" if old else ""))
        _log(tournament, "resumed", "resumed" + (f"; queued {', '.join(replaced)}" if replaced else ""), actor)
        _advance(tournament)
    return tournament


def tournament_rerun_failed(tournament: Tournament, *, actor=None) -> list:
    """Play every failed match of the tournament again (same seats and seed) as a new match.

    A match cancelled outside the tournament (from the matches admin) while it
    runs blocks its round the same way and is re-run too.
    """
    from matches.models import Match

    with transaction.atomic():
        tournament = _locked(tournament)
        _require(tournament, (Tournament.Status.RUNNING, Tournament.Status.PAUSED), "re-run matches")
        stuck = (Match.Status.FAILED,)
        if tournament.status == Tournament.Status.RUNNING:
            stuck += (Match.Status.CANCELLED,)  # while paused, cancelled means held: resume plays them
        failed = [p for p in _open_tables(tournament, all_rounds=True) if p.match and p.match.status in stuck]
        if not failed:
            raise TournamentError(f"{tournament} has no failed match to re-run")
        lines, created = [], []
        for table in failed:
            old = table.match_id
            if tournament.status == Tournament.Status.RUNNING:
                created.append(_new_match(tournament, table))
                lines.append(f"#{old} as #{table.match_id}")
            else:  # resume creates it, so no match sits queued without a task
                table.match = None
                table.save(update_fields=["match"])
                lines.append(f"#{old} (plays on resume)")
        _log(tournament, "re-run", f"re-run failed match(es): {', '.join(lines)}", actor)
    return created


def table_rerun(table: Table, *, actor=None, reason: str = "") -> object:
    """Play one table again (same seats and seed) as a new match; its result so far no longer counts.

    The tournament must be running (a pause holds matches: resume first). A done table's result is taken
    out of the standings until the new match finishes; the old match stays in the log.
    """
    from matches.services import match_cancel

    with transaction.atomic():
        tournament = _locked(table.round.tournament)
        _require(tournament, (Tournament.Status.RUNNING,), "re-run a match")
        table = _locked_table(tournament, table)
        old = table.match
        if old is not None:
            match_cancel(old)
        _clear_results(table)
        table.done = False
        table.save(update_fields=["done"])
        new = _new_match(tournament, table)
        _log(tournament, "re-run", f"round {table.round.number} table {table.number}: "
             f"{f'match #{old.pk}' if old else 'the table'} re-run as #{new.pk}{_reason(reason)}", actor)
    return new


def table_void(table: Table, *, actor=None, reason: str = "") -> Table:
    """Void one table: its match (played or not) counts for nobody; the round goes on without it.

    The table stays in its round with no match and no result; the standings and tie-breaks leave it out.
    """
    from matches.services import match_cancel

    with transaction.atomic():
        tournament = _locked(table.round.tournament)
        _require(tournament, (Tournament.Status.RUNNING, Tournament.Status.PAUSED), "void a match")
        table = _locked_table(tournament, table)
        old = table.match
        if old is None and table.done:
            raise TournamentError(f"round {table.round.number} table {table.number} is already void")
        if old is not None:
            match_cancel(old)
        _clear_results(table)
        table.match, table.done = None, True
        table.save(update_fields=["match", "done"])
        _log(tournament, "void", f"round {table.round.number} table {table.number}: "
             f"{f'match #{old.pk}' if old else 'the table'} void, counted for nobody{_reason(reason)}", actor)
        if tournament.status == Tournament.Status.RUNNING:
            _advance(tournament)
    return table


def _locked_table(tournament: Tournament, table: Table) -> Table:
    table = Table.objects.select_for_update(of=("self",)).select_related("round", "match").get(pk=table.pk)
    if table.round.tournament_id != tournament.pk or table.bye:
        raise TournamentError(f"{table} is a bye or not a table of {tournament}: it has no match")
    return table


def _clear_results(table: Table) -> None:
    table.seats.update(rank=None, score=None, forfeited=False)


def _reason(reason: str) -> str:
    return f": {reason.strip()}" if (reason or "").strip() else ""


def entry_withdraw(entry: Entry, *, actor=None, reason: str = "") -> Entry:
    """The entry leaves: later rounds skip it; what it played stays and it keeps its place."""
    return _entry_leave(entry, Entry.Status.WITHDRAWN, "withdrawn", actor, reason)


def entry_disqualify(entry: Entry, *, actor=None, reason: str = "") -> Entry:
    """The entry is thrown out: later rounds skip it, its results stay, it is listed last."""
    return _entry_leave(entry, Entry.Status.DISQUALIFIED, "disqualified", actor, reason)


def _entry_leave(entry: Entry, status: str, action: str, actor, reason: str) -> Entry:
    with transaction.atomic():
        tournament = _locked(entry.tournament)
        if tournament.is_over:
            raise TournamentError(f"{tournament} is {tournament.status}; its entries can no longer change")
        entry = Entry.objects.select_for_update().get(pk=entry.pk)
        if entry.status != Entry.Status.ACTIVE:
            raise TournamentError(f"{entry.name} is already {entry.status}")
        entry.status = status
        entry.save(update_fields=["status"])
        _log(tournament, action, f"{entry.name} {action}" + (f": {reason.strip()}" if reason.strip() else ""), actor)
    return entry


def tournament_cancel(tournament: Tournament, *, actor=None, reason: str = "") -> Tournament:
    """End the tournament without a result; queued matches are cancelled, played ones stay."""
    from matches.services import match_cancel

    with transaction.atomic():
        tournament = _locked(tournament)
        if tournament.is_over:
            raise TournamentError(f"{tournament} is already {tournament.status}")
        held = [p.match for p in _open_tables(tournament, all_rounds=True) if p.match and match_cancel(p.match)]
        tournament.status = Tournament.Status.CANCELLED
        tournament.finished_at = timezone.now()
        tournament.save(update_fields=["status", "finished_at"])
        text = "cancelled" + (f": {reason.strip()}" if reason.strip() else "")
        _log(tournament, "cancelled", text + f"; {len(held)} queued match(es) cancelled", actor)
    return tournament


# --- helpers ------------------------------------------------------------------------------


def _open_tables(tournament: Tournament, *, all_rounds: bool = False) -> list[Table]:
    tables = Table.objects.filter(round__tournament=tournament, bye=False, done=False)
    if not all_rounds:
        tables = tables.filter(round__number=tournament.current_round)
    return list(tables.select_related("match", "round").order_by("round__number", "number"))


def _locked(tournament: Tournament) -> Tournament:
    return Tournament.objects.select_for_update().get(pk=tournament.pk)


def _require(tournament: Tournament, statuses: tuple, what: str) -> None:
    if tournament.status not in statuses:
        allowed = " or ".join(str(s) for s in statuses)
        raise TournamentError(f"cannot {what}: {tournament} is {tournament.status} (must be {allowed})")


def _check_int(what: str, value, low: int, high: int, *, field: str = "") -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise TournamentError(f"{what} must be a whole number {low}..{high}, got {value!r}", field=field)


def _is_user(actor) -> bool:
    return actor is not None and getattr(actor, "is_authenticated", False) and actor.pk is not None


def _log(tournament: Tournament, action: str, message: str, actor=None) -> TournamentEvent:
    return TournamentEvent.objects.create(
        tournament=tournament, action=action, message=message, actor=actor if _is_user(actor) else None
    )
