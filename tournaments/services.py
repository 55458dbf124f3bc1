"""Services of tournaments: create, register, start, pair, record results, and the organizer's actions.

Rounds advance from the matches' hook for kind "tournament"
(``tournament_match_finished``), which runs inside the transaction that stores
a match result and holds the tournament's row lock: a round is paired once,
whichever of its matches finishes last. Every organizer action and every step
the system takes by itself is written to the tournament's event log.
"""

from __future__ import annotations

import logging
import random
import re
import secrets
from collections.abc import Sequence

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from engine.rules import BOUNDS, Rules, RulesError
from matches.models import MAX_COMPETITION_GAMES
from tournaments.pairing import default_swiss_rounds, swiss_round
from tournaments.schedule import round_robin
from tournaments.standings import TIE_BREAKS, standings
from tournaments.tables import Bye, TableResult, table_sizes

from .models import Entry, Pairing, PairingSeat, Round, Tournament, TournamentEvent

logger = logging.getLogger(__name__)

#: limits on what an organizer may ask for, so a typo cannot schedule a million matches
MAX_GAMES = MAX_COMPETITION_GAMES
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
    """Change a tournament's options before it starts."""
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


def tournament_options(
    *,
    name: str,
    rules: Rules | dict | Sequence[str],
    format: str = Tournament.Format.SWISS,
    slug: str = "",
    games: int = 1,
    duplicate: bool = True,
    rounds: int | None = None,
    cycles: int = 1,
    tie_breaks: Sequence[str] | None = None,
    seed: int | None = None,
    description: str = "",
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
    _check_int("games per pairing", games, 1, MAX_GAMES, field="games")
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
    for players in (rules.players - 1, rules.players + 1):
        if rules.players > MIN_PLAYERS and MIN_PLAYERS <= players <= MAX_PLAYERS:
            try:
                rules_for_players(rules.to_dict(), players)
            except TournamentError as exc:
                raise TournamentError(str(exc), field="rules") from None
    # No seed: one is drawn when the tournament starts (tournament_start), so nobody knows the deals before.
    if seed is not None:
        _check_int("seed", seed, -(2**63), 2**63 - 1, field="seed")
    return {
        "name": name, "slug": slug, "description": description or "", "rules": rules.to_dict(),
        "format": format, "seats": rules.players, "games": games, "duplicate": bool(duplicate),
        "rounds": rounds, "cycles": cycles, "tie_breaks": tie_breaks, "seed": seed,
    }


def _summary(tournament: Tournament) -> str:
    """The options for the log; the seed's number is redacted from the public log (``redact_seed``)."""
    seed = f"seed {tournament.seed}" if tournament.seed is not None else "seed drawn at the start"
    return (
        f"{tournament.get_format_display()}, {tournament.seats} seats, {tournament.games} game(s) per pairing"
        f"{' (duplicate)' if tournament.duplicate else ''}, {seed}"
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
        except IntegrityError:
            raise TournamentError(
                f"{bot} cannot enter {tournament}: it or an entry of the same name is already entered"
            ) from None
        _log(tournament, "entry", f"entry {entry.name} added", actor)
    return entry


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
    """Freeze every active entry's playing version, plan the rounds, pair and enqueue round 1."""
    from bots.selectors import bot_playing_version

    with transaction.atomic():
        tournament = _locked(tournament)
        _require(tournament, (Tournament.Status.DRAFT, Tournament.Status.REGISTRATION), "start")
        entries = list(tournament.entries.filter(status=Entry.Status.ACTIVE).select_related("bot").order_by("pk"))
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
        names = [e.name for e in entries]
        drawn = tournament.seed is None
        if drawn:  # drawn only now, after the last version could change: nobody knew the deals before
            tournament.seed = draw_seed()
        try:
            table_sizes(len(names), tournament.seats)
            if tournament.format == Tournament.Format.ROUND_ROBIN:
                plan = round_robin(
                    names, tournament.seats, cycles=tournament.cycles,
                    rounds=tournament.rounds if tournament.seats > 2 else None, seed=tournament.seed,
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
        Entry.objects.bulk_update(entries, ["version"])
        tournament.status = Tournament.Status.RUNNING
        tournament.started_at = timezone.now()
        tournament.current_round = 0
        tournament.save(update_fields=["status", "started_at", "current_round", "plan", "total_rounds", "seed"])
        frozen = ", ".join(f"{e.name} v{e.version.number}" for e in entries)
        _log(tournament, "started",
             f"started with {len(entries)} entries over {tournament.total_rounds} round(s)"
             f"{f', seed {tournament.seed} drawn' if drawn else ''}; versions frozen: {frozen}",
             actor)
        _advance(tournament)
        if tournament.status == Tournament.Status.PAUSED:
            # Round 1 could not be paired: refuse the start (rolled back) with the reason.
            reason = tournament.events.filter(action="error").values_list("message", flat=True).first()
            raise TournamentError(f"cannot start {tournament}: {reason}")
    return tournament


def _advance(tournament: Tournament) -> None:
    """Close the current round when every result is in, then pair the next or finish.

    Called with the tournament's row locked and its status running.
    """
    while tournament.status == Tournament.Status.RUNNING:
        if tournament.current_round:
            rnd = tournament.round_set.get(number=tournament.current_round)
            if rnd.status == Round.Status.PLAYING:
                if rnd.pairings.filter(done=False).exists():
                    return
                rnd.status = Round.Status.DONE
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
            paired = swiss_round(
                [e.name for e in entries], history(tournament, entries), number, seats=tournament.seats,
                tie_breaks=tournament.tie_breaks, seed=tournament.seed,
                withdrawn=[e.name for e in entries if e.status == Entry.Status.WITHDRAWN],
                disqualified=[e.name for e in entries if e.status == Entry.Status.DISQUALIFIED],
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
            rnd = Round.objects.create(
                tournament=tournament, number=number, seed=round_seed(tournament.seed, number),
                explanation=explanation,
            )
            for index, seats in enumerate(tables, start=1):
                pairing = Pairing.objects.create(round=rnd, number=index)
                PairingSeat.objects.bulk_create(
                    PairingSeat(pairing=pairing, seat=s, entry=by_name[name]) for s, name in enumerate(seats)
                )
                _new_match(tournament, pairing)
            for index, name in enumerate(byes, start=len(tables) + 1):
                pairing = Pairing.objects.create(round=rnd, number=index, bye=True, done=True)
                PairingSeat.objects.create(pairing=pairing, seat=0, entry=by_name[name])
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


def _new_match(tournament: Tournament, pairing: Pairing):
    """Create the pairing's match (same seats, rules and seed); enqueue it unless the tournament is paused."""
    from matches.services import MatchError, match_create

    seats = list(pairing.seats.select_related("entry__version").order_by("seat"))
    try:
        match = match_create(
            kind="tournament",
            rules=rules_for_players(tournament.rules, len(seats)),
            seats=[s.entry.version for s in seats],
            seed=pairing.round.seed,
            games=tournament.games,
            duplicate=tournament.duplicate,
            enqueue=tournament.status == Tournament.Status.RUNNING,
        )
    except MatchError as exc:
        raise TournamentError(f"round {pairing.round.number} table {pairing.number}: {exc}") from None
    pairing.match = match
    pairing.save(update_fields=["match"])
    return match


def round_seed(seed: int, number: int) -> int:
    """The deals of round ``number``: every table of the round plays the same ones."""
    return random.Random(f"{seed}/{number}").getrandbits(62)


def _finish(tournament: Tournament, why: str = "") -> None:
    tournament.status = Tournament.Status.FINISHED
    tournament.finished_at = timezone.now()
    tournament.save(update_fields=["status", "finished_at"])
    lines = tournament_standings_lines(tournament)
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
    A match that no pairing points at any more (replaced by a re-run) is ignored.
    """
    pairing = Pairing.objects.filter(match_id=match.pk).select_related("round").first()
    if pairing is None:
        return
    tournament = Tournament.objects.select_for_update().get(pk=pairing.round.tournament_id)
    pairing = Pairing.objects.select_for_update().select_related("round").get(pk=pairing.pk)
    if pairing.done or pairing.match_id != match.pk:
        return
    where = f"round {pairing.round.number} table {pairing.number}"
    if match.status != match.Status.DONE:
        _log(tournament, "match failed",
             f"{where}: match #{match.pk} {match.status}: {match.error or 'no reason given'}; "
             "re-run it when the cause is fixed")
        return
    seats = list(pairing.seats.order_by("seat"))
    played = {s.seat: s for s in match.seats.all()}
    for seat in seats:
        result = played[seat.seat]
        seat.rank, seat.score, seat.forfeited = result.rank, result.score, result.forfeited
    PairingSeat.objects.bulk_update(seats, ["rank", "score", "forfeited"])
    pairing.done = True
    pairing.save(update_fields=["done"])
    if tournament.status == Tournament.Status.RUNNING:
        _advance(tournament)


def history(tournament: Tournament, entries: Sequence[Entry] | None = None) -> list:
    """The tournament's results as the pure code's TableResult and Bye values, in entry names."""
    negate = tournament.rules.get("scoring") == "penalty"  # game points are higher-better there
    items: list = []
    pairings = (
        Pairing.objects.filter(round__tournament=tournament, done=True)
        .select_related("round").prefetch_related("seats__entry").order_by("round__number", "number")
    )
    for pairing in pairings:
        seats = sorted(pairing.seats.all(), key=lambda s: s.seat)
        if pairing.bye:
            items.append(Bye(pairing.round.number, seats[0].entry.name))
            continue
        scores = [s.score for s in seats]
        known = all(score is not None for score in scores)
        items.append(
            TableResult(
                pairing.round.number,
                tuple(s.entry.name for s in seats),
                tuple(s.rank for s in seats),
                tuple((-x if negate else x) for x in scores) if known else (),
            )
        )
    return items


def frozen_entries(tournament: Tournament) -> list[Entry]:
    """The entries that took part from the start (version frozen), in seeding (registration) order."""
    return list(
        tournament.entries.filter(version__isnull=False).select_related("bot", "version__bot").order_by("pk")
    )


def tournament_standings_lines(tournament: Tournament):
    """The pure standings of the tournament so far (entry names as ids)."""
    entries = frozen_entries(tournament)
    return standings(
        [e.name for e in entries], history(tournament, entries), tie_breaks=tournament.tie_breaks,
        withdrawn=[e.name for e in entries if e.status == Entry.Status.WITHDRAWN],
        disqualified=[e.name for e in entries if e.status == Entry.Status.DISQUALIFIED],
        seed=tournament.seed,
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
        held = [p.match for p in _open_pairings(tournament) if p.match and match_cancel(p.match)]
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
        for pairing in _open_pairings(tournament):
            if pairing.match is None or pairing.match.status == Match.Status.CANCELLED:
                old = pairing.match_id
                new = _new_match(tournament, pairing)
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
        failed = [p for p in _open_pairings(tournament, all_rounds=True) if p.match and p.match.status in stuck]
        if not failed:
            raise TournamentError(f"{tournament} has no failed match to re-run")
        lines, created = [], []
        for pairing in failed:
            old = pairing.match_id
            if tournament.status == Tournament.Status.RUNNING:
                created.append(_new_match(tournament, pairing))
                lines.append(f"#{old} as #{pairing.match_id}")
            else:  # resume creates it, so no match sits queued without a task
                pairing.match = None
                pairing.save(update_fields=["match"])
                lines.append(f"#{old} (plays on resume)")
        _log(tournament, "re-run", f"re-run failed match(es): {', '.join(lines)}", actor)
    return created


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
        held = [p.match for p in _open_pairings(tournament, all_rounds=True) if p.match and match_cancel(p.match)]
        tournament.status = Tournament.Status.CANCELLED
        tournament.finished_at = timezone.now()
        tournament.save(update_fields=["status", "finished_at"])
        text = "cancelled" + (f": {reason.strip()}" if reason.strip() else "")
        _log(tournament, "cancelled", text + f"; {len(held)} queued match(es) cancelled", actor)
    return tournament


# --- helpers ------------------------------------------------------------------------------


def _open_pairings(tournament: Tournament, *, all_rounds: bool = False) -> list[Pairing]:
    pairings = Pairing.objects.filter(round__tournament=tournament, bye=False, done=False)
    if not all_rounds:
        pairings = pairings.filter(round__number=tournament.current_round)
    return list(pairings.select_related("match", "round").order_by("round__number", "number"))


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
